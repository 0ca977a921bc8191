#pragma once
/// \file ovr_squared_hinge.hpp
/// The one-vs-rest ("multitask") squared hinge of Blondel, Seki & Uehara (2013), eq. (11):
/// K independent binary squared hinges sharing the row-sparse penalty. Natural for multilabel
/// data; LIBLINEAR's -s 5 is this loss with an L1 penalty.

#include <cassert>
#include <cstddef>
#include <limits>
#include <span>
#include <string_view>

#include "concepts.hpp"
#include "detail/class_set.hpp"
#include "detail/positive_part.hpp"

namespace sparsemc {

/// One-vs-rest squared hinge (Blondel et al. 2013, eq. (11)):
///
///     ℓ(s, y) = Σ_r a_r²,   a_r = max(0, 1 − Y_r s_r),   Y_r = +1 if r ∈ y, −1 otherwise.
///
/// Multiclass: y = {class}, exactly eq. (11). Multilabel: Y_r = +1 iff r ∈ y (an empty y makes
/// every class a negative; a full y every class a positive).
///
/// - gradient: ∂ℓ/∂s_r = −2 Y_r a_r
/// - curvature (generalised Hessian, diagonal here, Blondel eq. 6 analogue): h_r = 2·[a_r > 0]
/// - curvature_bound(K) = 2 (the generalised Hessian is diagonal with entries in {0, 2}), so
///   K_j = (2/n) Σ_i c_i x_ij² in (1).
///
/// Every member costs O(K + |y|), allocates nothing and is safe to call concurrently.
///
/// \code
///   const sparsemc::OvrSquaredHinge loss;
///   const std::array<double, 3> s{0.5, 1.0, -2.0};
///   const std::array<sparsemc::ClassIndex, 2> y{0, 1};   // multilabel: classes 0 and 1
///   std::array<double, 3> g{};
///   double l = loss.gradient<double>(s, y, g);   // l = 0.25, g = {-1, 0, 0}
/// \endcode
struct OvrSquaredHinge {
  static constexpr std::string_view name = "ovr-squared-hinge";
  static constexpr bool supports_multilabel = true;
  /// Differentiable with a Lipschitz gradient: models SmoothLoss.
  static constexpr bool is_smooth = true;
  /// Per class, a_r = −Y_r β_r with β_r ≥ 0, the classes independent.
  static constexpr DualDomain dual_domain = DualDomain::signed_per_class;
  /// One term per class: ClassSeparableLoss (loss/concepts.hpp).
  static constexpr bool separates_classes = true;

  /// ℓ(s, y) = Σ_r max(0, 1 − Y_r s_r)².
  template <RealScalar Scalar>
  [[nodiscard]] Scalar value(std::span<const Scalar> s, ClassSet y) const noexcept {
    assert(detail::valid_class_set(y, s.size()));
    Scalar sum = 0;
    detail::for_each_run(
        s.size(), y,
        [&](std::size_t begin, std::size_t end) {
          for (std::size_t r = begin; r < end; ++r) {
            const Scalar a = detail::positive_part(Scalar(1) + s[r]);
            sum += a * a;
          }
        },
        [&](std::size_t p) {
          const Scalar a = detail::positive_part(Scalar(1) - s[p]);
          sum += a * a;
        });
    return sum;
  }

  /// Writes ∇ℓ into g (size K) and returns ℓ.
  template <RealScalar Scalar>
  Scalar gradient(std::span<const Scalar> s, ClassSet y, std::span<Scalar> g) const noexcept {
    assert(g.size() == s.size());
    assert(detail::valid_class_set(y, s.size()));
    Scalar sum = 0;
    detail::for_each_run(
        s.size(), y,
        [&](std::size_t begin, std::size_t end) {
          for (std::size_t r = begin; r < end; ++r) {
            const Scalar a = detail::positive_part(Scalar(1) + s[r]);
            g[r] = Scalar(2) * a;
            sum += a * a;
          }
        },
        [&](std::size_t p) {
          const Scalar a = detail::positive_part(Scalar(1) - s[p]);
          g[p] = Scalar(-2) * a;
          sum += a * a;
        });
    return sum;
  }

  /// The gradient (the only subgradient of a differentiable loss); returns ℓ.
  template <RealScalar Scalar>
  Scalar subgradient(std::span<const Scalar> s, ClassSet y, std::span<Scalar> g) const noexcept {
    return gradient(s, y, g);
  }

  /// Writes the generalised Hessian diagonal 2·[a_r > 0] into h.
  template <RealScalar Scalar>
  void curvature(std::span<const Scalar> s, ClassSet y, std::span<Scalar> h) const noexcept {
    assert(h.size() == s.size());
    assert(detail::valid_class_set(y, s.size()));
    detail::for_each_run(
        s.size(), y,
        [&](std::size_t begin, std::size_t end) {
          for (std::size_t r = begin; r < end; ++r) h[r] = s[r] > Scalar(-1) ? Scalar(2) : Scalar(0);
        },
        [&](std::size_t p) { h[p] = s[p] < Scalar(1) ? Scalar(2) : Scalar(0); });
  }

  /// ℓ*(a, y) = Σ_r (β_r²/4 − β_r), β_r = −Y_r a_r, +∞ if some β_r < 0 (docs/math.md, "Duality gap").
  template <RealScalar Scalar>
  [[nodiscard]] double conjugate(std::span<const Scalar> a, ClassSet y) const noexcept {
    double sum = 0;
    std::size_t next = 0;  // position in the sorted y
    for (std::size_t r = 0; r < a.size(); ++r) {
      const bool positive = next < y.size() && static_cast<std::size_t>(y[next]) == r;
      if (positive) ++next;
      const double beta = positive ? -static_cast<double>(a[r]) : static_cast<double>(a[r]);
      if (beta < 0) return std::numeric_limits<double>::infinity();
      sum += beta * (0.25 * beta - 1.0);
    }
    return sum;
  }

  /// sup_s λ_max(∇²ℓ(s)) = 2.
  template <RealScalar Scalar>
  [[nodiscard]] static constexpr Scalar curvature_bound(ClassIndex /*K*/) noexcept {
    return Scalar(2);
  }
};

}  // namespace sparsemc
