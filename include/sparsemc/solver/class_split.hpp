#pragma once
/// \file class_split.hpp
/// What BlockCD's and SCD's class ranges share (implementation detail; the mathematics is in
/// bcd/detail/class_ranges.hpp): the K classes of a one-vs-rest problem cut into contiguous
/// ranges, each with its restricted problem and an engine of the solver, the warm start split
/// by columns, the epochs of the unfinished ranges side by side, and the sums over the ranges
/// (F, the gap evaluations) and the nonzero rows of the whole W.

#include <Eigen/Core>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <variant>
#include <vector>

#include "../core/parallel.hpp"
#include "../core/status.hpp"
#include "../core/stopwatch.hpp"
#include "../data/labels.hpp"
#include "../data/problem.hpp"
#include "../model/linear_model.hpp"
#include "solver_base.hpp"

namespace sparsemc::detail {

/// The base of a solver's class ranges: `Engine` needs objective(), weights(), gap_spent(),
/// model() and take_model(); `Extra` is what the solver keeps per range beside its engine.
template <class Engine, TrainingProblem Prob, class Extra = std::monostate>
class ClassSplit {
  using Scalar = ProblemScalar<Prob>;

 public:
  /// The whole iterate: the ranges' models merged (`merged`), each range's W copied into its
  /// part.
  [[nodiscard]] LinearModel<Scalar> model() {
    std::vector<LinearModel<Scalar>> parts;
    parts.reserve(ranges_.size());
    for (Range& range : ranges_) parts.push_back(range.engine->model());
    return merged(std::move(parts));
  }

  /// The whole returned iterate, built once: each range's W is consumed into its part before
  /// they are merged. The engines have no iterate afterwards.
  [[nodiscard]] LinearModel<Scalar> take_model() {
    std::vector<LinearModel<Scalar>> parts;
    parts.reserve(ranges_.size());
    for (Range& range : ranges_) parts.push_back(range.engine->take_model());
    return merged(std::move(parts));
  }

  [[nodiscard]] std::int64_t epoch() const noexcept { return epoch_; }
  /// The ranges' gap evaluations and their time as part of the solve's wall clock: the ranges'
  /// evaluations take Σ_r thread-seconds beside the other ranges' epochs, so their sum is
  /// scaled by the ranges' wall time over their thread-seconds (on two threads the plain sum
  /// read as twice the gap's share of the solve).
  [[nodiscard]] GapCost gap_spent() const noexcept {
    GapCost sum;
    double thread_seconds = 0.0;
    for (const Range& range : ranges_) {
      sum.evaluations += range.engine->gap_spent().evaluations;
      sum.seconds += range.engine->gap_spent().seconds;
      thread_seconds += range.thread_seconds;
    }
    if (thread_seconds > 0.0) sum.seconds *= std::min(1.0, wall_seconds_ / thread_seconds);
    return sum;
  }
  /// The warm start's bias feature (−1 without one), for the model's provenance.
  [[nodiscard]] double bias() const noexcept { return bias_; }

 protected:
  /// The ranges' parts (one per range, in order) as one model: their stored rows merged
  /// feature by feature, each range's classes moved to its place, with no d × K array beside
  /// them.
  [[nodiscard]] LinearModel<Scalar> merged(std::vector<LinearModel<Scalar>> parts) const {
    std::size_t entries = 0;
    for (const LinearModel<Scalar>& part : parts) entries += static_cast<std::size_t>(part.nnz());
    std::vector<std::int64_t> support, row_start{0};
    std::vector<ClassIndex> classes;
    std::vector<Scalar> weights;
    classes.reserve(entries);
    weights.reserve(entries);
    constexpr std::int64_t none = std::numeric_limits<std::int64_t>::max();
    std::vector<std::size_t> next(parts.size(), 0);  // each part's next stored row
    const auto next_feature = [&](std::size_t r) {
      return next[r] < parts[r].support().size() ? parts[r].support()[next[r]] : none;
    };
    for (;;) {
      std::int64_t j = none;
      for (std::size_t r = 0; r < parts.size(); ++r) j = std::min(j, next_feature(r));
      if (j == none) break;
      for (std::size_t r = 0; r < parts.size(); ++r) {
        if (next_feature(r) != j) continue;
        for (auto [k, w] : parts[r].row(next[r]++)) {
          classes.push_back(ranges_[r].first + k);
          weights.push_back(w);
        }
      }
      support.push_back(j);
      row_start.push_back(static_cast<std::int64_t>(classes.size()));
    }
    ClassVector<Scalar> b(intercept_ ? K_ : 0);
    if (intercept_)
      for (std::size_t r = 0; r < parts.size(); ++r)
        b.segment(ranges_[r].first, ranges_[r].size) = parts[r].intercept();
    parts.clear();  // freed before the model takes its arrays
    return LinearModel<Scalar>(d_, std::move(support), std::move(row_start), std::move(classes), std::move(weights),
                               std::move(b), labels_);
  }

  /// One range of classes [first, first + size): its class sets, its problem, the solver's
  /// state, its engine (which may hold references to `problem` and `extra`).
  struct Range {
    ClassIndex first = 0;
    ClassIndex size = 0;
    LabelSets y;
    std::optional<Prob> problem;  // set once (a dense X's Eigen::Map is not assignable as a view)
    Extra extra{};
    std::unique_ptr<Engine> engine;
    bool finished = false;
    double thread_seconds = 0.0;  ///< its time in for_ranges
  };

  /// Cuts the K classes of `problem` into `ranges` contiguous ranges of sizes ⌊K/ranges⌋ or
  /// one more (at most K; X and the sample weights shared, the class sets cut), and takes the
  /// labels and bias of the warm start `initial` (checked to have the problem's d and K).
  ClassSplit(const Prob& problem, const LinearModel<Scalar>* initial, const char* solver,
             bool intercept, int team, int ranges)
      : team_(team), K_(problem.n_classes()), d_(problem.n_features()), intercept_(intercept) {
    const ClassIndex count = std::min<ClassIndex>(ranges, K_);
    ranges_.resize(static_cast<std::size_t>(count));
    every_.resize(ranges_.size());
    std::iota(every_.begin(), every_.end(), std::size_t{0});
    for (ClassIndex r = 0; r < count; ++r) {
      Range& range = ranges_[static_cast<std::size_t>(r)];
      range.first = static_cast<ClassIndex>(static_cast<std::int64_t>(K_) * r / count);
      range.size = static_cast<ClassIndex>(static_cast<std::int64_t>(K_) * (r + 1) / count) - range.first;
      range.y = class_range(problem.y, range.first, range.size);
      range.problem.emplace(problem);
      range.problem->y = range.y.view();
    }
    if (initial != nullptr) {
      check_warm_start(solver, *initial, d_, K_);
      labels_ = initial->labels();
      bias_ = initial->provenance().bias;
    } else {
      labels_ = cold_start_labels(K_);
    }
  }

  /// Sets up the ranges' engines on the threads: make(range, start) → std::unique_ptr<Engine>,
  /// `start` the range's columns of `initial` (nullptr from a cold start).
  template <class Make>
  void make_engines(const LinearModel<Scalar>* initial, Make&& make) {
    const RowMatrix W0 = initial != nullptr ? initial->dense() : RowMatrix();
    parallel_tasks(team_, ranges_.size(), [&](std::size_t r) {
      Range& range = ranges_[r];
      std::optional<LinearModel<Scalar>> start;
      if (initial != nullptr) {
        ClassVector<Scalar> b;
        if (initial->has_intercept()) b = initial->intercept().segment(range.first, range.size);
        start.emplace(W0.middleCols(range.first, range.size), std::move(b), cold_start_labels(range.size));
      }
      range.engine = make(range, start ? &*start : nullptr);
    });
  }

  /// Starts every range on the threads (start(range): its engine's start, an optional status).
  /// A range that ends at its start is finished; a numerical issue in any range ends the solve.
  template <class Start>
  std::optional<Status> start_ranges(Start&& start) {
    epoch_ = 0;
    std::vector<std::optional<Status>> ended(ranges_.size());
    for_ranges(every_, [&](std::size_t r) { ended[r] = start(ranges_[r]); });
    for (std::size_t r = 0; r < ranges_.size(); ++r) {
      if (ended[r] == Status::numerical_issue) return Status::numerical_issue;
      ranges_[r].finished = ended[r].has_value();
    }
    if (all_finished()) return Status::converged;
    return std::nullopt;
  }

  /// The information block: the epochs, F = Σ_r F_r and `measure`.
  [[nodiscard]] SolverInfo info_with(Status status, double measure) const {
    return {.status = status, .epochs = epoch_, .objective = objective(), .measure_name = "kkt_violation",
            .measure = measure};
  }

  /// One epoch: lists the unfinished ranges in `open_` and runs step(range) for each, side by
  /// side on the threads.
  template <class Step>
  void step_open_ranges(Step&& step) {
    ++epoch_;
    open_.clear();
    for (std::size_t r = 0; r < ranges_.size(); ++r)
      if (!ranges_[r].finished) open_.push_back(r);
    for_ranges(open_, [&](std::size_t r) { step(ranges_[r]); });
  }

  /// Runs task(r) for the ranges r listed in `which`, side by side on the threads, and adds
  /// each range's time and the wall time (for gap_spent).
  template <class Task>
  void for_ranges(const std::vector<std::size_t>& which, Task&& task) {
    const Stopwatch wall;
    parallel_tasks(team_, which.size(), [&](std::size_t t) {
      const Stopwatch own;
      task(which[t]);
      ranges_[which[t]].thread_seconds += own.seconds();
    });
    wall_seconds_ += wall.seconds();
  }

  [[nodiscard]] bool all_finished() const {
    return std::all_of(ranges_.begin(), ranges_.end(), [](const Range& range) { return range.finished; });
  }

  /// F = Σ_r F_r.
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

  using RowMatrix = typename LinearModel<Scalar>::RowMatrix;

  int team_;
  ClassIndex K_;
  Eigen::Index d_;
  bool intercept_;
  std::vector<Range> ranges_;
  std::vector<std::size_t> open_;  // the ranges stepped in the current epoch
  std::vector<std::size_t> every_;  // 0, 1, …: every range
  double wall_seconds_ = 0.0;       // in for_ranges
  std::vector<Label> labels_;      // of the returned model: 0..K−1 or the warm start's
  double bias_ = -1.0;             // the warm start's bias feature
  std::int64_t epoch_ = 0;
};

}  // namespace sparsemc::detail
