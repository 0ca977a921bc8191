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
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "../../../core/callbacks.hpp"
#include "../../../core/status.hpp"
#include "../../../data/problem.hpp"
#include "../../../model/linear_model.hpp"
#include "../../class_split.hpp"
#include "../../duality_gap.hpp"
#include "../../solver_base.hpp"
#include "../options.hpp"
#include "engine.hpp"

namespace sparsemc::detail {

template <class Loss, class Penalty, class StepRule, FeatureColumnProblem Prob>
class ClassRanges : public ClassSplit<BcdEngine<Loss, Penalty, StepRule, Prob>, Prob> {
  using Engine = BcdEngine<Loss, Penalty, StepRule, Prob>;
  using Base = ClassSplit<Engine, Prob>;
  using Scalar = ProblemScalar<Prob>;
  using Range = typename Base::Range;

 public:
  /// Cuts the K classes of `problem` into `ranges` ranges (ClassSplit) and sets up one engine
  /// per range (warm-started from `initial`'s columns); the ranges' steps run on `team` threads.
  ClassRanges(const Prob& problem, const Loss& loss, const Penalty& penalty,
              const BlockCDOptions<StepRule>& options, std::span<const double> lambdas,
              const LinearModel<Scalar>* initial, int team, int ranges)
      : Base(problem, initial, "BlockCD", options.fit_intercept, team, ranges) {
    this->make_engines(initial, [&](Range& range, const LinearModel<Scalar>* start) {
      return std::make_unique<Engine>(*range.problem, loss, penalty, options, lambdas, start, /*team=*/1);
    });
  }

  /// Starts every range at `lambdas[point]` (BcdEngine::start_point). A range the gap
  /// certifies at its start is finished; a numerical issue in any range ends the solve.
  std::optional<Status> start_point(std::size_t point) {
    return this->start_ranges([&](Range& range) { return range.engine->start_point(point); });
  }

  /// One epoch of every unfinished range side by side (BcdEngine::run_epoch); returns whether
  /// every range is now certified.
  bool run_epoch() {
    this->step_open_ranges([](Range& range) { range.finished = range.engine->run_epoch(); });
    return this->all_finished();
  }

  /// The epoch's report: F = Σ_r F_r, the largest measure of the ranges stepped, the nonzero
  /// rows of the whole W, and the relative gap Σ_r gap_r / Σ_r F_r when every range has one
  /// (the last of a finished range).
  [[nodiscard]] EpochReport report(double seconds) const {
    EpochReport report{epoch_, this->objective(), 0.0, this->nnz_rows(), seconds};
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

  /// The certificate at the returned model: the sum of the ranges' (BcdEngine::returned_certificate).
  [[nodiscard]] DualityGap returned_certificate(Status status) {
    DualityGap sum{0.0, 0.0};
    std::vector<DualityGap> parts(ranges_.size());
    this->for_ranges(this->every_, [&](std::size_t r) { parts[r] = ranges_[r].engine->returned_certificate(status); });
    for (const DualityGap& part : parts) sum.primal += part.primal, sum.dual += part.dual;
    return sum;
  }

  /// The information block of the current λ: the epochs, F and the largest measure.
  [[nodiscard]] SolverInfo info(Status status) const {
    double measure = 0.0;
    for (const Range& range : ranges_) measure = std::max(measure, range.engine->measure());
    return this->info_with(status, measure);
  }

  [[nodiscard]] const Penalty& penalty() const noexcept { return ranges_.front().engine->penalty(); }

 private:
  using Base::epoch_;
  using Base::open_;
  using Base::ranges_;
};

}  // namespace sparsemc::detail
