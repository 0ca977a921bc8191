#pragma once
/// \file engine.hpp
/// The state and the steps of one SCD solve (implementation detail): Tao, Kong, Chu & Wu's
/// Algorithms 1 and 2 (`Smooth`, `Adaptive`: proximal coordinate steps, stopped by the
/// optimality violation and the duality gap) and Algorithm 4 (`NonsmoothRDA`: regularised dual
/// averaging, with its averaged iterate). scd.hpp holds the public class, the mathematics (its
/// class comment) and the loop over these steps; variants.hpp the steps' equations.
///
/// Notation as in scd.hpp: n samples, d features, K classes; the coordinates are the weights
/// w_jr of W (and, with an intercept, the b_r, as a column j = d of ones). A coordinate id is
/// k = j·slots + slot, with slots = K classes solved (1 in binary mirror mode, where class 1 is
/// solved and class 0 is its negation).

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <optional>
#include <span>
#include <vector>

#include "../../../core/callbacks.hpp"
#include "../../../core/huge_pages.hpp"
#include "../../../core/rng.hpp"
#include "../../../core/status.hpp"
#include "../../../core/traits.hpp"
#include "../../../data/feature_columns.hpp"
#include "../../../data/problem.hpp"
#include "../../../loss/kernels/coordinate_kernel.hpp"
#include "../../../model/linear_model.hpp"
#include "../../duality_gap.hpp"
#include "../../gap_schedule.hpp"
#include "../../objective.hpp"
#include "../../solver_base.hpp"
#include "../options.hpp"

namespace sparsemc::detail {

/// A point (W, b) of (1): W dense (d × K, row-major as in every solver of the library), b of
/// size K with an intercept, empty without.
template <RealScalar Scalar>
struct ScdPoint {
  ClassMatrix<Scalar> W;
  ClassVector<Scalar> b;
};

/// What a column of X (or the intercept's column of ones) gives the steps, with the costs c_i.
struct ScdColumn {
  double squares = 0.0;   ///< (1/n) Σ_i c_i x_ij²: L_jr = κ × this for the kernels with a constant bound
  double absolute = 0.0;  ///< (1/n) Σ_i c_i |x_ij|: M_j of RDA's β_t
  bool live = false;      ///< some sample depends on the column: its coordinates are drawn
};

/// One group of coordinates of Algorithms 1 and 2, drawn, checked and stopped together, and its
/// share V_g of the optimality violation V.
struct ScdViolationGroup {
  double reference = 0.0;   ///< V_g(0), at W = 0: the scale of its target
  double target = 0.0;      ///< the group is done when V_g ≤ target
  double estimate = 0.0;    ///< Σ of the violations met by this epoch's draws
  double exact = 0.0;       ///< V_g from the last exact pass
  double last_exact = 0.0;  ///< V_g at its last exact check (the decade rule)
  double current = 0.0;     ///< V_g in the measure: exact where checked this epoch, else the estimate
  bool is_exact = false;    ///< `current` is exact
  bool done = false;        ///< exactly checked at its target: out of the draws
  bool checked = false;     ///< measured by the exact pass under way
};

/// What Algorithm 4 keeps per coordinate k: its clock t_k, the sum of its subgradient
/// components (ḡ_k = gradient_sum / t_k), and the lazy sum Σ_τ w_k^τ over the iterates
/// τ < held_since (w_k is constant since).
struct ScdAveragingHistory {
  std::int64_t visits = 0;
  std::int64_t held_since = 1;
  double gradient_sum = 0.0;
  double weight_sum = 0.0;
};

/// One SCD solve of `problem`: the constructor sets up the start point and the coordinates;
/// SCD::solve then calls start(), per epoch sweep(), evaluate(), certify_if_due() and
/// report(), and at the end finish(), info() and model(). `Coord` is the integer type of the
/// coordinate ids. The problem, the policies and the options are held by reference: the engine
/// lives inside one SCD::solve.
template <class Loss, class Penalty, class Variant, FeatureColumnProblem Prob, class Coord>
class ScdEngine {
  using Scalar = ProblemScalar<Prob>;
  using Index = ProblemIndex<Prob>;
  using Kernel = kernels::CoordinateKernelFor<Loss, Scalar, Index>;
  using Column = typename Kernel::Column;
  using Point = ScdPoint<Scalar>;

 public:
  /// The start point (W = 0 or the warm start, same d and K), the mirror mode, the columns, the
  /// live coordinates in their draw groups, and F's penalty part and the support at the start.
  ScdEngine(const Prob& problem, const Loss& loss, const Penalty& penalty,
            const SCDOptions<Variant>& options, const LinearModel<Scalar>* initial)
      : problem_(problem),
        X_(feature_columns(problem)),
        loss_(loss),
        penalty_(penalty),
        options_(options),
        n_(static_cast<std::size_t>(problem.n_samples())),
        d_(static_cast<std::size_t>(problem.n_features())),
        K_(problem.n_classes()),
        intercept_(options.fit_intercept),
        warm_(initial != nullptr),
        inv_n_(1.0 / static_cast<double>(n_)),
        x_(start_point(initial)),
        labels_(warm_ ? initial->labels() : cold_start_labels(K_)),
        bias_(warm_ ? initial->provenance().bias : -1.0),
        mirror_(binary_mirror()),
        slots_(mirror_ ? 1 : static_cast<std::size_t>(K_)),
        multiplicity_(mirror_ ? 2.0 : 1.0),
        groups_(ClassSeparableLoss<Loss> ? slots_ : 1),
        columns_(column_sums()),
        all_rows_(intercept_ ? n_ : 0),
        ones_(intercept_ ? n_ : 0, Scalar(1)),
        kernel_(loss, problem, longest_column(), mirror_),
        rng_(options.seed),
        schedule_(options.tol) {
    std::iota(all_rows_.begin(), all_rows_.end(), Index(0));
    zero_unused_rows();
    list_live_coordinates();
    count_penalty_and_support();
  }

  /// The scores at the start and what the variant measures there. Returns the status when the
  /// solve ends before its first epoch: a non-finite F (or V(0)), or — Algorithms 1 and 2 from a
  /// cold start — W = 0 already certified.
  std::optional<Status> start() {
    if constexpr (Variant::dual_averaging) return start_averaging();
    else return start_proximal();
  }

  /// One epoch: over each group's active coordinates, |active| uniform draws with replacement
  /// (Algorithm 1 step 1) or a permuted sweep (`order`); a coordinate that shrinking drops leaves
  /// its group's draws. The groups run one after the other — for independent problems the
  /// interleaving of their draws is immaterial, and one class's cache stays hot.
  void sweep() {
    ++epoch_;
    if constexpr (!Variant::dual_averaging) {
      for (ScdViolationGroup& group : violation_) group.estimate = 0.0;
      largest_violation_ = 0.0;
    }
    for (std::vector<Coord>& active : draws_) {
      if (options_.order == CoordinateOrder::uniform) draw_uniform(active);
      else draw_permuted(active);
    }
  }

  /// F and the cheap measure after an epoch; false when either is not finite.
  bool evaluate() {
    if constexpr (Variant::dual_averaging) return evaluate_averaging();
    else return evaluate_proximal();
  }

  /// The certificate, when `schedule_` says so (the measure has reached its trigger, or the
  /// doubling epoch interval has run out); only it decides `converged`. Algorithms 1 and 2: a gap
  /// that refuses where the measure had met the trigger lowers the trigger, and with it the
  /// groups' targets, and reopens the groups.
  bool certify_if_due() {
    if (!schedule_.due(epoch_, measure_)) return false;
    certificate_ = returned_gap();
    certificate_epoch_ = epoch_;
    const bool certified = certificate_.relative() <= options_.tol;
    const bool measure_met_trigger = measure_ <= schedule_.trigger();
    schedule_.evaluated(epoch_, measure_, certificate_.relative());
    if constexpr (!Variant::dual_averaging)
      if (!certified && measure_met_trigger) tighten_targets();
    return certified;
  }

  /// This epoch's report (with the relative gap when it was evaluated).
  [[nodiscard]] EpochReport report(double seconds) const {
    EpochReport report{epoch_, F_, measure_, returned_rows(), seconds};
    if (certificate_epoch_ == epoch_) report.relative_gap = certificate_.relative();
    return report;
  }

  /// The measure (Algorithms 1 and 2: V exactly, unless the solve broke down) and the
  /// certificate at the returned point, where the last epoch did not evaluate them.
  void finish(Status status) {
    if constexpr (!Variant::dual_averaging)
      if (status != Status::numerical_issue) measure_returned_point();
    if (certificate_epoch_ != epoch_) {
      certificate_ = returned_gap();
      certificate_epoch_ = epoch_;
    }
  }

  /// The returned point (RDA: the average, unless `average` is off) as a model, mirrored first.
  [[nodiscard]] LinearModel<Scalar> model() {
    Point& point = returned_point();
    mirror_columns(point);
    return LinearModel<Scalar>(point.W, point.b, labels_);
  }

  /// The returned point as the model, its W handed over and consumed as the model is built
  /// instead of copied beside it. The engine has no iterate afterwards.
  [[nodiscard]] LinearModel<Scalar> take_model() {
    Point& point = returned_point();
    mirror_columns(point);
    return LinearModel<Scalar>::consuming(std::move(point.W), point.b, labels_);
  }

  /// The information block: F as last evaluated (the epilogue replaces it by the certificate's F,
  /// computed from scratch, where finite), the epochs and the measure.
  [[nodiscard]] SolverInfo info(Status status) const {
    return {.status = status,
            .epochs = epoch_,
            .objective = F_,
            .measure_name = Variant::dual_averaging ? "relative_change" : "kkt_violation",
            .measure = measure_};
  }

  [[nodiscard]] std::int64_t epoch() const noexcept { return epoch_; }
  /// What ScdClassRanges sums over its ranges (Algorithms 1 and 2): F as last evaluated, the
  /// summed violation V = measure · V(0) and V(0) itself, and the iterate's W (in binary
  /// mirror mode column 0 is filled in by model()).
  [[nodiscard]] double objective() const noexcept { return F_; }
  [[nodiscard]] double violation() const noexcept { return measure_ * scale_; }
  [[nodiscard]] double violation_at_start() const noexcept {
    double sum = 0.0;
    for (const ScdViolationGroup& group : violation_) sum += group.reference;
    return sum;
  }
  [[nodiscard]] const ClassMatrix<Scalar>& weights() const noexcept { return x_.W; }
  [[nodiscard]] const DualityGap& certificate() const noexcept { return certificate_; }
  [[nodiscard]] const GapCost& gap_spent() const noexcept { return gap_spent_; }
  /// The warm start's bias feature (−1 without a warm start), for the model's provenance.
  [[nodiscard]] double bias() const noexcept { return bias_; }

 private:
  /// A coordinate: feature j (j = d: the intercept) and class r.
  struct Coordinate {
    std::size_t j;
    ClassIndex r;
  };

  /// The violation is computed exactly whenever the epoch's estimate has fallen to this
  /// fraction of the last exact value (or to the target): about one check per decade of
  /// progress, each bringing back the coordinates that shrinking dropped but that violate again.
  static constexpr double recheck_factor = 0.1;
  /// Algorithm 2 accepts a step whose loss change exceeds the bound of (7) by this many ε_mach
  /// times the size of the summed terms: rounding (variants.hpp, `Adaptive`).
  static constexpr double rounding_allowance = 10.0;
  static constexpr double machine_epsilon = std::numeric_limits<Scalar>::epsilon();
  /// What a visit of Algorithms 1 and 2 asks the kernel for: a'(0) always; a''(0) for the
  /// backtracking start of Algorithm 2; L_jr from the kernel only where it is not κ × the
  /// column's Σ c x²/n.
  static constexpr kernels::CoordinateNeed need = Variant::line_search    ? kernels::CoordinateNeed::curvature
                                                  : Kernel::constant_bound ? kernels::CoordinateNeed::gradient
                                                                           : kernels::CoordinateNeed::bound;

  // ---- setup --------------------------------------------------------------------------------

  /// W = 0, b = 0, or the warm start's weights and (with an intercept) its intercept.
  [[nodiscard]] Point start_point(const LinearModel<Scalar>* initial) const {
    Point start{advised_zeros<ClassMatrix<Scalar>>(static_cast<Eigen::Index>(d_), K_),
                ClassVector<Scalar>::Zero(intercept_ ? K_ : 0)};
    if (initial != nullptr) {
      check_warm_start("SCD", *initial, static_cast<std::int64_t>(d_), K_);
      initial->copy_to(start.W);
      if (intercept_ && initial->has_intercept()) start.b = initial->intercept();
    }
    return start;
  }

  /// Binary mirror mode: only class 1 is solved, class 0 is its negation. It needs a loss whose
  /// two one-vs-rest columns are the same problem with opposite labels (the kernel says so), one
  /// class per sample, and a start point of the form [−u, u] (W = 0 is): then every iterate is.
  [[nodiscard]] bool binary_mirror() const {
    return Kernel::mirror_symmetric && options_.binary_mirror && K_ == 2 && !problem_.y.multilabel() &&
           x_.W.col(0) == -x_.W.col(1) && (!intercept_ || x_.b[0] == -x_.b[1]);
  }

  /// The columns' sums (the intercept's column of ones last, at j = d). A column no sample
  /// depends on is not live: its coordinates are optimal at argmin p = 0 and never drawn.
  [[nodiscard]] std::vector<ScdColumn> column_sums() const {
    std::vector<ScdColumn> columns(d_ + 1);
    for (std::size_t j = 0; j < column_count(); ++j) {
      double squares = 0.0, absolute = 0.0;
      if (j < d_) {
        for (auto [i, x] : X_.outer(static_cast<Index>(j))) {
          const double c = static_cast<double>(problem_.weight(i));
          squares += c * static_cast<double>(x) * static_cast<double>(x);
          absolute += c * std::abs(static_cast<double>(x));
        }
      } else {
        for (std::size_t i = 0; i < n_; ++i) absolute += static_cast<double>(problem_.weight(static_cast<Index>(i)));
        squares = absolute;
      }
      columns[j] = {squares * inv_n_, absolute * inv_n_, squares > 0.0};
    }
    return columns;
  }

  /// The most samples a coordinate's column holds (n for the intercept): the kernel's scratch.
  [[nodiscard]] std::size_t longest_column() const {
    std::size_t longest = intercept_ ? n_ : 0;
    for (std::size_t j = 0; j < d_; ++j) longest = std::max(longest, X_.outer(static_cast<Index>(j)).size());
    return longest;
  }

  /// A penalised weight of a column no sample depends on is optimal at 0.
  void zero_unused_rows() {
    if (!(penalty_.lambda > 0 || penalty_.mu > 0)) return;
    for (std::size_t j = 0; j < d_; ++j)
      if (!columns_[j].live) x_.W.row(static_cast<Eigen::Index>(j)).setZero();
  }

  /// `live_`: the ids of the live columns' coordinates, in id order (column by column, the
  /// order of the exact passes: a column is read once for its classes); all of them start in
  /// the draws of their group.
  void list_live_coordinates() {
    const std::size_t N = coordinate_count();
    live_.reserve(N);
    for (std::size_t j = 0; j < column_count(); ++j)
      if (columns_[j].live)
        for (std::size_t slot = 0; slot < slots_; ++slot) live_.push_back(static_cast<Coord>(j * slots_ + slot));
    is_active_.assign(N, 0);
    draws_.resize(groups_);
    for (const Coord id : live_) {
      is_active_[static_cast<std::size_t>(id)] = 1;
      draws_[group_of(id)].push_back(id);
    }
  }

  /// Σ p(w_jr) over the solved classes and the nonzero rows at the start point.
  void count_penalty_and_support() {
    row_nonzeros_.assign(d_, 0);
    for (std::size_t j = 0; j < d_; ++j) {
      for (std::size_t slot = 0; slot < slots_; ++slot) {
        const Scalar w = x_.W(static_cast<Eigen::Index>(j), class_of_slot(slot));
        penalty_sum_ += entry_penalty(w);
        row_nonzeros_[j] += w != Scalar(0) ? 1 : 0;
      }
      nnz_rows_ += row_nonzeros_[j] > 0 ? 1 : 0;
    }
  }

  // ---- coordinates --------------------------------------------------------------------------

  /// The columns of the coordinates: d, and the intercept's last.
  [[nodiscard]] std::size_t column_count() const { return d_ + (intercept_ ? 1 : 0); }
  /// N: the ids 0 … N−1 (live or not).
  [[nodiscard]] std::size_t coordinate_count() const { return column_count() * slots_; }
  [[nodiscard]] ClassIndex class_of_slot(std::size_t slot) const {
    return mirror_ ? ClassIndex{1} : static_cast<ClassIndex>(slot);
  }
  [[nodiscard]] Coordinate decode(Coord id) const {
    const auto k = static_cast<std::size_t>(id);
    return {k / slots_, class_of_slot(k % slots_)};
  }
  /// The group of a coordinate: its class when the loss is separable over the classes
  /// (one-vs-rest: K independent binary problems), else the single group 0.
  [[nodiscard]] std::size_t group_of(Coord id) const {
    return ClassSeparableLoss<Loss> ? static_cast<std::size_t>(id) % slots_ : 0;
  }
  [[nodiscard]] bool is_intercept(const Coordinate& k) const { return k.j == d_; }
  /// Column j of X, or for j = d the intercept's column of ones (all samples: O(n) per visit).
  [[nodiscard]] Column column(std::size_t j) const {
    return j == d_ ? Column{all_rows_, ones_} : X_.outer(static_cast<Index>(j));
  }
  /// The entry of coordinate k in a point (W, b).
  template <class P>
  [[nodiscard]] auto& entry(P& point, const Coordinate& k) const {
    return is_intercept(k) ? point.b[k.r] : point.W(static_cast<Eigen::Index>(k.j), k.r);
  }
  [[nodiscard]] Scalar& weight(const Coordinate& k) { return entry(x_, k); }

  // ---- bookkeeping of F and of the support --------------------------------------------------
  // F = L + Σ p(w_jr) is reported every epoch in O(nK) (L from the kernel's cache, exact) plus
  // O(1): the penalty part is updated with every step, in double; nonzero rows likewise.

  [[nodiscard]] double entry_penalty(Scalar w) const {
    return static_cast<double>(penalty_.value(std::span<const Scalar>(&w, 1)));
  }

  /// Sets a coordinate to `w_new`, keeping the penalty sum and the support count.
  void commit(const Coordinate& k, Scalar w_new) {
    Scalar& w = weight(k);
    if (!is_intercept(k)) {
      penalty_sum_ += entry_penalty(w_new) - entry_penalty(w);
      const int change = (w_new != Scalar(0) ? 1 : 0) - (w != Scalar(0) ? 1 : 0);
      if (change != 0) {
        const bool was = row_nonzeros_[k.j] > 0;
        row_nonzeros_[k.j] += change;
        nnz_rows_ += (row_nonzeros_[k.j] > 0 ? 1 : 0) - (was ? 1 : 0);
      }
    }
    w = w_new;
  }

  /// F at the current iterate: the loss part from the kernel's cache, the penalty part as kept.
  [[nodiscard]] double iterate_objective() { return kernel_.loss_part() + multiplicity_ * penalty_sum_; }

  /// Writes class 0 = −class 1 (mirror mode) before a model or a gap is made of the point.
  void mirror_columns(Point& point) const {
    if (!mirror_) return;
    point.W.col(0) = -point.W.col(1);
    if (point.b.size() > 0) point.b[0] = -point.b[1];
  }

  // ---- the draws ----------------------------------------------------------------------------

  /// |active| uniform draws with replacement from the active coordinates.
  void draw_uniform(std::vector<Coord>& active) {
    const std::size_t draws = active.size();
    for (std::size_t t = 0; t < draws && !active.empty(); ++t) {
      const auto u = static_cast<std::size_t>(uniform_index(rng_, active.size()));
      if (visit(active[u])) {
        is_active_[static_cast<std::size_t>(active[u])] = 0;
        active[u] = active.back();
        active.pop_back();
      }
    }
  }

  /// Every active coordinate once, in a fresh random permutation.
  void draw_permuted(std::vector<Coord>& active) {
    shuffle(std::span<Coord>(active), rng_);
    std::size_t kept = 0;
    for (std::size_t t = 0; t < active.size(); ++t) {
      const Coord id = active[t];
      if (visit(id)) is_active_[static_cast<std::size_t>(id)] = 0;
      else active[kept++] = id;
    }
    active.resize(kept);
  }

  /// One draw: coordinate `id`, its column and its weight, then the variant's step. True when
  /// the coordinate leaves the draws (shrinking; never for RDA).
  bool visit(Coord id) {
    const Coordinate k = decode(id);
    const Column col = column(k.j);
    const Scalar w = weight(k);
    if constexpr (Variant::dual_averaging) {
      dual_averaging_step(id, k, col, w);
      return false;
    } else {
      return proximal_visit(id, k, col, w);
    }
  }

  // ---- the certificate: the duality gap of (1) ----------------------------------------------

  /// The gap at `point` (mirrored first), from scratch (scores X W + 1bᵀ), or at the point's
  /// `scores` when the caller has them. Timed (SolverInfo::gap_seconds).
  DualityGap gap_at(Point& point, const ClassMatrix<Scalar>* scores) {
    return gap_spent_.timed([&] {
      mirror_columns(point);
      return scores != nullptr ? duality_gap_at_scores(loss_, penalty_, problem_, *scores,
                                                       penalty_value(penalty_, point.W), intercept_, gap_work_)
                               : duality_gap(loss_, penalty_, problem_, point.W, point.b, intercept_, gap_work_);
    });
  }

  /// The point returned and certified: the current iterate, or RDA's average w̄ (Theorem 3.2)
  /// unless `average` is off.
  [[nodiscard]] Point& returned_point() {
    if constexpr (Variant::dual_averaging)
      if (options_.variant.average) return average_;
    return x_;
  }

  /// The gap at the returned point: at the scores of w̄ that the last evaluation left (RDA), or
  /// from scratch.
  DualityGap returned_gap() {
    const ClassMatrix<Scalar>* scores = nullptr;
    if constexpr (Variant::dual_averaging)
      if (options_.variant.average && steps_taken_ > 0) scores = &average_scores_;
    return gap_at(returned_point(), scores);
  }

  /// The nonzero feature rows of the returned point.
  [[nodiscard]] std::int64_t returned_rows() const {
    if constexpr (Variant::dual_averaging)
      if (options_.variant.average)
        return static_cast<std::int64_t>((average_.W.array() != Scalar(0)).rowwise().any().count());
    return nnz_rows_;
  }

  // ---- Algorithms 1 and 2 -------------------------------------------------------------------
  // The measure: V = Σ_g V_g / V(0), V_g exact where known this epoch, else its estimate. Group
  // g is done when V_g ≤ t · V_g(0) (t · V(0) for a group with V_g(0) = 0), t the schedule's
  // trigger (tol at first); all groups done gives V ≤ t, which triggers the gap. A gap that
  // refuses to certify there lowers t, and the done groups are checked again.

  /// V(0) per group (scores at W = 0, b = 0), the targets, and F at the start point; W = 0 from
  /// a cold start with V(0) = 0 satisfies the optimality conditions: certified at once where a
  /// certificate exists (not for NoPenalty with μ = 0, whose gap is F).
  std::optional<Status> start_proximal() {
    violation_.resize(groups_);
    kernel_.set_scores(X_, nullptr, nullptr);
    for (ScdViolationGroup& group : violation_) group.checked = true;
    exact_violation(/*at_zero=*/true, /*reactivate=*/false);
    double total_reference = 0.0;
    for (ScdViolationGroup& group : violation_) {
      group.reference = group.last_exact = group.current = group.exact;
      total_reference += group.reference;
    }
    scale_ = total_reference > 0.0 ? total_reference : 1.0;
    set_targets();
    if (warm_) kernel_.set_scores(X_, &x_.W, intercept_ ? &x_.b : nullptr);
    F_ = iterate_objective();
    if (!std::isfinite(F_) || !std::isfinite(total_reference)) return Status::numerical_issue;
    if (total_reference == 0.0 && !warm_) {
      certificate_ = returned_gap();
      certificate_epoch_ = 0;
      if (certificate_.relative() <= options_.tol) {
        for (ScdViolationGroup& group : violation_) {
          group.current = 0.0;
          group.is_exact = true;
        }
        return Status::converged;
      }
    }
    return std::nullopt;
  }

  /// Group g is done at V_g ≤ t · V_g(0), or t · V(0) where V_g(0) = 0, t the schedule's trigger
  /// (the groups work on until the measure can trigger the next gap).
  void set_targets() {
    const double trigger = schedule_.trigger();
    for (ScdViolationGroup& group : violation_)
      group.target = trigger * (group.reference > 0.0 ? group.reference : scale_);
  }

  /// After a refused gap has lowered the trigger: the targets follow it, and the done groups are
  /// reopened (their next check brings violators back).
  void tighten_targets() {
    set_targets();
    for (ScdViolationGroup& group : violation_) group.done = false;
  }

  /// The exact checks due after an epoch, the measure V, F, and the next epoch's shrinking
  /// margin (LIBLINEAR's M/n, M the largest violation of this epoch).
  bool evaluate_proximal() {
    recheck_groups();
    measure_ = summed_violation();
    F_ = iterate_objective();
    margin_ = largest_violation_ * inv_n_;
    return std::isfinite(F_) && std::isfinite(measure_);
  }

  /// Checks at decades: a group is measured exactly when its estimate reaches V_g(0)/10, then
  /// whenever it has fallen tenfold below the last exact value (or to its target), in one pass
  /// for all such groups; violators rejoin the draws, and a group at its target leaves them
  /// (an independent problem). Bounded cost (~log10(1/tol) passes), and no wrongly shrunk
  /// coordinate stays out for long.
  void recheck_groups() {
    bool any_check = false;
    for (ScdViolationGroup& group : violation_) {
      group.checked = !group.done && group.estimate <= std::max(group.target, recheck_factor * group.last_exact);
      any_check = any_check || group.checked;
      if (!group.done) {
        group.current = group.estimate;
        group.is_exact = false;
      }
    }
    if (!any_check) return;
    exact_violation(/*at_zero=*/false, /*reactivate=*/true);
    for (std::size_t g = 0; g < groups_; ++g) {
      ScdViolationGroup& group = violation_[g];
      if (!group.checked) continue;
      group.current = group.last_exact = group.exact;
      group.is_exact = true;
      if (group.exact <= group.target) {
        group.done = true;
        for (const Coord id : draws_[g]) is_active_[static_cast<std::size_t>(id)] = 0;
        draws_[g].clear();
      }
    }
  }

  /// V exactly at the returned point: the groups whose last value is an estimate are measured
  /// once more (one gradient pass at most).
  void measure_returned_point() {
    bool any_check = false;
    for (ScdViolationGroup& group : violation_) {
      group.checked = !group.is_exact;
      any_check = any_check || group.checked;
    }
    if (any_check) {
      exact_violation(/*at_zero=*/false, /*reactivate=*/false);
      for (ScdViolationGroup& group : violation_)
        if (group.checked) group.current = group.exact;
    }
    measure_ = summed_violation();
  }

  /// V = Σ_g V_g / V(0).
  [[nodiscard]] double summed_violation() const {
    return std::accumulate(violation_.begin(), violation_.end(), 0.0,
                           [](double sum, const ScdViolationGroup& group) { return sum + group.current; }) /
           scale_;
  }

  /// The exact optimality violation of one coordinate given its derivative g = ∂L/∂w:
  /// dist(−g, λ∂|w| + μw) for a weight, |g| for an (unpenalised) intercept.
  [[nodiscard]] double violation_at(const Coordinate& k, Scalar w, double g) const {
    return is_intercept(k) ? std::abs(g) : static_cast<double>(penalty_.violation_entry(w, static_cast<Scalar>(g)));
  }

  /// V_g = Σ_{k ∈ g} violation at the current point (at W = 0 with `at_zero`), exactly, into
  /// the `exact` of the `checked` groups; with `reactivate`, violating coordinates rejoin the
  /// draws.
  void exact_violation(bool at_zero, bool reactivate) {
    for (ScdViolationGroup& group : violation_)
      if (group.checked) group.exact = 0.0;
    for (const Coord id : live_) {
      const std::size_t g = group_of(id);
      if (!violation_[g].checked) continue;
      const Coordinate k = decode(id);
      const double gradient = kernel_.template partial<kernels::CoordinateNeed::gradient>(column(k.j), k.r).gradient;
      const double v = violation_at(k, at_zero ? Scalar(0) : weight(k), gradient);
      violation_[g].exact += v;
      if (reactivate && v > 0.0 && !is_active_[static_cast<std::size_t>(id)]) {
        is_active_[static_cast<std::size_t>(id)] = 1;
        draws_[g].push_back(id);
      }
    }
  }

  /// One coordinate of Algorithms 1 and 2: its violation (into the epoch's estimate), the
  /// shrinking test, the variant's step. True when the coordinate leaves the draws.
  bool proximal_visit(Coord id, const Coordinate& k, const Column& col, Scalar w) {
    kernels::CoordinatePartial part = kernel_.template partial<need>(col, k.r);
    if constexpr (Kernel::constant_bound) part.bound = kernel_.kappa() * columns_[k.j].squares;
    const double g = part.gradient;
    const double v = violation_at(k, w, g);
    violation_[group_of(id)].estimate += v;
    largest_violation_ = std::max(largest_violation_, v);
    // Shrinking (LIBLINEAR's rule): a zero weight whose violation would stay 0 even with a
    // derivative larger by the margin M/n leaves the draws until an exact check finds it.
    if (!is_intercept(k) && options_.shrinking && w == Scalar(0) &&
        penalty_.violation_entry(Scalar(0), static_cast<Scalar>(std::abs(g) + margin_)) == Scalar(0))
      return true;
    if (v == 0.0) return false;
    if (!(part.bound > 0.0)) {  // the loss ignores this coordinate: argmin p = 0
      if (!is_intercept(k) && w != Scalar(0)) {
        kernel_.template step<false>(col, k.r, -w);
        commit(k, Scalar(0));
      }
      return false;
    }
    if constexpr (Variant::line_search) backtracking_step(k, col, w, part);
    else bound_step(k, col, w, part);
    return false;
  }

  /// w⁺ = prox_{p/L}(w − g/L) (eq. 6; the intercept is unpenalised).
  /// (The ridge μ is inside p, so the prox is exact: soft-threshold, then ÷ (1 + μ/L).)
  [[nodiscard]] Scalar proximal_point(const Coordinate& k, Scalar w, double g, double L) const {
    const double u = static_cast<double>(w) - g / L;
    return static_cast<Scalar>(is_intercept(k) ? u : penalty_.prox_entry(u, 1.0 / L));
  }

  /// Algorithm 1: one prox-gradient step with the coordinate bound, always a descent step.
  void bound_step(const Coordinate& k, const Column& col, Scalar w, const kernels::CoordinatePartial& part) {
    const Scalar w_new = proximal_point(k, w, part.gradient, part.bound);
    const Scalar z = w_new - w;
    if (z != Scalar(0)) {
      kernel_.template step<false>(col, k.r, z);
      commit(k, w_new);
    }
  }

  /// Algorithm 2: start at the generalised second derivative (floored, eq. 9), take the
  /// closed-form step of eq. (8), keep it if the local Lipschitz condition holds along it, else
  /// undo it and grow L by β (eq. 10) — at most up to the coordinate bound.
  void backtracking_step(const Coordinate& k, const Column& col, Scalar w, const kernels::CoordinatePartial& part) {
    const auto& rule = options_.variant;
    const double g = part.gradient;
    double L = std::max(part.curvature, rule.epsilon * part.bound);
    for (;;) {
      const Scalar w_new = proximal_point(k, w, g, L);
      const Scalar z = w_new - w;  // the step actually applied (in Scalar)
      if (z == Scalar(0)) break;   // the coordinate is at its minimiser for this L
      if (L >= part.bound) {       // (7) holds for the global coordinate bound
        kernel_.template step<false>(col, k.r, z);
        commit(k, w_new);
        break;
      }
      // The tracked step moves the scores and reports ΔL's excess over the model with
      // curvature a''(0); rejected steps are undone exactly (saved values).
      const kernels::LossChange change = kernel_.template step<true>(col, k.r, z, g, part.curvature);
      const double dz = static_cast<double>(z);
      // (7): ΔL ≤ g z + (L/2) z², i.e. ΔL − (g z + (a''(0)/2) z²) ≤ ((L − a''(0))/2) z².
      const double allowance = rounding_allowance * machine_epsilon * change.magnitude;
      if (change.excess <= 0.5 * (L - part.curvature) * dz * dz + allowance) {
        commit(k, w_new);
        break;
      }
      kernel_.undo(col, k.r);
      L = std::min(L * rule.beta, part.bound);
    }
  }

  // ---- Algorithm 4 (RDA) --------------------------------------------------------------------

  /// The scores of the start point, which is also the prox-centre w⁰ of every coordinate, and F
  /// at the returned iterate there.
  std::optional<Status> start_averaging() {
    if (warm_) kernel_.set_scores(X_, &x_.W, intercept_ ? &x_.b : nullptr);
    else kernel_.set_scores(X_, nullptr, nullptr);
    centre_ = x_;
    history_.resize(coordinate_count());
    average_ = x_;
    F_ = returned_objective();
    if (!std::isfinite(F_)) return Status::numerical_issue;
    return std::nullopt;
  }

  /// F at the returned iterate, and the measure: its relative change over the epoch.
  bool evaluate_averaging() {
    const double previous = F_;
    F_ = returned_objective();
    measure_ = std::abs(previous - F_) / std::max(std::abs(F_), std::numeric_limits<double>::min());
    return std::isfinite(F_);
  }

  /// F at the returned iterate: from the cache for the last iterate, by the scores of w̄ (one
  /// sparse × dense product, objective.hpp, left in average_scores_ for the gap) for the average.
  double returned_objective() {
    if (!options_.variant.average) return iterate_objective();
    average();
    return sparsemc::objective(loss_, penalty_, problem_, average_.W, average_.b, average_scores_).total();
  }

  /// One step of Algorithm 4 on coordinate `id` (steps 2–4): subgradient component at the
  /// current iterate, running average, closed-form minimiser of eq. (12).
  void dual_averaging_step(Coord id, const Coordinate& k, const Column& col, Scalar w) {
    ScdAveragingHistory& history = history_[static_cast<std::size_t>(id)];
    // g_k^t: the k-th component of one subgradient of L at w^t (the gradient when smooth).
    const double g = kernel_.subgradient(col, k.r);
    const std::int64_t t = ++history.visits;
    history.gradient_sum += g;
    const double tt = static_cast<double>(t);
    const double g_bar = history.gradient_sum / tt;
    // β_t / t; μ > 0 makes p strongly convex: the ln t schedule of Theorem 3.2 ii; else √t (i).
    const double beta_over_t = options_.variant.gamma * columns_[k.j].absolute *
                               (penalty_.mu > 0 ? (1.0 + std::log(tt)) / tt : 1.0 / std::sqrt(tt));
    // argmin ω ḡ + p(ω) + (β_t/2t)(ω − w⁰)² = prox_{p·t/β_t}(w⁰ − (t/β_t) ḡ), eq. (12).
    const double u = static_cast<double>(entry(centre_, k)) - g_bar / beta_over_t;
    const auto w_new = static_cast<Scalar>(is_intercept(k) ? u : penalty_.prox_entry(u, 1.0 / beta_over_t));
    const std::int64_t tau = ++steps_taken_;
    const Scalar z = w_new - w;
    if (z != Scalar(0)) {
      // w held its value over iterates held_since … tau.
      history.weight_sum += static_cast<double>(w) * static_cast<double>(tau - history.held_since + 1);
      history.held_since = tau + 1;
      kernel_.template step<false>(col, k.r, z);
      commit(k, w_new);
    }
  }

  /// w̄^T = (1/T) Σ_τ w^τ, into average_; coordinates never drawn keep their value. O(N) per
  /// call: once per epoch, like the objective evaluation that needs it.
  void average() {
    if (steps_taken_ == 0) return;
    const double T = static_cast<double>(steps_taken_);
    for (const Coord id : live_) {
      const ScdAveragingHistory& history = history_[static_cast<std::size_t>(id)];
      const Coordinate k = decode(id);
      const double w = static_cast<double>(weight(k));
      const double held = static_cast<double>(steps_taken_ - history.held_since + 1);  // iterates with w_k = w
      entry(average_, k) = static_cast<Scalar>((history.weight_sum + w * held) / T);
    }
    mirror_columns(average_);
  }

  // ---- state --------------------------------------------------------------------------------

  const Prob& problem_;
  const FeatureColumns<Prob> X_;  // X feature by feature (data/feature_columns.hpp)
  const Loss& loss_;
  const Penalty& penalty_;
  const SCDOptions<Variant>& options_;
  std::size_t n_, d_;
  ClassIndex K_;
  bool intercept_;
  bool warm_;                  // started from a given model
  double inv_n_;               // 1/n
  Point x_;                    // the current iterate
  std::vector<Label> labels_;  // of the returned model: 0..K−1 or the warm start's
  double bias_;                // the warm start's bias feature
  bool mirror_;                // binary mirror mode
  std::size_t slots_;          // the classes solved
  double multiplicity_;        // F and the penalty count each solved entry this many times
  std::size_t groups_;         // groups of coordinates drawn, checked and stopped together
  std::vector<ScdColumn> columns_;  // d + 1: the intercept's last
  std::vector<Index> all_rows_;     // the intercept's column: every sample …
  std::vector<Scalar> ones_;        // … with value 1
  // The per-sample cache (scores, slacks, …) of the loss's coordinate kernel: all the solver's O(nK)
  // memory besides W, allocated here once; nothing is allocated per step or per epoch.
  Kernel kernel_;
  Rng rng_;  // the only source of randomness: the coordinate draws (and permutations)
  std::vector<Coord> live_;                  // the ids of the live coordinates
  std::vector<std::vector<Coord>> draws_;    // per group: its coordinates still drawn
  std::vector<std::uint8_t> is_active_;      // per id: in its group's draws
  double penalty_sum_ = 0.0;                 // Σ p(w_jr) over the solved classes
  std::vector<std::int32_t> row_nonzeros_;   // per feature: nonzero solved entries
  std::int64_t nnz_rows_ = 0;
  // The loop and the certificate.
  std::int64_t epoch_ = 0;
  double F_ = std::numeric_limits<double>::quiet_NaN();
  double measure_ = std::numeric_limits<double>::quiet_NaN();
  GapWorkspace<Scalar> gap_work_;
  GapSchedule schedule_;
  DualityGap certificate_;              // the last evaluation …
  std::int64_t certificate_epoch_ = -1;  // … and the epoch of the iterate it certifies
  GapCost gap_spent_;
  // Algorithms 1 and 2.
  std::vector<ScdViolationGroup> violation_;  // per group
  double scale_ = 1.0;                     // V(0), or 1 when it is 0
  double margin_ = std::numeric_limits<double>::infinity();  // the shrinking margin M/n; none in the first epoch
  double largest_violation_ = 0.0;         // M: the largest violation met this epoch
  // Algorithm 4.
  Point centre_;                              // the prox-centre w⁰
  Point average_;                             // w̄
  ClassMatrix<Scalar> average_scores_;        // the scores of w̄ (n × K), for its objective and gap
  std::vector<ScdAveragingHistory> history_;  // per id
  std::int64_t steps_taken_ = 0;              // T: iterates w^1 … w^T have been used
};

}  // namespace sparsemc::detail
