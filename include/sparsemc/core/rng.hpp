#pragma once
/// \file rng.hpp
/// Seeded randomness that reproduces bit for bit on every standard library.
///
/// `std::mt19937_64` is specified exactly by the standard, but `std::uniform_int_distribution`
/// and `std::shuffle` are not, so sparsemc draws bounded integers itself (Lemire's
/// multiply-shift with rejection) and shuffles with its own Fisher–Yates.

#include <cstdint>
#include <random>
#include <span>
#include <utility>

namespace sparsemc {

using Rng = std::mt19937_64;

namespace detail {
__extension__ using uint128 = unsigned __int128;  // GCC/Clang extension, silences -Wpedantic
}  // namespace detail

/// Uniform integer in [0, bound), bound > 0; unbiased (Lemire 2019, "Fast random integer
/// generation in an interval").
inline std::uint64_t uniform_index(Rng& rng, std::uint64_t bound) {
  detail::uint128 m = static_cast<detail::uint128>(rng()) * bound;
  auto low = static_cast<std::uint64_t>(m);
  if (low < bound) {
    const std::uint64_t threshold = (0 - bound) % bound;
    while (low < threshold) {
      m = static_cast<detail::uint128>(rng()) * bound;
      low = static_cast<std::uint64_t>(m);
    }
  }
  return static_cast<std::uint64_t>(m >> 64);
}

/// Uniform real in [0, 1) with 53 random bits.
inline double uniform_real(Rng& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

/// Fisher–Yates shuffle with uniform_index: the same permutation for the same seed everywhere.
template <class T>
void shuffle(std::span<T> items, Rng& rng) {
  for (std::size_t i = items.size(); i > 1; --i) {
    const auto j = static_cast<std::size_t>(uniform_index(rng, i));
    std::swap(items[i - 1], items[j]);
  }
}

}  // namespace sparsemc
