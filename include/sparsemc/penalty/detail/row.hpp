#pragma once
/// \file row.hpp
/// Helpers shared by the penalty policies (implementation detail, not part of the API).

#include <concepts>
#include <span>
#include <type_traits>
#include <vector>

#include "../../core/traits.hpp"

namespace sparsemc::detail {

/// Element type of a row argument of a penalty member: float or double, const or not, so that
/// `value`, `violation` and `dual_norm` accept std::span<Scalar> and std::span<const Scalar>.
template <class T>
concept PenaltyRowElement = RealScalar<std::remove_const_t<T>>;

/// Two row arguments (w, g) of the same scalar type, each possibly const.
template <class T, class U>
concept PenaltyRowPair = PenaltyRowElement<T> && std::same_as<std::remove_const_t<T>, std::remove_const_t<U>>;

/// Per-thread work space of the penalties whose prox or violation needs one (L1Linf): grows to
/// the largest row seen on this thread and is reused, so there is no allocation after warm-up
/// and one penalty object can be shared by several threads.
template <RealScalar Scalar>
std::vector<Scalar>& penalty_scratch() {
  static thread_local std::vector<Scalar> scratch;
  return scratch;
}

}  // namespace sparsemc::detail
