#pragma once
/// \file class_ranges.hpp
/// SCD on several threads where (1) separates over the classes (implementation detail).
///
/// With a one-vs-rest loss (ClassSeparableLoss) and SCD's entrywise penalties, (1) is the sum
/// of K problems, one per column of W and entry of b, and so is its dual: F − D = Σ_r (F_r − D_r)
/// (Blondel et al. 2013, eq. 11; the BlockCD counterpart is solver/bcd/detail/class_ranges.hpp).
/// Tao et al.'s draws over the coordinates (j, r) of one class touch only that class's scores,
/// so `ScdClassRanges` cuts the K classes into contiguous ranges (two per thread,
/// SCD::ranges_per_thread), gives each an ScdEngine of its own on the problem restricted to its
/// classes (X and the sample weights shared, the class sets cut, the draws seeded from the seed
/// and the range), and runs the unfinished ranges' epochs side by side. A range whose own
/// relative gap reaches tol stops; once every range has, Σ_r (F_r − D_r) ≤ tol·Σ_r F_r
/// certifies the whole. It offers SCD::run the engine's interface.
///
/// The iterates depend on the number of ranges; the certified optimum does not. The reported
/// gap is Σ_r (F_r − D_r): with μ = 0 it can differ from `duality_gap` of the whole problem at
/// the same model, whose per-sample rescaling spans every class (both bound F − F*).

#include <Eigen/Core>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "../../../core/parallel.hpp"
#include "../../../core/status.hpp"
#include "../../../data/labels.hpp"
#include "../../../data/problem.hpp"
#include "../../../model/linear_model.hpp"
#include "../../duality_gap.hpp"
#include "../../solver_base.hpp"
#include "../options.hpp"
#include "engine.hpp"

namespace sparsemc::detail {

template <class Loss, class Penalty, class Variant, RealScalar Scalar, StorageIndex Index, class Coord>
class ScdClassRanges {
  using Engine = ScdEngine<Loss, Penalty, Variant, Scalar, Index, Coord>;

  /// One range of classes [first, first + size): its class sets, its problem, its options (the
  /// seed of its draws), its engine.
  struct Range {
    ClassIndex first = 0;
    ClassIndex size = 0;
    LabelSets y;
    CscProblem<Scalar, Index> problem;
    SCDOptions<Variant> options;
    std::unique_ptr<Engine> engine;  // holds references to `problem` and `options`
    bool finished = false;           // certified, or ended by a non-finite F
    bool finite = true;
  };

 public:
  /// Cuts the K classes of `problem` into `ranges` contiguous ranges of sizes ⌊K/ranges⌋ or one
  /// more (at most K), and sets up one engine per range (warm-started from `initial`'s
  /// columns); the ranges' epochs run on `team` threads.
  ScdClassRanges(const CscProblem<Scalar, Index>& problem, const Loss& loss, const Penalty& penalty,
                 const SCDOptions<Variant>& options, const LinearModel<Scalar>* initial, int team, int ranges)
      : team_(team), K_(problem.n_classes()), d_(problem.n_features()), intercept_(options.fit_intercept) {
    const ClassIndex count = std::min<ClassIndex>(ranges, K_);
    ranges_.resize(static_cast<std::size_t>(count));
    for (ClassIndex r = 0; r < count; ++r) {
      Range& range = ranges_[static_cast<std::size_t>(r)];
      range.first = static_cast<ClassIndex>(static_cast<std::int64_t>(K_) * r / count);
      range.size = static_cast<ClassIndex>(static_cast<std::int64_t>(K_) * (r + 1) / count) - range.first;
      range.y = class_range(problem.y, range.first, range.size);
      range.problem = CscProblem<Scalar, Index>{.X = problem.X, .y = range.y.view(), .sample_weights = problem.sample_weights};
      range.options = options;
      range.options.seed = range_seed(options.seed, range.first);
    }
    if (initial != nullptr) {
      check_warm_start("SCD", *initial, d_, K_);
      labels_ = initial->labels();
      bias_ = initial->provenance().bias;
    } else {
      labels_ = cold_start_labels(K_);
    }
    const RowMatrix W0 = initial != nullptr ? initial->dense() : RowMatrix();
    parallel_tasks(team_, ranges_.size(), [&](std::size_t r) {
      Range& range = ranges_[r];
      std::optional<LinearModel<Scalar>> start;
      if (initial != nullptr) start.emplace(W0.middleCols(range.first, range.size), initial_intercept(*initial, range),
                                            cold_start_labels(range.size));
      range.engine = std::make_unique<Engine>(range.problem, loss, penalty, range.options, start ? &*start : nullptr);
    });
  }

  /// Every range's start (ScdEngine::start). A range certified at its start is finished; a
  /// non-finite start in any range ends the solve.
  std::optional<Status> start() {
    std::vector<std::optional<Status>> ended(ranges_.size());
    parallel_tasks(team_, ranges_.size(), [&](std::size_t r) { ended[r] = ranges_[r].engine->start(); });
    for (std::size_t r = 0; r < ranges_.size(); ++r) {
      if (ended[r] == Status::numerical_issue) return Status::numerical_issue;
      ranges_[r].finished = ended[r].has_value();
    }
    if (all_finished()) return Status::converged;
    return std::nullopt;
  }

  /// One epoch of every unfinished range side by side: its sweep, its evaluation and its
  /// certificate when due (ScdEngine::sweep, evaluate, certify_if_due).
  void sweep() {
    ++epoch_;
    open_.clear();
    for (std::size_t r = 0; r < ranges_.size(); ++r)
      if (!ranges_[r].finished) open_.push_back(r);
    parallel_tasks(team_, open_.size(), [&](std::size_t t) {
      Range& range = ranges_[open_[t]];
      range.engine->sweep();
      range.finite = range.engine->evaluate();
      range.finished = range.finite && range.engine->certify_if_due();
    });
  }

  /// False when F or the measure of a range stepped this epoch is not finite.
  bool evaluate() const {
    return std::all_of(open_.begin(), open_.end(), [&](std::size_t r) { return ranges_[r].finite; });
  }

  /// True once every range is certified (each decided in its own step of sweep()).
  bool certify_if_due() const { return all_finished(); }

  /// The epoch's report: F = Σ_r F_r, the measure, the nonzero rows of the whole W, and the
  /// relative gap Σ_r gap_r / Σ_r F_r once every range is certified.
  [[nodiscard]] EpochReport report(double seconds) const {
    EpochReport report{epoch_, objective(), measure(), nnz_rows(), seconds};
    if (all_finished()) report.relative_gap = certificate().relative();
    return report;
  }

  /// Each range's measure and certificate at its returned point (ScdEngine::finish).
  void finish(Status status) {
    parallel_tasks(team_, ranges_.size(), [&](std::size_t r) { ranges_[r].engine->finish(status); });
  }

  /// The ranges' columns of W and entries of b side by side.
  [[nodiscard]] LinearModel<Scalar> model() {
    ClassMatrix<Scalar> W = ClassMatrix<Scalar>::Zero(d_, K_);
    ClassVector<Scalar> b(intercept_ ? K_ : 0);
    for (Range& range : ranges_) {
      const LinearModel<Scalar> part = range.engine->model();
      part.copy_to(W.middleCols(range.first, range.size));
      if (intercept_) b.segment(range.first, range.size) = part.intercept();
    }
    return LinearModel<Scalar>(W, std::move(b), labels_);
  }

  /// Σ_r of the ranges' last certificates (their sum certifies the whole, see the file comment).
  [[nodiscard]] DualityGap certificate() const {
    DualityGap sum{0.0, 0.0};
    for (const Range& range : ranges_) {
      sum.primal += range.engine->certificate().primal;
      sum.dual += range.engine->certificate().dual;
    }
    return sum;
  }

  /// The information block: the epochs, F = Σ_r F_r and the measure.
  [[nodiscard]] SolverInfo info(Status status) const {
    return {.status = status, .epochs = epoch_, .objective = objective(), .measure_name = "kkt_violation",
            .measure = measure()};
  }

  [[nodiscard]] std::int64_t epoch() const noexcept { return epoch_; }
  /// The ranges' gap evaluations and their time (summed over the threads).
  [[nodiscard]] GapCost gap_spent() const noexcept {
    GapCost sum;
    for (const Range& range : ranges_) {
      sum.evaluations += range.engine->gap_spent().evaluations;
      sum.seconds += range.engine->gap_spent().seconds;
    }
    return sum;
  }
  [[nodiscard]] double bias() const noexcept { return bias_; }

 private:
  using RowMatrix = typename LinearModel<Scalar>::RowMatrix;

  /// The seed of a range's draws: the solve's seed mixed with the range's first class
  /// (SplitMix64's finaliser), so that ranges draw independent streams and a seed and a range
  /// count fix every draw.
  static std::uint64_t range_seed(std::uint64_t seed, ClassIndex first) {
    std::uint64_t z = seed + 0x9E3779B97F4A7C15ull * (static_cast<std::uint64_t>(first) + 1);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

  static ClassVector<Scalar> initial_intercept(const LinearModel<Scalar>& initial, const Range& range) {
    if (!initial.has_intercept()) return {};
    return initial.intercept().segment(range.first, range.size);
  }

  [[nodiscard]] bool all_finished() const {
    return std::all_of(ranges_.begin(), ranges_.end(), [](const Range& range) { return range.finished; });
  }

  [[nodiscard]] double objective() const {
    double F = 0.0;
    for (const Range& range : ranges_) F += range.engine->objective();
    return F;
  }

  /// The whole problem's measure V/V(0) (SCD's comment) from the ranges' summed violations.
  [[nodiscard]] double measure() const {
    double violation = 0.0, at_start = 0.0;
    for (const Range& range : ranges_) {
      violation += range.engine->violation();
      at_start += range.engine->violation_at_start();
    }
    return violation / (at_start > 0.0 ? at_start : 1.0);
  }

  /// Rows of W nonzero in any range: O(d·K), the size of W.
  [[nodiscard]] std::int64_t nnz_rows() const {
    std::int64_t count = 0;
    for (Eigen::Index j = 0; j < d_; ++j)
      count += std::any_of(ranges_.begin(), ranges_.end(),
                           [&](const Range& range) { return (range.engine->weights().row(j).array() != Scalar(0)).any(); })
                   ? 1
                   : 0;
    return count;
  }

  int team_;
  ClassIndex K_;
  Eigen::Index d_;
  bool intercept_;
  std::vector<Range> ranges_;
  std::vector<std::size_t> open_;  // the ranges stepped in the current epoch
  std::vector<Label> labels_;      // of the returned model: 0..K−1 or the warm start's
  double bias_ = -1.0;             // the warm start's bias feature
  std::int64_t epoch_ = 0;
};

}  // namespace sparsemc::detail
