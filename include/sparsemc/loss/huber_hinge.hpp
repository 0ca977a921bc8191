#pragma once
/// \file huber_hinge.hpp
/// The Huberised (smoothed) Weston–Watkins hinge: the multiclass hinge made differentiable with
/// a Lipschitz gradient, so that the smooth-loss solvers (BlockCD, SCD, FISTA, FBPD's forward
/// step) take it, with its own block and coordinate kernels.

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <string_view>
#include <utility>

#include "../core/validate.hpp"
#include "concepts.hpp"
#include "detail/class_set.hpp"
#include "kernels/weston_watkins.hpp"

namespace sparsemc {

/// Huberised multiclass hinge, Weston–Watkins style: the margins z_r = 1 − s_y + s_r of the
/// wrong classes r ≠ y enter through the Huber-smoothed hinge φ of width δ > 0 (`smoothing`),
///
///     ℓ(s, y) = Σ_{r≠y} φ(z_r),   φ(z) = 0 (z ≤ 0),  z²/(2δ) (0 < z ≤ δ),  z − δ/2 (z > δ),
///
/// φ = the Moreau envelope of the hinge (z)_+ with parameter δ: linear (robust, as the hinge)
/// for large violations, quadratic near the margin. δ → 0 gives the multiclass hinge of Weston
/// & Watkins; for 0 < z ≤ δ it is the squared hinge of Blondel et al. eq. (2) scaled by 1/(2δ).
///
/// - gradient: ∂ℓ/∂s_r = φ'(z_r) = clamp(z_r/δ, 0, 1) (r ≠ y),  ∂ℓ/∂s_y = −Σ_{r≠y} φ'(z_r)
/// - curvature (generalised Hessian diagonal): h_r = φ''(z_r) = [0 < z_r < δ]/δ, h_y = Σ_{r≠y} h_r
/// - curvature_bound(K) = K/δ: the generalised Hessian is Σ_r φ''(z_r)(e_r − e_y)(e_r − e_y)ᵀ
///   ⪯ (1/δ) Σ_{r≠y}(e_r − e_y)(e_r − e_y)ᵀ, whose eigenvalues are {0, 1 (K − 2 times), K}
///   (SquaredHinge's argument); attained when every margin is in the quadratic zone.
/// - conjugate: φ(z) = max_{β∈[0,1]} βz − δβ²/2, so ℓ*(a, y) = Σ_{r≠y} (δβ_r²/2 − β_r) for
///   a = Σ_{r≠y} β_r (e_r − e_y) with every β_r ∈ [0, 1], +∞ otherwise; that domain contains
///   {q − e_y : q in the simplex} (β = q off y), the `shifted_simplex` shape.
/// - subgradients are bounded by 1 entrywise except the true class's Σ_r φ'(z_r) ≤ K − 1, so
///   it does not declare `bounded_subgradient` (SCD's Algorithm 4 is not for it; its smooth
///   Algorithms 1 and 2 are).
///
/// Multiclass only (`supports_multilabel = false`). Every member costs O(K), allocates nothing
/// and is safe to call concurrently. The tools (`--loss huber-hinge`) use δ = 1.
///
/// \code
///   const sparsemc::HuberHinge loss(0.5);                // δ = 0.5
///   const std::array<double, 3> s{0.25, 1.0, -2.0};
///   const std::array<sparsemc::ClassIndex, 1> y{1};
///   std::array<double, 3> g{};
///   double l = loss.gradient<double>(s, y, g);   // z_0 = 0.25: l = 0.0625, g = {0.5, -0.5, 0}
///   sparsemc::BlockCD<sparsemc::HuberHinge, sparsemc::L1L2> solver(loss, {.lambda = 1e-3});
/// \endcode
struct HuberHinge {
  static constexpr std::string_view name = "huber-hinge";
  static constexpr bool supports_multilabel = false;
  /// dom ℓ* = {Σ_{r≠y} β_r (e_r − e_y) : β ∈ [0, 1]^{K−1}} ⊇ {q − e_y : q in the simplex}.
  static constexpr DualDomain dual_domain = DualDomain::shifted_simplex;

  /// δ = 1.
  HuberHinge() = default;
  /// δ > 0, the width of the quadratic zone; throws std::invalid_argument naming `smoothing`
  /// otherwise.
  explicit HuberHinge(double width) : smoothing(width) {
    if (!(smoothing > 0.0) || !std::isfinite(smoothing)) detail::fail_option("smoothing", "> 0 and finite", smoothing);
  }

  /// δ, the width of the quadratic zone of φ.
  double smoothing = 1.0;

  /// φ for the Weston–Watkins kernels (loss/kernels/weston_watkins.hpp) and for the members
  /// below: with c = clamp(z, 0, δ), φ(z) = c²/(2δ) + (z − δ)_+ (branch-free, −∞ ↦ 0), the
  /// slope φ'(z) = clamp(z/δ, 0, 1), φ'' = 1/δ on the zone 0 < z < δ.
  struct Margin {
    double delta;
    [[nodiscard]] static constexpr double gradient_factor() noexcept { return 1.0; }
    [[nodiscard]] double curvature_factor() const noexcept { return 1.0 / delta; }
    template <RealScalar Scalar>
    [[nodiscard]] Scalar slope(Scalar z) const noexcept {
      return std::clamp(z * static_cast<Scalar>(1.0 / delta), Scalar(0), Scalar(1));
    }
    template <RealScalar Scalar>
    [[nodiscard]] static bool zone(Scalar a) noexcept { return a > Scalar(0) && a < Scalar(1); }
    template <RealScalar Scalar>
    [[nodiscard]] Scalar phi(Scalar z) const noexcept {
      const auto d = static_cast<Scalar>(delta);
      const Scalar c = std::min(std::max(z, Scalar(0)), d);
      return c * c * static_cast<Scalar>(0.5 / delta) + std::max(z - d, Scalar(0));
    }
    /// φ(z1) − φ(z0) without cancellation: (z)_+ changes by d₀ = max(min(z0, 0) + u, −(z0)_+)
    /// (u = z1 − z0), (z − δ)_+ by d₁ (the same for z0 − δ), so c changes by dc = d₀ − d₁ and φ
    /// by dc (2c + dc)/(2δ) + d₁.
    template <RealScalar Scalar>
    [[nodiscard]] Scalar change(Scalar z0, Scalar z1) const noexcept {
      const auto d = static_cast<Scalar>(delta);
      const Scalar u = z1 - z0, over = z0 - d;
      const Scalar d0 = std::max(std::min(z0, Scalar(0)) + u, -std::max(z0, Scalar(0)));
      const Scalar d1 = std::max(std::min(over, Scalar(0)) + u, -std::max(over, Scalar(0)));
      const Scalar c = std::min(std::max(z0, Scalar(0)), d);
      const Scalar dc = d0 - d1;
      return dc * (Scalar(2) * c + dc) * static_cast<Scalar>(0.5 / delta) + d1;
    }
    template <class Row>
    [[nodiscard]] auto slope_row(const Row& m) const {
      using Scalar = typename Row::Scalar;
      return (m * static_cast<Scalar>(1.0 / delta)).max(Scalar(0)).min(Scalar(1));
    }
    template <class Row>
    [[nodiscard]] auto value_row(const Row& m) const {
      using Scalar = typename Row::Scalar;
      const auto d = static_cast<Scalar>(delta);
      const auto c = m.max(Scalar(0)).min(d);
      return (c.square() * static_cast<Scalar>(0.5 / delta) + (m - d).max(Scalar(0))).sum();
    }
    /// change() entrywise over a row, and the new Σ_r φ: c + dc and (m − δ)_+ + d₁.
    template <class Row, class Move, class Array>
    std::pair<typename Row::Scalar, typename Row::Scalar> trial_row(const Row& m, const Move& u, Array& dc,
                                                                   Array& d1, Array& c) const {
      using Scalar = typename Row::Scalar;
      const auto d = static_cast<Scalar>(delta);
      const auto half = static_cast<Scalar>(0.5 / delta);
      dc = (m.min(Scalar(0)) + u).max(-m.max(Scalar(0)));
      d1 = ((m - d).min(Scalar(0)) + u).max(-(m - d).max(Scalar(0)));
      dc -= d1;
      c = m.max(Scalar(0)).min(d);
      return {(dc * (Scalar(2) * c + dc) * half + d1).sum(),
              ((c + dc).square() * half + ((m - d).max(Scalar(0)) + d1)).sum()};
    }
  };
  [[nodiscard]] Margin margin() const noexcept { return {smoothing}; }
  /// Its block kernel for BlockCD and coordinate kernel for SCD: the Weston–Watkins pair over φ.
  template <RealScalar Scalar, StorageIndex Index>
  using BlockKernel = kernels::WestonWatkinsBlockKernel<HuberHinge, Scalar, Index>;
  template <RealScalar Scalar, StorageIndex Index>
  using CoordinateKernel = kernels::WestonWatkinsCoordinateKernel<HuberHinge, Scalar, Index>;

  /// ℓ(s, y) = Σ_{r≠y} φ(1 − s_y + s_r).
  template <RealScalar Scalar>
  [[nodiscard]] Scalar value(std::span<const Scalar> s, ClassSet y) const noexcept {
    const std::size_t c = true_class(s, y);
    const Margin huber = margin();
    const Scalar shift = Scalar(1) - s[c];
    Scalar sum = 0;
    for (std::size_t r = 0; r < s.size(); ++r)
      if (r != c) sum += huber.phi(shift + s[r]);
    return sum;
  }

  /// Writes ∇ℓ into g (size K) and returns ℓ; one pass over the K scores.
  template <RealScalar Scalar>
  Scalar gradient(std::span<const Scalar> s, ClassSet y, std::span<Scalar> g) const noexcept {
    assert(g.size() == s.size());
    const std::size_t c = true_class(s, y);
    const Margin huber = margin();
    const Scalar shift = Scalar(1) - s[c];
    Scalar sum = 0, slopes = 0;
    for (std::size_t r = 0; r < s.size(); ++r) {
      if (r == c) continue;
      const Scalar z = shift + s[r];
      sum += huber.phi(z);
      g[r] = huber.slope(z);
      slopes += g[r];
    }
    g[c] = -slopes;
    return sum;
  }

  /// A subgradient of a differentiable loss is its gradient; returns ℓ.
  template <RealScalar Scalar>
  Scalar subgradient(std::span<const Scalar> s, ClassSet y, std::span<Scalar> g) const noexcept {
    return gradient(s, y, g);
  }

  /// Writes the generalised Hessian diagonal into h: [0 < z_r < δ]/δ for r ≠ y, their sum for y.
  template <RealScalar Scalar>
  void curvature(std::span<const Scalar> s, ClassSet y, std::span<Scalar> h) const noexcept {
    assert(h.size() == s.size());
    const std::size_t c = true_class(s, y);
    const Margin huber = margin();
    const auto zone_curvature = static_cast<Scalar>(huber.curvature_factor());
    const Scalar shift = Scalar(1) - s[c];
    Scalar total = 0;
    for (std::size_t r = 0; r < s.size(); ++r) {
      if (r == c) continue;
      h[r] = Margin::zone(huber.slope(shift + s[r])) ? zone_curvature : Scalar(0);
      total += h[r];
    }
    h[c] = total;
  }

  /// ℓ*(a, y) = Σ_{r≠y} (δβ_r²/2 − β_r) for a = Σ_{r≠y} β_r (e_r − e_y), β ∈ [0, 1] (+∞ for a
  /// β_r outside; docs/math.md, "Duality gap").
  template <RealScalar Scalar>
  [[nodiscard]] double conjugate(std::span<const Scalar> a, ClassSet y) const noexcept {
    const std::size_t c = true_class(a, y);
    // A solver's dual point in Scalar may overshoot the box by its rounding.
    const double slack = 4 * static_cast<double>(std::numeric_limits<Scalar>::epsilon());
    double sum = 0;
    for (std::size_t r = 0; r < a.size(); ++r) {
      if (r == c) continue;
      const auto beta = static_cast<double>(a[r]);
      if (beta < 0 || beta > 1 + slack) return std::numeric_limits<double>::infinity();
      sum += beta * (0.5 * smoothing * beta - 1.0);
    }
    return sum;
  }

  /// sup_s λ_max(∇²ℓ(s)) = K/δ (see the class comment).
  template <RealScalar Scalar>
  [[nodiscard]] Scalar curvature_bound(ClassIndex K) const noexcept {
    return static_cast<Scalar>(K) / static_cast<Scalar>(smoothing);
  }

 private:
  template <RealScalar Scalar>
  static std::size_t true_class(std::span<const Scalar> s, ClassSet y) noexcept {
    assert(y.size() == 1 && "HuberHinge is multiclass: exactly one class per sample");
    assert(detail::valid_class_set(y, s.size()));
    (void)s;
    return static_cast<std::size_t>(y[0]);
  }
};

}  // namespace sparsemc
