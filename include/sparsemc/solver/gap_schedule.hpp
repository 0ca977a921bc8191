#pragma once
/// \file gap_schedule.hpp
/// When a solver evaluates the duality gap of (1) (solver/duality_gap.hpp), the certificate
/// that alone decides `converged`. The gap costs one pass over X times K, so each solver
/// evaluates it when its own cheap measure predicts a certificate, and otherwise rarely enough
/// that the gap's share of the solve stays small. Two schedules, by what a solver's epochs cost:
///
///   - GapSchedule counts epochs: the solvers whose epochs cost about the same (FISTA, SCD,
///     FBPD, the GLS family);
///   - WorkGapSchedule counts work (touched nonzeros): the solvers whose epochs vary in cost
///     by orders of magnitude (BlockCD with shrinking, SequentialDual with its active classes),
///     where "every few epochs" would mean anything from nothing to many gaps' worth.
///
/// Both are deterministic: only epoch counts, work counts and measures decide, never the clock.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace sparsemc::detail {

/// When a solver whose epochs cost about the same evaluates the gap: whenever its own cheap
/// measure (on its own scale) falls to the trigger, and otherwise after a number of epochs
/// (first_interval, then doubling with every evaluation: a misleading measure delays the
/// certificate by a bounded factor, while the gap costs O(log epochs) evaluations in a long
/// run). The trigger starts at tol. A gap g that refuses where the measure m had met the trigger
/// sets it to m·√(tol/g), at most a quarter of m: halfway, on a log scale, to where the ratio of
/// the gap to the measure would put a certificate. The ratio drifts along a solve (FISTA on dna,
/// logistic, λ = 1e-4: from 450 to 3800 and back to 1100), so taking it at its word overshoots
/// when it falls, while a fixed quarter (the rule before) spent an evaluation at every halving
/// of the measure: 16 evaluations in 183 iterations of a dna solve, 16 % of its time.
class GapSchedule {
 public:
  explicit GapSchedule(double tol) noexcept : tol_(tol), trigger_(tol) {}

  /// Whether the gap is due at the end of `epoch`, given the cheap measure of that epoch.
  [[nodiscard]] bool due(std::int64_t epoch, double cheap_measure) const noexcept {
    return cheap_measure <= trigger_ || epoch >= next_epoch_;
  }

  /// Records an evaluation at `epoch` whose relative gap was `relative_gap` (certified when ≤ tol).
  void evaluated(std::int64_t epoch, double cheap_measure, double relative_gap) noexcept {
    if (relative_gap > tol_ && cheap_measure <= trigger_)
      trigger_ = std::min(max_tighten, std::sqrt(tol_ / relative_gap)) * cheap_measure;
    interval_ *= 2;
    next_epoch_ = epoch + interval_;
  }

  /// The cheap measure's level that makes the gap due now.
  [[nodiscard]] double trigger() const noexcept { return trigger_; }

  /// The trigger after a refused certificate is at most this fraction of the measure that met it.
  static constexpr double max_tighten = 0.25;
  /// The epoch of the first evaluation whatever the measure (the interval then doubles). Not the
  /// first epoch: on small problems one gap costs about two iterations, and a solve ends within
  /// a few epochs only when its measure reaches the trigger.
  static constexpr std::int64_t first_interval = 4;

 private:
  double tol_;
  double trigger_;
  std::int64_t interval_ = first_interval;
  std::int64_t next_epoch_ = first_interval;
};

/// When a solver whose epochs vary in cost evaluates the gap: only at the end of a full pass
/// (every block or class measured; the solver passes +∞ as the measure of other epochs), and
///
///   - the first time the cheap measure (BlockCD: the relative KKT violation of eq. 10;
///     SequentialDual: the dual violation) meets the trigger, which starts at the solver's old
///     stopping level; each time the gap refuses to certify, the trigger becomes the measure
///     times tol / (relative gap), at most half of it: the ratio of the relative gap to the
///     measure changes slowly along a solve (on sector it grows from ~80 to ~270 while the
///     measure falls 250-fold), so the next evaluation comes about when the measure predicts
///     a certificate;
///   - afterwards only once the work done since the last evaluation is at least `spacing`
///     gap evaluations' worth, so that the gap's share of the solve stays small whatever the
///     measure does (work is counted in the solver's unit, e.g. touched nonzeros of X);
///   - after two refused evaluations, also once the work reaches the point where the gap's own
///     trend predicts a certificate: with relative gaps r₁ > r₂ > tol a work w apart, the gap
///     is taken to fall log-linearly in the work, r₂·(r₂/r₁)^(w'/w), so it is due again after
///     w' = w·ln(r₂/tol)/ln(r₁/r₂). A gap just above tol is re-evaluated after a short stretch
///     instead of waiting for the measure to halve (on sector, λ = 1e-4, a gap of 1.07·tol
///     waited 28 epochs, 9 s, for an evaluation the trend put 3 epochs away);
///   - and, whatever the measure, once that work is `fallback_spacing` evaluations' worth: a
///     misleading measure delays the certificate by a bounded amount of work, and the gap's
///     share of a long solve stays under 1/(1 + fallback_spacing).
class WorkGapSchedule {
 public:
  /// Work between two evaluations, in evaluations' worth (one gap ≈ one pass over nnz(X); one
  /// block visit touches its column about three times: gradient, trial, commit). The trigger
  /// keeps evaluations rare; this bounds their share when the measure falls fast. (At 2, a
  /// point of a sector path whose gap was 1.6·tol waited 46 cheap shrunk epochs, 2.5 s, for
  /// an evaluation that would have certified after 10.)
  static constexpr double spacing = 0.5;
  /// The spacing of the measure-independent evaluations. (Doubling it with the work done, as
  /// an earlier version did, let a 600-epoch BlockCD solve on sector run 300 epochs past the
  /// point the gap would have certified.)
  static constexpr double fallback_spacing = 8.0;
  /// The trigger after a refused certificate is at most this fraction of the measure (the
  /// measure must fall, and a gap just above tol asks for no more than halving it).
  static constexpr double max_tighten = 0.5;

  /// `trigger` on the measure's (relative) scale; `gap_cost` the work of one evaluation.
  WorkGapSchedule(double trigger, double gap_cost) noexcept : trigger_(trigger), gap_cost_(gap_cost) {}

  [[nodiscard]] double trigger() const noexcept { return trigger_; }
  [[nodiscard]] std::int64_t evaluations() const noexcept { return evaluations_; }

  /// Counts work done by the solver (touched nonzeros).
  void add_work(double work) noexcept { since_ += work; }

  /// Whether the gap is due at the end of a full pass whose measure is `measure`.
  [[nodiscard]] bool due(double measure) const noexcept {
    if (evaluations_ == 0) return measure <= trigger_ || since_ >= fallback_spacing * gap_cost_;
    if (since_ < spacing * gap_cost_) return false;
    return measure <= trigger_ || since_ >= predicted_work_ || since_ >= fallback_spacing * gap_cost_;
  }

  /// Records an evaluation at a full pass of measure `measure` whose relative gap was
  /// `relative_gap` against the tolerance `tol` (certified when relative_gap ≤ tol).
  void evaluated(double measure, double relative_gap, double tol) noexcept {
    const bool refused = relative_gap > tol;
    if (refused && measure <= trigger_) trigger_ = std::min(max_tighten, tol / relative_gap) * measure;
    predicted_work_ = std::numeric_limits<double>::infinity();
    if (refused && std::isfinite(last_refused_) && last_refused_ > relative_gap && since_ > 0.0)
      predicted_work_ = since_ * std::log(relative_gap / tol) / std::log(last_refused_ / relative_gap);
    last_refused_ = refused && std::isfinite(relative_gap) ? relative_gap : std::numeric_limits<double>::infinity();
    since_ = 0.0;
    ++evaluations_;
  }

 private:
  double trigger_;
  double gap_cost_;
  double since_ = 0.0;  ///< work since the last evaluation
  double last_refused_ = std::numeric_limits<double>::infinity();  ///< the last refused relative gap
  double predicted_work_ = std::numeric_limits<double>::infinity();  ///< work to the trend's certificate
  std::int64_t evaluations_ = 0;
};

}  // namespace sparsemc::detail
