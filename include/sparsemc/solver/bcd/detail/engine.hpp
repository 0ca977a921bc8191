#pragma once
/// \file engine.hpp
/// The state and the steps of one BlockCD solve (implementation detail): Blondel, Seki &
/// Uehara's block coordinate descent (Algorithm 2) over the feature rows of W and the
/// intercept, with the Tseng–Yun line search or the Richtárik–Takáč constant step, safe
/// shrinking, the check pass and the strong-rule screening of a path. block_cd.hpp holds the
/// public class, the mathematics (its class comment) and the loop over these steps.
///
/// Notation as in block_cd.hpp: W (d × K, row j = block W_j), b the intercept (block d, a
/// column of ones), G_j and h_j the block gradient and curvature of the loss part (eqs. 5–6),
/// P = λR + (μ/2)‖·‖² the penalty of a row, v_j the violation of block j (eq. 10), v_0 the
/// same measure at W = 0, b = 0.

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "../../../core/callbacks.hpp"
#include "../../../core/huge_pages.hpp"
#include "../../../core/parallel.hpp"
#include "../../../core/rng.hpp"
#include "../../../core/status.hpp"
#include "../../../core/traits.hpp"
#include "../../../data/feature_columns.hpp"
#include "../../../data/problem.hpp"
#include "../../../loss/concepts.hpp"
#include "../../../loss/kernels/block_kernel.hpp"
#include "../../../model/linear_model.hpp"
#include "../../../penalty/concepts.hpp"
#include "../../../penalty/l1l2.hpp"
#include "../../../prox/group_soft_threshold.hpp"
#include "../../duality_gap.hpp"
#include "../../gap_schedule.hpp"
#include "../../solver_base.hpp"
#include "../options.hpp"
#include "parallel_step.hpp"

namespace sparsemc::detail {

/// What the setup measures once per column of X (and of the column of ones).
template <RealScalar Scalar>
struct BcdColumns {
  /// (1/n) Σ_i c_i x_ij² per column: the data part of K_j; 0 flags a column no sample depends on.
  std::vector<Scalar> squared_norm;
  /// The same for the column of ones (0 without an intercept).
  Scalar intercept_squared_norm = 0;
  /// The largest |supp(x_j)| (n with an intercept): the kernel's trial buffers.
  std::size_t max_size = 0;
  /// nnz(X): the work of one gap evaluation is about nnz(X) + n touched entries.
  double nnz = 0.0;
};

/// The nonzero rows of a W (d × K, row-major) and its b: a solution of a path kept for the
/// next point's extrapolated start.
template <RealScalar Scalar>
struct SavedRows {
  std::vector<std::size_t> support;  ///< increasing feature indices
  std::vector<Scalar> rows;          ///< |support| × K
  ClassVector<Scalar> b;
  Eigen::Index K = 0;

  /// Row p of the saved rows (feature support[p]).
  [[nodiscard]] Eigen::Map<const ClassVector<Scalar>> row(std::size_t p) const {
    return {rows.data() + p * static_cast<std::size_t>(K), K};
  }

  void save(const ClassMatrix<Scalar>& W, const ClassVector<Scalar>& intercept) {
    K = W.cols();
    support.clear();
    rows.clear();
    for (Eigen::Index j = 0; j < W.rows(); ++j) {
      if ((W.row(j).array() == Scalar(0)).all()) continue;
      support.push_back(static_cast<std::size_t>(j));
      rows.insert(rows.end(), W.row(j).data(), W.row(j).data() + K);
    }
    b = intercept;
  }
};

/// One BlockCD solve of `problem` over the λ values of a path (one for `fit`) on `team` threads
/// (the constant-step rule's parallel rounds and the certificate's product; 1 inside a class
/// range): the constructor sets up the caches, the W = 0 measures of every λ and the warm
/// start; BlockCD::solve then calls, per λ, start_point(), per epoch visit_blocks(),
/// evaluate(), certify(), report() and plan_next_epoch(), and at the end
/// returned_certificate() and info(). The problem, the loss,
/// the options and the λ values are held by reference: the engine lives inside one solve.
template <class Loss, class Penalty, class StepRule, FeatureColumnProblem Prob>
class BcdEngine {
  using Scalar = ProblemScalar<Prob>;
  using Index = ProblemIndex<Prob>;
  using Kernel = kernels::BlockKernelFor<Loss, Scalar, Index>;
  using Column = typename Kernel::Column;
  using RowMap = Eigen::Map<const ClassVector<Scalar>>;

 public:
  static constexpr bool line_search = StepRule::line_search;
  // A loss that separates over the classes (one-vs-rest) has a diagonal generalised Hessian in
  // each block: with an entrywise penalty the block model takes each entry's own curvature h_jk
  // (Tseng & Yun allow any positive diagonal; the line search keeps the descent), as LIBLINEAR's
  // CDN does.
  static constexpr bool per_entry_curvature =
      line_search && ClassSeparableLoss<Loss> && EntrywisePenalty<Penalty, Scalar>;
  // With the group penalty (L1L2), the block model takes the diagonal h_j itself as its metric
  // (prox/group_soft_threshold.hpp, G2) instead of max_k h_jk: on text data a feature's own
  // class has curvature ~m times the others' (m active margins), so the single constant held
  // the other classes' entries to steps m times too short. On sector (λ = 1e-4) it certifies
  // in 409 epochs where max_k h_jk had not after 1000.
  static constexpr bool diagonal_metric = line_search && std::same_as<Penalty, L1L2>;
  // A kernel that can try and commit a step on a few classes (loss/kernels/block_kernel.hpp) gets δ's
  // nonzero classes when they are at most 1/sparse_move_share of K: an ℓ1 step moves few
  // entries of a row, and the whole-row trial and commit were two thirds of a one-vs-rest
  // epoch on sector.
  static constexpr bool sparse_moves = requires(Kernel& kernel, const Column& col, std::span<const ClassIndex> moved) {
    kernel.trial(col, static_cast<const Scalar*>(nullptr), Scalar(1), moved);
    kernel.commit(col, static_cast<const Scalar*>(nullptr), Scalar(1), moved);
  };
  static constexpr Eigen::Index sparse_move_share = 4;
  // Per-entry working sets (one-vs-rest with an entrywise penalty, where each entry is its own
  // coordinate problem, as in LIBLINEAR's per-class shrinking): a row visited in a shrunk
  // epoch computes its gradient only on the classes listed at its last whole-row visit, those
  // with W_jk ≠ 0 or R°(G_jk) ≥ λ − M/n, when they are at most 1/listed_share of K (a
  // class-by-class loop costs about twice a whole-row one per class). Full passes (which
  // alone converge, and come before every certificate) visit every entry and refresh the
  // lists. On sector at C = 1 about 6 % of the entries of the nonzero rows are nonzero.
  static constexpr Eigen::Index listed_share = 2;
  static constexpr bool entry_shrinking =
      per_entry_curvature && sparse_moves &&
      requires(Kernel& kernel, const Column& col, std::span<const ClassIndex> listed) {
        kernel.template gradient<true>(col, static_cast<Scalar*>(nullptr), static_cast<Scalar*>(nullptr), listed,
                                       static_cast<const char*>(nullptr));
      };
  // The constant-step rule updates τ blocks at once (richtarik_takac.hpp) when the loss's
  // kernel can take gradients side by side (its Workspace).
  static constexpr bool parallel_rounds = StepRule::random_blocks && kernels::ParallelBlockKernel<Kernel, Scalar>;

  /// The caches at W = 0, b = 0, the measures v_0 of every λ from them, then the warm start
  /// (`initial`, same d and K) if any.
  BcdEngine(const Prob& problem, const Loss& loss, const Penalty& penalty,
            const BlockCDOptions<StepRule>& options, std::span<const double> lambdas,
            const LinearModel<Scalar>* initial, int team)
      : problem_(problem),
        X_(feature_columns(problem)),
        loss_(loss),
        options_(options),
        lambdas_(lambdas),
        penalty_(penalty),
        n_(static_cast<std::size_t>(problem.n_samples())),
        d_(static_cast<std::size_t>(problem.n_features())),
        K_(static_cast<Eigen::Index>(problem.n_classes())),
        intercept_(options.fit_intercept),
        blocks_(d_ + (intercept_ ? 1 : 0)),
        columns_(measure_columns(problem, X_, intercept_)),
        intercept_stride_(intercept_stride(n_, d_, columns_.nnz)),
        curvature_bound_(loss.template curvature_bound<Scalar>(static_cast<ClassIndex>(K_))),
        all_rows_(intercept_ ? n_ : 0),
        ones_(intercept_ ? n_ : 0, Scalar(1)),
        ones_column_{all_rows_, ones_},
        state_(loss, problem, columns_.max_size),
        W_(advised_zeros<ClassMatrix<Scalar>>(static_cast<Eigen::Index>(d_), K_)),
        b_(ClassVector<Scalar>::Zero(intercept_ ? K_ : 0)),
        G_(ClassVector<Scalar>::Zero(stride())),
        H_(ClassVector<Scalar>::Zero(stride())),
        delta_(ClassVector<Scalar>::Zero(stride())),
        metric_(K_),
        w_star_(K_),
        w_try_(K_),
        zero_row_(ClassVector<Scalar>::Zero(K_)),
        search_(line_search_parameters(options.step_rule)),
        row_dual_(d_, std::numeric_limits<double>::infinity()),
        zero_measure_(lambdas.size()),
        row_penalty_(d_, 0.0),
        labels_(cold_start_labels(K_)),
        warm_started_(initial != nullptr),
        sample_gradients_(check_by_table ? static_cast<Eigen::Index>(n_) * stride() : 0),
        inside_(check_by_table ? blocks_ : 0, 0),
        gap_cost_(gap_cost(columns_.nnz, n_, penalty.mu)),
        rng_(options.seed) {
    std::iota(all_rows_.begin(), all_rows_.end(), Index(0));
    // The certificate's work space is sized here, so epochs stay allocation-free; its product
    // gathers over the features on the team (the same bits at any count).
    gap_work_.team = team;
    gap_work_.reserve(penalty, problem_, K_, /*with_scores=*/false);
    if constexpr (parallel_rounds) set_up_rounds(team);
    active_.reserve(blocks_);
    if constexpr (!StepRule::random_blocks) focus_.reserve(d_);
    if constexpr (sparse_moves) moved_.reserve(static_cast<std::size_t>(K_));
    if constexpr (entry_shrinking) {
      listed_.assign(d_ * static_cast<std::size_t>(K_), 1);
      listed_classes_.reserve(static_cast<std::size_t>(K_));
    }
    measure_at_zero();
    if (initial != nullptr) start_from(*initial);
    for (std::size_t j = 0; j < d_; ++j) nnz_rows_ += is_zero(row(j)) ? 0 : 1;
  }

  BcdEngine(const BcdEngine&) = delete;  // ones_column_ points into the engine
  BcdEngine& operator=(const BcdEngine&) = delete;

  /// Starts the solve at the next λ of the path, `lambdas[point]`, from the current W and b:
  /// P(W_j) at this λ, the scale v_0 of the measure, the certificate schedule, F, and the blocks
  /// of the first epoch. Returns the status when the solve ends before its first epoch: a
  /// non-finite F or v_0, or a cold start at W = 0 that the gap certifies (λ ≥ λ_max).
  std::optional<Status> start_point(std::size_t point) {
    const double lambda_previous = lambda_;
    lambda_ = lambdas_[point];
    penalty_.lambda = static_cast<decltype(penalty_.lambda)>(lambda_);
    for (std::size_t j = 0; j < d_; ++j)  // P(W_j) at this λ
      row_penalty_[j] = is_zero(row(j)) ? 0.0 : static_cast<double>(penalty_.value(std::span<const Scalar>(row(j))));
    const double reference = StepRule::random_blocks ? zero_measure_[point].max : zero_measure_[point].sum;
    scale_ = reference > noise_floor_ ? reference : 1.0;
    // The cheap measure first asks for the gap at tol·v_0 (or the floor), the old stop; on a
    // path, where the previous λ's certificate calibrated the measure, at the measure that
    // predicts a certificate (relative gap / measure changes little from one λ to the next,
    // and it is ~100 at the end of a sector path: tol·v_0 would ask several times too soon).
    double trigger = std::max(options_.tol * reference, noise_floor_) / scale_;
    if (gap_per_measure_ > 0.0)
      trigger = std::max(std::min(trigger, options_.tol / gap_per_measure_), noise_floor_ / scale_);
    schedule_ = WorkGapSchedule(trigger, gap_cost_);
    if constexpr (entry_shrinking) std::fill(listed_.begin(), listed_.end(), char{1});
    epoch_ = 0;
    gap_spent_ = {};
    measure_ = std::numeric_limits<double>::quiet_NaN();
    update_objective();
    if (options_.extrapolate_path && point > 0) extrapolate_start(point);
    if (!std::isfinite(F_) || !std::isfinite(reference)) return Status::numerical_issue;
    // At λ ≥ λ_max a cold start may already be optimal; its certificate is the one returned.
    gap_due_ = reference <= noise_floor_ && point == 0 && !warm_started_;
    if (gap_due_) {
      epoch_gap_ = certificate();
      if (certifies(epoch_gap_)) {
        measure_ = 0.0;
        return Status::converged;  // W = 0, b = 0 is certified optimal by the gap
      }
    }
    select_first_blocks(point, lambda_previous);
    return std::nullopt;
  }

  /// One epoch's block updates (Algorithm 2): |active| uniform draws with replacement
  /// (RichtarikTakac) or a sweep over the active blocks (TsengYun), then on a check pass the
  /// rows left out. Shrunk blocks leave the active set.
  void visit_blocks() {
    ++epoch_;
    full_pass_ = checking_ || active_.size() == blocks_;
    tally_ = {};
    if constexpr (StepRule::random_blocks) {
      draw_epoch();
    } else {
      sweep_blocks();
      if (checking_) {
        check_left_out();
        tally_.work += gap_cost_;  // the table of per-sample gradients and the outside rows
      }
    }
    schedule_.add_work(tally_.work);
    checking_ = false;
    gradient_first_ = false;
  }

  /// The epoch's measure (eq. 10): the sum (TsengYun) or the maximum (RichtarikTakac) of the
  /// violations met, over v_0; whether the certificate is due; F at the current W.
  void evaluate() {
    measure_ = (StepRule::random_blocks ? tally_.violation_max : tally_.violation_sum) / scale_;
    // The certificate, when the schedule asks for it (full passes only).
    gap_due_ = full_pass_ && schedule_.due(measure_);
    if constexpr (StepRule::random_blocks) {
      // Random draws leave about a third of the blocks unvisited in an epoch: the
      // measure of a certified epoch is every block's violation at the current W.
      if (gap_due_ && measure_ <= schedule_.trigger()) measure_ = exact_measure() / scale_;
    }
    update_objective();
  }

  /// Whether the duality gap of (1), evaluated when due, certifies the current iterate
  /// (relative gap ≤ tol); the schedule learns the outcome.
  bool certify() {
    if (!gap_due_) return false;
    epoch_gap_ = certificate();
    schedule_.evaluated(measure_, epoch_gap_.relative(), options_.tol);
    const bool certified = certifies(epoch_gap_);
    if (certified && measure_ > 0.0) gap_per_measure_ = epoch_gap_.relative() / measure_;
    return certified;
  }

  /// One epoch's named steps: the block visits, the measure and F, the certificate when due;
  /// returns whether it certifies the iterate.
  bool run_epoch() {
    visit_blocks();
    evaluate();
    return certify();
  }

  /// This epoch's report (the relative gap of (1) when it was evaluated).
  [[nodiscard]] EpochReport report(double seconds) const {
    EpochReport report{epoch_, F_, measure_, nnz_rows_, seconds};
    if (gap_due_) report.relative_gap = epoch_gap_.relative();
    return report;
  }

  /// After an epoch that did not end the solve: the shrinking margin M/n of the next epoch
  /// (M the largest violation of this one), and whether the next epoch is a full pass. A shrunk
  /// set is re-checked by a full pass once its measure meets the trigger (while the last full
  /// pass did not), has fallen tenfold below the last full pass's, or the certificate is due
  /// (which only a full pass can give).
  void plan_next_epoch() {
    if (full_pass_) last_full_measure_ = measure_;
    margin_ = tally_.violation_max / static_cast<double>(n_);
    const double trigger = schedule_.trigger();
    const double recheck = last_full_measure_ > trigger ? std::max(trigger, recheck_factor * last_full_measure_)
                                                        : recheck_factor * last_full_measure_;
    if (!full_pass_ && (measure_ <= recheck || schedule_.due(measure_))) restore_full_pass();
  }

  /// The current iterate as a model with the start's labels.
  [[nodiscard]] LinearModel<Scalar> model() const {
    return LinearModel<Scalar>(W_, intercept_ ? b_ : ClassVector<Scalar>(), labels_);
  }

  /// The returned model of the last λ: W handed over and consumed as the model is built, instead
  /// of copied beside it. The engine has no iterate afterwards.
  [[nodiscard]] LinearModel<Scalar> take_model() {
    return LinearModel<Scalar>::consuming(std::move(W_), intercept_ ? b_ : ClassVector<Scalar>(), labels_);
  }

  /// The certificate at the returned model, from scores recomputed exactly (for every status
  /// but a numerical issue, whose certificate is F alone): the last epoch's when it evaluated
  /// one (at this iterate, from resynchronised caches), else one evaluation at the model.
  [[nodiscard]] DualityGap returned_certificate(Status status) {
    if (status == Status::numerical_issue) return DualityGap{F_, std::numeric_limits<double>::quiet_NaN()};
    if (gap_due_) return epoch_gap_;
    return gap_spent_.timed([&] { return sparsemc::duality_gap(loss_, penalty_, problem_, model(), gap_work_); });
  }

  /// The information block of the current λ: the epochs, F and the last measure.
  [[nodiscard]] SolverInfo info(Status status) const {
    return {.status = status,
            .epochs = epoch_,
            .objective = F_,
            .measure_name = "kkt_violation",
            .measure = measure_};
  }

  [[nodiscard]] std::int64_t epoch() const noexcept { return epoch_; }
  /// The gap evaluations of the current λ and their time.
  [[nodiscard]] const GapCost& gap_spent() const noexcept { return gap_spent_; }
  /// The penalty at the current λ (for the model's provenance).
  [[nodiscard]] const Penalty& penalty() const noexcept { return penalty_; }
  /// The warm start's bias feature (−1 without a warm start), for the model's provenance.
  [[nodiscard]] double bias() const noexcept { return bias_; }
  /// F at the current iterate and the last epoch's measure (over v_0).
  [[nodiscard]] double objective() const noexcept { return F_; }
  [[nodiscard]] double measure() const noexcept { return measure_; }
  /// The last epoch's certificate, when it evaluated one.
  [[nodiscard]] std::optional<DualityGap> epoch_certificate() const {
    return gap_due_ ? std::optional<DualityGap>(epoch_gap_) : std::nullopt;
  }
  /// W (d × K, row j = W_j) and b (empty without an intercept) of the current iterate.
  [[nodiscard]] const ClassMatrix<Scalar>& weights() const noexcept { return W_; }
  [[nodiscard]] const ClassVector<Scalar>& intercept() const noexcept { return b_; }

 private:
  /// The check pass of the cyclic rule measures the rows left out from a table of per-sample
  /// gradients (see check_left_out); the random rule restores every block instead.
  static constexpr bool check_by_table = !StepRule::random_blocks;

  // Tuning constants; none is the paper's. The line search's σ, β, ε and backtracking
  // budget are TsengYun's options (tseng_yun.hpp).
  /// A shrunk set is re-checked by a full pass whenever its measure has fallen to this
  /// fraction of the last full pass's (or to tol): a wrongly shrunk block is found again
  /// within a bounded amount of wasted work, not only when the shrunk problem is solved
  /// (a design choice, one recheck per decade of progress, as SCD's recheck_factor).
  static constexpr double recheck_factor = 0.1;
  /// The work of one gap evaluation in touched entries of X: the product XᵀD̃, once more per
  /// round of the per-sample rescaling when μ = 0 (duality_gap.hpp, G3), and a pass over the n
  /// samples. (The scores XW read only the nonzero rows' columns, and the rounds stop early
  /// when they do not raise D: on sector this overestimate and the underestimate of a block
  /// visit's work, counted once, roughly cancel.)
  static double gap_cost(double nnz, std::size_t n, double mu) {
    return (mu > 0.0 ? 1.0 : 1.0 + per_sample_rounds) * nnz + static_cast<double>(n);
  }
  /// Per-entry curvatures (one-vs-rest losses with an entrywise penalty) are floored at this
  /// fraction of the block's largest, max_k h_jk: an entry with no active margin (h_jk = 0,
  /// G_jk = 0) would otherwise take a step of 1/ε to zero. Empirical: on sector (OvR + L1,
  /// C = 1) the floor 1e-3 and 1e-1 reach LIBLINEAR's objective in the same time, 2.3× sooner
  /// than the block's single curvature max_k h_jk (eq. 6).
  static constexpr double relative_entry_floor = 1e-3;
  /// The rounding floor of the measures in units of ε·max_j R°(G_j) at W = 0 (a margin on
  /// rounding: at λ = λ_max, max(0, R°(G_j) − λ) is left at about 1e-17 rather than 0).
  static constexpr double noise_floor_ulps = 16.0;
  /// The rounding error of a penalty part P in units of ε|P| (a margin on rounding): with the
  /// kernel's bound for the loss part (Trial::noise), what a line-search test must exceed.
  static constexpr double penalty_rounding_ulps = 4.0;
  /// penalty_rounding_ulps·ε in the solve's precision.
  static constexpr double penalty_rounding =
      penalty_rounding_ulps * static_cast<double>(std::numeric_limits<Scalar>::epsilon());

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
  struct LineSearch {
    double sigma = 0.0;  // sufficient decrease of eq. (7)
    Scalar beta = 0;     // backtracking factor
    Scalar epsilon = 0;  // floor of L_j = max(‖h_j‖_∞, ε) (eq. 6)
    std::int32_t max_backtracks = 0;
  };

  /// Where a line search along δ starts (eq. 7): the predicted decrease
  /// Δ = G_jᵀδ + P(W_j + δ) − P(W_j) (< 0 in exact arithmetic) and the penalty parts at α = 0
  /// and α = 1 (all 0 for the unpenalised intercept).
  struct Descent {
    double predicted = 0.0;
    double penalty_before = 0.0;
    double penalty_full = 0.0;
  };

  /// The step a line search accepted: α (0 when none) and the penalty part at W_j + αδ.
  struct Accepted {
    Scalar alpha = 0;
    double penalty = 0.0;
  };

  // ---- setup --------------------------------------------------------------------------------

  /// The column norms of the block Lipschitz constants, the largest column and nnz(X).
  static BcdColumns<Scalar> measure_columns(const Prob& problem, const FeatureColumns<Prob>& X, bool intercept) {
    const auto n = static_cast<std::size_t>(problem.n_samples());
    const auto d = static_cast<std::size_t>(problem.n_features());
    BcdColumns<Scalar> columns;
    columns.squared_norm.assign(d, Scalar(0));
    columns.max_size = intercept ? n : 0;
    const Scalar inv_n = Scalar(1) / static_cast<Scalar>(n);
    for (std::size_t j = 0; j < d; ++j) {
      const auto col = X.outer(static_cast<Index>(j));
      columns.max_size = std::max(columns.max_size, col.size());
      columns.nnz += static_cast<double>(col.size());
      Scalar sum = 0;
      for (auto [i, x] : col) sum += problem.weight(i) * x * x;
      columns.squared_norm[j] = sum * inv_n;
    }
    for (std::size_t i = 0; intercept && i < n; ++i)
      columns.intercept_squared_norm += problem.weight(static_cast<Index>(i)) * inv_n;
    return columns;
  }

  /// The column of ones overlaps every feature column (uncentred data), so a stale b slows every
  /// row's progress: b is revisited after each run of rows whose work (nonzeros) adds up to
  /// its own n, which at most doubles an epoch's work.
  static std::size_t intercept_stride(std::size_t n, std::size_t d, double nnz) {
    return static_cast<std::size_t>(
        std::max(1.0, std::ceil(static_cast<double>(n) * static_cast<double>(d) / std::max(nnz, 1.0))));
  }

  static LineSearch line_search_parameters(const StepRule& rule) {
    if constexpr (line_search)
      return {rule.sigma, static_cast<Scalar>(rule.beta), static_cast<Scalar>(rule.epsilon), rule.max_backtracks};
    else
      return {};
  }

  /// v_0 of eq. (10) at W = 0, b = 0 for every λ of the path, in one pass: the violation at
  /// W = 0 of a row is 0 when R°(G_j) ≤ λ (−G_j ∈ λ∂R(0)), so only rows above λ_k are
  /// evaluated at λ_k. Alongside, the largest gradient size max_j R°(G_j) sets the rounding
  /// floor (noise_floor_ulps): no stopping test asks for less. A cold start also keeps
  /// R°(G_j), the strong rule's gradients at W = 0.
  void measure_at_zero() {
    state_.set_scores(X_, nullptr, nullptr);
    state_.refresh();
    const std::size_t n_lambdas = lambdas_.size();
    double gradient_max = 0.0;
    for (std::size_t j = 0; j < d_; ++j) {
      state_.template gradient<false>(X_.outer(static_cast<Index>(j)), G_.data(), H_.data());
      const auto size = static_cast<double>(penalty_.dual_norm(cspan_of(G_)));
      // A penalty without a dual norm (NoPenalty: R° = +∞ off 0) sizes the floor by ‖G_j‖₁
      // (≥ every R° the penalties use): an infinite floor would make every test vacuous.
      gradient_max =
          std::max(gradient_max, std::isfinite(size) ? size : static_cast<double>(G_.head(K_).template lpNorm<1>()));
      if (!warm_started_) row_dual_[j] = size;
      for (std::size_t k = 0; k < n_lambdas; ++k) {
        if (n_lambdas > 1 && !(size > lambdas_[k])) continue;
        penalty_.lambda = lambdas_[k];
        zero_measure_[k].add(static_cast<double>(penalty_.violation(cspan_of(zero_row_), cspan_of(G_))));
      }
    }
    if (intercept_) {
      state_.template gradient<false>(ones_column_, G_.data(), H_.data());
      const auto v = static_cast<double>(G_.head(K_).norm());
      gradient_max = std::max(gradient_max, v);
      for (ZeroMeasure& at_lambda : zero_measure_) at_lambda.add(v);
    }
    noise_floor_ = noise_floor_ulps * static_cast<double>(std::numeric_limits<Scalar>::epsilon()) * gradient_max;
  }

  /// The warm start: W, b (when fit_intercept is set and the model has one), the labels, the
  /// bias and the caches at them.
  void start_from(const LinearModel<Scalar>& initial) {
    check_warm_start("BlockCD", initial, static_cast<std::int64_t>(d_), static_cast<std::int64_t>(K_));
    initial.copy_to(W_);
    if (intercept_ && initial.has_intercept()) b_ = initial.intercept();
    labels_ = initial.labels();
    bias_ = initial.provenance().bias;
    state_.set_scores(X_, W_.data(), intercept_ ? b_.data() : nullptr);
    state_.refresh();
  }

  /// The start of point k of a path from the last two solutions (Options::extrapolate_path):
  /// W_{k−1} + r (W_{k−1} − W_{k−2}) on the nonzero rows of W_{k−1}, b likewise, kept when its
  /// F at λ_k is below that of W_{k−1}, whose rows are then saved for point k + 1. The
  /// extrapolated point costs its scores, one O(nnz(X)·K) pass (two when it is refused).
  void extrapolate_start(std::size_t point) {
    const double r = point >= 2 ? std::log(lambdas_[point] / lambdas_[point - 1]) /
                                      std::log(lambdas_[point - 1] / lambdas_[point - 2])
                                : 0.0;
    current_.save(W_, b_);
    if (point >= 2 && std::isfinite(r) && r > 0.0 && !previous_.support.empty()) {
      const auto step = static_cast<Scalar>(r);
      std::size_t q = 0;  // walks previous_.support alongside current_.support
      for (std::size_t p = 0; p < current_.support.size(); ++p) {
        const std::size_t j = current_.support[p];
        while (q < previous_.support.size() && previous_.support[q] < j) ++q;
        const RowMap now = current_.row(p);
        if (q < previous_.support.size() && previous_.support[q] == j)
          w_try_ = now + step * (now - previous_.row(q));
        else
          w_try_ = (Scalar(1) + step) * now;  // W_{k−2, j} = 0
        put_row(j, cspan_of(w_try_));
      }
      if (intercept_) b_ += step * (b_ - previous_.b);
      const double F_previous = F_;
      refresh_scores();
      if (!(F_ < F_previous)) {
        for (std::size_t p = 0; p < current_.support.size(); ++p)
          put_row(current_.support[p], std::span<const Scalar>(current_.row(p).data(), current_.row(p).size()));
        b_ = current_.b;
        refresh_scores();
      }
    }
    std::swap(previous_, current_);
  }

  /// The caches (scores, loss values) and F recomputed from W and b.
  void refresh_scores() {
    state_.set_scores(X_, W_.data(), intercept_ ? b_.data() : nullptr);
    state_.refresh();
    update_objective();
  }

  // ---- rows -------------------------------------------------------------------------------

  [[nodiscard]] Eigen::Index stride() const noexcept { return static_cast<Eigen::Index>(state_.stride()); }

  /// The first K entries of a (stride-long) buffer.
  std::span<Scalar> span_of(ClassVector<Scalar>& v) const {
    return std::span<Scalar>(v.data(), static_cast<std::size_t>(K_));
  }
  std::span<const Scalar> cspan_of(const ClassVector<Scalar>& v) const {
    return std::span<const Scalar>(v.data(), static_cast<std::size_t>(K_));
  }

  /// W_j, the K weights of feature j.
  std::span<Scalar> row(std::size_t j) {
    return std::span<Scalar>(W_.data() + j * static_cast<std::size_t>(K_), static_cast<std::size_t>(K_));
  }

  static bool is_zero(std::span<const Scalar> w) {
    return std::all_of(w.begin(), w.end(), [](Scalar v) { return v == Scalar(0); });
  }

  /// Replaces row j by w (after an accepted step), keeping the caches in step.
  void set_row(std::size_t j, std::span<const Scalar> w, double penalty_value) {
    const auto target = row(j);
    nnz_rows_ += (is_zero(w) ? 0 : 1) - (is_zero(target) ? 0 : 1);
    std::copy(w.begin(), w.end(), target.begin());
    row_penalty_[j] = penalty_value;
  }

  /// set_row with P(w) at the current λ (the scores are not updated).
  void put_row(std::size_t j, std::span<const Scalar> w) {
    set_row(j, w, static_cast<double>(penalty_.value(w)));
  }

  // ---- the epoch ----------------------------------------------------------------------------

  /// The blocks of the first epoch at this λ: all, or on a path the sequential strong rule's
  /// set {j : W_j ≠ 0 or R°(G_j(W(λ_{k−1}))) ≥ 2λ_k − λ_{k−1}} and the intercept.
  void select_first_blocks(std::size_t point, double lambda_previous) {
    active_.clear();
    const double strong = 2 * lambda_ - lambda_previous;
    const bool screen = options_.screening && point > 0 && lambda_ < lambda_previous;
    for (std::size_t j = 0; j < blocks_; ++j)
      if (!screen || j == d_ || !is_zero(row(j)) || !(row_dual_[j] < strong)) active_.push_back(j);
    // Until a full pass has been made, a shrunk (screened) set is re-checked only once it
    // meets the trigger itself: the strong rule is seldom wrong.
    last_full_measure_ = active_.size() == blocks_ ? std::numeric_limits<double>::infinity() : 0.0;
    // No shrinking in the first epoch, except after a screened start, where the last margin
    // of the previous λ is kept (the strong set is mostly the previous solution).
    if (!screen) margin_ = std::numeric_limits<double>::infinity();
    gradient_first_ = screen;  // most zero rows of a strong set stay zero
    // No focus sweeps from a screened start: a warm-started point has no slow tail for them to
    // shorten, and on sector's path they cost more than they saved (docs/bcd.md (c)).
    focus_on_ = !screen;
    checking_ = false;
    spread_.invalidate();
  }

  /// RichtarikTakac's epoch: the parallel rounds when τ > 1 for the active blocks, else one
  /// draw at a time.
  void draw_epoch() {
    if constexpr (parallel_rounds) {
      if (rounds_.size.parallel()) {
        if (spread_.stale(active_.size()))
          spread_.measure(problem_, X_, std::span<const std::size_t>(active_), columns_.squared_norm,
                          columns_.intercept_squared_norm);
        const std::size_t tau = rounds_.size.tau(active_.size(), spread_.mean_degree, spread_.mean_column,
                                                 static_cast<std::size_t>(K_));
        if (tau > 1) return draw_rounds(tau);
      }
    }
    draw_blocks();
  }

  /// RichtarikTakac's serial epoch: |active| uniform draws with replacement; a shrunk block
  /// leaves by swap-and-pop.
  void draw_blocks() {
    const std::size_t draws = active_.size();
    for (std::size_t t = 0; t < draws && !active_.empty(); ++t) {
      const auto u = static_cast<std::size_t>(uniform_index(rng_, active_.size()));
      if (visit(active_[u]).shrink) {
        active_[u] = active_.back();
        active_.pop_back();
      }
    }
  }

  // ---- the parallel constant step (richtarik_takac.hpp) -------------------------------------

  /// How many blocks a round can take (RoundSize: the option's τ, or one chosen per epoch for
  /// the team) and the buffers of the parallel steps.
  void set_up_rounds(int team) {
    rounds_.team = std::max(1, team);
    rounds_.size = RoundSize(static_cast<std::size_t>(options_.step_rule.tau), rounds_.team, blocks_, state_.stride(),
                             sizeof(Scalar));
    if (rounds_.team > 1 || rounds_.size.parallel()) rounds_.allocate_workers(state_, state_.stride());
    if (!rounds_.size.parallel()) return;
    rounds_.allocate_rounds(X_, intercept_, K_, state_.stride());
    spread_.reserve(n_, d_);
  }

  /// RichtarikTakac's parallel epoch (the PCDM of Richtárik & Takáč): rounds of τ distinct
  /// active blocks drawn uniformly (a τ-nice sampling of the active set); each thread sums
  /// their gradients over its own samples, the steps are taken side by side from the summed
  /// gradients with the ESO constants v_j and committed in draw order, then each thread moves
  /// its own samples' scores; as many rounds as make |active| draws. One parallel region holds
  /// the epoch. Each round: the ranges' sums, barrier, the steps shared out (ending with a
  /// barrier), the leader commits while the others move their samples' scores, barrier, the
  /// leader draws the next round, barrier. A thread takes every team-th range, so a team
  /// smaller than the ranges' count makes the same sums in the same order: the same iterates.
  void draw_rounds(std::size_t tau) {
    const std::size_t ranges = rounds_.range_start.size() - 1;
    const std::size_t draws = active_.size();
    std::size_t size = draw_round(tau);
    std::size_t drawn = 0;
    bool more = true;
    on_team(epoch_team(size), [&](TeamRegion& team) {
      while (more) {
        team.parts(ranges, [&](std::size_t r) { sum_range_gradients(r, size); });
        team.barrier();
        team.tasks(size, [&](std::size_t slot) { plan_slot(slot); });
        team.leader([&] { commit_round(size); });
        team.parts(ranges, [&](std::size_t r) { move_range_samples(r, size); });
        team.barrier();
        team.leader([&] {
          drawn += size;
          more = !team.failed() && drawn < draws && !active_.empty();
          if (more) size = draw_round(tau);
        });
        team.barrier();
      }
    });
  }

  /// The threads that share the epoch's rounds of `size` blocks (RoundSize::threads), from the
  /// work of a round of the active set's mean column: fewer than the team when the rounds are
  /// small (an explicit τ on a small problem, a shrunk set on many cores).
  [[nodiscard]] int epoch_team(std::size_t size) const {
    return rounds_.size.threads(static_cast<double>(size) * spread_.mean_column * static_cast<double>(K_));
  }

  /// The round's blocks: a partial Fisher–Yates shuffle puts min(τ, m) uniformly drawn distinct
  /// blocks of the m active ones first; their ESO share (τ − 1)/max(1, m − 1). Returns how many.
  std::size_t draw_round(std::size_t tau) {
    const std::size_t m = active_.size();
    const std::size_t size = std::min(tau, m);
    for (std::size_t t = 0; t < size; ++t) {
      const std::size_t u = t + static_cast<std::size_t>(uniform_index(rng_, m - t));
      std::swap(active_[t], active_[u]);
      rounds_.slots[t].block = active_[t];
    }
    round_spread_ = static_cast<Scalar>(size - 1) / static_cast<Scalar>(std::max<std::size_t>(1, m - 1));
    return size;
  }

  /// Column `block` of the blocks (block d is the column of ones).
  [[nodiscard]] Column block_column(std::size_t block) const {
    return block == d_ ? ones_column_ : X_.outer(static_cast<Index>(block));
  }

  /// Over range r of the samples (its thread's own): the part of every slot's column there
  /// and the partial block gradient over it (an inert row needs none).
  void sum_range_gradients(std::size_t r, std::size_t size) {
    const auto lo = static_cast<Index>(rounds_.range_start[r]);
    const auto hi = static_cast<Index>(rounds_.range_start[r + 1]);
    for (std::size_t slot = 0; slot < size; ++slot) {
      const std::size_t block = rounds_.slots[slot].block;
      const Column col = block_column(block);
      auto& part = rounds_.part(r, slot);
      part = part_between(col, lo, hi, static_cast<Index>(n_));
      if (block != d_ && columns_.squared_norm[block] == Scalar(0)) continue;
      Scalar* partial = rounds_.partial(r, slot, state_.stride());
      state_.template gradient<false>(part_of(col, part), partial, partial, rounds_.workspaces[r]);
    }
  }

  /// One step of the round, side by side with the others: it sums its block's partial
  /// gradients in range order (into range 0's buffer) and writes its slot and its row's
  /// R°(G_j) only.
  void plan_slot(std::size_t slot) {
    Eigen::Map<ClassVector<Scalar>> G(rounds_.partial(0, slot, state_.stride()), stride());
    for (std::size_t r = 1; r < rounds_.range_start.size() - 1; ++r)
      G += Eigen::Map<const ClassVector<Scalar>>(rounds_.partial(r, slot, state_.stride()), stride());
    plan_block(slot, G);
  }

  /// One block's parallel step: with its gradient G_j at the round's scores, the violation
  /// (eq. 10) and shrinking test of visit_row, and W_j* = prox_{P/v_j}(W_j − G_j/v_j) with
  /// δ = W_j* − W_j (the intercept: δ = −∇_b L/v_b; an inert row: W_j* = 0 and δ = 0, its
  /// scores do not matter).
  void plan_block(std::size_t slot, const Eigen::Map<ClassVector<Scalar>>& G) {
    RoundSlot& out = rounds_.slots[slot];
    const std::size_t j = out.block;
    Eigen::Map<ClassVector<Scalar>> delta(rounds_.deltas.data() + static_cast<Eigen::Index>(slot) * stride(), stride());
    Eigen::Map<ClassVector<Scalar>> w_star(rounds_.rows.data() + static_cast<Eigen::Index>(slot) * K_, K_);
    const std::span<const Scalar> gradient(G.data(), static_cast<std::size_t>(K_));
    out.shrink = out.moves = false;
    if (j == d_) {
      out.violation = static_cast<double>(G.head(K_).norm());
      const Scalar v = curvature_bound_ * (columns_.intercept_squared_norm + spread_.intercept * round_spread_);
      delta.head(K_) = -G.head(K_) / v;
      out.moves = out.violation > 0.0;
      return;
    }
    const std::span<const Scalar> w = row(j);
    if (columns_.squared_norm[j] == Scalar(0)) {
      out.violation = static_cast<double>(penalty_.violation(w, cspan_of(zero_row_)));
      out.shrink = options_.shrinking;
      row_dual_[j] = 0.0;
      out.moves = !is_zero(w);
      w_star.setZero();
      delta.setZero();
      out.penalty = 0.0;
      return;
    }
    out.violation = static_cast<double>(penalty_.violation(w, gradient));
    row_dual_[j] = static_cast<double>(penalty_.dual_norm(gradient));
    const bool zero = is_zero(w);
    out.shrink = zero && options_.shrinking && row_dual_[j] < lambda_ - margin_;
    if (out.shrink || out.violation == 0.0) return;
    const Scalar step =
        Scalar(1) / (curvature_bound_ * (columns_.squared_norm[j] + spread_.column[j] * round_spread_));
    const RowMap w_now(w.data(), K_);
    w_star = w_now - step * G.head(K_);
    penalty_.prox(std::span<Scalar>(w_star.data(), static_cast<std::size_t>(K_)), step);
    delta.head(K_) = w_star - w_now;
    out.moves = !delta.head(K_).isZero(0);
    if (out.moves) out.penalty = static_cast<double>(penalty_.value(std::span<const Scalar>(w_star.data(), w.size())));
  }

  /// The round in draw order: the violations and work counted, the new rows (and b) set, the
  /// shrunk blocks out of the active set (swap-and-pop from the last slot, whose blocks are
  /// first in active_).
  void commit_round(std::size_t size) {
    for (std::size_t slot = 0; slot < size; ++slot) {
      const RoundSlot& out = rounds_.slots[slot];
      tally_.add(out.violation);
      tally_.work += static_cast<double>(out.block == d_ ? n_ : column_size(out.block));
      if (!out.moves) continue;
      if (out.block == d_)
        b_ += rounds_.deltas.segment(static_cast<Eigen::Index>(slot) * stride(), K_);
      else
        set_row(out.block,
                std::span<const Scalar>(rounds_.rows.data() + static_cast<Eigen::Index>(slot) * K_,
                                        static_cast<std::size_t>(K_)),
                out.penalty);
    }
    for (std::size_t slot = size; slot-- > 0;) {
      if (!rounds_.slots[slot].shrink) continue;
      active_[slot] = active_.back();
      active_.pop_back();
    }
  }

  /// The scores of range r after the round: x_ij δ_j of every moving block, in draw order, on
  /// the range's own samples (the kernel's apply on the part of the column there). Reads the
  /// slots' block, moves and δ only, so it may run beside the commit.
  void move_range_samples(std::size_t r, std::size_t size) {
    for (std::size_t slot = 0; slot < size; ++slot) {
      const RoundSlot& out = rounds_.slots[slot];
      if (!out.moves) continue;
      state_.apply(part_of(block_column(out.block), rounds_.part(r, slot)),
                   rounds_.deltas.data() + static_cast<Eigen::Index>(slot) * stride(), Scalar(1));
    }
  }

  /// TsengYun's epoch: the active blocks in order (a fresh random one with `permute`), the
  /// intercept revisited after every `intercept_stride_` rows; shrunk blocks leave the set. A
  /// check pass first marks the blocks it visits, the others are measured by check_left_out.
  /// An epoch over a shrunk set ends with the focus sweeps (not after a screened start).
  void sweep_blocks() {
    if (checking_) {
      std::fill(inside_.begin(), inside_.end(), 0);
      for (const std::size_t block : active_) inside_[block] = 1;
    }
    if (options_.step_rule.permute) shuffle(std::span<std::size_t>(active_), rng_);
    focus_.clear();
    std::size_t kept = 0;
    for (std::size_t k = 0; k < active_.size(); ++k) {
      const std::size_t block = active_[k];
      const Visit out = visit(block);
      if (!out.shrink) {
        active_[kept++] = block;
        if (block != d_ && out.violation > 0.0) focus_.push_back({out.violation, block});
      }
      if (intercept_ && block != d_ && (k + 1) % intercept_stride_ == 0) {
        visit_intercept();
        tally_.work += static_cast<double>(n_);
      }
    }
    active_.resize(kept);
    if (!full_pass_ && focus_on_) sweep_focus();
  }

  /// TsengYun's focus sweeps: the `focus_share` of this epoch's violating rows with the
  /// largest v_j, visited `focus_sweeps` more times (their work counts, their violations do
  /// not: the epoch's measure is that of its one visit of every active block).
  void sweep_focus() {
    const auto& rule = options_.step_rule;
    if (rule.focus_sweeps == 0 || focus_.empty()) return;
    const auto size = std::max<std::size_t>(
        1, static_cast<std::size_t>(rule.focus_share * static_cast<double>(focus_.size())));
    std::nth_element(focus_.begin(), focus_.begin() + static_cast<std::ptrdiff_t>(size - 1), focus_.end(),
                     std::greater<>());
    focus_.resize(size);
    for (std::int32_t sweep = 0; sweep < rule.focus_sweeps; ++sweep)
      for (const auto& [violation, j] : focus_) {
        visit_row(j);
        tally_.work += static_cast<double>(column_size(j));
      }
  }

  /// Visits one block (d is the intercept), counting its violation and work.
  Visit visit(std::size_t block) {
    const Visit out = block == d_ ? visit_intercept() : visit_row(block);
    tally_.work += static_cast<double>(block == d_ ? n_ : column_size(block));
    tally_.add(out.violation);
    return out;
  }

  [[nodiscard]] std::size_t column_size(std::size_t j) const {
    return X_.outer(static_cast<Index>(j)).size();
  }

  /// The check pass of the cyclic rule (after a shrunk or screened phase): the blocks left out
  /// are not visited one by one; their gradients G_j = Σ_i x_ij D_i come from the table of
  /// per-sample gradients D_i = (c_i/n)∇ℓ(s_i) at the end of the epoch (n × stride, filled by
  /// the kernel itself on one-entry columns), a plain sparse × dense product, and a row that
  /// violates re-enters the active set for the next epoch. Every block's violation is
  /// measured in such an epoch, so it counts as a full pass.
  void check_left_out() {
    const Scalar one = 1;
    for (std::size_t i = 0; i < n_; ++i) {
      const auto index = static_cast<Index>(i);
      state_.template gradient<false>(Column{std::span<const Index>(&index, 1), std::span<const Scalar>(&one, 1)},
                                      sample_gradients_.data() + static_cast<Eigen::Index>(i) * stride(), H_.data());
    }
    for (std::size_t j = 0; j < d_; ++j) {
      if (inside_[j]) continue;
      G_.setZero();
      for (auto [i, x] : X_.outer(static_cast<Index>(j)))
        G_ += x * sample_gradients_.segment(static_cast<Eigen::Index>(i) * stride(), stride()).matrix();
      const auto v = static_cast<double>(penalty_.violation(std::span<const Scalar>(row(j)), cspan_of(G_)));
      row_dual_[j] = static_cast<double>(penalty_.dual_norm(cspan_of(G_)));
      tally_.add(v);
      if (v > 0.0) {
        active_.push_back(j);
        list_entries(j);
      }
    }
  }

  /// The next epoch is a full pass, which alone can converge: a check pass (cyclic rule) or a
  /// visit of every block restored (random rule).
  void restore_full_pass() {
    if constexpr (check_by_table) {
      checking_ = true;
    } else {
      active_.resize(blocks_);
      std::iota(active_.begin(), active_.end(), std::size_t{0});
      gradient_first_ = true;
      spread_.invalidate();
    }
  }

  // ---- the block visits (Algorithm 2) ---------------------------------------------------

  /// One visit of feature row j: the block gradient G_j (eq. 5, with the curvature h_j of
  /// eq. 6 for the line search), the violation v_j = dist(−G_j, λ∂R(W_j) + μW_j) of eq. (10),
  /// the shrinking test (§5.2.4: a zero row with R°(G_j) < λ − M/n leaves), then the step.
  Visit visit_row(std::size_t j) {
    if (columns_.squared_norm[j] == Scalar(0)) return visit_inert_row(j);
    const std::span<const Scalar> w = row(j);
    const Column col = X_.outer(static_cast<Index>(j));
    const bool zero = is_zero(w);
    // A check pass (after a shrunk or screened phase) mostly meets zero rows that stay zero:
    // their gradient first, the curvature only for a violator.
    const bool check_first = line_search && zero && gradient_first_;
    const bool on_listed = listed_gradient(j, col);
    if (!on_listed) {
      if (check_first) state_.template gradient<false>(col, G_.data(), H_.data());
      else state_.template gradient<line_search>(col, G_.data(), H_.data());
      list_entries(j);
    }
    const auto v = static_cast<double>(penalty_.violation(w, cspan_of(G_)));
    row_dual_[j] = static_cast<double>(penalty_.dual_norm(cspan_of(G_)));
    if (zero && options_.shrinking && row_dual_[j] < lambda_ - margin_) return {v, true};
    if (v == 0.0) return {v, false};
    if (check_first && !on_listed) state_.template gradient<line_search>(col, G_.data(), H_.data());
    if constexpr (line_search) line_search_step_row(j, col);
    else constant_step_row(j, col);
    return {v, false};
  }

  /// In a shrunk epoch with per-entry working sets: G_j and h_j on row j's listed classes
  /// (zero elsewhere) when they are few enough; returns whether it computed them.
  bool listed_gradient(std::size_t j, const Column& col) {
    if constexpr (entry_shrinking) {
      if (full_pass_ || !options_.shrinking) return false;
      const char* is_listed = listed_.data() + j * static_cast<std::size_t>(K_);
      if (!few_classes([&](Eigen::Index k) { return is_listed[k] != 0; }, listed_share, listed_classes_)) return false;
      G_.setZero();
      H_.setZero();
      state_.template gradient<line_search>(col, G_.data(), H_.data(),
                                            std::span<const ClassIndex>(listed_classes_), is_listed);
      return true;
    } else {
      (void)j;
      (void)col;
      return false;
    }
  }

  /// Row j's working set from its whole gradient G_j (in G_): the classes with W_jk ≠ 0 or
  /// R°(G_jk) ≥ λ − M/n (all of them in an epoch without shrinking).
  void list_entries(std::size_t j) {
    if constexpr (entry_shrinking) {
      char* is_listed = listed_.data() + j * static_cast<std::size_t>(K_);
      const std::span<const Scalar> w = row(j);
      const double floor = lambda_ - margin_;
      for (Eigen::Index k = 0; k < K_; ++k) {
        const auto k_ = static_cast<std::size_t>(k);
        is_listed[k] = static_cast<char>(w[k_] != Scalar(0) ||
                                         !(static_cast<double>(penalty_.dual_norm(cspan_of(G_).subspan(k_, 1))) < floor));
      }
    } else {
      (void)j;
    }
  }

  /// A row no sample depends on (x_j = 0, or only weightless samples): argmin P = 0 is optimal.
  Visit visit_inert_row(std::size_t j) {
    const std::span<const Scalar> w = row(j);
    const auto v = static_cast<double>(penalty_.violation(w, cspan_of(zero_row_)));
    if (!is_zero(w)) set_row(j, cspan_of(zero_row_), 0.0);
    row_dual_[j] = 0.0;
    return {v, options_.shrinking};
  }

  /// One visit of the intercept: an unpenalised block over the column of ones, whose
  /// violation is ‖∇_b L‖₂.
  Visit visit_intercept() {
    state_.template gradient<line_search>(ones_column_, G_.data(), H_.data());
    const auto v = static_cast<double>(G_.head(K_).norm());
    if (v == 0.0) return {v, false};
    if constexpr (line_search) line_search_step_intercept();
    else constant_step_intercept();
    return {v, false};
  }

  /// TsengYun's step on row j (eqs. 3–4, 6–7): W_j* the minimiser of the quadratic model,
  /// δ = W_j* − W_j, α by Armijo backtracking; the constant step when the test cannot be
  /// decided.
  void line_search_step_row(std::size_t j, const Column& col) {
    const RowMap w_now(row(j).data(), K_);
    minimise_model(w_now);
    delta_.head(K_) = w_star_ - w_now;
    if (is_zero(cspan_of(delta_))) return;
    list_moved_classes();
    const auto P_star = static_cast<double>(penalty_.value(cspan_of(w_star_)));
    const double Delta = static_cast<double>(G_.head(K_).dot(delta_.head(K_))) + P_star - row_penalty_[j];
    const Accepted step = Delta < 0.0 ? backtrack(col, {Delta, row_penalty_[j], P_star},
                                                  [&](Scalar alpha) { return penalty_at_step(w_now, alpha); })
                                      : Accepted{};
    if (step.alpha == Scalar(1)) set_row(j, cspan_of(w_star_), step.penalty);
    else if (step.alpha > Scalar(0)) set_row(j, cspan_of(w_try_), step.penalty);
    else constant_step_row(j, col);
  }

  /// W_j* = prox_{P/L_j}(W_j − G_j/L_j) into w_star_ with L_j = max(‖h_j‖_∞, ε) (eq. 6 and the
  /// prox step, eqs. 3–4), or, with per-entry curvatures, each entry's own L_jk.
  void minimise_model(const RowMap& w_now) {
    const Scalar h_max = std::max(H_.head(K_).maxCoeff(), search_.epsilon);
    if constexpr (per_entry_curvature) {
      // Per-entry curvatures: the quadratic model's diagonal is h_jk itself, floored
      // relatively (entries with no active margin would otherwise jump).
      const Scalar floor = std::max(search_.epsilon, Scalar(relative_entry_floor) * h_max);
      for (Eigen::Index k = 0; k < K_; ++k) {
        const Scalar step = Scalar(1) / std::max(H_[k], floor);
        w_star_[k] = penalty_.prox_entry(w_now[k] - step * G_[k], step);
      }
    } else if constexpr (diagonal_metric) {
      // The block model's own diagonal h_j (floored as above). A loss invariant to adding a
      // constant to every score (dual domain a shifted simplex) has no curvature along 1: the
      // model's minimiser is taken on Σ_k w_k = 0, where every optimal row lies; without the
      // constraint the rows drift along 1, held back only by λ, and the solve stalls.
      const Scalar floor = std::max(search_.epsilon, Scalar(relative_entry_floor) * h_max);
      for (Eigen::Index k = 0; k < K_; ++k) {
        metric_[k] = std::max(H_[k], floor);
        w_star_[k] = w_now[k] - G_[k] / metric_[k];
      }
      prox::group_soft_threshold_metric(span_of(w_star_), cspan_of(metric_), lambda_, static_cast<double>(penalty_.mu),
                                        Loss::dual_domain == DualDomain::shifted_simplex);
    } else {
      const Scalar step = Scalar(1) / h_max;
      w_star_ = w_now - step * G_.head(K_);
      penalty_.prox(span_of(w_star_), step);
    }
  }

  /// The classes with δ_k ≠ 0 into moved_ when they are few enough for the kernel's
  /// class-by-class trial (else moved_ is left empty: whole rows).
  void list_moved_classes() {
    if constexpr (sparse_moves)
      if (!few_classes([&](Eigen::Index k) { return delta_[k] != Scalar(0); }, sparse_move_share, moved_))
        moved_.clear();
  }

  /// The classes k with `selected(k)` into `out` (reserved to K); false, with `out` partly
  /// filled, as soon as they are more than K / share.
  template <class Selected>
  bool few_classes(Selected&& selected, Eigen::Index share, std::vector<ClassIndex>& out) const {
    out.clear();
    for (Eigen::Index k = 0; k < K_; ++k) {
      if (!selected(k)) continue;
      if (static_cast<Eigen::Index>(out.size()) * share >= K_) return false;
      out.push_back(static_cast<ClassIndex>(k));
    }
    return true;
  }

  /// W_j + αδ into w_try_, and its penalty part: a backtracking trial's candidate.
  double penalty_at_step(const RowMap& w_now, Scalar alpha) {
    w_try_ = w_now + alpha * delta_.head(K_);
    return static_cast<double>(penalty_.value(cspan_of(w_try_)));
  }

  /// TsengYun's step on the intercept: δ = −∇_b L / max(‖h_b‖_∞, ε), α by backtracking; the
  /// constant step when the test cannot be decided.
  void line_search_step_intercept() {
    delta_.head(K_) = -G_.head(K_) / std::max(H_.head(K_).maxCoeff(), search_.epsilon);
    if constexpr (sparse_moves) moved_.clear();
    const double Delta = static_cast<double>(G_.head(K_).dot(delta_.head(K_)));
    const Scalar alpha =
        Delta < 0.0 ? backtrack(ones_column_, {Delta, 0.0, 0.0}, [](Scalar) { return 0.0; }).alpha : Scalar(0);
    if (alpha > Scalar(0)) b_ += alpha * delta_.head(K_);
    else constant_step_intercept();
  }

  /// Armijo backtracking (eq. 7) along δ from `descent`; `penalty_at(α)` writes W_j + αδ to
  /// w_try_ and returns its penalty part. Returns the accepted α > 0 after committing the
  /// trial, or α = 0 when the test cannot be decided in floating point (σα|Δ| under the
  /// rounding noise of the objective difference) or no α ≤ β^max_backtracks passes.
  template <class PenaltyAt>
  Accepted backtrack(const Column& col, const Descent& descent, PenaltyAt&& penalty_at) {
    Scalar alpha = 1;
    double P_try = descent.penalty_full;
    for (std::int32_t back = 0;; ++back) {
      const kernels::Trial trial = try_step(col, alpha);
      const double bound = search_.sigma * static_cast<double>(alpha) * descent.predicted;
      if (trial.difference + (P_try - descent.penalty_before) <= bound) {
        commit_step(col, alpha);
        return {alpha, P_try};
      }
      const double noise = trial.noise + penalty_rounding * (std::abs(P_try) + std::abs(descent.penalty_before));
      if (!(std::abs(bound) > noise) || back >= search_.max_backtracks) return {};
      alpha *= search_.beta;
      P_try = penalty_at(alpha);
    }
  }

  /// The kernel's trial of α δ over the column: class by class when moved_ lists δ's classes.
  kernels::Trial try_step(const Column& col, Scalar alpha) {
    if constexpr (sparse_moves)
      if (!moved_.empty()) return state_.trial(col, delta_.data(), alpha, std::span<const ClassIndex>(moved_));
    return state_.trial(col, delta_.data(), alpha);
  }

  /// Makes the last trial current (class by class when moved_ lists δ's classes).
  void commit_step(const Column& col, Scalar alpha) {
    if constexpr (sparse_moves)
      if (!moved_.empty()) return state_.commit(col, delta_.data(), alpha, std::span<const ClassIndex>(moved_));
    state_.commit(col, delta_.data(), alpha);
  }

  /// The constant step W_j ← prox_{P/K_j}(W_j − G_j/K_j) with the block Lipschitz constant K_j
  /// (richtarik_takac.hpp, Appendix A): the whole step of RichtarikTakac, and TsengYun's step
  /// when its test cannot be decided (the descent lemma guarantees F does not increase, no
  /// test needed).
  void constant_step_row(std::size_t j, const Column& col) {
    const RowMap w_now(row(j).data(), K_);
    const Scalar step = Scalar(1) / (curvature_bound_ * columns_.squared_norm[j]);
    w_star_ = w_now - step * G_.head(K_);
    penalty_.prox(span_of(w_star_), step);
    delta_.head(K_) = w_star_ - w_now;
    if (is_zero(cspan_of(delta_))) return;
    state_.apply(col, delta_.data(), Scalar(1));
    set_row(j, cspan_of(w_star_), static_cast<double>(penalty_.value(cspan_of(w_star_))));
  }

  /// The constant step of the intercept, b ← b − ∇_b L / K_b.
  void constant_step_intercept() {
    delta_.head(K_) = -G_.head(K_) / (curvature_bound_ * columns_.intercept_squared_norm);
    state_.apply(ones_column_, delta_.data(), Scalar(1));
    b_ += delta_.head(K_);
  }

  // ---- measures and the certificate ---------------------------------------------------------

  /// max_j v_j at the current W over every block (gradients only, no step).
  double exact_measure() {
    double worst = exact_row_measure();
    if (intercept_) {
      state_.template gradient<false>(ones_column_, G_.data(), H_.data());
      worst = std::max(worst, static_cast<double>(G_.head(K_).norm()));
    }
    return worst;
  }

  /// max_j v_j over the feature rows.
  double exact_row_measure() {
    if constexpr (parallel_rounds)
      if (rounds_.team > 1) return exact_row_measure_on_team();
    double worst = 0.0;
    for (std::size_t j = 0; j < d_; ++j) {
      state_.template gradient<false>(X_.outer(static_cast<Index>(j)), G_.data(), H_.data());
      worst = std::max(worst, static_cast<double>(penalty_.violation(std::span<const Scalar>(row(j)), cspan_of(G_))));
    }
    return worst;
  }

  /// exact_row_measure on the team, in chunks of columns whose maxima are then taken (the same
  /// value at any count).
  double exact_row_measure_on_team() {
    std::vector<double>& chunk_max = rounds_.chunk_max;
    parallel_tasks(rounds_.team, chunk_max.size(), [&](std::size_t c) {
      const std::size_t worker = rounds_.worker();
      ClassVector<Scalar>& G = rounds_.gradients[worker];
      const std::span<const Scalar> gradient(G.data(), static_cast<std::size_t>(K_));
      double worst = 0.0;
      for (std::size_t j = d_ * c / chunk_max.size(); j < d_ * (c + 1) / chunk_max.size(); ++j) {
        state_.template gradient<false>(X_.outer(static_cast<Index>(j)), G.data(), G.data(),
                                        rounds_.workspaces[worker]);
        worst = std::max(worst, static_cast<double>(penalty_.violation(std::span<const Scalar>(row(j)), gradient)));
      }
      chunk_max[c] = worst;
    });
    return *std::max_element(chunk_max.begin(), chunk_max.end());
  }

  /// F of (1) from the cached loss values and the cached P(W_j): O(n + d).
  void update_objective() {
    penalty_part_ = std::accumulate(row_penalty_.begin(), row_penalty_.end(), 0.0);
    F_ = state_.loss_part() + penalty_part_;
  }

  /// The certificate (solver/duality_gap.hpp) of the current iterate: the caches are first
  /// recomputed from W and b (S = XW + 1bᵀ over the nonzero rows, the loss values, F), so the
  /// gap is the iterate's own, not that of scores drifted by the rounding of many updates, and
  /// the returned model can reuse it. One O(nnz(X)·K) pass more than the gap at cached scores.
  DualityGap certificate() {
    return gap_spent_.timed([&] {
      refresh_scores();
      return duality_gap_at_scores(loss_, penalty_, problem_, ClassMatrixRef<Scalar>(state_.scores_matrix()),
                                   penalty_part_, intercept_, gap_work_);
    });
  }

  [[nodiscard]] bool certifies(const DualityGap& gap) const { return gap.relative() <= options_.tol; }

  const Prob& problem_;
  const FeatureColumns<Prob> X_;  // X feature by feature (data/feature_columns.hpp)
  const Loss& loss_;
  const BlockCDOptions<StepRule>& options_;
  std::span<const double> lambdas_;  // the path (one λ for `fit`)
  Penalty penalty_;                  // at the current λ (μ and the rest are kept)
  std::size_t n_, d_;
  Eigen::Index K_;
  bool intercept_;
  std::size_t blocks_;  // d (+1 with an intercept): block d is the intercept
  BcdColumns<Scalar> columns_;
  std::size_t intercept_stride_;  // rows visited between two visits of the intercept (cyclic rule)
  Scalar curvature_bound_;        // κ of K_j = κ(1/n) Σ_i c_i x_ij² (richtarik_takac.hpp)
  std::vector<Index> all_rows_;   // the column of ones: its indices 0..n−1,
  std::vector<Scalar> ones_;      // its values,
  Column ones_column_;            // and the column itself
  Kernel state_;                  // the per-sample caches (the loss's block kernel)
  ClassMatrix<Scalar> W_;
  ClassVector<Scalar> b_;
  // G, H and δ are `stride` long for the kernel (zero past K); the rest are K long.
  ClassVector<Scalar> G_, H_, delta_;
  ClassVector<Scalar> metric_;          // the block model's diagonal (diagonal_metric)
  ClassVector<Scalar> w_star_, w_try_;  // W_j* (the full step) and W_j + αδ (a backtracking trial)
  ClassVector<Scalar> zero_row_;
  LineSearch search_;
  // R°(G_j) at the last visit of row j: the strong rule's gradients at the previous λ.
  std::vector<double> row_dual_;
  std::vector<ZeroMeasure> zero_measure_;  // per λ of the path
  double noise_floor_ = 0.0;               // noise_floor_ulps·ε max_j R°(G_j) at W = 0
  // P(W_j) per row (so F costs O(n + d) per epoch) and the count of nonzero rows.
  std::vector<double> row_penalty_;
  std::int64_t nnz_rows_ = 0;
  std::vector<Label> labels_;  // of the returned model: 0..K−1 or the warm start's
  double bias_ = -1.0;         // the warm start's bias feature
  bool warm_started_;
  // The check pass: the table of per-sample gradients D_i (n × stride) and the blocks visited.
  Eigen::Array<Scalar, Eigen::Dynamic, 1> sample_gradients_;
  std::vector<char> inside_;
  GapWorkspace<Scalar> gap_work_;
  double gap_cost_;  // the work of one gap evaluation (gap_cost)
  GapCost gap_spent_;  // the current λ's evaluations and their time
  Rng rng_;          // the block order
  // The parallel constant step (parallel_rounds): τ, the buffers, the ESO spread B_j of the
  // active blocks and the current round's share (τ − 1)/max(1, m − 1).
  ParallelRounds<Kernel, Scalar, Index> rounds_;
  EsoSpread<Scalar> spread_;
  Scalar round_spread_ = 0;
  std::vector<std::size_t> active_;
  std::vector<std::pair<double, std::size_t>> focus_;  // (v_j, j) of an epoch's violating rows (TsengYun)
  bool focus_on_ = true;  // this λ's shrunk epochs end with the focus sweeps (TsengYun; not after screening)
  std::vector<ClassIndex> moved_;  // δ's nonzero classes for a class-by-class trial (sparse_moves)
  // Per-entry working sets (entry_shrinking): d × K marks, and the visited row's list.
  std::vector<char> listed_;
  std::vector<ClassIndex> listed_classes_;
  // The current λ and its solve.
  double lambda_ = 0.0;
  double scale_ = 1.0;  // v_0 (1 when under the noise floor)
  WorkGapSchedule schedule_{0.0, 0.0};
  // The nonzero rows (and b) of the last two solutions of a path (Options::extrapolate_path).
  SavedRows<Scalar> previous_, current_;
  std::int64_t epoch_ = 0;
  double F_ = 0.0;
  double penalty_part_ = 0.0;  // Σ_j P(W_j) at the last update_objective()
  double measure_ = std::numeric_limits<double>::quiet_NaN();
  double margin_ = std::numeric_limits<double>::infinity();  // M/n; no shrinking in the first epoch
  double last_full_measure_ = 0.0;
  double gap_per_measure_ = 0.0;  // relative gap / measure at the last certificate (0: none yet)
  // Zero rows get their gradient first and the curvature only if they violate: set in the
  // epochs that mostly meet rows that stay zero (a screened start, a restored full pass).
  bool gradient_first_ = false;
  bool checking_ = false;   // this epoch is a check pass
  bool full_pass_ = false;  // this epoch measures every block
  bool gap_due_ = false;    // this epoch evaluates the certificate
  DualityGap epoch_gap_;    // the certificate of this epoch, when due
  EpochTally tally_;
};

}  // namespace sparsemc::detail
