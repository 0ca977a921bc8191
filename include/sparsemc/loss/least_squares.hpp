#pragma once
/// \file least_squares.hpp
/// Squared error against the class indicator: the loss of generalized least squares with the
/// identity link (Agarwal et al. 2014) and the simplest smooth loss.

#include <cassert>
#include <cstddef>
#include <span>
#include <string_view>

#include "concepts.hpp"
#include "detail/class_set.hpp"

namespace sparsemc {

/// Least squares on the class indicator:
///
///     ℓ(s, y) = ½ ‖s − t‖²,   t = 1_y (t_r = 1 if r ∈ y, else 0),   ∇ℓ = s − t,   ∇²ℓ = I.
///
/// Multiclass: t = e_y. Multilabel: t is the indicator of the sample's classes (all zeros for an
/// empty class set).
///
/// - curvature: h_r = 1;  curvature_bound(K) = 1, so K_j = (1/n) Σ_i c_i x_ij² in (1).
///
/// Every member costs O(K + |y|), allocates nothing and is safe to call concurrently.
///
/// \code
///   const sparsemc::LeastSquares loss;
///   const std::array<double, 3> s{0.5, 1.0, -2.0};
///   const std::array<sparsemc::ClassIndex, 1> y{1};
///   std::array<double, 3> g{};
///   double l = loss.gradient<double>(s, y, g);   // l = 2.125, g = {0.5, 0, -2}
/// \endcode
struct LeastSquares {
  static constexpr std::string_view name = "least-squares";
  static constexpr bool supports_multilabel = true;
  /// ∇ℓ = s − 1_y: the identity link of GLS (GeneralizedLinearLoss).
  static constexpr InverseLink inverse_link = InverseLink::identity;
  /// ℓ* = ½‖a‖² + ⟨a, t⟩ is finite everywhere.
  static constexpr DualDomain dual_domain = DualDomain::whole_space;
  /// One term per class: ClassSeparableLoss (loss/concepts.hpp).
  static constexpr bool separates_classes = true;

  /// ℓ*(a, y) = ½‖a‖² + ⟨a, t⟩, t = 1_y.
  template <RealScalar Scalar>
  [[nodiscard]] double conjugate(std::span<const Scalar> a, ClassSet y) const noexcept {
    double sum = 0;
    for (const auto v : a) sum += 0.5 * static_cast<double>(v) * static_cast<double>(v);
    for (const ClassIndex c : y) sum += static_cast<double>(a[static_cast<std::size_t>(c)]);
    return sum;
  }

  /// ℓ(s, y) = ½ ‖s − 1_y‖².
  template <RealScalar Scalar>
  [[nodiscard]] Scalar value(std::span<const Scalar> s, ClassSet y) const noexcept {
    assert(detail::valid_class_set(y, s.size()));
    Scalar sum = 0;
    detail::for_each_run(
        s.size(), y,
        [&](std::size_t begin, std::size_t end) {
          for (std::size_t r = begin; r < end; ++r) sum += s[r] * s[r];
        },
        [&](std::size_t p) { sum += (s[p] - Scalar(1)) * (s[p] - Scalar(1)); });
    return Scalar(0.5) * sum;
  }

  /// Writes ∇ℓ = s − 1_y into g (size K) and returns ℓ.
  template <RealScalar Scalar>
  Scalar gradient(std::span<const Scalar> s, ClassSet y, std::span<Scalar> g) const noexcept {
    assert(g.size() == s.size());
    assert(detail::valid_class_set(y, s.size()));
    Scalar sum = 0;
    detail::for_each_run(
        s.size(), y,
        [&](std::size_t begin, std::size_t end) {
          for (std::size_t r = begin; r < end; ++r) {
            g[r] = s[r];
            sum += s[r] * s[r];
          }
        },
        [&](std::size_t p) {
          g[p] = s[p] - Scalar(1);
          sum += g[p] * g[p];
        });
    return Scalar(0.5) * sum;
  }

  /// The gradient (the only subgradient of a differentiable loss); returns ℓ.
  template <RealScalar Scalar>
  Scalar subgradient(std::span<const Scalar> s, ClassSet y, std::span<Scalar> g) const noexcept {
    return gradient(s, y, g);
  }

  /// Writes the Hessian diagonal (all ones) into h.
  template <RealScalar Scalar>
  void curvature(std::span<const Scalar> s, ClassSet y, std::span<Scalar> h) const noexcept {
    assert(h.size() == s.size());
    assert(detail::valid_class_set(y, s.size()));
    (void)s;
    (void)y;
    for (Scalar& v : h) v = Scalar(1);
  }

  /// sup_s λ_max(∇²ℓ(s)) = 1.
  template <RealScalar Scalar>
  [[nodiscard]] static constexpr Scalar curvature_bound(ClassIndex /*K*/) noexcept {
    return Scalar(1);
  }
};

}  // namespace sparsemc
