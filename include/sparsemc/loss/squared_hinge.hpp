#pragma once
/// \file squared_hinge.hpp
/// The multiclass squared hinge of Blondel, Seki & Uehara (2013), eq. (2): the loss their
/// block coordinate descent is built for.

#include <cassert>
#include <cstddef>
#include <limits>
#include <span>
#include <string_view>
#include <utility>

#include "concepts.hpp"
#include "detail/class_set.hpp"
#include "detail/positive_part.hpp"
#include "kernels/weston_watkins.hpp"

namespace sparsemc {

/// Multiclass squared hinge, Weston–Watkins style (Blondel et al. 2013, eq. (2)):
///
///     ℓ(s, y) = Σ_{r≠y} a_r²,   a_r = max(0, 1 − s_y + s_r)
///
/// (every wrong class r should score at least 1 below the true class y). ℓ is convex and
/// differentiable with a Lipschitz gradient, but not twice differentiable where some
/// 1 − s_y + s_r = 0.
///
/// - gradient: ∂ℓ/∂s_r = 2a_r (r ≠ y),  ∂ℓ/∂s_y = −2 Σ_{r≠y} a_r            (Blondel eq. 14)
/// - curvature (diagonal of the generalised Hessian, Blondel eq. 6 per sample):
///   h_r = 2·[a_r > 0] (r ≠ y),  h_y = 2·#{r ≠ y : a_r > 0}
/// - curvature_bound(K) = 2K: the generalised Hessian is 2 Σ_{r active} (e_r − e_y)(e_r − e_y)ᵀ,
///   at most 2M with M = Σ_{r≠y} (e_r − e_y)(e_r − e_y)ᵀ, whose eigenvalues are {0, 1 (K−2
///   times), K}. Attained (for K ≥ 2) when every margin is violated; so the block Lipschitz
///   constant of feature j in (1) is K_j = (2K/n) Σ_i c_i x_ij², tighter than Blondel's
///   Appendix A constant 4(K−1)/n Σ_i x_ij² for K ≥ 2. For K = 1 the loss is identically 0 and
///   the bound 2 is merely safe (never 0, so 1/L stays finite).
///
/// Multiclass only (`supports_multilabel = false`): y must hold exactly one class.
/// Every member costs O(K), allocates nothing and is safe to call concurrently.
///
/// \code
///   const sparsemc::SquaredHinge loss;
///   const std::array<double, 3> s{0.5, 1.0, -2.0};
///   const std::array<sparsemc::ClassIndex, 1> y{1};
///   std::array<double, 3> g{};
///   double l = loss.gradient<double>(s, y, g);   // l = 0.25, g = {1, -1, 0}
/// \endcode
struct SquaredHinge {
  static constexpr std::string_view name = "squared-hinge";
  static constexpr bool supports_multilabel = false;
  /// dom ℓ* = {Σ_{r≠y} β_r (e_r − e_y) : β ≥ 0} ⊇ {q − e_y : q in the simplex}.
  static constexpr DualDomain dual_domain = DualDomain::shifted_simplex;

  /// φ(z) = (z)_+² for the Weston–Watkins kernels (loss/kernels/weston_watkins.hpp), in the
  /// units of Blondel et al.'s Algorithm 3: the slope a = (z)_+, φ' = 2a, φ'' = 2 where a > 0.
  struct Margin {
    static constexpr double gradient_factor() noexcept { return 2.0; }
    static constexpr double curvature_factor() noexcept { return 2.0; }
    template <RealScalar Scalar>
    static Scalar slope(Scalar z) noexcept { return detail::positive_part(z); }
    template <RealScalar Scalar>
    static bool zone(Scalar a) noexcept { return a > Scalar(0); }
    template <RealScalar Scalar>
    static Scalar phi(Scalar z) noexcept {
      const Scalar a = slope(z);
      return a * a;
    }
    template <RealScalar Scalar>
    static Scalar change(Scalar z0, Scalar z1) noexcept {
      const Scalar a0 = slope(z0), a1 = slope(z1);
      return (a1 - a0) * (a1 + a0);
    }
    template <class Row>
    static auto slope_row(const Row& m) { return m.max(typename Row::Scalar(0)); }
    template <class Row>
    static auto value_row(const Row& m) { return m.max(typename Row::Scalar(0)).square().sum(); }
    /// a = (m)_+ becomes a + d with d = max(min(m, 0) + u, −a) (= max(u, −m) on active margins:
    /// no cancellation), so Σ a² changes by Σ d(2a + d).
    template <class Row, class Move, class Array>
    static std::pair<typename Row::Scalar, typename Row::Scalar> trial_row(const Row& m, const Move& u, Array& a,
                                                                           Array& d, Array&) {
      using Scalar = typename Row::Scalar;
      a = m.max(Scalar(0));
      d = (m.min(Scalar(0)) + u).max(-a);
      return {(d * (Scalar(2) * a + d)).sum(), (a + d).square().sum()};
    }
  };
  [[nodiscard]] static constexpr Margin margin() noexcept { return {}; }
  /// Its block kernel for BlockCD and coordinate kernel for SCD: the Weston–Watkins pair over φ.
  template <RealScalar Scalar, StorageIndex Index>
  using BlockKernel = kernels::WestonWatkinsBlockKernel<SquaredHinge, Scalar, Index>;
  template <RealScalar Scalar, StorageIndex Index>
  using CoordinateKernel = kernels::WestonWatkinsCoordinateKernel<SquaredHinge, Scalar, Index>;

  /// ℓ(s, y) = Σ_{r≠y} max(0, 1 − s_y + s_r)².
  template <RealScalar Scalar>
  [[nodiscard]] Scalar value(std::span<const Scalar> s, ClassSet y) const noexcept {
    const std::size_t c = true_class(s, y);
    const Scalar shift = Scalar(1) - s[c];
    Scalar sum = 0;
    const auto run = [&](std::size_t begin, std::size_t end) {
      for (std::size_t r = begin; r < end; ++r) {
        const Scalar a = detail::positive_part(shift + s[r]);
        sum += a * a;
      }
    };
    run(0, c);
    run(c + 1, s.size());
    return sum;
  }

  /// Writes ∇ℓ into g (size K) and returns ℓ; one pass over the K scores.
  template <RealScalar Scalar>
  Scalar gradient(std::span<const Scalar> s, ClassSet y, std::span<Scalar> g) const noexcept {
    assert(g.size() == s.size());
    const std::size_t c = true_class(s, y);
    const Scalar shift = Scalar(1) - s[c];
    Scalar sum = 0;        // Σ a_r
    Scalar sum_sq = 0;     // Σ a_r² = ℓ
    const auto run = [&](std::size_t begin, std::size_t end) {
      for (std::size_t r = begin; r < end; ++r) {
        const Scalar a = detail::positive_part(shift + s[r]);
        g[r] = Scalar(2) * a;
        sum += a;
        sum_sq += a * a;
      }
    };
    run(0, c);
    run(c + 1, s.size());
    g[c] = Scalar(-2) * sum;
    return sum_sq;
  }

  /// A subgradient of a differentiable loss is its gradient (lets subgradient methods take
  /// this loss too); returns ℓ.
  template <RealScalar Scalar>
  Scalar subgradient(std::span<const Scalar> s, ClassSet y, std::span<Scalar> g) const noexcept {
    return gradient(s, y, g);
  }

  /// Writes the generalised Hessian diagonal (Blondel eq. 6) into h: 2[a_r > 0] for r ≠ y and
  /// 2·#{active r} for y.
  template <RealScalar Scalar>
  void curvature(std::span<const Scalar> s, ClassSet y, std::span<Scalar> h) const noexcept {
    assert(h.size() == s.size());
    const std::size_t c = true_class(s, y);
    const Scalar shift = Scalar(1) - s[c];
    Scalar active = 0;
    const auto run = [&](std::size_t begin, std::size_t end) {
      for (std::size_t r = begin; r < end; ++r) {
        const Scalar on = shift + s[r] > Scalar(0) ? Scalar(2) : Scalar(0);
        h[r] = on;
        active += on;
      }
    };
    run(0, c);
    run(c + 1, s.size());
    h[c] = active;
  }

  /// ℓ*(a, y) = Σ_{r≠y} (β_r²/4 − β_r) for a = Σ_{r≠y} β_r (e_r − e_y) with β ≥ 0 (+∞ for a
  /// negative β_r): the conjugate of max(0, u)² is v²/4 on v ≥ 0 (docs/math.md, "Duality gap").
  template <RealScalar Scalar>
  [[nodiscard]] double conjugate(std::span<const Scalar> a, ClassSet y) const noexcept {
    const std::size_t c = true_class(a, y);
    double sum = 0;
    for (std::size_t r = 0; r < a.size(); ++r) {
      if (r == c) continue;
      const auto beta = static_cast<double>(a[r]);
      if (beta < 0) return std::numeric_limits<double>::infinity();
      sum += beta * (0.25 * beta - 1.0);
    }
    return sum;
  }

  /// sup_s λ_max(∇²ℓ(s)) = 2K (see the class comment).
  template <RealScalar Scalar>
  [[nodiscard]] static constexpr Scalar curvature_bound(ClassIndex K) noexcept {
    return Scalar(2) * static_cast<Scalar>(K);
  }

 private:
  template <RealScalar Scalar>
  static std::size_t true_class(std::span<const Scalar> s, ClassSet y) noexcept {
    assert(y.size() == 1 && "SquaredHinge is multiclass: exactly one class per sample");
    assert(detail::valid_class_set(y, s.size()));
    (void)s;
    return static_cast<std::size_t>(y[0]);
  }
};

}  // namespace sparsemc
