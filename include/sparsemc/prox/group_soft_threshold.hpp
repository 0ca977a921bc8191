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

/// group_soft_threshold_metric's Newton iteration: at most this many steps (it takes 2–6), and
/// a step this small relative to σ is the last (quadratic convergence: √ε leaves an error of ε).
inline constexpr int newton_iterations = 50;
inline constexpr double last_newton_step = 1.5e-8;

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
/// hyperplane Σ_k u_k = 0 (`zero_sum`), in place: with a = h ⊙ v and c = h + μ,
///
///   v ← argmin_u ½ Σ_k h_k (u_k − v_k)² + λ‖u‖₂ + (μ/2)‖u‖²   [s.t. Σ_k u_k = 0]           (G2)
///
/// u = 0 when ‖a − ν₀1‖₂ ≤ λ (ν₀ = 0, or the mean of a). Otherwise u_k(σ) = (a_k − ν(σ))/(c_k + σ)
/// with σ = λ/‖u‖₂ and ν(σ) = 0, or on the hyperplane the multiplier that makes Σ_k u_k = 0.
/// This is the trust-region secular equation in the subspace (Moré & Sorensen 1983): σ is the
/// root of φ(σ) = 1/‖u(σ)‖ − σ/λ, which is concave, so Newton's method started right of the
/// root, at σ₀ = λ max_k c_k / (‖a − ν₀1‖ − λ) where φ ≤ 0, descends to it monotonically and
/// quadratically (exact in one step for constant c). φ′(σ) = uᵀz/‖u‖³ − 1/λ, with z = −du/dσ
/// the same solve as u with u in place of a. With constant h and no constraint this is (G1)
/// with threshold λ/h. Computed in double, a scaled by 1/‖a − ν₀1‖; no allocation.
template <RealScalar Scalar>
void group_soft_threshold_metric(std::span<Scalar> v, std::span<const Scalar> h, double lambda, double mu,
                                 bool zero_sum) {
  const std::size_t size = v.size();
  const auto a = [&](std::size_t k) { return static_cast<double>(h[k]) * static_cast<double>(v[k]); };
  const auto c = [&](std::size_t k) { return static_cast<double>(h[k]) + mu; };
  double mean = 0, c_max = 0;
  for (std::size_t k = 0; k < size; ++k) {
    mean += a(k);
    c_max = std::max(c_max, c(k));
  }
  mean = zero_sum && size > 0 ? mean / static_cast<double>(size) : 0.0;
  const double norm = detail::euclidean_norm(size, [&](std::size_t k) { return a(k) - mean; });
  if (norm <= lambda) {
    std::fill(v.begin(), v.end(), Scalar(0));
    return;
  }
  // (G2) is homogeneous in (a, λ): solve it for a/‖a − ν₀1‖ and λ/‖a − ν₀1‖ < 1, σ unchanged.
  const double scale = 1.0 / norm, lambda_scaled = lambda * scale;
  const auto multiplier = [&](double sigma, auto&& numerator) {  // Σ_k x_k/(c_k+σ) / Σ_k 1/(c_k+σ)
    if (!zero_sum) return 0.0;
    double weighted = 0, total = 0;
    for (std::size_t k = 0; k < size; ++k) {
      const double inverse = 1.0 / (c(k) + sigma);
      weighted += numerator(k) * inverse;
      total += inverse;
    }
    return weighted / total;
  };
  double sigma = lambda_scaled * c_max / (1.0 - lambda_scaled);
  for (int iteration = 0; iteration < detail::newton_iterations && lambda_scaled > 0; ++iteration) {
    const double nu = multiplier(sigma, [&](std::size_t k) { return a(k) * scale; });
    double squares = 0, weighted_squares = 0, weighted_sum = 0, inverse_sum = 0;
    for (std::size_t k = 0; k < size; ++k) {
      const double inverse = 1.0 / (c(k) + sigma);
      const double u = (a(k) * scale - nu) * inverse;
      squares += u * u;
      weighted_squares += u * u * inverse;
      weighted_sum += u * inverse;
      inverse_sum += inverse;
    }
    const double length = std::sqrt(squares);
    const double u_dot_z = zero_sum ? weighted_squares - weighted_sum * weighted_sum / inverse_sum : weighted_squares;
    const double phi = 1.0 / length - sigma / lambda_scaled;
    const double slope = u_dot_z / (squares * length) - 1.0 / lambda_scaled;
    const double step = phi / slope;  // ≥ 0 right of the root
    if (!(step > 0)) break;           // at the root to rounding
    sigma -= step;
    if (step <= detail::last_newton_step * sigma) break;  // the next step's error is O(step²)
  }
  const double nu = multiplier(sigma, a);
  for (std::size_t k = 0; k < size; ++k) v[k] = static_cast<Scalar>((a(k) - nu) / (c(k) + sigma));
}

}  // namespace sparsemc::prox
