#pragma once
/// \file l1l2.hpp
/// L1L2: the group lasso over feature rows, λ Σ_j ‖W_j:‖₂ + (μ/2)‖W‖²_F (Blondel et al. 2013's
/// R_{ℓ1/ℓ2}, §2, with the ridge term of objective (1)). A row is either entirely zero or not:
/// the feature is selected for all K classes at once.
///
/// On one row w ∈ R^K with loss gradient g (docs/math.md, "Penalties"):
///   value       λ‖w‖₂ + (μ/2)‖w‖²
///   prox        max(0, 1 − tλ/‖v‖₂) v / (1 + tμ)   (Blondel's eq. 4, then the ridge factor)  (L2a)
///   violation   dist(−(g + μw), λ∂‖w‖₂) exactly:
///                 w = 0:  max(0, ‖g‖₂ − λ)             (∂‖0‖₂ = unit ball)
///                 w ≠ 0:  ‖g + μw + λ w/‖w‖₂‖₂                                                (L2b)
///               (Blondel's eq. 9 uses |‖g‖ − λ| at w ≠ 0, which can vanish away from the optimum)
///   dual_norm   ‖g‖₂, so λ_max = max_j ‖∇_j L(0)‖₂                                              (L2c)
///
/// Example:
/// \code
///   sparsemc::L1L2 group{.lambda = 1.0, .mu = 0};
///   std::vector<double> row{3.0, 4.0};
///   group.prox(std::span<double>(row), 1.0);   // row = {2.4, 3.2}: ‖row‖ shrank from 5 to 4
/// \endcode

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <string_view>
#include <type_traits>

#include "../core/traits.hpp"
#include "../prox/group_soft_threshold.hpp"
#include "detail/row.hpp"

namespace sparsemc {

/// λ Σ_j ‖W_j:‖₂ + (μ/2)‖W‖²_F (equations (L2a)–(L2c) of l1l2.hpp).
struct L1L2 {
  static constexpr std::string_view name = "l1l2";
  /// Weight λ ≥ 0 of Σ_j ‖W_j:‖₂ (rows are features).
  double lambda = 0;
  /// Ridge weight μ ≥ 0 of (μ/2)‖W‖²_F.
  double mu = 0;

  /// λ‖w‖₂ + (μ/2)‖w‖².
  template <detail::PenaltyRowElement T>
  std::remove_const_t<T> value(std::span<T> w) const {
    const double norm = prox::detail::euclidean_norm(w.size(), [w](std::size_t k) { return w[k]; });
    return static_cast<std::remove_const_t<T>>(lambda * norm + 0.5 * mu * norm * norm);
  }

  /// (L2a) in place.
  template <RealScalar Scalar>
  void prox(std::span<Scalar> v, std::type_identity_t<Scalar> step) const {
    const double step_d = static_cast<double>(step);
    prox::group_soft_threshold(v, static_cast<Scalar>(step_d * lambda), static_cast<Scalar>(1.0 / (1.0 + step_d * mu)));
  }

  /// (L2b).
  template <class T, class U>
    requires detail::PenaltyRowPair<T, U>
  std::remove_const_t<T> violation(std::span<T> w, std::span<U> g) const {
    const std::size_t size = w.size();
    const double norm_w = prox::detail::euclidean_norm(size, [w](std::size_t k) { return w[k]; });
    double result;
    if (norm_w == 0) {
      const double norm_g = prox::detail::euclidean_norm(size, [g](std::size_t k) { return g[k]; });
      result = std::max(0.0, norm_g - lambda);
    } else {
      const double pull = mu + lambda / norm_w;  // g + (μ + λ/‖w‖) w
      result = prox::detail::euclidean_norm(size, [&](std::size_t k) {
        return static_cast<double>(g[k]) + pull * static_cast<double>(w[k]);
      });
    }
    return static_cast<std::remove_const_t<T>>(result);
  }

  /// (L2c): ‖g‖₂.
  template <detail::PenaltyRowElement T>
  std::remove_const_t<T> dual_norm(std::span<T> g) const {
    return static_cast<std::remove_const_t<T>>(prox::detail::euclidean_norm(g.size(), [g](std::size_t k) { return g[k]; }));
  }
};

}  // namespace sparsemc
