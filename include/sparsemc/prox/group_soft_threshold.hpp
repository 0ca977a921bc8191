#pragma once
/// \file group_soft_threshold.hpp
/// Group soft-thresholding, the prox of t‖·‖₂ (block soft-thresholding of the group lasso,
/// Blondel et al. 2013, eq. 4):
///
///   prox_{t‖·‖₂}(v) = max(0, 1 − t/‖v‖₂) · v                                              (G1)
///
/// which is also v − P_{B2(t)}(v) by Moreau's identity. With the ridge term of objective (1)
/// the prox of t(λ‖·‖₂ + μ/2‖·‖²) is (G1) with threshold tλ followed by the factor 1/(1 + tμ);
/// `post_scale` applies that factor in the same pass (penalty/l1l2.hpp).
///
/// The norm is accumulated in double for float and double rows and rescaled by max|v_k| only
/// if the plain sum of squares overflows or underflows, so rows of 1e±150 (double) are fine.
///
/// Example:
/// \code
///   std::vector<double> v{3.0, 4.0};
///   sparsemc::prox::group_soft_threshold(std::span<double>(v), 1.0);   // v = {2.4, 3.2}
/// \endcode

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <type_traits>

#include "../core/traits.hpp"

namespace sparsemc::prox {

namespace detail {

/// ‖(value(0), …, value(K−1))‖₂ in double, safe from overflow and underflow of the squares.
template <class Value>
double euclidean_norm(std::size_t size, Value value) {
  double squares = 0;
  for (std::size_t k = 0; k < size; ++k) {
    const double x = static_cast<double>(value(k));
    squares += x * x;
  }
  if (squares >= std::numeric_limits<double>::min() && squares <= std::numeric_limits<double>::max()) {
    return std::sqrt(squares);
  }
  double largest = 0;  // rare path: rescale by the largest magnitude
  for (std::size_t k = 0; k < size; ++k) largest = std::max(largest, std::abs(static_cast<double>(value(k))));
  if (largest == 0 || !std::isfinite(largest)) return largest;
  squares = 0;
  for (std::size_t k = 0; k < size; ++k) {
    const double x = static_cast<double>(value(k)) / largest;
    squares += x * x;
  }
  return largest * std::sqrt(squares);
}

/// ‖v‖₂ of a row (see euclidean_norm).
template <RealScalar Scalar>
double euclidean_norm(std::span<const Scalar> v) {
  return euclidean_norm(v.size(), [v](std::size_t k) { return v[k]; });
}

}  // namespace detail

/// Applies (G1) in place: v ← max(0, 1 − t/‖v‖₂) · post_scale · v, threshold t ≥ 0.
/// Returns the Euclidean norm of the result.
template <RealScalar Scalar>
Scalar group_soft_threshold(std::span<Scalar> v, std::type_identity_t<Scalar> threshold,
                            std::type_identity_t<Scalar> post_scale = Scalar(1)) {
  const double norm = detail::euclidean_norm(std::span<const Scalar>(v));
  const double threshold_d = static_cast<double>(threshold);
  if (norm <= threshold_d) {  // includes v = 0
    std::fill(v.begin(), v.end(), Scalar(0));
    return Scalar(0);
  }
  const double factor = (norm - threshold_d) / norm * static_cast<double>(post_scale);  // no cancellation
  for (Scalar& x : v) x = static_cast<Scalar>(factor * static_cast<double>(x));
  return static_cast<Scalar>(factor * norm);
}

}  // namespace sparsemc::prox
