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
/// and the range; solver/class_split.hpp), and runs the unfinished ranges' epochs side by side. A range whose own
/// relative gap reaches tol stops; once every range has, Σ_r (F_r − D_r) ≤ tol·Σ_r F_r
/// certifies the whole. It offers SCD::run the engine's interface.
///
/// The iterates depend on the number of ranges; the certified optimum does not. The reported
/// gap is Σ_r (F_r − D_r): with μ = 0 it can differ from `duality_gap` of the whole problem at
/// the same model, whose per-sample rescaling spans every class (both bound F − F*).

#include <Eigen/Core>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <optional>

#include "../../../core/status.hpp"
#include "../../../data/problem.hpp"
#include "../../../model/linear_model.hpp"
#include "../../class_split.hpp"
#include "../../duality_gap.hpp"
#include "../options.hpp"
#include "engine.hpp"

namespace sparsemc::detail {

/// What SCD keeps per range beside its engine: the options with the range's seed (the engine
/// holds them by reference) and whether its last evaluation was finite.
template <class Variant>
struct ScdRangeState {
  SCDOptions<Variant> options;
  bool finite = true;
};

template <class Loss, class Penalty, class Variant, FeatureColumnProblem Prob, class Coord>
class ScdClassRanges : public ClassSplit<ScdEngine<Loss, Penalty, Variant, Prob, Coord>, Prob, ScdRangeState<Variant>> {
  using Engine = ScdEngine<Loss, Penalty, Variant, Prob, Coord>;
  using Base = ClassSplit<Engine, Prob, ScdRangeState<Variant>>;
  using Scalar = ProblemScalar<Prob>;
  using Range = typename Base::Range;

 public:
  /// Cuts the K classes of `problem` into `ranges` ranges (ClassSplit) and sets up one engine
  /// per range, its draws seeded from `options.seed` and the range (warm-started from
  /// `initial`'s columns); the ranges' epochs run on `team` threads.
  ScdClassRanges(const Prob& problem, const Loss& loss, const Penalty& penalty,
                 const SCDOptions<Variant>& options, const LinearModel<Scalar>* initial, int team, int ranges)
      : Base(problem, initial, "SCD", options.fit_intercept, team, ranges) {
    for (Range& range : ranges_) {
      range.extra.options = options;
      range.extra.options.seed = range_seed(options.seed, range.first);
    }
    this->make_engines(initial, [&](Range& range, const LinearModel<Scalar>* start) {
      return std::make_unique<Engine>(*range.problem, loss, penalty, range.extra.options, start);
    });
  }

  /// Every range's start (ScdEngine::start). A range certified at its start is finished; a
  /// non-finite start in any range ends the solve.
  std::optional<Status> start() {
    return this->start_ranges([](Range& range) { return range.engine->start(); });
  }

  /// One epoch of every unfinished range side by side: its sweep, its evaluation and its
  /// certificate when due (ScdEngine::sweep, evaluate, certify_if_due).
  void sweep() {
    this->step_open_ranges([](Range& range) {
      range.engine->sweep();
      range.extra.finite = range.engine->evaluate();
      range.finished = range.extra.finite && range.engine->certify_if_due();
    });
  }

  /// False when F or the measure of a range stepped this epoch is not finite.
  bool evaluate() const {
    return std::all_of(open_.begin(), open_.end(), [&](std::size_t r) { return ranges_[r].extra.finite; });
  }

  /// True once every range is certified (each decided in its own step of sweep()).
  bool certify_if_due() const { return this->all_finished(); }

  /// The epoch's report: F = Σ_r F_r, the measure, the nonzero rows of the whole W, and the
  /// relative gap Σ_r gap_r / Σ_r F_r once every range is certified.
  [[nodiscard]] EpochReport report(double seconds) const {
    EpochReport report{epoch_, this->objective(), measure(), this->nnz_rows(), seconds};
    if (this->all_finished()) report.relative_gap = certificate().relative();
    return report;
  }

  /// Each range's measure and certificate at its returned point (ScdEngine::finish).
  void finish(Status status) {
    this->for_ranges(every_, [&](std::size_t r) { ranges_[r].engine->finish(status); });
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
  [[nodiscard]] SolverInfo info(Status status) const { return this->info_with(status, measure()); }

 private:
  using Base::epoch_;
  using Base::every_;
  using Base::open_;
  using Base::ranges_;

  /// The seed of a range's draws: the solve's seed mixed with the range's first class
  /// (SplitMix64's finaliser), so that ranges draw independent streams and a seed and a range
  /// count fix every draw.
  static std::uint64_t range_seed(std::uint64_t seed, ClassIndex first) {
    std::uint64_t z = seed + 0x9E3779B97F4A7C15ull * (static_cast<std::uint64_t>(first) + 1);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
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
};

}  // namespace sparsemc::detail
