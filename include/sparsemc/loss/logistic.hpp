#pragma once
/// \file logistic.hpp
/// Multinomial logistic loss (softmax cross-entropy; Blondel et al. 2013, eq. (12)), computed
/// with the max shift so that no score, however large, overflows or produces NaN.

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstddef>
#include <span>
#include <string_view>

#include "concepts.hpp"
#include "detail/class_set.hpp"

namespace sparsemc {

/// Multinomial logistic loss (Blondel et al. 2013, eq. (12); scikit-learn's multinomial
/// LogisticRegression):
///
///     ℓ(s, y) = log Σ_k exp(s_k) − s_y = log(1 + Σ_{r≠y} exp(s_r − s_y)),
///     ∇ℓ = p − e_y,   p = softmax(s),   ∇²ℓ = diag(p) − ppᵀ.
///
/// Multilabel (normalised): the target is the uniform distribution q = 1_y/|y| over the
/// sample's classes and the loss is the Kullback–Leibler divergence KL(q ‖ p),
///
///     ℓ(s, y) = log Σ_k exp(s_k) − (1/|y|) Σ_{c∈y} s_c − log|y|,   ∇ℓ = p − q,
///
/// i.e. the cross-entropy against q minus its constant entropy log|y|, so ℓ ≥ 0 with equality
/// iff p = q, the Hessian is unchanged, and |y| = 1 is exactly the multiclass loss. A sample with
/// an empty class set has no target distribution and contributes ℓ = 0 (gradient and curvature 0).
///
/// Numerics: with m = max_k s_k attained first at index a and Z' = Σ_{k≠a} exp(s_k − m) ∈
/// [0, K−1], ℓ = (m − s_y) + log1p(Z') (both terms ≥ 0, no cancellation, accurate to the last
/// digits even when ℓ ≪ 1; scores of ±1e6 give finite, exact values), p_k = exp(s_k − m)/(1 + Z')
/// and 1 − p_a = Z'/(1 + Z') without cancellation.
///
/// - curvature: the exact Hessian diagonal h_k = p_k(1 − p_k) ≤ ¼ (Blondel eq. 6 analogue)
/// - curvature_bound(K) = ½ = sup_s λ_max(diag(p) − ppᵀ) (attained as p → (½, ½, 0, …)), so
///   K_j = (1/(2n)) Σ_i c_i x_ij² in (1) (Blondel §5.3). For K = 1 the loss is 0 and ½ is safe.
///
/// Every member costs O(K) exponentials, allocates nothing, is safe to call concurrently.
///
/// \code
///   const sparsemc::Logistic loss;
///   const std::array<double, 2> s{1e6, -1e6};
///   const std::array<sparsemc::ClassIndex, 1> y{1};
///   std::array<double, 2> g{};
///   double l = loss.gradient<double>(s, y, g);   // l = 2e6, g = {1, -1}
/// \endcode
struct Logistic {
  static constexpr std::string_view name = "logistic";
  static constexpr bool supports_multilabel = true;
  /// Subgradients bounded by 1 entrywise (BoundedSubgradientLoss).
  static constexpr bool bounded_subgradient = true;
  /// Twice differentiable with a Lipschitz gradient: models SmoothLoss.
  static constexpr bool is_smooth = true;
  /// dom ℓ* = {p − t : p in the simplex}, t = 1_y/|y| the target ({0} for an empty y).
  static constexpr DualDomain dual_domain = DualDomain::shifted_simplex;

  /// ℓ(s, y) as in the class comment; O(K).
  template <RealScalar Scalar>
  [[nodiscard]] Scalar value(std::span<const Scalar> s, ClassSet y) const noexcept {
    assert(detail::valid_class_set(y, s.size()));
    if (y.empty()) return Scalar(0);
    const std::size_t a = argmax(s);
    const Scalar m = s[a];
    Scalar rest = 0;  // Z' = Σ_{k≠a} exp(s_k − m)
    for (std::size_t k = 0; k < a; ++k) rest += std::exp(s[k] - m);
    for (std::size_t k = a + 1; k < s.size(); ++k) rest += std::exp(s[k] - m);
    return target_gap(s, y, m) + std::log1p(rest);
  }

  /// Writes ∇ℓ = p − q into g (size K) and returns ℓ; g holds exp(s − m) in between, so the
  /// call makes K exponentials and no other pass over memory than two over s and g.
  template <RealScalar Scalar>
  Scalar gradient(std::span<const Scalar> s, ClassSet y, std::span<Scalar> g) const noexcept {
    assert(g.size() == s.size());
    assert(detail::valid_class_set(y, s.size()));
    if (y.empty()) {
      std::fill(g.begin(), g.end(), Scalar(0));
      return Scalar(0);
    }
    const std::size_t a = argmax(s);
    const Scalar rest = softmax(s, a, g);
    const Scalar inv = Scalar(1) / static_cast<Scalar>(y.size());
    for (const ClassIndex c : y) g[static_cast<std::size_t>(c)] -= inv;
    // 1 − p_a = Z'/(1 + Z') exactly when a is the only class of y (the common, well-fitted case).
    if (y.size() == 1 && static_cast<std::size_t>(y[0]) == a) g[a] = -rest / (Scalar(1) + rest);
    return target_gap(s, y, s[a]) + std::log1p(rest);
  }

  /// The gradient (the only subgradient of a differentiable loss); returns ℓ.
  template <RealScalar Scalar>
  Scalar subgradient(std::span<const Scalar> s, ClassSet y, std::span<Scalar> g) const noexcept {
    return gradient(s, y, g);
  }

  /// Writes the Hessian diagonal p_k(1 − p_k) into h (0 for an empty class set).
  template <RealScalar Scalar>
  void curvature(std::span<const Scalar> s, ClassSet y, std::span<Scalar> h) const noexcept {
    assert(h.size() == s.size());
    assert(detail::valid_class_set(y, s.size()));
    if (y.empty()) {
      std::fill(h.begin(), h.end(), Scalar(0));
      return;
    }
    const std::size_t a = argmax(s);
    const Scalar rest = softmax(s, a, h);
    for (Scalar& p : h) p *= Scalar(1) - p;
    h[a] = rest / ((Scalar(1) + rest) * (Scalar(1) + rest));  // p_a (1 − p_a) = Z'/(1 + Z')²
  }

  /// ℓ*(a, y) = Σ_k p_k log p_k − Σ_k t_k log t_k with p = a + t, t = 1_y/|y| (negative
  /// entries of p from rounding count as 0); an empty y gives ℓ ≡ 0, ℓ*(0) = 0.
  template <RealScalar Scalar>
  [[nodiscard]] double conjugate(std::span<const Scalar> a, ClassSet y) const noexcept {
    if (y.empty()) return 0.0;
    const double t = 1.0 / static_cast<double>(y.size());
    double sum = std::log(static_cast<double>(y.size()));  // −Σ t log t
    std::size_t next = 0;
    for (std::size_t k = 0; k < a.size(); ++k) {
      double p = static_cast<double>(a[k]);
      if (next < y.size() && static_cast<std::size_t>(y[next]) == k) {
        p += t;
        ++next;
      }
      if (p > 0) sum += p * std::log(p);
    }
    return sum;
  }

  /// sup_s λ_max(∇²ℓ(s)) = ½.
  template <RealScalar Scalar>
  [[nodiscard]] static constexpr Scalar curvature_bound(ClassIndex /*K*/) noexcept {
    return Scalar(0.5);
  }

 private:
  /// First index of the largest score (K ≥ 1).
  template <RealScalar Scalar>
  static std::size_t argmax(std::span<const Scalar> s) noexcept {
    assert(!s.empty());
    return static_cast<std::size_t>(std::max_element(s.begin(), s.end()) - s.begin());
  }

  /// Writes p = softmax(s) into p and returns Z' = Σ_{k≠a} exp(s_k − s_a) (summed without the
  /// exp(0) = 1 of index a, so that no bit of a small Z' is lost).
  template <RealScalar Scalar>
  static Scalar softmax(std::span<const Scalar> s, std::size_t a, std::span<Scalar> p) noexcept {
    const Scalar m = s[a];
    Scalar rest = 0;
    for (std::size_t k = 0; k < a; ++k) rest += (p[k] = std::exp(s[k] - m));
    for (std::size_t k = a + 1; k < s.size(); ++k) rest += (p[k] = std::exp(s[k] - m));
    p[a] = Scalar(1);
    const Scalar inv = Scalar(1) / (Scalar(1) + rest);
    for (Scalar& v : p) v *= inv;
    return rest;
  }

  /// (m − mean_{c∈y} s_c) − log|y| ≥ −log|y|: the part of ℓ besides log1p(Z'); for one class
  /// simply m − s_y ≥ 0.
  template <RealScalar Scalar>
  static Scalar target_gap(std::span<const Scalar> s, ClassSet y, Scalar m) noexcept {
    if (y.size() == 1) return m - s[static_cast<std::size_t>(y[0])];
    Scalar gap = 0;
    for (const ClassIndex c : y) gap += m - s[static_cast<std::size_t>(c)];
    const auto size = static_cast<Scalar>(y.size());
    return gap / size - std::log(size);
  }
};

}  // namespace sparsemc
