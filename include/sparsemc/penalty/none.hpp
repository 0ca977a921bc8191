#pragma once
/// \file none.hpp
/// NoPenalty: objective (1) with R = 0, i.e. the ridge term (μ/2)‖W‖²_F alone (μ = 0 gives the
/// unregularised loss).
///
/// On one row w ∈ R^K (docs/math.md, "Penalties"):
///   value       (μ/2)‖w‖²
///   prox        prox_{t μ/2‖·‖²}(v) = v / (1 + tμ)                                           (N1)
///   violation   ‖g + μw‖₂  (the gradient of the row: ∂R = {0})                               (N2)
///   dual_norm   R°(g) = sup{⟨g, w⟩ : R(w) ≤ 1} = 0 if g = 0, +∞ otherwise, so λ_max = +∞:
///               no λ makes W = 0 optimal unless the gradient at 0 vanishes.
/// `lambda` is ignored; it is there so that every penalty has the same fields.
///
/// Example:
/// \code
///   sparsemc::NoPenalty ridge{.lambda = 0, .mu = 1e-2};
///   std::vector<double> row{1.0, -2.0};
///   ridge.prox(std::span<double>(row), 0.5);   // row /= 1.005
/// \endcode

#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <string_view>
#include <type_traits>

#include "../core/traits.hpp"
#include "detail/row.hpp"

namespace sparsemc {

/// Ridge only: λR = 0, μ/2‖W‖² (equations (N1)–(N2) of none.hpp). Also an EntrywisePenalty.
struct NoPenalty {
  static constexpr std::string_view name = "none";
  /// Ignored (R = 0).
  double lambda = 0;
  /// Ridge weight μ ≥ 0 of (μ/2)‖W‖²_F.
  double mu = 0;

  /// (μ/2)‖w‖².
  template <detail::PenaltyRowElement T>
  std::remove_const_t<T> value(std::span<T> w) const {
    double squares = 0;
    for (const auto x : w) squares += static_cast<double>(x) * static_cast<double>(x);
    return static_cast<std::remove_const_t<T>>(0.5 * mu * squares);
  }

  /// (N1) in place: v ← v / (1 + step·μ).
  template <RealScalar Scalar>
  void prox(std::span<Scalar> v, std::type_identity_t<Scalar> step) const {
    if (mu == 0) return;
    const Scalar scale = ridge_scale<Scalar>(step);
    for (Scalar& x : v) x *= scale;
  }

  /// (N2): ‖g + μw‖₂.
  template <class T, class U>
    requires detail::PenaltyRowPair<T, U>
  std::remove_const_t<T> violation(std::span<T> w, std::span<U> g) const {
    double squares = 0;
    for (std::size_t k = 0; k < w.size(); ++k) {
      const double r = static_cast<double>(g[k]) + mu * static_cast<double>(w[k]);
      squares += r * r;
    }
    return static_cast<std::remove_const_t<T>>(std::sqrt(squares));
  }

  /// R°(g): 0 when g = 0, +∞ otherwise.
  template <detail::PenaltyRowElement T>
  std::remove_const_t<T> dual_norm(std::span<T> g) const {
    for (const auto x : g) {
      if (x != 0) return std::numeric_limits<std::remove_const_t<T>>::infinity();
    }
    return 0;
  }

  /// (N1) for one entry.
  template <RealScalar Scalar>
  Scalar prox_entry(Scalar w, std::type_identity_t<Scalar> step) const {
    return w * ridge_scale<Scalar>(step);
  }

  /// (N2) for one entry: |g + μw|.
  template <RealScalar Scalar>
  Scalar violation_entry(Scalar w, std::type_identity_t<Scalar> g) const {
    return static_cast<Scalar>(std::abs(static_cast<double>(g) + mu * static_cast<double>(w)));
  }

 private:
  /// 1/(1 + step·μ), the ridge factor of (N1), shared by prox and prox_entry (same rounding).
  template <RealScalar Scalar>
  Scalar ridge_scale(Scalar step) const {
    return static_cast<Scalar>(1.0 / (1.0 + static_cast<double>(step) * mu));
  }
};

}  // namespace sparsemc
