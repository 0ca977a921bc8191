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

/// The prox of λ‖·‖₂ + (μ/2)‖·‖² in the metric diag(h), h_k > 0, optionally on the
/// hyperplane Σ_k u_k = 0 (`zero_sum`), in place: with a = h ⊙ v,
///
///   v ← argmin_u ½ Σ_k h_k (u_k − v_k)² + λ‖u‖₂ + (μ/2)‖u‖²   [s.t. Σ_k u_k = 0]           (G2)
///
/// The minimiser is u_k = (a_k − ν) / (h_k + μ + λ/t) with t = ‖u‖₂ and ν = 0, or on the
/// hyperplane the multiplier ν(t) that makes Σ_k u_k = 0; u = 0 when ‖a − ν₀1‖₂ ≤ λ
/// (ν₀ = 0, or the mean of a). t is the root of r(t) = ‖u(t)‖₂/t − 1, which falls from
/// ‖a − ν₀1‖/λ − 1 > 0 at t → 0 to below 0 at t = 2‖a‖/min(h + μ): found by the Illinois
/// variant of regula falsi on that bracket. With constant h and no constraint this is (G1)
/// with threshold λ/h. Computed in double; no allocation.
template <RealScalar Scalar>
void group_soft_threshold_metric(std::span<Scalar> v, std::span<const Scalar> h, double lambda, double mu,
                                 bool zero_sum) {
  const std::size_t size = v.size();
  const auto a = [&](std::size_t k) { return static_cast<double>(h[k]) * static_cast<double>(v[k]); };
  double mean = 0, c_min = std::numeric_limits<double>::infinity();
  for (std::size_t k = 0; k < size; ++k) {
    mean += a(k);
    c_min = std::min(c_min, static_cast<double>(h[k]) + mu);
  }
  mean = zero_sum && size > 0 ? mean / static_cast<double>(size) : 0.0;
  const double norm = detail::euclidean_norm(size, [&](std::size_t k) { return a(k) - mean; });
  if (norm <= lambda) {
    std::fill(v.begin(), v.end(), Scalar(0));
    return;
  }
  // ν(t) and r(t); u_k(t) = (a_k − ν)/(c_k + λ/t).
  const auto multiplier = [&](double t) {
    if (!zero_sum) return 0.0;
    double weighted = 0, total = 0;
    for (std::size_t k = 0; k < size; ++k) {
      const double inverse = 1.0 / (static_cast<double>(h[k]) + mu + lambda / t);
      weighted += a(k) * inverse;
      total += inverse;
    }
    return weighted / total;
  };
  const auto residual = [&](double t) {
    const double nu = multiplier(t);
    const double length = detail::euclidean_norm(
        size, [&](std::size_t k) { return (a(k) - nu) / (static_cast<double>(h[k]) + mu + lambda / t); });
    return length / t - 1.0;
  };
  double low = 0, high = 2.0 * detail::euclidean_norm(size, a) / c_min;
  double r_low = norm / lambda - 1.0, r_high = residual(high);
  double t = high;
  int side = 0;  // which end moved last (Illinois: halve the other end's residual)
  for (int iteration = 0; iteration < 200 && r_high < 0.0; ++iteration) {
    t = (low * r_high - high * r_low) / (r_high - r_low);
    if (!(t > low && t < high)) t = 0.5 * (low + high);
    const double r = residual(t);
    if (r == 0.0 || high - low <= 4 * std::numeric_limits<double>::epsilon() * high) break;
    if (r > 0.0) {
      low = t, r_low = r;
      if (side == 1) r_high *= 0.5;
      side = 1;
    } else {
      high = t, r_high = r;
      if (side == -1) r_low *= 0.5;
      side = -1;
    }
    if (std::abs(r) <= 4 * std::numeric_limits<double>::epsilon()) break;
  }
  const double nu = multiplier(t);
  for (std::size_t k = 0; k < size; ++k)
    v[k] = static_cast<Scalar>((a(k) - nu) / (static_cast<double>(h[k]) + mu + lambda / t));
}

}  // namespace sparsemc::prox
