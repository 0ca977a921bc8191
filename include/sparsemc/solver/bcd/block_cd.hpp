#pragma once
/// \file block_cd.hpp
/// `BlockCD<Loss, Penalty, StepRule>`: block coordinate descent over the feature rows of W for
/// objective (1) (Blondel, Seki & Uehara, "Block coordinate descent algorithms for large-scale
/// sparse multiclass classification", Machine Learning 93, 2013), with the Tseng–Yun line-search
/// rule (tseng_yun.hpp, "bcd-ls") or the Richtárik–Takáč constant-step rule (richtarik_takac.hpp,
/// "bcd-cst").

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <iostream>
#include <limits>
#include <numeric>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "../../core/callbacks.hpp"
#include "../../core/rng.hpp"
#include "../../core/status.hpp"
#include "../../core/stopwatch.hpp"
#include "../../core/traits.hpp"
#include "../../core/validate.hpp"
#include "../../data/problem.hpp"
#include "../../loss/concepts.hpp"
#include "../../model/linear_model.hpp"
#include "../../penalty/concepts.hpp"
#include "../duality_gap.hpp"
#include "../objective.hpp"
#include "../certificate_schedule.hpp"
#include "../solver_base.hpp"
#include "detail/loss_state.hpp"
#include "options.hpp"
#include "richtarik_takac.hpp"
#include "tseng_yun.hpp"

namespace sparsemc {

/// Block coordinate descent for objective (1),
///
///     min_{W, b} F(W, b) = (1/n) Σ_i c_i ℓ(Wᵀx_i + b, y_i) + Σ_j P(W_j),   P = λR + (μ/2)‖·‖²,
///
/// over blocks W_j ∈ R^K, the K weights of feature j (one row of W), for any smooth loss and any
/// row-separable penalty (L1L2 as in the paper; L1, L1Linf, NoPenalty too). The paper's eq. (2)
/// is SquaredHinge + L1L2 with c_i = 1, μ = 0; its multitask eq. (11) is OvrSquaredHinge;
/// LIBLINEAR's `-s 5 -c C` is OvrSquaredHinge + L1 with λ = 1/(Cn), μ = 0.
///
/// **Block step** (Algorithm 2, eqs. 3–4): with the block gradient of the loss part
/// G_j = (1/n) Σ_{i∈supp(x_j)} c_i x_ij ∇ℓ(s_i)  (eq. 5),
///
///     W_j* = prox_{P/L_j}(W_j − G_j/L_j),   W_j ← W_j + α(W_j* − W_j),
///
/// where the step rule chooses L_j and α: TsengYun takes L_j = max(‖h_j‖_∞, ε) from the
/// generalised second derivatives (eq. 6) and α by Armijo backtracking on eq. (7) — for
/// OvrSquaredHinge with an entrywise penalty (L1, NoPenalty), whose block Hessian is diagonal,
/// each entry's own curvature L_jk = max(h_jk, 10⁻³ max_k h_jk, ε) instead (Tseng & Yun's
/// model allows any positive diagonal; this is LIBLINEAR -s 5's per-coordinate Newton step);
/// RichtarikTakac takes the block Lipschitz constant L_j = K_j and α = 1 (Appendix A). The ridge
/// term is inside the prox (prox of t(λR + μ/2‖·‖²) = prox_{tλR}/(1 + tμ)), exactly.
///
/// **Efficiency** (§4.3): the scores S = XW + 1bᵀ (n × K, row-major) and the loss values are
/// cached per sample (plus the max-shifted exponentials for Logistic, detail/loss_state.hpp), so
/// a block step reads and writes only the rows of S in supp(x_j): O(|supp(x_j)|·K) for the
/// gradient, the curvature, each line-search trial (the objective difference of eq. 7 is summed
/// over supp(x_j)) and the update. Nothing is allocated after the setup.
///
/// **Stopping**: `converged` means the relative duality gap of (1) at the returned iterate is
/// ≤ tol (solver/duality_gap.hpp, from the cached scores and the gradient candidate
/// a_i = ∇ℓ(s_i)); info.duality_gap / relative_gap are recomputed at the returned model for
/// every status. The cheap measure (§4.5, made exact) decides only when the gap is evaluated
/// (solver/certificate_schedule.hpp, at full passes): for each block visited,
/// v = `penalty.violation(W_j, G_j)`, the distance of −G_j to λ∂R(W_j) + μW_j, and for the
/// intercept ‖∇_b L‖₂; an epoch's measure (eq. 10) is their sum (TsengYun) or maximum
/// (RichtarikTakac) divided by the same quantity at W = 0, b = 0. A cold start whose measure
/// at W = 0 is under the rounding floor (λ ≥ λ_max) returns W = 0 after 0 epochs only when the
/// gap certifies it. Measurements: docs/bcd.md.
///
/// **Shrinking** (§5.2.4, after Yuan et al. 2010): a zero row with R°(G_j) < λ − M/n (M the
/// largest violation of the previous epoch) is dropped from the following epochs. When an epoch
/// on the shrunk set meets the tolerance (or has cut the last full pass's measure tenfold), the
/// next epoch is a full pass: with TsengYun a check pass, which visits the active blocks as
/// usual and measures every dropped row from the table of per-sample gradients
/// D_i = (c_i/n)∇ℓ(s_i) (G_j = Σ_i x_ij D_i, one sparse × dense product: no curvature, no
/// margins), putting back each row that violates; with RichtarikTakac every block is restored.
/// The gap is evaluated only after a full pass, and it measures every block: a wrongly shrunk
/// block cannot be reported converged.
///
/// **Paths** (`fit_path`, solver/path.hpp): the grid is solved in one call, each λ warm-started
/// from the previous solution, the W = 0 normalisers of every λ from one pass. With
/// `screening`, the sequential strong rule (Tibshirani et al. 2012) starts λ_k on the rows
/// j with W_j ≠ 0 or R°(∇_j L(W(λ_{k−1}))) ≥ 2λ_k − λ_{k−1} (R° = ‖·‖₂ for L1L2, ‖·‖_∞ for L1,
/// ‖·‖₁ for L1Linf), taken from the last full pass at λ_{k−1}; the other rows wait for the
/// check pass, which puts back any violator. Every point is certified by its own gap, as `fit`.
///
/// **Reproducibility**: the only randomness is the block order, drawn from `Rng(seed)` with
/// sparsemc's own uniform draws and shuffle; a given seed reproduces the result bit for bit.
///
/// **Warm start** (`fit(problem, initial)`): W starts at initial's weights (same d and K), b at its
/// intercept when fit_intercept is set (ignored otherwise).
///
/// The returned model has class labels 0..K−1 (the Problem carries class indices only), or the
/// labels of the warm-start model. `info.objective` is F of (1) recomputed exactly at the
/// returned model; `info.measure` is the last epoch's relative KKT measure (a diagnostic).
///
/// \code
///   #include <sparsemc/sparsemc.hpp>
///   using namespace sparsemc;
///   auto train = io::read_libsvm<double>("dna.scale");
///   BlockCD<SquaredHinge, L1L2, TsengYun> solver({}, {.lambda = 1e-3});  // certified to 1e-3
///   Result<double> result = solver.fit(train.problem<Eigen::ColMajor>());
///   std::cout << result.info.objective << ' ' << result.model.nnz_rows() << '\n';
///   // a path step: warm start from the previous model at a smaller λ
///   BlockCD<SquaredHinge, L1L2, TsengYun> next({}, {.lambda = 5e-4});
///   auto refined = next.fit(train.problem<Eigen::ColMajor>(), result.model);
/// \endcode
template <class Loss, class Penalty, class StepRule = TsengYun>
class BlockCD : public detail::SolverBase<BlockCD<Loss, Penalty, StepRule>, Loss, Penalty, BlockCDOptions<StepRule>> {
  using Base = detail::SolverBase<BlockCD<Loss, Penalty, StepRule>, Loss, Penalty, BlockCDOptions<StepRule>>;
  friend Base;

 public:
  using Options = BlockCDOptions<StepRule>;
  using loss_type = Loss;
  using penalty_type = Penalty;
  using step_rule_type = StepRule;
  /// The registered solver name ("bcd-ls" or "bcd-cst"): provenance, tools.
  static constexpr std::string_view name = StepRule::name;

  BlockCD(Loss loss, Penalty penalty, Options options = {})
      : Base(std::move(loss), std::move(penalty), std::move(options)) {}


  /// Solves (1) for each λ of `lambdas` in turn (the penalty's λ replaced, its μ and every
  /// option kept), each solve warm-started from the previous one, from W = 0, b = 0 for the
  /// first: a regularisation path (solver/path.hpp's `regularization_path` calls this). Unlike
  /// a sequence of `fit` calls it shares the work between the λ values: the caches and the
  /// W = 0 normalisers of every λ are set up once, and the last full pass at λ_{k−1} gives the
  /// gradients of the sequential strong rule at λ_k (Options::screening). Result k is exactly
  /// what `fit` warm-started from result k−1 would have to reach: the same stopping test.
  /// Callbacks run once per epoch of every solve (core/callbacks.hpp; `notify_end` once per λ).
  template <RealScalar Scalar, StorageIndex Index, int Order, class... Callbacks>
  std::vector<Result<Scalar>> fit_path(const Problem<Scalar, Index, Order>& problem, std::span<const double> lambdas,
                                       Callbacks&&... callbacks) const {
    for (const double l : lambdas) detail::require_nonnegative("lambda", l);
    std::vector<Result<Scalar>> out;
    if constexpr (Order == Eigen::ColMajor) {
      check_policies<Scalar>();
      solve<Scalar, Index>(problem, static_cast<const LinearModel<Scalar>*>(nullptr), lambdas, out, callbacks...);
    } else {
      static_assert(Order == Eigen::ColMajor, "BlockCD::fit_path needs a CSC problem");
    }
    return out;
  }

 private:
  /// A shrunk set is re-checked by a full pass whenever its measure has fallen to this
  /// fraction of the last full pass's (or to tol): a wrongly shrunk block is found again
  /// within a bounded amount of wasted work, not only when the shrunk problem is solved.
  static constexpr double recheck_factor = 0.1;
  /// Per-entry curvatures (one-vs-rest losses with an entrywise penalty) are floored at this
  /// fraction of the block's largest, max_k h_jk: an entry with no active margin (h_jk = 0,
  /// G_jk = 0) would otherwise take a step of 1/ε to zero. On sector (OvR + L1, C = 1) the
  /// floor 1e-3 and 1e-1 reach LIBLINEAR's objective in the same time, 2.3× sooner than the
  /// block's single curvature max_k h_jk (eq. 6).
  static constexpr double relative_entry_floor = 1e-3;

  /// What one block visit reports: its violation and whether it leaves the active set.
  struct Visit {
    double violation = 0.0;
    bool shrink = false;
  };

  /// v_0 of eq. (10) at one λ, the normaliser of the epochs' measure: the sum (TsengYun) and
  /// the maximum (RichtarikTakac) of the blocks' violations at W = 0, b = 0.
  struct ZeroMeasure {
    double sum = 0.0;
    double max = 0.0;
    void add(double violation) {
      sum += violation;
      max = std::max(max, violation);
    }
  };

  /// What an epoch's block visits add up to.
  struct EpochTally {
    double violation_sum = 0.0;  // TsengYun's measure (eq. 10)
    double violation_max = 0.0;  // RichtarikTakac's measure, and M of the shrinking margin
    double work = 0.0;           // touched entries of X: the certificate schedule's unit
    void add(double violation) {
      violation_sum += violation;
      violation_max = std::max(violation_max, violation);
    }
  };

  /// TsengYun's parameters in the solve's precision (all 0 for the constant-step rule).
  template <RealScalar Scalar>
  struct LineSearch {
    double sigma = 0.0;             // sufficient decrease of eq. (7)
    Scalar beta = 0;                // backtracking factor
    Scalar epsilon = 0;             // floor of L_j = max(‖h_j‖_∞, ε) (eq. 6)
    std::int32_t max_backtracks = 0;
  };

  template <RealScalar Scalar>
  static void check_policies() {
    static_assert(SmoothLoss<Loss, Scalar>,
                  "BlockCD needs a smooth loss: value, gradient, curvature and curvature_bound "
                  "(loss/concepts.hpp). Crammer-Singer is not smooth: use the FBPD or FCBCFW solver.");
    static_assert(sparsemc::Penalty<Penalty, Scalar>,
                  "BlockCD needs a row-separable penalty with value, prox, violation and dual_norm "
                  "(penalty/concepts.hpp).");
  }

  template <RealScalar Scalar, StorageIndex Index, int Order, class... Callbacks>
  Result<Scalar> run(const Problem<Scalar, Index, Order>& problem, const LinearModel<Scalar>* initial,
                     Callbacks&... callbacks) const {
    static_assert(Order == Eigen::ColMajor,
                  "BlockCD walks the data feature by feature: it needs a CSC problem "
                  "(Dataset::problem<Eigen::ColMajor>() or a CscView).");
    check_policies<Scalar>();
    if constexpr (Order == Eigen::ColMajor) {
      const double lambda = static_cast<double>(penalty_.lambda);
      std::vector<Result<Scalar>> out;
      solve<Scalar, Index>(problem, initial, std::span<const double>(&lambda, 1), out, callbacks...);
      return std::move(out.front());
    } else {
      return {};
    }
  }

  /// Solves (1) for each λ of `lambdas` (in order, each warm-started from the previous),
  /// appending one result per λ to `out`.
  template <RealScalar Scalar, StorageIndex Index, class... Callbacks>
  void solve(const CscProblem<Scalar, Index>& problem, const LinearModel<Scalar>* initial,
             std::span<const double> lambdas, std::vector<Result<Scalar>>& out, Callbacks&... callbacks) const {
    using Kernel = detail::BlockKernel<Loss, Scalar, Index>;
    // One-vs-rest losses have a diagonal generalised Hessian in each block: with an entrywise
    // penalty the block model takes each entry's own curvature h_jk (Tseng & Yun allow any
    // positive diagonal; the line search keeps the descent), as LIBLINEAR's CDN does.
    constexpr bool per_entry_curvature =
        StepRule::line_search && std::same_as<Loss, OvrSquaredHinge> && EntrywisePenalty<Penalty, Scalar>;
    using Column = typename Kernel::Column;
    constexpr bool line_search = StepRule::line_search;
    problem.validate();
    if (!Loss::supports_multilabel && problem.y.multilabel())
      throw std::invalid_argument("BlockCD::fit: the " + std::string(Loss::name) +
                                  " loss is multiclass but some sample has not exactly one class");
    Stopwatch clock;
    // The penalty of the current λ (its λ changes along a path; μ and the rest are kept).
    Penalty penalty = penalty_;
    const std::size_t n_lambdas = lambdas.size();
    const auto& X = problem.X;
    const auto n = static_cast<std::size_t>(problem.n_samples());
    const auto d = static_cast<std::size_t>(problem.n_features());
    const auto K = static_cast<Eigen::Index>(problem.n_classes());
    const bool intercept = options_.fit_intercept;
    const std::size_t blocks = d + (intercept ? 1 : 0);  // block d is the intercept
    const auto& rule = options_.step_rule;

    // (1/n) Σ_i c_i x_ij² per column: the data part of K_j, and 0 flags a column no sample
    // depends on. The intercept is a column of ones.
    std::vector<Scalar> column_sq(d, Scalar(0));
    std::size_t max_column = intercept ? n : 0;
    double nnz_X = 0.0;  // the work of one gap evaluation is about nnz(X) + n touched entries
    const Scalar inv_n = Scalar(1) / static_cast<Scalar>(n);
    for (std::size_t j = 0; j < d; ++j) {
      const auto col = X.outer(static_cast<Index>(j));
      max_column = std::max(max_column, col.size());
      nnz_X += static_cast<double>(col.size());
      Scalar sum = 0;
      for (auto [i, x] : col) sum += problem.weight(i) * x * x;
      column_sq[j] = sum * inv_n;
    }
    std::vector<Index> all_rows(intercept ? n : 0);
    std::iota(all_rows.begin(), all_rows.end(), Index(0));
    const std::vector<Scalar> ones(intercept ? n : 0, Scalar(1));
    const Column ones_column{all_rows, ones};
    Scalar intercept_sq = 0;
    for (std::size_t i = 0; intercept && i < n; ++i) intercept_sq += problem.weight(static_cast<Index>(i)) * inv_n;
    // The column of ones overlaps every feature column (uncentred data), so a stale b slows every
    // row's progress: b is revisited after each run of rows whose work (nonzeros) adds up to
    // its own n, which at most doubles an epoch's work.
    const auto intercept_stride = static_cast<std::size_t>(
        std::max(1.0, std::ceil(static_cast<double>(n) * static_cast<double>(d) / std::max(nnz_X, 1.0))));
    const Scalar curvature_bound = Loss::template curvature_bound<Scalar>(static_cast<ClassIndex>(K));

    Kernel state(loss_, problem, max_column);
    ClassMatrix<Scalar> W = ClassMatrix<Scalar>::Zero(static_cast<Eigen::Index>(d), K);
    ClassVector<Scalar> b = ClassVector<Scalar>::Zero(intercept ? K : 0);
    // G, H and δ are `stride` long for the kernel (zero past K); the rest are K long.
    const auto stride = static_cast<Eigen::Index>(state.stride());
    ClassVector<Scalar> G = ClassVector<Scalar>::Zero(stride), H = ClassVector<Scalar>::Zero(stride);
    ClassVector<Scalar> delta = ClassVector<Scalar>::Zero(stride), w_star(K), w_try(K);
    const ClassVector<Scalar> zero_row = ClassVector<Scalar>::Zero(K);
    auto span_of = [K](ClassVector<Scalar>& v) { return std::span<Scalar>(v.data(), static_cast<std::size_t>(K)); };
    auto cspan_of = [K](const ClassVector<Scalar>& v) {
      return std::span<const Scalar>(v.data(), static_cast<std::size_t>(K));
    };

    // v_0: the measure of eq. (10) at W = 0, b = 0 (state scores are 0 here).
    state.set_scores(X, nullptr, nullptr);
    state.refresh();
    // Alongside, the largest gradient size max_j R°(G_j) sets the rounding floor: a violation
    // below 16ε times it (e.g. max(0, R°(G_j) − λ) at λ = λ_max, which rounding leaves at 1e-17
    // rather than 0) cannot be told from 0, so no stopping test asks for less.
    // R°(G_j) at the last visit of row j: the strong rule's gradients at the previous λ.
    std::vector<double> row_dual(d, std::numeric_limits<double>::infinity());
    // One pass gives v_0 for every λ of the grid: the violation at W = 0 of a row is 0 when
    // R°(G_j) ≤ λ (−G_j ∈ λ∂R(0)), so only rows above λ_k are evaluated at λ_k.
    std::vector<ZeroMeasure> zero_measure(n_lambdas);
    double gradient_max = 0.0;
    for (std::size_t j = 0; j < d; ++j) {
      state.template gradient<false>(X.outer(static_cast<Index>(j)), G.data(), H.data());
      const auto size = static_cast<double>(penalty.dual_norm(cspan_of(G)));
      // A penalty without a dual norm (NoPenalty: R° = +∞ off 0) sizes the floor by ‖G_j‖₁
      // (≥ every R° the penalties use): an infinite floor would make every test vacuous.
      gradient_max = std::max(gradient_max, std::isfinite(size) ? size : static_cast<double>(G.head(K).template lpNorm<1>()));
      if (initial == nullptr) row_dual[j] = size;  // the strong rule's gradients at W = 0
      for (std::size_t k = 0; k < n_lambdas; ++k) {
        if (n_lambdas > 1 && !(size > lambdas[k])) continue;
        penalty.lambda = lambdas[k];
        zero_measure[k].add(static_cast<double>(penalty.violation(cspan_of(zero_row), cspan_of(G))));
      }
    }
    if (intercept) {
      state.template gradient<false>(ones_column, G.data(), H.data());
      const auto v = static_cast<double>(G.head(K).norm());
      gradient_max = std::max(gradient_max, v);
      for (ZeroMeasure& at_lambda : zero_measure) at_lambda.add(v);
    }
    const double noise_floor = 16 * static_cast<double>(std::numeric_limits<Scalar>::epsilon()) * gradient_max;

    std::vector<Label> labels(static_cast<std::size_t>(K));
    std::iota(labels.begin(), labels.end(), Label{0});
    double bias = -1.0;
    if (initial != nullptr) {
      detail::check_warm_start("BlockCD", *initial, static_cast<std::int64_t>(d), static_cast<std::int64_t>(K));
      initial->copy_to(W);
      if (intercept && initial->has_intercept()) b = initial->intercept();
      labels = initial->labels();
      bias = initial->provenance().bias;
      state.set_scores(X, W.data(), intercept ? b.data() : nullptr);
      state.refresh();
    }

    // P(W_j) per row (so F costs O(n + d) per epoch) and the count of nonzero rows.
    std::vector<double> row_penalty(d, 0.0);
    std::int64_t nnz_rows = 0;
    auto row_of = [&](std::size_t j) {
      return std::span<Scalar>(W.data() + j * static_cast<std::size_t>(K), static_cast<std::size_t>(K));
    };
    auto is_zero = [](std::span<const Scalar> w) {
      return std::all_of(w.begin(), w.end(), [](Scalar v) { return v == Scalar(0); });
    };
    for (std::size_t j = 0; j < d; ++j) nnz_rows += is_zero(row_of(j)) ? 0 : 1;
    // Replaces row j by w (after an accepted step), keeping the caches in step.
    auto set_row = [&](std::size_t j, std::span<const Scalar> w, double penalty_value) {
      const auto row = row_of(j);
      nnz_rows += (is_zero(w) ? 0 : 1) - (is_zero(row) ? 0 : 1);
      std::copy(w.begin(), w.end(), row.begin());
      row_penalty[j] = penalty_value;
    };
    double lambda = 0.0;  // the current λ
    LineSearch<Scalar> search;
    if constexpr (line_search)
      search = {rule.sigma, static_cast<Scalar>(rule.beta), static_cast<Scalar>(rule.epsilon), rule.max_backtracks};
    double margin = std::numeric_limits<double>::infinity();  // no shrinking in the first epoch
    // Zero rows get their gradient first and the curvature only if they violate: set in the
    // epochs that mostly meet rows that stay zero (a screened start, a restored full pass).
    bool gradient_first = false;

    // Armijo backtracking (eq. 7) along δ from a point whose penalty part is P_old, with
    // predicted decrease Δ (< 0 in exact arithmetic); `candidate(α)` writes W_j + αδ to w_try and
    // returns its penalty part. Returns α > 0 after committing the accepted trial, or 0 when
    // the test cannot be decided in floating point (σα|Δ| under the rounding noise of the
    // objective difference) or no α ≤ β^max_backtracks passes.
    const double epsilon_P = 4 * static_cast<double>(std::numeric_limits<Scalar>::epsilon());
    auto backtrack = [&](const Column& col, double Delta, double P_old, double P_one, auto&& candidate) {
      Scalar alpha = 1;
      double P_try = P_one;
      for (std::int32_t back = 0;; ++back) {
        const detail::Trial trial = state.trial(col, delta.data(), alpha);
        const double bound = search.sigma * static_cast<double>(alpha) * Delta;
        if (trial.difference + (P_try - P_old) <= bound) {
          state.commit(col, delta.data(), alpha);
          return alpha;
        }
        const double noise = trial.noise + epsilon_P * (std::abs(P_try) + std::abs(P_old));
        if (!(std::abs(bound) > noise) || back >= search.max_backtracks) return Scalar(0);
        alpha *= search.beta;
        P_try = candidate(alpha);
      }
    };

    // The constant step W_j ← prox_{P/K_j}(W_j − G_j/K_j) with the block Lipschitz constant K_j
    // (richtarik_takac.hpp): the whole step of RichtarikTakac, and TsengYun's step when its test
    // cannot be decided (the descent lemma guarantees F does not increase, no test needed).
    auto constant_step_row = [&](std::size_t j, const Column& col) {
      const Eigen::Map<const ClassVector<Scalar>> w_now(row_of(j).data(), K);
      const Scalar step = Scalar(1) / (curvature_bound * column_sq[j]);
      w_star = w_now - step * G.head(K);
      penalty.prox(span_of(w_star), step);
      delta.head(K) = w_star - w_now;
      if (is_zero(cspan_of(delta))) return;
      state.apply(col, delta.data(), Scalar(1));
      set_row(j, cspan_of(w_star), static_cast<double>(penalty.value(cspan_of(w_star))));
    };
    auto constant_step_intercept = [&] {
      delta.head(K) = -G.head(K) / (curvature_bound * intercept_sq);
      state.apply(ones_column, delta.data(), Scalar(1));
      b += delta.head(K);
    };

    // One visit of feature row j: violation, shrinking test, step.
    auto visit_row = [&](std::size_t j) -> Visit {
      const auto w = row_of(j);
      const std::span<const Scalar> cw(w);
      if (column_sq[j] == Scalar(0)) {  // no sample depends on W_j: argmin P = 0 is optimal
        const auto v = static_cast<double>(penalty.violation(cw, cspan_of(zero_row)));
        if (!is_zero(cw)) set_row(j, cspan_of(zero_row), 0.0);
        row_dual[j] = 0.0;
        return {v, options_.shrinking};
      }
      const Column col = X.outer(static_cast<Index>(j));
      const bool zero = is_zero(cw);
      // A check pass (after a shrunk or screened phase) mostly meets zero rows that stay zero:
      // their gradient first, the curvature only for a violator.
      const bool check_first = line_search && zero && gradient_first;
      if (check_first) state.template gradient<false>(col, G.data(), H.data());
      else state.template gradient<line_search>(col, G.data(), H.data());
      const auto v = static_cast<double>(penalty.violation(cw, cspan_of(G)));
      row_dual[j] = static_cast<double>(penalty.dual_norm(cspan_of(G)));
      if (zero && options_.shrinking && row_dual[j] < lambda - margin) return {v, true};
      if (v == 0.0) return {v, false};
      if (check_first) state.template gradient<line_search>(col, G.data(), H.data());
      if constexpr (!line_search) {
        constant_step_row(j, col);
      } else {
        const Eigen::Map<const ClassVector<Scalar>> w_now(w.data(), K);
        const Scalar h_max = std::max(H.head(K).maxCoeff(), search.epsilon);
        if constexpr (per_entry_curvature) {
          // Per-entry curvatures: the quadratic model's diagonal is h_jk itself, floored
          // relatively (entries with no active margin would otherwise jump).
          const Scalar floor = std::max(search.epsilon, Scalar(relative_entry_floor) * h_max);
          for (Eigen::Index k = 0; k < K; ++k) {
            const Scalar step = Scalar(1) / std::max(H[k], floor);
            w_star[k] = penalty.prox_entry(w_now[k] - step * G[k], step);
          }
        } else {
          // L_j = max(‖h_j‖_∞, ε) (eq. 6) and the prox step (eqs. 3–4).
          const Scalar step = Scalar(1) / h_max;
          w_star = w_now - step * G.head(K);
          penalty.prox(span_of(w_star), step);
        }
        delta.head(K) = w_star - w_now;
        if (is_zero(cspan_of(delta))) return {v, false};
        const auto P_star = static_cast<double>(penalty.value(cspan_of(w_star)));
        const double Delta = static_cast<double>(G.head(K).dot(delta.head(K))) + P_star - row_penalty[j];
        const Scalar alpha = Delta < 0.0 ? backtrack(col, Delta, row_penalty[j], P_star, [&](Scalar a) {
          w_try = w_now + a * delta.head(K);
          return static_cast<double>(penalty.value(cspan_of(w_try)));
        })
                                         : Scalar(0);
        if (alpha == Scalar(1)) set_row(j, cspan_of(w_star), P_star);
        else if (alpha > Scalar(0)) set_row(j, cspan_of(w_try), static_cast<double>(penalty.value(cspan_of(w_try))));
        else constant_step_row(j, col);
      }
      return {v, false};
    };

    // One visit of the intercept: an unpenalised block over the column of ones.
    auto visit_intercept = [&]() -> Visit {
      state.template gradient<line_search>(ones_column, G.data(), H.data());
      const auto v = static_cast<double>(G.head(K).norm());
      if (v == 0.0) return {v, false};
      if constexpr (!line_search) {
        constant_step_intercept();
      } else {
        delta.head(K) = -G.head(K) / std::max(H.head(K).maxCoeff(), search.epsilon);
        const double Delta = static_cast<double>(G.head(K).dot(delta.head(K)));
        const Scalar alpha = Delta < 0.0 ? backtrack(ones_column, Delta, 0.0, 0.0, [](Scalar) { return 0.0; }) : Scalar(0);
        if (alpha > Scalar(0)) b += alpha * delta.head(K);
        else constant_step_intercept();
      }
      return {v, false};
    };

    // max_j v_j at the current W over every block (gradients only, no step).
    auto exact_measure = [&] {
      double worst = 0.0;
      for (std::size_t j = 0; j < d; ++j) {
        state.template gradient<false>(X.outer(static_cast<Index>(j)), G.data(), H.data());
        worst = std::max(worst, static_cast<double>(penalty.violation(std::span<const Scalar>(row_of(j)), cspan_of(G))));
      }
      if (intercept) {
        state.template gradient<false>(ones_column, G.data(), H.data());
        worst = std::max(worst, static_cast<double>(G.head(K).norm()));
      }
      return worst;
    };

    auto make_model = [&] { return LinearModel<Scalar>(W, intercept ? b : ClassVector<Scalar>(), labels); };
    auto objective_now = [&] {
      return state.loss_part() + std::accumulate(row_penalty.begin(), row_penalty.end(), 0.0);
    };

    // The check pass of the cyclic rule (after a shrunk or screened phase): the blocks left out
    // are not visited one by one; their gradients G_j = Σ_i x_ij D_i come from the table of
    // per-sample gradients D_i = (c_i/n)∇ℓ(s_i) at the end of the epoch (n × stride, filled by
    // the kernel itself on one-entry columns), a plain sparse × dense product, and a row that
    // violates re-enters the active set for the next epoch. Every block's violation is
    // measured in such an epoch, so it counts as a full pass.
    constexpr bool table_check = !StepRule::random_blocks;
    using Array = Eigen::Array<Scalar, Eigen::Dynamic, 1>;
    Array sample_gradients(table_check ? static_cast<Eigen::Index>(n) * stride : 0);
    std::vector<char> inside(table_check ? blocks : 0, 0);
    bool checking = false;  // this epoch is a check pass
    const Scalar one = 1;
    auto check_outside = [&](EpochTally& tally, std::vector<std::size_t>& active) {
      for (std::size_t i = 0; i < n; ++i) {
        const auto index = static_cast<Index>(i);
        state.template gradient<false>(Column{std::span<const Index>(&index, 1), std::span<const Scalar>(&one, 1)},
                                       sample_gradients.data() + static_cast<Eigen::Index>(i) * stride, H.data());
      }
      for (std::size_t j = 0; j < d; ++j) {
        if (inside[j]) continue;
        G.setZero();
        for (auto [i, x] : X.outer(static_cast<Index>(j)))
          G += x * sample_gradients.segment(static_cast<Eigen::Index>(i) * stride, stride).matrix();
        const auto v = static_cast<double>(penalty.violation(std::span<const Scalar>(row_of(j)), cspan_of(G)));
        row_dual[j] = static_cast<double>(penalty.dual_norm(cspan_of(G)));
        tally.add(v);
        if (v > 0.0) active.push_back(j);
      }
    };
    // The certificate (solver/duality_gap.hpp) at the cached scores, with the cached penalty
    // part: one O(nnz(X)·K) pass. Its work space is sized here, so epochs stay allocation-free.
    GapWorkspace<Scalar> gap_work;
    gap_work.reserve(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(d), K, /*with_scores=*/false);
    const double gap_cost = nnz_X + static_cast<double>(n);
    auto certificate_now = [&] {
      const double penalty_part = std::accumulate(row_penalty.begin(), row_penalty.end(), 0.0);
      return duality_gap_at_scores(loss_, penalty, problem, ClassMatrixRef<Scalar>(state.scores_matrix()), penalty_part,
                                   intercept, gap_work);
    };
    auto certifies = [&](const DualityGap& g) { return g.relative() <= options_.tol; };

    Rng rng(options_.seed);
    std::vector<std::size_t> active;
    active.reserve(blocks);
    for (std::size_t point = 0; point < n_lambdas; ++point) {
      if (point > 0) clock.restart();
      const double lambda_previous = lambda;
      lambda = lambdas[point];
      penalty.lambda = static_cast<decltype(penalty.lambda)>(lambda);
      for (std::size_t j = 0; j < d; ++j)  // P(W_j) at this λ
        row_penalty[j] = is_zero(row_of(j)) ? 0.0 : static_cast<double>(penalty.value(std::span<const Scalar>(row_of(j))));
      const double reference = StepRule::random_blocks ? zero_measure[point].max : zero_measure[point].sum;
      const double scale = reference > noise_floor ? reference : 1.0;
      // The cheap measure first asks for the gap at tol·v_0 (or the floor), the old stop.
      detail::CertificateSchedule schedule(std::max(options_.tol * reference, noise_floor) / scale, gap_cost);
      const bool from_zero = point == 0 && initial == nullptr;

      Status status = Status::max_iter;
      std::int64_t epoch = 0;
      double measure = std::numeric_limits<double>::quiet_NaN();
      double F = objective_now();
      bool run_epochs = true;
      if (!std::isfinite(F) || !std::isfinite(reference)) {
        status = Status::numerical_issue;
        run_epochs = false;
      } else if (reference <= noise_floor && from_zero && certifies(certificate_now())) {
        status = Status::converged;  // W = 0, b = 0 is certified optimal by the gap
        measure = 0.0;
        run_epochs = false;
      }
      if (run_epochs) {
        notify_begin(callbacks...);
        // The blocks of the first epoch: all, or on a path the sequential strong rule's set
        // {j : W_j ≠ 0 or R°(G_j(W(λ_{k−1}))) ≥ 2λ_k − λ_{k−1}} and the intercept.
        active.clear();
        const double strong = 2 * lambda - lambda_previous;
        const bool screen = options_.screening && point > 0 && lambda < lambda_previous;
        for (std::size_t j = 0; j < blocks; ++j)
          if (!screen || j == d || !is_zero(row_of(j)) || !(row_dual[j] < strong)) active.push_back(j);
        // Until a full pass has been made, a shrunk (screened) set is re-checked only once it
        // meets the trigger itself: the strong rule is seldom wrong.
        double last_full_measure = active.size() == blocks ? std::numeric_limits<double>::infinity() : 0.0;
        // No shrinking in the first epoch, except after a screened start, where the last margin
        // of the previous λ is kept (the strong set is mostly the previous solution).
        if (!screen) margin = std::numeric_limits<double>::infinity();
        gradient_first = screen;  // most zero rows of a strong set stay zero
        checking = false;
        while (epoch < options_.max_epochs) {
          ++epoch;
          const bool full_pass = checking || active.size() == blocks;
          if constexpr (table_check) {
            if (checking) {
              std::fill(inside.begin(), inside.end(), 0);
              for (const std::size_t block : active) inside[block] = 1;
            }
          }
          EpochTally tally;
          auto visit = [&](std::size_t block) {
            const Visit out = block == d ? visit_intercept() : visit_row(block);
            tally.work += static_cast<double>(block == d ? n : X.outer(static_cast<Index>(block)).size());
            tally.add(out.violation);
            return out.shrink;
          };
          if constexpr (StepRule::random_blocks) {
            // |active| uniform draws with replacement; a shrunk block leaves by swap-and-pop.
            const std::size_t draws = active.size();
            for (std::size_t t = 0; t < draws && !active.empty(); ++t) {
              const auto u = static_cast<std::size_t>(uniform_index(rng, active.size()));
              if (visit(active[u])) {
                active[u] = active.back();
                active.pop_back();
              }
            }
          } else {
            if (rule.permute) shuffle(std::span<std::size_t>(active), rng);
            std::size_t kept = 0;
            for (std::size_t k = 0; k < active.size(); ++k) {
              const std::size_t block = active[k];
              if (!visit(block)) active[kept++] = block;
              if (intercept && block != d && (k + 1) % intercept_stride == 0) {
                visit_intercept();
                tally.work += static_cast<double>(n);
              }
            }
            active.resize(kept);
            if (checking) {
              check_outside(tally, active);
              tally.work += gap_cost;  // the table of per-sample gradients and the outside rows
            }
          }
          schedule.add_work(tally.work);
          checking = false;
          gradient_first = false;
          measure = (StepRule::random_blocks ? tally.violation_max : tally.violation_sum) / scale;
          // The certificate, when the schedule asks for it (full passes only).
          const bool gap_due = full_pass && schedule.due(measure);
          if constexpr (StepRule::random_blocks) {
            // Random draws leave about a third of the blocks unvisited in an epoch: the
            // measure of a certified epoch is every block's violation at the current W.
            if (gap_due && measure <= schedule.trigger()) measure = exact_measure() / scale;
          }
          F = objective_now();
          bool certified = false;
          EpochReport report{epoch, F, measure, nnz_rows, clock.seconds()};
          if (gap_due) {
            const DualityGap gap = certificate_now();
            certified = certifies(gap);
            report.relative_gap = gap.relative();
            schedule.evaluated(measure, certified);
          }
          if (options_.verbose) ProgressPrinter{std::cerr}.end_epoch(report);
          const bool stop = notify_end_epoch(report, make_model, callbacks...);
          const auto verdict = detail::epoch_verdict(options_, std::isfinite(F) && std::isfinite(measure), certified,
                                                     stop, report.seconds);
          if (full_pass) last_full_measure = measure;
          if (verdict) {
            status = *verdict;
            break;
          }
          margin = tally.violation_max / static_cast<double>(n);
          // A shrunk set is re-checked by a full pass once its measure meets the trigger (while
          // the last full pass did not), has fallen tenfold below the last full pass's, or the
          // certificate is due (which only a full pass can give).
          const double trigger = schedule.trigger();
          const double recheck = last_full_measure > trigger ? std::max(trigger, recheck_factor * last_full_measure)
                                                             : recheck_factor * last_full_measure;
          if (!full_pass && (measure <= recheck || schedule.due(measure))) {
            // The next epoch is a full pass, which alone can converge: a check pass (cyclic
            // rule) or a visit of every block restored (random rule).
            if constexpr (table_check) {
              checking = true;
            } else {
              active.resize(blocks);
              std::iota(active.begin(), active.end(), std::size_t{0});
              gradient_first = true;
            }
          }
        }
      }

      // The certificate at the returned model, from scores recomputed exactly (for every status).
      LinearModel<Scalar> model = make_model();
      const DualityGap certificate =
          status == Status::numerical_issue ? DualityGap{F, std::numeric_limits<double>::quiet_NaN()}
                                            : duality_gap(loss_, penalty, problem, model, gap_work);
      // A budget that ran out at a model the final evaluation certifies has converged.
      if (status == Status::max_iter && certificate.relative() <= options_.tol) status = Status::converged;
      SolverInfo info;
      info.status = status;
      info.epochs = epoch;
      info.objective = F;
      info.measure_name = "kkt_violation";
      info.measure = measure;
      info.seconds = clock.seconds();
      Result<Scalar> result =
          detail::finish_result<Loss>(std::move(model), name, penalty, bias, certificate, std::move(info));
      notify_end(result.info, callbacks...);
      out.push_back(std::move(result));
      if (status == Status::numerical_issue) break;
    }
  }

  using Base::loss_;
  using Base::options_;
  using Base::penalty_;
};

}  // namespace sparsemc
