#pragma once
/// \file parallel_step.hpp
/// What BlockCD's parallel constant step keeps (implementation detail): the ESO constants of
/// the τ-nice sampling, the choice of τ, and the buffers of a round. The steps themselves are
/// BcdEngine's (engine.hpp: draw_rounds and the steps it names); the mathematics is in
/// richtarik_takac.hpp.
///
/// Notation: ω_i = |{j : x_ij ≠ 0}| (+1 with the intercept) the blocks sample i depends on,
/// A_j = (1/n) Σ_i c_i x_ij² (K_j = κA_j the serial step's constant), B_j = (1/n) Σ_i c_i (ω_i − 1) x_ij²,
/// m the number of blocks the round draws from, and the ESO constant of block j
///
///     v_j = κ (A_j + B_j (τ − 1)/max(1, m − 1))   ≤   K_j (1 + (ω − 1)(τ − 1)/max(1, m − 1)),   ω = max_i ω_i.

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <span>
#include <utility>
#include <vector>

#include "../../../core/class_matrix.hpp"
#include "../../../core/parallel.hpp"
#include "../../../core/traits.hpp"
#include "../../../data/problem.hpp"
#include "../../../data/sparse_view.hpp"

namespace sparsemc::detail {

/// B_j of the active blocks, with ω_i counted over them: the ESO's data part. The τ-nice
/// sampling draws from the active blocks alone, so only they make a sample's degree; within an
/// epoch blocks only leave the set, which keeps a measured ω_i an upper bound. Measured again
/// (one pass over the active columns, no K factor) when the set was rebuilt or has shrunk by a
/// tenth since: on sector the set falls from 55 197 rows to a few thousand, whose samples have
/// a few dozen active features each instead of 163.
template <RealScalar Scalar>
class EsoSpread {
 public:
  std::vector<Scalar> column;  // B_j, of the blocks active at the last measure
  Scalar intercept = 0;        // B_b = (1/n) Σ_i c_i (ω_i − 1)
  /// ω̄ − 1 = Σ_j B_j / Σ_j A_j over the active blocks: v_j/K_j − 1 averaged with the weights
  /// A_j is (ω̄ − 1)(τ − 1)/(m − 1), the work τ blocks at once add to a serial epoch.
  double mean_degree = 0.0;
  double mean_column = 0.0;  // the active columns' mean number of samples (n for the intercept)

  void reserve(std::size_t n, std::size_t d) {
    degree_.assign(n, 0);
    column.assign(d, Scalar(0));
  }

  /// Whether `m` active blocks need a new measure: the set was rebuilt, or lost a tenth.
  [[nodiscard]] bool stale(std::size_t m) const noexcept { return measured_ == 0 || 10 * m < 9 * measured_; }
  /// The active set was rebuilt (a restored full pass, a screened start).
  void invalidate() noexcept { measured_ = 0; }

  /// B_j for the `active` blocks (block d = problem.n_features() is the intercept), from the
  /// A_j of `squared_norm` (0: a column no step moves) and A_b; X the problem's feature
  /// columns, whose stored zeros (every zero of a dense X) couple no sample to a block.
  template <TrainingProblem Prob, class Columns>
  void measure(const Prob& problem, const Columns& X, std::span<const std::size_t> active,
               const std::vector<Scalar>& squared_norm, Scalar intercept_squared_norm) {
    const auto d = static_cast<std::size_t>(problem.n_features());
    const bool with_intercept = std::find(active.begin(), active.end(), d) != active.end();
    std::fill(degree_.begin(), degree_.end(), with_intercept ? 1 : 0);
    double entries = with_intercept ? static_cast<double>(degree_.size()) : 0.0;
    for (const std::size_t j : active) {
      if (j == d || squared_norm[j] == Scalar(0)) continue;
      const auto col = X.outer(static_cast<Eigen::Index>(j));
      entries += static_cast<double>(col.size());
      for (auto [i, x] : col) degree_[static_cast<std::size_t>(i)] += x != Scalar(0) ? 1 : 0;
    }
    const Scalar inv_n = Scalar(1) / static_cast<Scalar>(degree_.size());
    double spread_sum = 0.0, norm_sum = with_intercept ? static_cast<double>(intercept_squared_norm) : 0.0;
    for (const std::size_t j : active) {
      if (j == d || squared_norm[j] == Scalar(0)) continue;
      Scalar sum = 0;
      for (auto [i, x] : X.outer(static_cast<Eigen::Index>(j)))
        sum += problem.weight(i) * static_cast<Scalar>(degree_[static_cast<std::size_t>(i)] - 1) * x * x;
      column[j] = sum * inv_n;
      spread_sum += static_cast<double>(column[j]);
      norm_sum += static_cast<double>(squared_norm[j]);
    }
    intercept = 0;
    for (std::size_t i = 0; with_intercept && i < degree_.size(); ++i)
      intercept += problem.weight(static_cast<Eigen::Index>(i)) * static_cast<Scalar>(degree_[i] - 1) * inv_n;
    spread_sum += static_cast<double>(intercept);
    mean_degree = norm_sum > 0.0 ? spread_sum / norm_sum : 0.0;
    mean_column = active.empty() ? 0.0 : entries / static_cast<double>(active.size());
    measured_ = active.size();
  }

 private:
  std::vector<std::int64_t> degree_;  // ω_i over the active blocks
  std::size_t measured_ = 0;          // the active blocks at the last measure (0: none)
};

/// How many blocks a round updates: the option's τ, or, when it is 0, a τ chosen at each epoch
/// for the m blocks then active — the most whose ESO lengthens the average step by at most a
/// quarter, (ω̄ − 1)(τ − 1)/(m − 1) ≤ ¼ (it costs that share of more epochs), and no more than
/// gives each thread `round_work` per round; 1 (the serial draws) on one thread, or when a round
/// would not give two threads `min_round_work` each (on data with few features, such as dna, one
/// round's steps would touch the same samples). How many of the team share a round is the
/// engine's choice, from the round's own work (`threads`).
struct RoundSize {
  // Tuning constants, empirical (docs/bcd.md, "The parallel constant step"): a round costs
  // three barriers of the team, a few µs on this project's machines, and a touched score
  // entry about a nanosecond.
  static constexpr double max_lengthening = 0.25;
  static constexpr double round_work = 1 << 15;      // touched score entries per thread and round
  static constexpr double min_round_work = 1 << 13;  // below: one thread does the round faster
  /// A round is shared by as many threads as get this much of its work (touched score entries)
  /// each, one at least: below, the synchronisations would cost more than the work, and far more
  /// on an oversubscribed machine.
  static constexpr double min_shared_work = 1 << 12;
  /// Every thread keeps a partial gradient of every block of a round: τ·stride·team scalars
  /// each, at most this many bytes in all (it bounds τ on many cores with many classes).
  static constexpr double partial_bytes = 64.0 * (1 << 20);

  std::size_t asked = 0;     // the option (0: choose)
  int team = 1;
  std::size_t capacity = 1;  // the most a round can take: the slots allocated

  /// Sets the option, the team and the capacity for `blocks` blocks whose kernel rows are
  /// `stride` scalars of `bytes` each.
  RoundSize(std::size_t asked, int team, std::size_t blocks, std::size_t stride, std::size_t bytes)
      : asked(asked), team(team), capacity(std::min({blocks, asked > 0 ? asked : most(team, stride), fit(team, stride, bytes)})) {}
  RoundSize() = default;

  /// Whether any round can take more than one block (else the serial draws, and no ESO).
  [[nodiscard]] bool parallel() const noexcept { return capacity > 1 && (asked > 1 || (asked == 0 && team > 1)); }

  /// τ for m active blocks whose mean degree and column length are `mean_degree` (ω̄ − 1) and
  /// `mean_column`, with K classes (EsoSpread's measure of the active set).
  [[nodiscard]] std::size_t tau(std::size_t m, double mean_degree, double mean_column, std::size_t K) const {
    if (asked > 0) return std::min(capacity, m);
    if (team <= 1 || m < 2) return 1;
    const double by_eso =
        mean_degree > 0.0 ? 1.0 + max_lengthening * static_cast<double>(m - 1) / mean_degree : static_cast<double>(m);
    const double block_work = std::max(1.0, mean_column * static_cast<double>(K));
    const double by_work = static_cast<double>(team) * round_work / block_work;
    const double chosen = std::min({by_eso, by_work, static_cast<double>(std::min(m, capacity))});
    const bool worth = chosen >= 2.0 && chosen * block_work >= 2.0 * min_round_work;
    return worth ? static_cast<std::size_t>(chosen) : 1;
  }

  /// The threads that share a round touching `work` score entries: at most the team, each with
  /// min_shared_work at least.
  [[nodiscard]] int threads(double work) const { return team_for_work(team, work, min_shared_work); }

 private:
  /// The largest τ the choice can make: `round_work` per thread of single-sample columns.
  static std::size_t most(int team, std::size_t stride) {
    return static_cast<std::size_t>(static_cast<double>(team) * round_work / static_cast<double>(std::max<std::size_t>(stride, 1)));
  }
  /// The largest τ whose partial gradients fit in `partial_bytes` (at least one block a thread).
  static std::size_t fit(int team, std::size_t stride, std::size_t bytes) {
    const double per_slot = static_cast<double>(team) * static_cast<double>(std::max<std::size_t>(stride, 1) * bytes);
    return std::max(static_cast<std::size_t>(team), static_cast<std::size_t>(partial_bytes / per_slot));
  }
};

/// One block of a round: what its step found, written by the thread that planned it and read
/// in slot order by the commit.
struct RoundSlot {
  std::size_t block = 0;
  double violation = 0.0;  // v_j of eq. (10)
  double penalty = 0.0;    // P(W_j*) of the new row
  bool shrink = false;     // leaves the active set (safe shrinking, a zero row)
  bool moves = false;      // δ ≠ 0: the row (or b) and the scores change
};

/// Where the part of a sorted slice whose indices lie in [lo, hi) starts, and its length (no
/// search at an end of the samples, 0 or n).
template <RealScalar Scalar, StorageIndex Index>
std::pair<std::size_t, std::size_t> part_between(const SparseSlice<Scalar, Index>& slice, Index lo, Index hi, Index n) {
  const auto first = slice.indices.begin(), last = slice.indices.end();
  const auto begin = lo == 0 ? first : std::lower_bound(first, last, lo);
  const auto end = hi == n ? last : std::lower_bound(begin, last, hi);
  return {static_cast<std::size_t>(begin - first), static_cast<std::size_t>(end - begin)};
}

/// The part of a slice at (offset, size).
template <RealScalar Scalar, StorageIndex Index>
SparseSlice<Scalar, Index> part_of(const SparseSlice<Scalar, Index>& slice, std::pair<std::size_t, std::size_t> part) {
  return {slice.indices.subspan(part.first, part.second), slice.values.subspan(part.first, part.second)};
}

/// A kernel's Workspace (an empty stand-in for a kernel without one, which runs serially).
template <class Kernel>
struct WorkspaceOf {
  struct type {};
};
template <class Kernel>
  requires requires { typename Kernel::Workspace; }
struct WorkspaceOf<Kernel> {
  using type = typename Kernel::Workspace;
};

/// The buffers of the parallel steps, sized once. With a team: one gradient buffer and kernel
/// workspace per thread, and the per-chunk maxima of the exact measure. With τ > 1 also: the
/// team's sample ranges (one contiguous range per thread, the same at every round: a thread
/// reads and writes only its own samples' cached scores), for each range and slot the partial
/// gradient of the slot's block over the range's samples and the part of its column there,
/// and per slot the step δ (`stride` long) and the new row (K long).
template <class Kernel, RealScalar Scalar, StorageIndex Index>
struct ParallelRounds {
  RoundSize size;
  int team = 1;
  std::vector<ClassVector<Scalar>> gradients;                  // per thread, stride long
  std::vector<typename WorkspaceOf<Kernel>::type> workspaces;  // per thread
  std::vector<double> chunk_max;                               // the exact measure's chunks
  std::vector<RoundSlot> slots;
  std::vector<std::size_t> range_start;  // the sample ranges' boundaries, team + 1
  ClassVector<Scalar> partials;          // team × τ × stride: range r, slot s at (r·τ + s)·stride
  std::vector<std::pair<std::size_t, std::size_t>> parts;  // team × τ: (offset, size) in the column
  ClassVector<Scalar> deltas;            // τ × stride
  ClassVector<Scalar> rows;              // τ × K

  /// Chunks of the exact measure per thread, handed out one at a time: chunks of uneven work
  /// balance themselves.
  static constexpr std::size_t chunks_per_thread = 8;

  /// The buffer of the thread running a task of `parallel_tasks(team, …)` (a serial run may be
  /// inside a caller's parallel region: its buffers are the first).
  [[nodiscard]] std::size_t worker() const noexcept {
    return static_cast<std::size_t>(std::min(thread_index(), team - 1));
  }

  void allocate_workers(const Kernel& kernel, std::size_t stride) {
    gradients.assign(static_cast<std::size_t>(team), ClassVector<Scalar>::Zero(static_cast<Eigen::Index>(stride)));
    workspaces.clear();
    for (int t = 0; t < team; ++t) workspaces.push_back(kernel.workspace());
    chunk_max.assign(static_cast<std::size_t>(team) * chunks_per_thread, 0.0);
  }

  /// The slots of rounds of up to size.capacity blocks, and the team's sample ranges: cut where
  /// the samples' nonzeros (the intercept's one each included) reach equal shares, so that the
  /// threads' expected work in a round is equal.
  template <class Columns>
  void allocate_rounds(const Columns& X, bool intercept, Eigen::Index K, std::size_t stride) {
    const auto n = static_cast<std::size_t>(X.rows());
    const std::size_t tau = size.capacity, ranges = static_cast<std::size_t>(team);
    slots.assign(tau, {});
    std::vector<double> load(n, intercept ? 1.0 : 0.0);
    for (Eigen::Index j = 0; j < X.cols(); ++j)
      for (auto [i, x] : X.outer(j)) load[static_cast<std::size_t>(i)] += 1.0;
    const double total = std::accumulate(load.begin(), load.end(), 0.0);
    range_start.assign(ranges + 1, n);
    range_start[0] = 0;
    double seen = 0.0;
    for (std::size_t i = 0, r = 1; i < n && r < ranges; ++i) {
      seen += load[i];
      while (r < ranges && seen >= total * static_cast<double>(r) / static_cast<double>(ranges)) range_start[r++] = i + 1;
    }
    partials.setZero(static_cast<Eigen::Index>(ranges * tau * stride));
    parts.assign(ranges * tau, {0, 0});
    deltas.setZero(static_cast<Eigen::Index>(tau * stride));
    rows.setZero(static_cast<Eigen::Index>(tau) * K);
  }

  /// Range r's partial gradient of slot s, and the part of the slot's column in range r.
  [[nodiscard]] Scalar* partial(std::size_t r, std::size_t s, std::size_t stride) noexcept {
    return partials.data() + static_cast<Eigen::Index>((r * size.capacity + s) * stride);
  }
  [[nodiscard]] std::pair<std::size_t, std::size_t>& part(std::size_t r, std::size_t s) noexcept {
    return parts[r * size.capacity + s];
  }
};

}  // namespace sparsemc::detail
