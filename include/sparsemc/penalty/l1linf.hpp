#pragma once
/// \file l1linf.hpp
/// L1Linf: λ Σ_j ‖W_j:‖_∞ + (μ/2)‖W‖²_F, the ℓ1/ℓ∞ mixed norm over feature rows (Chierchia et
/// al. 2015's ℓ_{1,p} norm with p = +∞, §2; Blondel et al. 2013, §6). Like L1L2 it zeroes whole
/// rows, and the surviving rows tend to have entries of equal magnitude.
///
/// On one row w ∈ R^K with loss gradient g (docs/math.md, "Penalties"), with B1(r) = {‖x‖₁ ≤ r}:
///   value       λ‖w‖_∞ + (μ/2)‖w‖²
///   prox        (v − P_{B1(tλ)}(v)) / (1 + tμ) = clamp(v, −τ, τ) / (1 + tμ)                (I1)
///               by Moreau's identity, τ the ℓ1-ball threshold of prox/simplex.hpp (S2)
///               (τ = 0, i.e. a zero row, when ‖v‖₁ ≤ tλ); clamped entries tie exactly.
///   violation   the Euclidean distance dist(z, λ∂‖w‖_∞), z = −(g + μw):
///                 w = 0:  dist(z, B1(λ)) = ‖z − P_{B1(λ)}(z)‖₂ = ‖clamp(z, −τ, τ)‖₂        (I2)
///                 w ≠ 0:  with J = {k : |w_k| = ‖w‖_∞}, ∂‖w‖_∞ = {s : s_J = sign(w_J) ⊙ θ,
///                         θ ∈ simplex of mass 1, s outside J = 0}, so
///                         dist² = Σ_{k∉J} z_k² + dist²((sign(w_k) z_k)_{k∈J}, Δ_λ)           (I3)
///                         and dist²(y, Δ_λ) = Σ_k min(y_k, θ)² with θ the simplex threshold.
///   dual_norm   ‖g‖₁, so λ_max = max_j ‖∇_j L(0)‖₁                                          (I4)
///
/// Note on (I2): max(0, ‖g‖₁ − λ) is the ℓ1 distance to B1(λ), an upper bound of the Euclidean
/// one that vanishes at the same points; the Euclidean distance is used so that every penalty's
/// violation is the same quantity (the contract's).
///
/// Ties in J: entries come out of (I1) with exactly equal magnitudes, but rows produced by
/// averaging, extrapolation or I/O can carry rounding-level differences that would wrongly
/// exclude an entry from J (and count its whole z_k² as violation). J is therefore taken as
/// {k : |w_k| ≥ (1 − tie_rtol)‖w‖_∞} with tie_rtol = 64 ε of the scalar type (≈ 7.6e-6 for
/// float, 1.4e-14 for double).
///
/// Work space: (I1)–(I3) need a buffer of K scalars. The two-argument prox and violation use a
/// per-thread buffer (thread_local, grown to the longest row and reused: no allocation after
/// warm-up, and one penalty object can be shared by several threads); the overloads taking
/// `scratch` use the caller's instead.
///
/// Example:
/// \code
///   sparsemc::L1Linf linf{.lambda = 1.0, .mu = 0};
///   std::vector<double> row{3.0, -2.0, 0.5};
///   linf.prox(std::span<double>(row), 1.0);   // τ = 2 (only 3 − 2 = 1 above it): row = {2, -2, 0.5}
/// \endcode

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include "../core/traits.hpp"
#include "../prox/simplex.hpp"
#include "detail/row.hpp"

namespace sparsemc {

/// λ Σ_j ‖W_j:‖_∞ + (μ/2)‖W‖²_F (equations (I1)–(I4) of l1linf.hpp).
struct L1Linf {
  static constexpr std::string_view name = "l1linf";
  /// Weight λ ≥ 0 of Σ_j ‖W_j:‖_∞ (rows are features).
  double lambda = 0;
  /// Ridge weight μ ≥ 0 of (μ/2)‖W‖²_F.
  double mu = 0;

  /// Relative tolerance of the tie test |w_k| ≥ (1 − tie_rtol)‖w‖_∞ that defines J in (I3).
  template <RealScalar Scalar>
  static constexpr Scalar tie_rtol = Scalar(64) * std::numeric_limits<Scalar>::epsilon();

  /// λ‖w‖_∞ + (μ/2)‖w‖².
  template <detail::PenaltyRowElement T>
  std::remove_const_t<T> value(std::span<T> w) const {
    double largest = 0, squares = 0;
    for (const auto x : w) {
      largest = std::max(largest, std::abs(static_cast<double>(x)));
      squares += static_cast<double>(x) * static_cast<double>(x);
    }
    return static_cast<std::remove_const_t<T>>(lambda * largest + 0.5 * mu * squares);
  }

  /// (I1) in place, with the caller's scratch (K entries).
  template <RealScalar Scalar>
  void prox(std::span<Scalar> v, std::type_identity_t<Scalar> step, std::vector<Scalar>& scratch) const {
    const double step_d = static_cast<double>(step);
    const auto ball = prox::detail::l1_ball_threshold(std::span<const Scalar>(v), static_cast<Scalar>(step_d * lambda), scratch);
    if (ball.inside) {  // ‖v‖₁ ≤ tλ: the prox of the ℓ∞ norm is 0
      std::fill(v.begin(), v.end(), Scalar(0));
      return;
    }
    const Scalar tau = ball.tau();
    const auto scale = static_cast<Scalar>(1.0 / (1.0 + step_d * mu));
    for (Scalar& x : v) x = std::clamp(x, -tau, tau) * scale;
  }

  /// (I1) in place, with the per-thread scratch.
  template <RealScalar Scalar>
  void prox(std::span<Scalar> v, std::type_identity_t<Scalar> step) const {
    prox(v, step, detail::penalty_scratch<Scalar>());
  }

  /// (I2)/(I3) with the caller's scratch (K entries).
  template <class T, class U>
    requires detail::PenaltyRowPair<T, U>
  std::remove_const_t<T> violation(std::span<T> w, std::span<U> g, std::vector<std::remove_const_t<T>>& scratch) const {
    using Scalar = std::remove_const_t<T>;
    const std::size_t size = w.size();
    auto z = [&](std::size_t k) { return -(static_cast<double>(g[k]) + mu * static_cast<double>(w[k])); };
    double largest = 0;
    for (const auto x : w) largest = std::max(largest, std::abs(static_cast<double>(x)));

    double squares = 0;
    if (largest == 0) {  // (I2): distance from z = −g to the ℓ1 ball of radius λ
      const Scalar tau = prox::detail::l1_ball_threshold(std::span<const Scalar>(g.data(), size), static_cast<Scalar>(lambda), scratch).tau();
      for (std::size_t k = 0; k < size; ++k) {
        const double clipped = std::min(std::abs(static_cast<double>(g[k])), static_cast<double>(tau));
        squares += clipped * clipped;
      }
      return static_cast<Scalar>(std::sqrt(squares));
    }
    // (I3): entries outside J must have z_k = 0; (sign(w_k) z_k)_{k∈J} must lie in Δ_λ.
    const double tie = largest * (1.0 - static_cast<double>(tie_rtol<Scalar>));
    auto in_tie = [&](std::size_t k) { return std::abs(static_cast<double>(w[k])) >= tie; };
    auto signed_z = [&](std::size_t k) { return w[k] > 0 ? z(k) : -z(k); };  // sign(w_k) z_k, k ∈ J
    if (!(lambda > 0)) {  // Δ_0 = {0}: every entry of z counts
      for (std::size_t k = 0; k < size; ++k) squares += z(k) * z(k);
      return static_cast<Scalar>(std::sqrt(squares));
    }
    prox::detail::ThresholdSearch<Scalar, 0> search(prox::detail::workspace(scratch, size), static_cast<Scalar>(lambda));
    for (std::size_t k = 0; k < size; ++k) {
      if (in_tie(k)) {
        search.push(static_cast<Scalar>(signed_z(k)));
      } else {
        squares += z(k) * z(k);
      }
    }
    const double theta = static_cast<double>(search.finish());  // dist²(y, Δ_λ) = Σ min(y_k, θ)²
    for (std::size_t k = 0; k < size; ++k) {
      if (in_tie(k)) {
        const double part = std::min(signed_z(k), theta);
        squares += part * part;
      }
    }
    return static_cast<Scalar>(std::sqrt(squares));
  }

  /// (I2)/(I3) with the per-thread scratch.
  template <class T, class U>
    requires detail::PenaltyRowPair<T, U>
  std::remove_const_t<T> violation(std::span<T> w, std::span<U> g) const {
    return violation(w, g, detail::penalty_scratch<std::remove_const_t<T>>());
  }

  /// (I4): ‖g‖₁.
  template <detail::PenaltyRowElement T>
  std::remove_const_t<T> dual_norm(std::span<T> g) const {
    double sum = 0;
    for (const auto x : g) sum += std::abs(static_cast<double>(x));
    return static_cast<std::remove_const_t<T>>(sum);
  }
};

}  // namespace sparsemc
