#pragma once
/// \file epigraph_max.hpp
/// Projection onto the epigraph of h(u) = max_k (u_k + r_k) (Chierchia et al. 2015, Prop. 3.3):
///
///   epi h = {(u, ζ) ∈ R^K × R : max_k (u_k + r_k) ≤ ζ}.
///
/// With ν = u + r, the projection (p, θ) of (u, ζ) is, by eqs. (15)–(18) of the paper,
///
///   θ = prox_φ(ζ),  φ(θ) = ½ Σ_k (ν_k − θ)_+²,   i.e.   θ = ζ + Σ_k (ν_k − θ)_+            (E1)
///   p_k = min(u_k, θ − r_k).                                                               (E2)
///
/// (E1) is solved in closed form on the active set {k : ν_k > θ}: θ = (ζ + Σ_active ν)/(1 +
/// #active) (the paper's eq. (15) with k̄ the first active index of the sorted ν). Instead of
/// sorting (O(K log K)) the active set is found with the same streaming threshold search as
/// the simplex projection (simplex.hpp, equation (T) with Γ = 1), linear in K in practice.
/// If (u, ζ) already lies in the epigraph nothing is changed.
///
/// Chierchia's Algorithm 2 applies this per sample to (ŷ/σ, ξ̂/σ), with u the score
/// differences T_ℓ x and r_ℓ the margins of the Crammer–Singer loss (r_y = 0, r_k = 1).
///
/// Example:
/// \code
///   std::vector<double> u{2.0, 0.5, -1.0}, r{0.0, 1.0, 1.0}, scratch;
///   double zeta = 0.0;
///   sparsemc::prox::project_epigraph_max(std::span<double>(u), zeta, r, scratch);
///   // ν = u + r = {2, 1.5, 0}; θ = (0 + 2 + 1.5)/3 = 7/6: u = {7/6, 1/6, -1}, zeta = 7/6
/// \endcode

#include <algorithm>
#include <cstddef>
#include <span>
#include <type_traits>
#include <vector>

#include "../core/traits.hpp"
#include "simplex.hpp"

namespace sparsemc::prox {

namespace detail {

/// (E1)–(E2) for ν_k = u_k + offset(k).
template <RealScalar Scalar, class Offset>
void project_epigraph_max(std::span<Scalar> u, Scalar& zeta, Offset offset, std::vector<Scalar>& scratch) {
  if (u.empty()) return;  // the max over no class is −∞: every ζ is feasible
  Scalar top = u[0] + offset(0);
  for (std::size_t k = 1; k < u.size(); ++k) top = std::max(top, u[k] + offset(k));
  if (top <= zeta) return;  // already in the epigraph
  // Shift by max ν (the projection commutes with (u, ζ) ↦ (u + c, ζ + c)): θ' = θ − top
  // solves Σ(ν'_k − θ')_+ = θ' − ζ', which is (T) with Γ = 1 and a = top − ζ > 0.
  ThresholdSearch<Scalar, 1> search(workspace(scratch, u.size()), top - zeta);
  for (std::size_t k = 0; k < u.size(); ++k) search.push((u[k] + offset(k)) - top);
  const Scalar theta = top + search.finish();
  for (std::size_t k = 0; k < u.size(); ++k) u[k] = std::min(u[k], theta - offset(k));
  zeta = theta;
}

}  // namespace detail

/// Projects (u, ζ) in place onto epi h, h(u) = max_k (u_k + r_k) (Prop. 3.3, (E1)–(E2)).
/// `r` holds the K offsets r_k. Linear time in practice, K entries of scratch.
template <RealScalar Scalar>
void project_epigraph_max(std::span<Scalar> u, Scalar& zeta, std::type_identity_t<std::span<const Scalar>> r,
                          std::vector<Scalar>& scratch) {
  detail::project_epigraph_max(u, zeta, [r](std::size_t k) { return r[k]; }, scratch);
}

/// Projects (u, ζ) in place onto the epigraph of max_k u_k (all offsets r_k = 0).
template <RealScalar Scalar>
void project_epigraph_max(std::span<Scalar> u, Scalar& zeta, std::vector<Scalar>& scratch) {
  detail::project_epigraph_max(u, zeta, [](std::size_t) { return Scalar(0); }, scratch);
}

}  // namespace sparsemc::prox
