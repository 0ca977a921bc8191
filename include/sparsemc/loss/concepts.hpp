#pragma once
/// \file concepts.hpp
/// What a loss policy is. A loss is a small copyable object (stateless, or with parameters as
/// HuberHinge's width) evaluating ℓ(s, y) for one sample in score space: s ∈ R^K are the
/// sample's scores s = Wᵀx + b, y is its class set (one class for multiclass data, any number
/// for multilabel data). Objective (1) weighs it by c_i/n; a default-constructed loss is what
/// the tools run.
///
/// Solvers `require` only the capability they use:
///   - `Loss`:            value(s, y)
///   - `SmoothLoss`:      + gradient(s, y, g) (writes ∇ℓ, returns ℓ), curvature(s, y, h)
///                          (diagonal of the generalised Hessian, Blondel eq. 6) and
///                          curvature_bound(K) (sup over s of the largest Hessian eigenvalue;
///                          a member, static or not, so that it may use the loss's parameters)
///   - `SubgradientLoss`: + subgradient(s, y, g) (writes one element of ∂ℓ, returns ℓ)
///   - `ConjugateLoss`:   + conjugate(a, y) = ℓ*(a, y), the Fenchel conjugate at a dual vector
///                          a ∈ R^K, and `dual_domain`, the shape of dom ℓ*(·, y) that the
///                          duality gap of (1) needs to keep a dual point feasible when the
///                          intercept is fitted (solver/duality_gap.hpp, docs/math.md "Duality gap")
///
/// Traits a loss declares for the solvers that need its structure: `separates_classes`
/// (ClassSeparableLoss), `bounded_subgradient` (BoundedSubgradientLoss), `inverse_link`
/// (GeneralizedLinearLoss), `separation_ranking` (SeparationRankingLoss). For speed it may own
/// a block kernel (BlockCD, loss/kernels/block_kernel.hpp) and a coordinate kernel (SCD,
/// loss/kernels/coordinate_kernel.hpp); without them the solvers call its members per sample.
///
/// A user's own loss only needs the members its solver asks for (see examples/custom_loss.cpp).

#include <concepts>
#include <span>
#include <string_view>

#include "../core/traits.hpp"

namespace sparsemc {

/// The class set of one sample (sorted class indices); multiclass samples have exactly one.
using ClassSet = std::span<const ClassIndex>;

/// The shape of the domain of ℓ*(·, y), with t_y = 1_y/|y| the loss's target distribution:
enum class DualDomain {
  /// dom ℓ*(·, y) ⊇ {q − t_y : q in the simplex}, convex, containing 0, and every dual vector
  /// sums to 0 (SquaredHinge, Logistic, multiclass CrammerSinger).
  shifted_simplex,
  /// per class, the sign of a_r is fixed by Y_r (a_r = −Y_r β_r, β_r ≥ 0) and the classes are
  /// separate (OvrSquaredHinge).
  signed_per_class,
  /// ℓ* is finite everywhere (LeastSquares).
  whole_space,
};

/// A loss that is a sum of one term per class score, ℓ(s, y) = Σ_r ℓ_r(s_r, y) (it declares
/// `separates_classes = true`): with an entrywise penalty, (1) is then K separate problems, one
/// per column of W and entry of b, which solvers may solve apart (in parallel).
template <class L>
concept ClassSeparableLoss = requires {
  requires bool(L::separates_classes);
};

/// The inverse link g of a generalised linear loss, ∇ℓ(s, y) = g(s) − t_y with t_y the loss's
/// target (Agarwal et al. 2014): the softmax (Logistic) or the identity (LeastSquares).
enum class InverseLink {
  identity,
  softmax,
};

/// A generalised linear loss (it declares its `inverse_link`): GLS, CalibratedLS and Stagewise
/// fit through ∇ℓ = g(s) − t_y.
template <class L>
concept GeneralizedLinearLoss = requires {
  { L::inverse_link } -> std::convertible_to<InverseLink>;
};

/// A loss with the structure of PD-Sparse's separation ranking loss, ℓ(s, y) = (1 + max_{n∉y}
/// s_n − min_{p∈y} s_p)_+ (the Crammer–Singer hinge for one class; it declares
/// `separation_ranking = true`): its dual blocks are (bi-)simplices, on which FBPD's exact steps,
/// FCBCFW and the sequential dual method are built.
template <class L>
concept SeparationRankingLoss = requires {
  requires bool(L::separation_ranking);
};

template <class L, class Scalar>
concept Loss = RealScalar<Scalar> &&
    requires(const L& loss, std::span<const Scalar> s, ClassSet y) {
      { L::name } -> std::convertible_to<std::string_view>;
      { L::supports_multilabel } -> std::convertible_to<bool>;
      { loss.value(s, y) } -> std::same_as<Scalar>;
    };

template <class L, class Scalar>
concept SmoothLoss = Loss<L, Scalar> &&
    requires(const L& loss, std::span<const Scalar> s, ClassSet y, std::span<Scalar> out, ClassIndex K) {
      { loss.gradient(s, y, out) } -> std::same_as<Scalar>;
      { loss.curvature(s, y, out) } -> std::same_as<void>;
      { loss.template curvature_bound<Scalar>(K) } -> std::same_as<Scalar>;
    };

template <class L, class Scalar>
concept SubgradientLoss = Loss<L, Scalar> &&
    requires(const L& loss, std::span<const Scalar> s, ClassSet y, std::span<Scalar> out) {
      { loss.subgradient(s, y, out) } -> std::same_as<Scalar>;
    };

/// A loss whose subgradients are bounded by 1 entrywise whatever the scores (it declares
/// `bounded_subgradient = true`): Crammer–Singer's e_k − e_y, Logistic's p − t_y. Algorithm 4
/// of Tao et al. (SCD<…, NonsmoothRDA>) scales its steps for that bound; the squared losses'
/// gradients grow with the scores and its default steps diverge on them.
template <class L, class Scalar>
concept BoundedSubgradientLoss = (SmoothLoss<L, Scalar> || SubgradientLoss<L, Scalar>) &&
                                 requires { requires L::bounded_subgradient; };

template <class L, class Scalar>
concept ConjugateLoss = Loss<L, Scalar> &&
    requires(const L& loss, std::span<const Scalar> a, ClassSet y) {
      { L::dual_domain } -> std::convertible_to<DualDomain>;
      { loss.conjugate(a, y) } -> std::same_as<double>;
    };

}  // namespace sparsemc
