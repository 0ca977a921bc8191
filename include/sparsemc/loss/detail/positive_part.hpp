#pragma once
/// \file positive_part.hpp
/// max(z, 0) without a comparison, for the hinge losses' inner loops.

#include <cmath>

#include "../../core/traits.hpp"

namespace sparsemc::detail {

/// (z)_+ = max(z, 0), computed as (z + |z|)/2, which is exact in binary floating point (z + z
/// and the halving are exact; z + (−z) = +0). Written without a comparison because GCC, once a
/// loss is inlined into a caller's loop, turns std::max(0, z) into a data-dependent branch that
/// mispredicts on about half the classes (measured 3.6 ns instead of 1 ns per class at K = 1000).
template <RealScalar Scalar>
[[nodiscard]] inline Scalar positive_part(Scalar z) noexcept {
  return Scalar(0.5) * (z + std::abs(z));
}

}  // namespace sparsemc::detail
