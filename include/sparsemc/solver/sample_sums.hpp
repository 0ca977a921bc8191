#pragma once
/// \file sample_sums.hpp
/// Where a solver's sums over the samples are completed. On one process a solver sums over all
/// samples of its problem and `LocalSums` has nothing to add. Over a problem split by samples
/// among processes (Problem::n_total, sparsemc/mpi/sample_partition.hpp) each process sums
/// over its own samples, and a distributed policy adds the other processes' sums in place —
/// the same bits on every process, so that every process takes the same steps and decisions.
///
/// A policy `sums` offers: `sums(span)` and `sums(value)` (complete the sums in place, in
/// double or the solver's Scalar), `sums.any(flag)` (true on every process if on one), and
/// `sums.max(x)` (the largest x, e.g. of the processes' clocks, so that a time limit stops
/// all of them at the same iteration).

#include <concepts>
#include <span>

namespace sparsemc {

/// The sums of one process, already complete.
struct LocalSums {
  template <class T>
  void operator()(std::span<T>) const noexcept {}
  template <class T>
  void operator()(T&) const noexcept {}
  [[nodiscard]] bool any(bool flag) const noexcept { return flag; }
  [[nodiscard]] double max(double value) const noexcept { return value; }
};

/// A policy that completes sums over samples (see the file comment).
template <class S>
concept SampleSums = requires(const S& sums, std::span<double> doubles, std::span<float> floats, double& value) {
  sums(doubles);
  sums(floats);
  sums(value);
  { sums.any(true) } -> std::convertible_to<bool>;
  { sums.max(1.0) } -> std::convertible_to<double>;
};

}  // namespace sparsemc
