#pragma once
/// \file concepts.hpp
/// What a penalty policy is: the regulariser λR(W) + (μ/2)‖W‖²_F of objective (1), acting on
/// one feature row w = W_j: ∈ R^K at a time (all our penalties are row-separable). A penalty
/// object carries its λ (`lambda`) and μ (`mu`).
///
///   value(w)            λR(w) + (μ/2)‖w‖²
///   prox(v, step)       v ← prox_{step(λR + μ/2‖·‖²)}(v) = prox_{step·λR}(v) / (1 + step·μ), in place
///   violation(w, g)     dist(−(g + μw), λ∂R(w)): the exact optimality violation of row w when
///                       g is the gradient of the loss part of (1) with respect to w (0 iff optimal)
///   dual_norm(g)        R°(g), so that λ_max = max_j R°(∇_j L(0)) (the smallest λ giving W = 0)
///
/// `EntrywisePenalty` adds the same per entry (L1 and ridge only), for coordinate solvers.

#include <concepts>
#include <span>
#include <string_view>

#include "../core/traits.hpp"

namespace sparsemc {

template <class P, class Scalar>
concept Penalty = RealScalar<Scalar> &&
    requires(const P& p, std::span<const Scalar> w, std::span<Scalar> v, std::span<const Scalar> g, Scalar step) {
      { P::name } -> std::convertible_to<std::string_view>;
      { p.lambda } -> std::convertible_to<double>;
      { p.mu } -> std::convertible_to<double>;
      { p.value(w) } -> std::same_as<Scalar>;
      { p.prox(v, step) } -> std::same_as<void>;
      { p.violation(w, g) } -> std::same_as<Scalar>;
      { p.dual_norm(g) } -> std::same_as<Scalar>;
    };

template <class P, class Scalar>
concept EntrywisePenalty = Penalty<P, Scalar> &&
    requires(const P& p, Scalar w, Scalar g, Scalar step) {
      { p.prox_entry(w, step) } -> std::same_as<Scalar>;
      { p.violation_entry(w, g) } -> std::same_as<Scalar>;
    };

}  // namespace sparsemc
