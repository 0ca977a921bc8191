#pragma once
/// \file class_set.hpp
/// Walking a sample's scores split by its class set y (sorted class indices): the classes
/// outside y come in maximal contiguous runs, so loops over them have no per-entry branch and
/// vectorise; the classes in y are visited one by one. Used by every loss header.

#include <cstddef>
#include <span>

#include "../concepts.hpp"

namespace sparsemc::detail {

/// True when y is strictly increasing with every entry in [0, K) (the precondition of every
/// loss; checked with `assert` in debug builds only).
inline bool valid_class_set(ClassSet y, std::size_t K) noexcept {
  for (std::size_t i = 0; i < y.size(); ++i) {
    if (y[i] < 0 || static_cast<std::size_t>(y[i]) >= K) return false;
    if (i > 0 && y[i] <= y[i - 1]) return false;
  }
  return true;
}

/// Calls `negative_run(begin, end)` for each maximal run [begin, end) of classes not in y and
/// `positive(p)` for each p ∈ y, in increasing class order. O(K) calls at most, usually
/// |y| + 1 runs.
template <class NegativeRun, class Positive>
inline void for_each_run(std::size_t K, ClassSet y, NegativeRun&& negative_run, Positive&& positive) {
  std::size_t begin = 0;
  for (const ClassIndex p : y) {
    const auto end = static_cast<std::size_t>(p);
    if (begin < end) negative_run(begin, end);
    positive(end);
    begin = end + 1;
  }
  if (begin < K) negative_run(begin, K);
}

}  // namespace sparsemc::detail
