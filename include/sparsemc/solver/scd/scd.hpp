#pragma once
/// \file scd.hpp
/// `SCD<Loss, Penalty, Variant>`: stochastic coordinate descent over the single weights w_jr of
/// W for objective (1), after Tao, Kong, Chu & Wu, "Stochastic coordinate descent methods for
/// regularized smooth and nonsmooth losses" (ECML PKDD 2012): Algorithm 1 (`Smooth`, "scd"),
/// Algorithm 2 (`Adaptive`, "scd-ls") and Algorithm 4 (`NonsmoothRDA`, "scd-rda"), see
/// variants.hpp. The cheapest iteration of the library, and its only primal coordinate method
/// for the nonsmooth Crammer–Singer hinge.

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
#include "../objective.hpp"
#include "../solver_base.hpp"
#include "detail/coordinate_kernel.hpp"
#include "options.hpp"
#include "variants.hpp"

namespace sparsemc {

/// Stochastic coordinate descent for objective (1),
///
///     min_{W, b} F(W, b) = (1/n) Σ_i c_i ℓ(Wᵀx_i + b, y_i) + Σ_{j,r} p(w_jr),   p(ω) = λ|ω| + (μ/2)ω²,
///
/// over the N = dK coordinates w_jr (+ K intercepts b_r, unpenalised), for an entrywise penalty
/// (`L1`, `NoPenalty` = ridge, their sum through μ) and any smooth loss (Smooth, Adaptive) or any
/// loss with a subgradient (NonsmoothRDA; Crammer–Singer is the case the paper was written
/// for). The paper's (1), F = λP(w) + Σ_i f_i(w) over m samples, is ours divided by m: λ_paper =
/// mλ, f_i = c_i ℓ_i.
///
/// **Iteration**: draw k = (j, r) uniformly at random (Algorithm 1 step 1; `order` offers a
/// permuted-cyclic sweep instead), compute the coordinate derivative of the loss part from the
/// cached scores of the samples in supp(x_j), and take the variant's step (variants.hpp: eq. 6
/// with the coordinate Lipschitz constant; eqs. 8–10 with backtracking from the generalised
/// second derivative; eq. 12, dual averaging). The scores of column r move on supp(x_j) only.
///
/// **Cost per coordinate** (detail/coordinate_kernel.hpp): O(nnz_j) for OvrSquaredHinge (its K
/// columns are independent binary problems), O(nnz_j) amortised for SquaredHinge, Logistic and
/// CrammerSinger (an O(K) refresh for the samples whose true or extreme class is r), O(nnz_j·K)
/// for a loss without a kernel (the loss is called on whole score rows). An epoch costs about
/// K·nnz(X) sample visits — one BlockCD epoch — plus O(nK) for the objective report. The losses
/// must have a conjugate (ConjugateLoss) for the certificate.
///
/// **Binary problems** (K = 2, labels ±1) are the paper's setting exactly: with
/// OvrSquaredHinge the two columns are the same L2-loss SVM with opposite labels, so (with
/// `binary_mirror`) the solver draws the d coordinates of column 1 only — Algorithm 1/2/4 on
/// w = W_:1, y_i = ±1, the paper's f_i(w) = c_i max(0, 1 − y_i wᵀx_i)²/n — and returns
/// W = [−w, w] (b likewise). F(W) = 2·F_paper(w)/m then, and LIBLINEAR's `-s 5 -c C` binary
/// objective is C·n times F_paper at λ = 1/(Cn). The pairwise losses (SquaredHinge, Logistic,
/// CrammerSinger) depend on s_1 − s_0 only: their two columns are solved as they are, and
/// u = W_:1 − W_:0 is the binary model.
///
/// **Stopping**: `converged` means the relative duality gap of (1) at the returned iterate is
/// ≤ tol (default 1e-3; solver/duality_gap.hpp, the loss-(sub)gradient dual candidate), and the
/// gap is reported for every status (info.duality_gap, info.relative_gap). A cheap measure decides
/// when the gap (two O(nnz·K) products) is evaluated (GapSchedule: when the measure reaches its
/// trigger, else after a doubling number of epochs) and stays a diagnostic (info.measure):
///   - smooth variants: the exact optimality violation V = Σ_k violation_entry(w_k, ∂L/∂w_k)
///     (+ Σ_r |∂L/∂b_r|), relative to V at W = 0 (LIBLINEAR's Gnorm1). A free per-epoch estimate
///     (each visited coordinate's violation) triggers an exact pass whenever it has fallen a
///     decade; the exact pass brings back coordinates that shrinking dropped. For OvrSquaredHinge
///     each class is a group of its own that leaves the draws when V_r ≤ level·V_r(0); when the
///     groups meet the level but the gap refuses, the level drops to a quarter of the measure and
///     the groups are checked again.
///   - RDA: the relative change of F at the returned iterate over one epoch; the gap is taken at
///     the iterate returned (the average w̄ by default, at the scores its objective needed).
/// No certificate exists without a penalty and with μ = 0 (the gap is F): such a run ends with
/// max_iter. **RDA + Crammer–Singer cannot certify 1e-3 in practice**: the subgradient candidate
/// e_{r*} − e_y is a valid dual point but not a tight one (at the optimum many samples sit on a
/// kink where the optimal dual is a convex combination), so the gap stalls far above F − F*;
/// the run ends with max_iter and the honest gap (an upper bound on F − F*), see docs/scd.md.
///
/// **Reproducibility**: the draws come from `Rng(seed)` with sparsemc's own uniform integers
/// and shuffle; a seed reproduces the result bit for bit.
///
/// **Warm start** (`fit(problem, initial)`): W starts at initial's weights (same d and K), b at its
/// intercept when fit_intercept is set (ignored otherwise); RDA centres its prox-function there.
///
/// The returned model has class labels 0..K−1 (or the warm-start model's labels);
/// `info.objective` is F of (1) recomputed from scratch at the returned model with its gap.
///
/// \code
///   #include <sparsemc/sparsemc.hpp>
///   using namespace sparsemc;
///   auto train = io::read_libsvm<double>("dna.scale");
///   const auto problem = train.problem<Eigen::ColMajor>();
///   // LIBLINEAR -s 5 -c 1 in (1): λ = 1/(Cn)
///   SCD<OvrSquaredHinge, L1, Adaptive> scd({}, {.lambda = 1.0 / 2000}, {.tol = 1e-4});
///   Result<double> fit = scd.fit(problem);
///   // the nonsmooth Crammer–Singer hinge with ℓ1, averaged RDA iterate
///   SCD<CrammerSinger, L1, NonsmoothRDA> rda({}, {.lambda = 1e-3}, {.max_epochs = 200});
///   History history;                                   // F(w̄) per epoch
///   auto averaged = rda.fit(problem, history);
/// \endcode
template <class Loss, class Penalty, class Variant = Adaptive>
class SCD : public detail::SolverBase<SCD<Loss, Penalty, Variant>, Loss, Penalty, SCDOptions<Variant>> {
  using Base = detail::SolverBase<SCD<Loss, Penalty, Variant>, Loss, Penalty, SCDOptions<Variant>>;
  friend Base;

 public:
  using Options = SCDOptions<Variant>;
  using loss_type = Loss;
  using penalty_type = Penalty;
  using variant_type = Variant;
  /// The registered solver name ("scd", "scd-ls" or "scd-rda"): provenance, tools.
  static constexpr std::string_view name = Variant::name;

  SCD(Loss loss, Penalty penalty, Options options = {}) : Base(std::move(loss), std::move(penalty), std::move(options)) {}

 private:
  /// The violation is computed exactly whenever the epoch's estimate has fallen to this
  /// fraction of the last exact value (or to tol): about one check per decade of progress,
  /// each bringing back the coordinates that shrinking dropped but that violate again.
  static constexpr double recheck_factor = 0.1;
  /// After a gap that refused to certify where the measure had met its level, the level drops
  /// to this fraction of the measure: the factor GapSchedule applies to its trigger.
  static constexpr double refused_tighten = 0.25;

  template <RealScalar Scalar, StorageIndex Index, int Order, class... Callbacks>
  Result<Scalar> run(const Problem<Scalar, Index, Order>& problem, const LinearModel<Scalar>* initial,
                     Callbacks&... callbacks) const {
    static_assert(Order == Eigen::ColMajor,
                  "SCD walks the data feature by feature: it needs a CSC problem "
                  "(Dataset::problem<Eigen::ColMajor>() or a CscView).");
    if constexpr (Variant::dual_averaging)
      static_assert(SmoothLoss<Loss, Scalar> || SubgradientLoss<Loss, Scalar>,
                    "SCD<…, NonsmoothRDA> needs a loss with a subgradient (or a gradient): see loss/concepts.hpp.");
    else
      static_assert(SmoothLoss<Loss, Scalar>,
                    "SCD<…, Smooth/Adaptive> needs a smooth loss: value, gradient, curvature and curvature_bound "
                    "(loss/concepts.hpp). Crammer-Singer is not smooth: use SCD<…, NonsmoothRDA>.");
    static_assert(ConjugateLoss<Loss, Scalar>,
                  "SCD stops on the duality gap of (1): the loss needs conjugate() and dual_domain "
                  "(ConjugateLoss, loss/concepts.hpp; examples/custom_loss.cpp shows one).");
    static_assert(EntrywisePenalty<Penalty, Scalar>,
                  "SCD updates single weights: it needs an entrywise penalty with prox_entry and violation_entry "
                  "(penalty/concepts.hpp): L1 or NoPenalty. Row penalties (L1L2, L1Linf) need BlockCD.");
    if constexpr (Order == Eigen::ColMajor) {
      problem.validate();
      const auto coordinates = static_cast<std::uint64_t>(problem.n_features() + 1) *
                               static_cast<std::uint64_t>(problem.n_classes());
      if (coordinates <= std::numeric_limits<std::uint32_t>::max())
        return solve<Scalar, Index, std::uint32_t>(problem, initial, callbacks...);
      return solve<Scalar, Index, std::uint64_t>(problem, initial, callbacks...);
    } else {
      return {};
    }
  }

  /// The whole solve; `Coord` is the integer type of coordinate ids k = j·K' + slot.
  template <RealScalar Scalar, StorageIndex Index, class Coord, class... Callbacks>
  Result<Scalar> solve(const CscProblem<Scalar, Index>& problem, const LinearModel<Scalar>* initial,
                       Callbacks&... callbacks) const {
    using Kernel = detail::CoordinateKernel<Loss, Scalar, Index>;
    using Column = typename Kernel::Column;
    using Need = detail::CoordinateNeed;
    if (!Loss::supports_multilabel && problem.y.multilabel())
      throw std::invalid_argument("SCD::fit: the " + std::string(Loss::name) +
                                  " loss is multiclass but some sample has not exactly one class");
    // All timings (time_limit, reports, info.seconds) count from here: setup included.
    const Stopwatch clock;
    const auto& X = problem.X;
    const auto n = static_cast<std::size_t>(problem.n_samples());
    const auto d = static_cast<std::size_t>(problem.n_features());
    const ClassIndex K = problem.n_classes();
    const bool intercept = options_.fit_intercept;

    // --- the start point -------------------------------------------------------------------
    // W is kept dense (d × K, row-major, as every solver of the library); the returned model
    // keeps its nonzero rows only. Labels are the class indices unless a warm start names them.
    ClassMatrix<Scalar> W = ClassMatrix<Scalar>::Zero(static_cast<Eigen::Index>(d), K);
    ClassVector<Scalar> b = ClassVector<Scalar>::Zero(intercept ? K : 0);
    std::vector<Label> labels(static_cast<std::size_t>(K));
    std::iota(labels.begin(), labels.end(), Label{0});
    double bias = -1.0;
    if (initial != nullptr) {
      detail::check_warm_start("SCD", *initial, static_cast<std::int64_t>(d), K);
      initial->copy_to(W);
      if (intercept && initial->has_intercept()) b = initial->intercept();
      labels = initial->labels();
      bias = initial->provenance().bias;
    }

    // Binary mirror mode: only class 1 is solved, class 0 is its negation. It needs a loss whose
    // two one-vs-rest columns are the same problem with opposite labels (the kernel says so), one
    // class per sample, and a start point of the form [−u, u] (W = 0 is): then every iterate is.
    const bool mirror = Kernel::mirror_symmetric && options_.binary_mirror && K == 2 && !problem.y.multilabel() &&
                        W.col(0) == -W.col(1) && (!intercept || b[0] == -b[1]);
    // `slots` classes are solved; F and the penalty count each solved entry `multiplicity` times.
    const std::size_t slots = mirror ? 1 : static_cast<std::size_t>(K);
    const double multiplicity = mirror ? 2.0 : 1.0;
    auto class_of_slot = [&](std::size_t slot) { return mirror ? ClassIndex{1} : static_cast<ClassIndex>(slot); };

    // --- columns ---------------------------------------------------------------------------
    // (1/n) Σ_i c_i x_ij² (0: no sample depends on column j, whose coordinates are optimal at
    // argmin p = 0 and never drawn) and (1/n) Σ_i c_i |x_ij| (M_j of RDA).
    std::vector<double> column_sq(d + 1, 0.0), column_abs(d + 1, 0.0);
    std::vector<std::uint8_t> live_column(d + 1, 0);
    std::size_t max_column = intercept ? n : 0;
    const double inv_n = 1.0 / static_cast<double>(n);
    for (std::size_t j = 0; j <= d; ++j) {
      if (j == d && !intercept) break;
      double squares = 0.0, absolute = 0.0;
      if (j < d) {
        const auto col = X.outer(static_cast<Index>(j));
        max_column = std::max(max_column, col.size());
        for (auto [i, x] : col) {
          const double c = static_cast<double>(problem.weight(i));
          squares += c * static_cast<double>(x) * static_cast<double>(x);
          absolute += c * std::abs(static_cast<double>(x));
        }
      } else {
        for (std::size_t i = 0; i < n; ++i) absolute += static_cast<double>(problem.weight(static_cast<Index>(i)));
        squares = absolute;
      }
      column_sq[j] = squares * inv_n;
      column_abs[j] = absolute * inv_n;
      live_column[j] = squares > 0.0 ? 1 : 0;
      if (j < d && !live_column[j] && (penalty_.lambda > 0 || penalty_.mu > 0)) W.row(static_cast<Eigen::Index>(j)).setZero();
    }
    // The intercept b_r is a coordinate over a column of ones (all samples): O(n) per visit.
    std::vector<Index> all_rows(intercept ? n : 0);
    std::iota(all_rows.begin(), all_rows.end(), Index(0));
    const std::vector<Scalar> ones(intercept ? n : 0, Scalar(1));
    const Column ones_column{all_rows, ones};
    auto column = [&](std::size_t j) -> Column { return j == d ? ones_column : X.outer(static_cast<Index>(j)); };

    // Coordinate ids k = j·slots + slot (j = d: the intercept); the live ones are drawn.
    struct Coordinate {
      std::size_t j;
      ClassIndex r;
    };
    auto decode = [&](Coord k) {
      const auto kk = static_cast<std::size_t>(k);
      return Coordinate{kk / slots, class_of_slot(kk % slots)};
    };
    // N ids in all; `live` lists those of columns some sample depends on, in id order (column by
    // column, which is the order of the exact checks: a column is read once for its classes).
    const std::size_t N = (d + (intercept ? 1 : 0)) * slots;
    std::vector<Coord> live;
    live.reserve(N);
    for (std::size_t j = 0; j < d + (intercept ? 1 : 0); ++j)
      if (live_column[j])
        for (std::size_t slot = 0; slot < slots; ++slot) live.push_back(static_cast<Coord>(j * slots + slot));
    auto weight = [&](const Coordinate& k) -> Scalar& {
      return k.j == d ? b[k.r] : W(static_cast<Eigen::Index>(k.j), k.r);
    };

    // --- bookkeeping of F and of the support ------------------------------------------------
    // F = L + Σ p(w_jr) is reported every epoch in O(nK) (L from the kernel's cache, exact) plus
    // O(1): the penalty part is updated with every step, in double; nonzero rows likewise.
    auto entry_penalty = [&](Scalar w) {
      return static_cast<double>(penalty_.value(std::span<const Scalar>(&w, 1)));
    };
    double penalty_sum = 0.0;  // Σ p(w_jr) over the solved classes
    std::vector<std::int32_t> row_count(d, 0);
    std::int64_t nnz_rows = 0;
    for (std::size_t j = 0; j < d; ++j) {
      for (std::size_t slot = 0; slot < slots; ++slot) {
        const Scalar w = W(static_cast<Eigen::Index>(j), class_of_slot(slot));
        penalty_sum += entry_penalty(w);
        row_count[j] += w != Scalar(0) ? 1 : 0;
      }
      nnz_rows += row_count[j] > 0 ? 1 : 0;
    }
    // Sets a coordinate to `w_new`, keeping the penalty sum and the support count.
    auto commit = [&](const Coordinate& k, Scalar w_new) {
      Scalar& w = weight(k);
      if (k.j < d) {
        penalty_sum += entry_penalty(w_new) - entry_penalty(w);
        const int change = (w_new != Scalar(0) ? 1 : 0) - (w != Scalar(0) ? 1 : 0);
        if (change != 0) {
          const bool was = row_count[k.j] > 0;
          row_count[k.j] += change;
          nnz_rows += (row_count[k.j] > 0 ? 1 : 0) - (was ? 1 : 0);
        }
      }
      w = w_new;
    };
    // Writes class 0 = −class 1 (mirror mode) before a model is made of (M, v).
    auto mirror_columns = [&](ClassMatrix<Scalar>& M, ClassVector<Scalar>& v) {
      if (!mirror) return;
      M.col(0) = -M.col(1);
      if (v.size() > 0) v[0] = -v[1];
    };
    // The model of (M, v) (mirrored first): for the callbacks that take one, and the result.
    auto model_of = [&](ClassMatrix<Scalar>& M, ClassVector<Scalar>& v) {
      mirror_columns(M, v);
      return LinearModel<Scalar>(M, intercept ? v : ClassVector<Scalar>(), labels);
    };

    // --- the certificate: the duality gap of (1) ---------------------------------------------
    // Evaluated when `schedule` says so (the cheap measure has reached its trigger, or the
    // doubling epoch interval has run out) and at the returned iterate; only it decides
    // `converged`. Its cost (one or two O(nnz·K) products) is timed for the verbose summary.
    GapWorkspace<Scalar> gap_work;
    GapSchedule schedule(options_.tol);
    DualityGap certificate;             // the last evaluation …
    std::int64_t certificate_epoch = -1;  // … and the epoch of the iterate it certifies
    double gap_seconds = 0.0;
    std::int64_t gap_evaluations = 0;
    // The gap at (M, v), from scratch (scores X M + 1vᵀ), or at scores S the caller has.
    auto gap_at = [&](ClassMatrix<Scalar>& M, ClassVector<Scalar>& v, const ClassMatrix<Scalar>* S) {
      const Stopwatch watch;
      mirror_columns(M, v);
      const ClassVector<Scalar> none;
      const DualityGap g =
          S != nullptr ? duality_gap_at_scores(loss_, penalty_, problem, *S, penalty_value(penalty_, M), intercept, gap_work)
                       : duality_gap(loss_, penalty_, problem, M, intercept ? v : none, intercept, gap_work);
      gap_seconds += watch.seconds();
      ++gap_evaluations;
      return g;
    };

    // The per-sample cache (scores, slacks, …) of detail/coordinate_kernel.hpp: all the solver's
    // O(nK) memory besides W, allocated here once; nothing is allocated per step or per epoch.
    Kernel kernel(loss_, problem, max_column, mirror);
    // The only source of randomness: the coordinate draws (and permutations).
    Rng rng(options_.seed);
    Status status = Status::max_iter;
    std::int64_t epoch = 0;
    double measure = std::numeric_limits<double>::quiet_NaN();
    double F = std::numeric_limits<double>::quiet_NaN();
    notify_begin(callbacks...);

    // Groups of coordinates that are drawn, checked and stopped together: the classes when the
    // loss is separable over them (one-vs-rest: K independent binary problems), else one group.
    // An epoch runs the groups one after the other — for independent problems the interleaving
    // of their draws is immaterial, and one class's cache stays hot.
    const std::size_t groups = Kernel::separable ? slots : 1;
    auto group_of = [&](Coord id) { return Kernel::separable ? static_cast<std::size_t>(id) % slots : 0; };
    std::vector<std::uint8_t> is_active(N, 0);
    std::vector<std::vector<Coord>> active(groups);
    for (const Coord k : live) {
      is_active[static_cast<std::size_t>(k)] = 1;
      active[group_of(k)].push_back(k);
    }
    // One epoch over each group's active coordinates: |active| uniform draws with replacement,
    // or a permuted sweep; `visit` returns true when the coordinate leaves the draws (shrinking).
    auto run_epoch = [&](auto&& visit) {
      for (auto& set : active) {
        if (options_.order == CoordinateOrder::uniform) {
          const std::size_t draws = set.size();
          for (std::size_t t = 0; t < draws && !set.empty(); ++t) {
            const auto u = static_cast<std::size_t>(uniform_index(rng, set.size()));
            if (visit(set[u])) {
              is_active[static_cast<std::size_t>(set[u])] = 0;
              set[u] = set.back();
              set.pop_back();
            }
          }
        } else {
          shuffle(std::span<Coord>(set), rng);
          std::size_t kept = 0;
          for (std::size_t t = 0; t < set.size(); ++t) {
            const Coord k = set[t];
            if (visit(k)) is_active[static_cast<std::size_t>(k)] = 0;
            else set[kept++] = k;
          }
          set.resize(kept);
        }
      }
    };
    // Progress line (verbose) and the callbacks' end_epoch hooks; true asks to stop.
    auto report_epoch = [&](const EpochReport& report, auto&& make_model) {
      if (options_.verbose) ProgressPrinter{std::cerr}.end_epoch(report);
      return notify_end_epoch(report, make_model, callbacks...);
    };

    LinearModel<Scalar> model;
    if constexpr (!Variant::dual_averaging) {
      // ======================= Algorithms 1 and 2 ==========================================
      // The exact optimality violation of one coordinate given its derivative g = ∂L/∂w:
      // dist(−g, λ∂|w| + μw) for a weight, |g| for an (unpenalised) intercept.
      auto violation_at = [&](const Coordinate& k, Scalar w, double g) {
        return k.j == d ? std::abs(g)
                        : static_cast<double>(penalty_.violation_entry(w, static_cast<Scalar>(g)));
      };
      // The columns with live coordinates (the intercept's last), for the exact passes.
      std::vector<std::size_t> live_columns;
      for (std::size_t j = 0; j < d + (intercept ? 1 : 0); ++j)
        if (live_column[j]) live_columns.push_back(j);
      // V_g = Σ_{k ∈ g} violation at the current point (at W = 0 with `at_zero`), exactly, into
      // out[g] for the groups g with `which[g]`; with `reactivate`, violating coordinates rejoin
      // the draws.
      std::vector<double> exact(groups, 0.0);
      std::vector<std::uint8_t> all_groups(groups, 1);
      auto exact_violation = [&](const std::vector<std::uint8_t>& which, bool at_zero, bool reactivate) {
        for (std::size_t g = 0; g < groups; ++g)
          if (which[g]) exact[g] = 0.0;
        for (const std::size_t j : live_columns) {
          const Column col = column(j);
          for (std::size_t slot = 0; slot < slots; ++slot) {
            const std::size_t g = Kernel::separable ? slot : 0;
            if (!which[g]) continue;
            const auto id = static_cast<Coord>(j * slots + slot);
            const Coordinate k{j, class_of_slot(slot)};
            const double gradient = kernel.template partial<Need::gradient>(col, k.r).gradient;
            const double v = violation_at(k, at_zero ? Scalar(0) : weight(k), gradient);
            exact[g] += v;
            if (reactivate && v > 0.0 && !is_active[static_cast<std::size_t>(id)]) {
              is_active[static_cast<std::size_t>(id)] = 1;
              active[g].push_back(id);
            }
          }
        }
      };

      // V(0) per group: the scale of the stopping test (scores at W = 0, b = 0).
      kernel.set_scores(X, nullptr, nullptr);
      exact_violation(all_groups, true, false);
      const std::vector<double> reference = exact;
      const double total_reference = std::accumulate(reference.begin(), reference.end(), 0.0);
      const double scale = total_reference > 0.0 ? total_reference : 1.0;
      // Group g is done when V_g ≤ level · V_g(0) (level · V(0) for a group with V_g(0) = 0); all
      // groups done gives V ≤ level · V(0), which triggers the gap (the schedule's trigger
      // starts at tol too). A gap that refuses to certify there lowers the level as the
      // schedule lowers its trigger, and the done groups are checked again.
      double level = options_.tol;
      std::vector<double> target(groups);
      auto set_targets = [&] {
        for (std::size_t g = 0; g < groups; ++g) target[g] = level * (reference[g] > 0.0 ? reference[g] : scale);
      };
      set_targets();
      if (initial != nullptr) kernel.set_scores(X, &W, intercept ? &b : nullptr);
      F = kernel.loss_part() + multiplicity * penalty_sum;

      // What a visit asks the kernel for: a'(0) always; a''(0) for the backtracking start of
      // Algorithm 2; L_jr from the kernel only where it is not κ × the column's Σ c x²/n.
      const double eps = static_cast<double>(std::numeric_limits<Scalar>::epsilon());
      constexpr Need need = Variant::line_search ? Need::curvature
                                                 : (Kernel::constant_bound ? Need::gradient : Need::bound);
      double margin = std::numeric_limits<double>::infinity();  // no shrinking in the first epoch
      std::vector<double> estimate(groups, 0.0);  // Σ of the violations met this epoch, per group
      double v_max = 0.0;                         // their maximum: the next epoch's shrinking margin

      // One coordinate: its violation, the shrinking test, the variant's step.
      auto visit = [&](Coord id) -> bool {
        const Coordinate k = decode(id);
        const bool is_intercept = k.j == d;
        const Column col = column(k.j);
        const Scalar w = weight(k);
        detail::CoordinatePartial part = kernel.template partial<need>(col, k.r);
        if constexpr (Kernel::constant_bound) part.bound = kernel.kappa() * column_sq[k.j];
        const double g = part.gradient;
        const double v = violation_at(k, w, g);
        estimate[group_of(id)] += v;
        v_max = std::max(v_max, v);
        // Shrinking (LIBLINEAR's rule): a zero weight whose violation would stay 0 even with a
        // derivative larger by the margin M/n leaves the draws until an exact check finds it.
        if (!is_intercept && options_.shrinking && w == Scalar(0) &&
            penalty_.violation_entry(Scalar(0), static_cast<Scalar>(std::abs(g) + margin)) == Scalar(0))
          return true;
        if (v == 0.0) return false;
        // w⁺ = prox_{p/L}(w − g/L) (eq. 6; the intercept is unpenalised).
        // (The ridge μ is inside p, so the prox is exact: soft-threshold, then ÷ (1 + μ/L).)
        auto proximal = [&](double L) -> Scalar {
          const double u = static_cast<double>(w) - g / L;
          return static_cast<Scalar>(is_intercept ? u : penalty_.prox_entry(u, 1.0 / L));
        };
        if (!(part.bound > 0.0)) {  // the loss ignores this coordinate: argmin p = 0
          if (!is_intercept && w != Scalar(0)) {
            kernel.template step<false>(col, k.r, -w);
            commit(k, Scalar(0));
          }
          return false;
        }
        // Algorithm 1: one prox-gradient step with the coordinate bound, always a descent step.
        if constexpr (!Variant::line_search) {
          const Scalar w_new = proximal(part.bound);
          const Scalar z = w_new - w;
          if (z != Scalar(0)) {
            kernel.template step<false>(col, k.r, z);
            commit(k, w_new);
          }
        } else {
          // Algorithm 2: start at the generalised second derivative (floored, eq. 9), take the
          // closed-form step of eq. (8), keep it if the local Lipschitz condition holds along
          // it, else undo it and grow L by β (eq. 10) — at most up to the coordinate bound.
          const auto& rule = options_.variant;
          double L = std::max(part.curvature, rule.epsilon * part.bound);
          for (;;) {
            const Scalar w_new = proximal(L);
            const Scalar z = w_new - w;  // the step actually applied (in Scalar)
            if (z == Scalar(0)) break;   // the coordinate is at its minimiser for this L
            if (L >= part.bound) {  // (7) holds for the global coordinate bound
              kernel.template step<false>(col, k.r, z);
              commit(k, w_new);
              break;
            }
            // The tracked step moves the scores and reports ΔL's excess over the model with
            // curvature a''(0); rejected steps are undone exactly (saved values).
            const detail::LossChange change = kernel.template step<true>(col, k.r, z, g, part.curvature);
            const double dz = static_cast<double>(z);
            // (7): ΔL ≤ g z + (L/2) z², i.e. ΔL − (g z + (a''(0)/2) z²) ≤ ((L − a''(0))/2) z².
            if (change.excess <= 0.5 * (L - part.curvature) * dz * dz + 10.0 * eps * change.magnitude) {
              commit(k, w_new);
              break;
            }
            kernel.undo(col, k.r);
            L = std::min(L * rule.beta, part.bound);
          }
        }
        return false;
      };

      auto make_model = [&] { return model_of(W, b); };
      // The measure: Σ_g (V_g exact where known this epoch, else its estimate) / V(0). `done`
      // groups are finished (exactly checked at their target), `check` marks this epoch's checks.
      std::vector<double> current = reference;
      std::vector<std::uint8_t> done(groups, 0), is_exact(groups, 0), check(groups, 0);
      bool certified = false;
      if (!std::isfinite(F) || !std::isfinite(total_reference)) {
        status = Status::numerical_issue;
      } else if (total_reference == 0.0 && initial == nullptr) {
        // W = 0, b = 0 satisfies the optimality conditions: certified at once where a
        // certificate exists (not for NoPenalty with μ = 0, whose gap is F).
        certificate = gap_at(W, b, nullptr);
        certificate_epoch = 0;
        certified = certificate.relative() <= options_.tol;
        if (certified) {
          status = Status::converged;
          std::fill(current.begin(), current.end(), 0.0);
          std::fill(is_exact.begin(), is_exact.end(), 1);
        }
      }
      if (status == Status::max_iter && !certified) {
        // Checks at decades: the first when an estimate reaches V_g(0)/10, then whenever it has
        // fallen tenfold below the last exact value. Bounded cost (~log10(1/tol) passes) and
        // no wrongly shrunk coordinate stays out for long.
        std::vector<double> last_exact = reference;  // V_g at its last exact check
        while (epoch < options_.max_epochs) {
          ++epoch;
          std::fill(estimate.begin(), estimate.end(), 0.0);
          v_max = 0.0;
          run_epoch(visit);  // N steps over the groups still running
          // Exact checks for the groups whose estimate has fallen a decade (or to the target).
          bool any_check = false;
          for (std::size_t g = 0; g < groups; ++g) {
            check[g] = !done[g] && estimate[g] <= std::max(target[g], recheck_factor * last_exact[g]);
            any_check = any_check || check[g];
            if (!done[g]) {
              current[g] = estimate[g];
              is_exact[g] = 0;
            }
          }
          if (any_check) {
            // One pass over the columns for all checked groups; violators rejoin the draws.
            exact_violation(check, false, true);
            for (std::size_t g = 0; g < groups; ++g) {
              if (!check[g]) continue;
              current[g] = last_exact[g] = exact[g];
              is_exact[g] = 1;
              if (exact[g] <= target[g]) {  // a finished group leaves the draws (an independent problem)
                done[g] = 1;
                for (const Coord id : active[g]) is_active[static_cast<std::size_t>(id)] = 0;
                active[g].clear();
              }
            }
          }
          measure = std::accumulate(current.begin(), current.end(), 0.0) / scale;
          F = kernel.loss_part() + multiplicity * penalty_sum;
          const bool finite = std::isfinite(F) && std::isfinite(measure);
          // The certificate, when due; only it decides `converged`.
          double relative = std::numeric_limits<double>::quiet_NaN();
          if (finite && schedule.due(epoch, measure)) {
            certificate = gap_at(W, b, nullptr);
            certificate_epoch = epoch;
            relative = certificate.relative();
            certified = relative <= options_.tol;
            schedule.evaluated(epoch, measure, certified);
            if (!certified && measure <= level) {  // the measure was met, the gap was not: ask for more
              level = refused_tighten * measure;
              set_targets();
              std::fill(done.begin(), done.end(), 0);  // their next check brings violators back
            }
          }
          EpochReport report{epoch, F, measure, nnz_rows, clock.seconds()};
          report.relative_gap = relative;
          const bool stop = report_epoch(report, make_model);
          if (const auto verdict = detail::epoch_verdict(options_, finite, certified, stop, report.seconds)) {
            status = *verdict;
            break;
          }
          margin = v_max * inv_n;  // LIBLINEAR's M/n, M the largest violation of this epoch
        }
      }
      // Report V exactly at the returned point: groups whose last value is an estimate are
      // measured once more (one gradient pass at most).
      if (status != Status::numerical_issue) {
        for (std::size_t g = 0; g < groups; ++g) check[g] = !is_exact[g];
        if (std::any_of(check.begin(), check.end(), [](std::uint8_t x) { return x != 0; })) {
          exact_violation(check, false, false);
          for (std::size_t g = 0; g < groups; ++g)
            if (check[g]) current[g] = exact[g];
        }
        measure = std::accumulate(current.begin(), current.end(), 0.0) / scale;
      }
      if (certificate_epoch != epoch) {
        certificate = gap_at(W, b, nullptr);
        certificate_epoch = epoch;
      }
      model = make_model();
    } else {
      // ======================= Algorithm 4 (RDA) ==============================================
      // Scores of the start point, which is also the prox-centre w⁰ of every coordinate.
      if (initial != nullptr) kernel.set_scores(X, &W, intercept ? &b : nullptr);
      else kernel.set_scores(X, nullptr, nullptr);
      const auto& rule = options_.variant;
      // μ > 0 makes p strongly convex: the ln t schedule of Theorem 3.2 ii; else √t (i).
      const bool strongly_convex = penalty_.mu > 0;
      const ClassMatrix<Scalar> W0 = W;  // the prox-centre w⁰
      const ClassVector<Scalar> b0 = b;
      // Per coordinate k: its clock t_k, Σ of its subgradient components (ḡ_k = sum / t_k), and
      // the lazy sum Σ_τ w_k^τ over the iterates τ < held_since[k] (w_k is constant since).
      std::vector<std::int64_t> visits(N, 0), held_since(N, 1);
      std::vector<double> gradient_sum(N, 0.0), weight_sum(N, 0.0);
      std::int64_t steps = 0;  // T: iterates w^1 … w^T have been used

      // One step of Algorithm 4 on coordinate `id` (steps 2–4): subgradient component at the
      // current iterate, running average, closed-form minimiser of eq. (12).
      auto visit = [&](Coord id) -> bool {
        const auto kk = static_cast<std::size_t>(id);
        const Coordinate k = decode(id);
        const bool is_intercept = k.j == d;
        const Column col = column(k.j);
        const Scalar w = weight(k);
        // g_k^t: the k-th component of one subgradient of L at w^t (the gradient when smooth).
        const double g = kernel.subgradient(col, k.r);
        const std::int64_t t = ++visits[kk];
        gradient_sum[kk] += g;
        const double tt = static_cast<double>(t);
        const double g_bar = gradient_sum[kk] / tt;
        const double beta_over_t =  // β_t / t
            rule.gamma * column_abs[k.j] * (strongly_convex ? (1.0 + std::log(tt)) / tt : 1.0 / std::sqrt(tt));
        // argmin ω ḡ + p(ω) + (β_t/2t)(ω − w⁰)² = prox_{p·t/β_t}(w⁰ − (t/β_t) ḡ), eq. (12).
        const double centre = static_cast<double>(is_intercept ? b0[k.r] : W0(static_cast<Eigen::Index>(k.j), k.r));
        const double u = centre - g_bar / beta_over_t;
        const auto w_new = static_cast<Scalar>(is_intercept ? u : penalty_.prox_entry(u, 1.0 / beta_over_t));
        const std::int64_t tau = ++steps;
        const Scalar z = w_new - w;
        if (z != Scalar(0)) {
          // w held its value over iterates held_since … tau.
          weight_sum[kk] += static_cast<double>(w) * static_cast<double>(tau - held_since[kk] + 1);
          held_since[kk] = tau + 1;
          kernel.template step<false>(col, k.r, z);
          commit(k, w_new);
        }
        return false;
      };

      // w̄^T = (1/T) Σ_τ w^τ, into (W_avg, b_avg); coordinates never drawn keep their value.
      // O(N) per call: once per epoch, like the objective evaluation that needs it.
      ClassMatrix<Scalar> W_avg = W;
      ClassVector<Scalar> b_avg = b;
      ClassMatrix<Scalar> S;  // scores of w̄ (n × K), for its objective
      auto average = [&] {
        if (steps == 0) return;
        const double T = static_cast<double>(steps);
        for (const Coord id : live) {
          const auto kk = static_cast<std::size_t>(id);
          const Coordinate k = decode(id);
          const double w = static_cast<double>(weight(k));
          const auto value = static_cast<Scalar>((weight_sum[kk] + w * static_cast<double>(steps - held_since[kk] + 1)) / T);
          if (k.j == d) b_avg[k.r] = value;
          else W_avg(static_cast<Eigen::Index>(k.j), k.r) = value;
        }
        mirror_columns(W_avg, b_avg);
      };
      // The returned iterate: the average (Theorem 3.2) or, on request, the last one.
      auto current = [&]() -> std::pair<ClassMatrix<Scalar>&, ClassVector<Scalar>&> {
        if (rule.average) return {W_avg, b_avg};
        mirror_columns(W, b);
        return {W, b};
      };
      auto make_model = [&] {
        auto [Wm, bm] = current();
        return model_of(Wm, bm);
      };
      // F at the returned iterate: from the cache for the last iterate, by scores of w̄ (one
      // sparse × dense product, objective.hpp) for the average.
      auto evaluate = [&] {
        if (!rule.average) return kernel.loss_part() + multiplicity * penalty_sum;
        average();
        return objective(loss_, penalty_, problem, W_avg, b_avg, S).total();
      };
      // The gap at the returned iterate: at the scores of w̄ that `evaluate` left in S, or from
      // scratch at the last iterate.
      auto certify = [&] {
        auto [Wm, bm] = current();
        return gap_at(Wm, bm, rule.average && steps > 0 ? &S : nullptr);
      };
      auto count_rows = [&](const ClassMatrix<Scalar>& M) {
        return static_cast<std::int64_t>((M.array() != Scalar(0)).rowwise().any().count());
      };

      // F of the start point, then one evaluation per epoch; the measure is its relative change.
      F = evaluate();
      if (!std::isfinite(F)) {
        status = Status::numerical_issue;
      } else {
        while (epoch < options_.max_epochs) {
          ++epoch;
          run_epoch(visit);
          const double previous = F;
          F = evaluate();
          measure = std::abs(previous - F) / std::max(std::abs(F), std::numeric_limits<double>::min());
          const bool finite = std::isfinite(F);
          double relative = std::numeric_limits<double>::quiet_NaN();
          bool certified = false;
          if (finite && schedule.due(epoch, measure)) {
            certificate = certify();
            certificate_epoch = epoch;
            relative = certificate.relative();
            certified = relative <= options_.tol;
            schedule.evaluated(epoch, measure, certified);
          }
          const std::int64_t rows = rule.average ? count_rows(W_avg) : nnz_rows;
          EpochReport report{epoch, F, measure, rows, clock.seconds()};
          report.relative_gap = relative;
          const bool stop = report_epoch(report, make_model);
          if (const auto verdict = detail::epoch_verdict(options_, finite, certified, stop, report.seconds)) {
            status = *verdict;
            break;
          }
        }
      }
      if (certificate_epoch != epoch) {
        certificate = certify();
        certificate_epoch = epoch;
      }
      model = make_model();
    }

    // --- the result: the shared epilogue, the certificate at the returned model ---------------
    // A budget that ran out at a certified iterate (the last evaluation was before it) is a
    // certified result.
    if (status == Status::max_iter && certificate.relative() <= options_.tol) status = Status::converged;
    SolverInfo info;
    info.status = status;
    info.epochs = epoch;
    info.objective = F;  // replaced by the certificate's F, computed from scratch, where finite
    info.measure_name = Variant::dual_averaging ? "relative_change" : "kkt_violation";
    info.measure = measure;
    info.seconds = clock.seconds();
    if (options_.verbose)
      std::cerr << name << ": " << gap_evaluations << " duality gap evaluations, " << gap_seconds << " s of "
                << info.seconds << " s\n";
    Result<Scalar> result =
        detail::finish_result<Loss>(std::move(model), name, penalty_, bias, certificate, std::move(info));
    notify_end(result.info, callbacks...);
    return result;
  }

  using Base::loss_;
  using Base::options_;
  using Base::penalty_;
};

}  // namespace sparsemc
