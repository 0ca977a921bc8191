#pragma once
/// \file l1.hpp
/// L1: the lasso / elastic-net penalty λ‖W‖₁ + (μ/2)‖W‖²_F of objective (1), separable per entry.
///
/// On one row w ∈ R^K with loss gradient g (docs/math.md, "Penalties"):
///   value       λ Σ_k |w_k| + (μ/2)‖w‖²
///   prox        prox_{t(λ|·| + μ/2(·)²)}(v_k) = sign(v_k) max(|v_k| − tλ, 0) / (1 + tμ)     (L1a)
///   violation   the Euclidean distance dist(−(g + μw), λ∂‖w‖₁), entry by entry:
///                 w_k = 0:  max(0, |g_k| − λ)        (∂|0| = [−1, 1])
///                 w_k ≠ 0:  |g_k + μw_k + λ sign w_k|                                       (L1b)
///               and the 2-norm of those K numbers for the row
///   dual_norm   ‖g‖_∞, so λ_max = max_{j,k} |∇L(0)_{jk}|                                    (L1c)
/// PD-Sparse's ½‖W‖² + λ'‖W‖₁ + CΣL is this penalty with μ = 1/(Cn), λ = λ'/(Cn).
///
/// Example:
/// \code
///   sparsemc::L1 l1{.lambda = 0.1, .mu = 0};
///   std::vector<double> row{0.5, -0.05}, grad{-0.1, 0.02};
///   l1.prox(std::span<double>(row), 1.0);   // row = {0.4, 0}
///   double kkt = l1.violation(std::span<double>(row), std::span<double>(grad));   // 0: optimal
/// \endcode

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <string_view>
#include <type_traits>

#include "../core/traits.hpp"
#include "detail/row.hpp"

namespace sparsemc {

/// λ‖W‖₁ + (μ/2)‖W‖²_F (equations (L1a)–(L1c) of l1.hpp); an EntrywisePenalty.
struct L1 {
  static constexpr std::string_view name = "l1";
  /// Weight λ ≥ 0 of ‖W‖₁ = Σ_jk |W_jk|.
  double lambda = 0;
  /// Ridge weight μ ≥ 0 of (μ/2)‖W‖²_F.
  double mu = 0;

  /// λ‖w‖₁ + (μ/2)‖w‖².
  template <detail::PenaltyRowElement T>
  std::remove_const_t<T> value(std::span<T> w) const {
    double l1 = 0, squares = 0;
    for (const auto x : w) {
      l1 += std::abs(static_cast<double>(x));
      squares += static_cast<double>(x) * static_cast<double>(x);
    }
    return static_cast<std::remove_const_t<T>>(lambda * l1 + 0.5 * mu * squares);
  }

  /// (L1a) in place on every entry of v.
  template <RealScalar Scalar>
  void prox(std::span<Scalar> v, std::type_identity_t<Scalar> step) const {
    const Scalar threshold = static_cast<Scalar>(static_cast<double>(step) * lambda);
    const Scalar scale = ridge_scale<Scalar>(step);
    for (Scalar& x : v) x = shrink(x, threshold, scale);
  }

  /// (L1b): 2-norm over the row of the per-entry violations.
  template <class T, class U>
    requires detail::PenaltyRowPair<T, U>
  std::remove_const_t<T> violation(std::span<T> w, std::span<U> g) const {
    double squares = 0;
    for (std::size_t k = 0; k < w.size(); ++k) {
      const double r = entry_violation(static_cast<double>(w[k]), static_cast<double>(g[k]));
      squares += r * r;
    }
    return static_cast<std::remove_const_t<T>>(std::sqrt(squares));
  }

  /// (L1c): ‖g‖_∞.
  template <detail::PenaltyRowElement T>
  std::remove_const_t<T> dual_norm(std::span<T> g) const {
    std::remove_const_t<T> largest = 0;
    for (const auto x : g) largest = std::max(largest, std::abs(x));
    return largest;
  }

  /// (L1a) for one entry.
  template <RealScalar Scalar>
  Scalar prox_entry(Scalar w, std::type_identity_t<Scalar> step) const {
    return shrink(w, static_cast<Scalar>(static_cast<double>(step) * lambda), ridge_scale<Scalar>(step));
  }

  /// (L1b) for one entry.
  template <RealScalar Scalar>
  Scalar violation_entry(Scalar w, std::type_identity_t<Scalar> g) const {
    return static_cast<Scalar>(entry_violation(static_cast<double>(w), static_cast<double>(g)));
  }

 private:
  /// Soft-threshold then ridge shrink: sign(x) max(|x| − threshold, 0) · scale.
  template <RealScalar Scalar>
  static Scalar shrink(Scalar x, Scalar threshold, Scalar scale) {
    return std::copysign(std::max(std::abs(x) - threshold, Scalar(0)) * scale, x);
  }

  /// 1/(1 + step·μ), shared by prox and prox_entry (same rounding).
  template <RealScalar Scalar>
  Scalar ridge_scale(Scalar step) const {
    return static_cast<Scalar>(1.0 / (1.0 + static_cast<double>(step) * mu));
  }

  /// dist(−(g + μw), λ∂|w|) for one entry.
  double entry_violation(double w, double g) const {
    if (w == 0) return std::max(0.0, std::abs(g) - lambda);
    return std::abs(g + mu * w + std::copysign(lambda, w));
  }
};

}  // namespace sparsemc
