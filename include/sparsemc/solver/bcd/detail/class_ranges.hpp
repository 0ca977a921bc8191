#pragma once
/// \file class_ranges.hpp
/// BlockCD on several threads where (1) separates over the classes (implementation detail).
///
/// With a loss that is one term per class (ClassSeparableLoss: one-vs-rest squared hinge,
/// least squares) and an entrywise penalty (L1, ridge), (1) is the sum of K problems, one per
/// column of W and entry of b — the one-vs-rest decomposition LIBLINEAR's -s 5 solves class by
/// class (Blondel et al. 2013, eq. 11). So is its dual: a dual point of each part gives one of
/// the whole, D = Σ_r D_r, and F − D = Σ_r (F_r − D_r). `ClassRanges` cuts the K classes
/// into contiguous ranges (two per thread, BlockCD::ranges_per_thread) and gives each a
/// BcdEngine of its own on the problem restricted to its classes (X and the sample weights
/// shared, the class sets cut). Every epoch runs the unfinished ranges' steps side by side;
/// a range whose own relative gap reaches tol stops, and once every range has,
/// Σ_r (F_r − D_r) ≤ tol·Σ_r F_r certifies the whole. It offers the loop of block_cd.hpp the
/// engine's interface.
///
/// The iterates depend on the number of ranges (each range's line search and shrinking see its
/// own classes); the certified optimum does not. The reported gap is Σ_r (F_r − D_r): with
/// μ = 0 it can differ from `duality_gap` of the whole problem at the same model, whose
/// per-sample rescaling (G3) spans every class (both bound F − F*).

#include <Eigen/Core>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "../../../core/callbacks.hpp"
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

template <class Loss, class Penalty, class StepRule, RealScalar Scalar, StorageIndex Index>
class ClassRanges {
  using Engine = BcdEngine<Loss, Penalty, StepRule, Scalar, Index>;

  /// One range of classes [first, first + size): its class sets, its problem, its engine.
  struct Range {
    ClassIndex first = 0;
    ClassIndex size = 0;
    LabelSets y;
    CscProblem<Scalar, Index> problem;
    std::unique_ptr<Engine> engine;  // holds a reference to `problem`
    bool finished = false;           // certified (or certified at W = 0) at the current λ
  };

 public:
  /// Cuts the K classes of `problem` into `ranges` contiguous ranges of sizes ⌊K/ranges⌋ or
  /// one more (at most K), and sets up one engine per range (warm-started from `initial`'s
  /// columns); the ranges' steps run on `team` threads.
  ClassRanges(const CscProblem<Scalar, Index>& problem, const Loss& loss, const Penalty& penalty,
              const BlockCDOptions<StepRule>& options, std::span<const double> lambdas,
              const LinearModel<Scalar>* initial, int team, int ranges)
      : team_(team), K_(problem.n_classes()), d_(problem.n_features()), intercept_(options.fit_intercept) {
    const ClassIndex count = std::min<ClassIndex>(ranges, K_);
    ranges_.resize(static_cast<std::size_t>(count));
    for (ClassIndex r = 0; r < count; ++r) {
      Range& range = ranges_[static_cast<std::size_t>(r)];
      range.first = static_cast<ClassIndex>(static_cast<std::int64_t>(K_) * r / count);
      range.size = static_cast<ClassIndex>(static_cast<std::int64_t>(K_) * (r + 1) / count) - range.first;
      range.y = class_range(problem.y, range.first, range.size);
      range.problem = CscProblem<Scalar, Index>{.X = problem.X, .y = range.y.view(), .sample_weights = problem.sample_weights};
    }
    if (initial != nullptr) {
      check_warm_start("BlockCD", *initial, d_, K_);
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
      range.engine = std::make_unique<Engine>(range.problem, loss, penalty, options, lambdas,
                                              start ? &*start : nullptr);
    });
  }

  /// Starts every range at `lambdas[point]` (BcdEngine::start_point). A range the gap
  /// certifies at its start is finished; a numerical issue in any range ends the solve.
  std::optional<Status> start_point(std::size_t point) {
    std::vector<std::optional<Status>> ended(ranges_.size());
    parallel_tasks(team_, ranges_.size(), [&](std::size_t r) { ended[r] = ranges_[r].engine->start_point(point); });
    epoch_ = 0;
    for (std::size_t r = 0; r < ranges_.size(); ++r) {
      if (ended[r] == Status::numerical_issue) return Status::numerical_issue;
      ranges_[r].finished = ended[r].has_value();
    }
    if (all_finished()) return Status::converged;
    return std::nullopt;
  }

  /// One epoch of every unfinished range side by side (BcdEngine::run_epoch); returns whether
  /// every range is now certified.
  bool run_epoch() {
    ++epoch_;
    open_.clear();
    for (std::size_t r = 0; r < ranges_.size(); ++r)
      if (!ranges_[r].finished) open_.push_back(r);
    parallel_tasks(team_, open_.size(), [&](std::size_t t) {
      Range& range = ranges_[open_[t]];
      range.finished = range.engine->run_epoch();
    });
    return all_finished();
  }

  /// The epoch's report: F = Σ_r F_r, the largest measure of the ranges stepped, the nonzero
  /// rows of the whole W, and the relative gap Σ_r gap_r / Σ_r F_r when every range has one
  /// (the last of a finished range).
  [[nodiscard]] EpochReport report(double seconds) const {
    EpochReport report{epoch_, objective(), 0.0, nnz_rows(), seconds};
    double primal = 0.0, dual = 0.0;
    bool every_gap = true;
    for (const std::size_t r : open_) report.measure = std::max(report.measure, ranges_[r].engine->measure());
    for (const Range& range : ranges_) {
      const std::optional<DualityGap> gap = range.engine->epoch_certificate();
      every_gap = every_gap && gap.has_value();
      if (gap) primal += gap->primal, dual += gap->dual;
    }
    if (every_gap) report.relative_gap = DualityGap{primal, dual}.relative();
    return report;
  }

  /// Each unfinished range plans its next epoch (BcdEngine::plan_next_epoch).
  void plan_next_epoch() {
    for (const std::size_t r : open_)
      if (!ranges_[r].finished) ranges_[r].engine->plan_next_epoch();
  }

  /// The whole iterate: the ranges' columns of W and entries of b side by side.
  [[nodiscard]] LinearModel<Scalar> model() const {
    ClassMatrix<Scalar> W(d_, K_);
    ClassVector<Scalar> b(intercept_ ? K_ : 0);
    for (const Range& range : ranges_) {
      W.middleCols(range.first, range.size) = range.engine->weights();
      if (intercept_) b.segment(range.first, range.size) = range.engine->intercept();
    }
    return LinearModel<Scalar>(W, std::move(b), labels_);
  }

  /// The certificate at the returned model: the sum of the ranges' (BcdEngine::returned_certificate).
  [[nodiscard]] DualityGap returned_certificate(Status status, const LinearModel<Scalar>&) {
    DualityGap sum{0.0, 0.0};
    std::vector<DualityGap> parts(ranges_.size());
    parallel_tasks(team_, ranges_.size(), [&](std::size_t r) {
      Engine& engine = *ranges_[r].engine;
      parts[r] = engine.returned_certificate(status, engine.model());
    });
    for (const DualityGap& part : parts) sum.primal += part.primal, sum.dual += part.dual;
    return sum;
  }

  /// The information block of the current λ: the epochs, F and the largest measure.
  [[nodiscard]] SolverInfo info(Status status) const {
    double measure = 0.0;
    for (const Range& range : ranges_) measure = std::max(measure, range.engine->measure());
    return {.status = status, .epochs = epoch_, .objective = objective(), .measure_name = "kkt_violation",
            .measure = measure};
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
  [[nodiscard]] const Penalty& penalty() const noexcept { return ranges_.front().engine->penalty(); }
  [[nodiscard]] double bias() const noexcept { return bias_; }

 private:
  using RowMatrix = typename LinearModel<Scalar>::RowMatrix;

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
