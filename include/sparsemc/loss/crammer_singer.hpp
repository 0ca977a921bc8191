#pragma once
/// \file crammer_singer.hpp
/// The multiclass hinge of Crammer & Singer and its multilabel form, the separation ranking
/// loss of PD-Sparse (Yen et al. 2016, eq. (2)); nonsmooth, with a subgradient and an exact prox.

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <limits>
#include <span>
#include <string_view>
#include <vector>

#include "../prox/bi_simplex.hpp"
#include "../prox/simplex.hpp"
#include "concepts.hpp"
#include "detail/class_set.hpp"

namespace sparsemc {

namespace detail {

/// prox of step·ℓ for the separation ranking loss ℓ(s) = (1 + max_{n∉y} s_n − min_{p∈y} s_p)_+,
/// y and its complement N both nonempty (see CrammerSinger for the derivation):
/// prox = s − P_{step·D}(s + r), and P_{step·D}(u) = (x on N, −z on P) where (x, z) is
/// PD-Sparse's bi-simplex projection (Algorithm 2, prox/bi_simplex.hpp) of b = u_N, c = −u_P
/// with cap C = step: x, z ≥ 0, Σx = Σz = t ≤ step. So out_n = s_n − x_n, out_p = s_p + z_p.
/// `out` holds b and c while they are projected; `scratch` (the projection's work space, K
/// entries) holds the result while it is scattered back. O(K + a log K) for a active entries.
template <RealScalar Scalar>
void separation_ranking_prox(std::span<const Scalar> s, ClassSet y, Scalar step, std::span<Scalar> out,
                             std::vector<Scalar>& scratch) {
  const std::size_t K = s.size(), n_neg = K - y.size();
  std::size_t j = 0;
  for_each_run(
      K, y,
      [&](std::size_t begin, std::size_t end) {
        for (std::size_t r = begin; r < end; ++r) out[j++] = s[r] + Scalar(1);
      },
      [&](std::size_t p) { out[n_neg + (p - j)] = -s[p]; });  // p − j positives precede p
  const Scalar moved = prox::project_bi_simplex(out.first(n_neg), out.subspan(n_neg), step, scratch);
  if (!(moved > Scalar(0))) {  // t = 0: ℓ(s) = 0, the prox is the identity
    std::copy(s.begin(), s.end(), out.begin());
    return;
  }
  if (scratch.size() < K) scratch.resize(K);  // already K long after the projection: no-op
  std::copy(out.begin(), out.end(), scratch.begin());
  j = 0;
  for_each_run(
      K, y,
      [&](std::size_t begin, std::size_t end) {
        for (std::size_t r = begin; r < end; ++r) out[r] = s[r] - scratch[j++];
      },
      [&](std::size_t p) { out[p] = s[p] + scratch[n_neg + (p - j)]; });
}

}  // namespace detail

/// Crammer–Singer multiclass hinge and, for multilabel data, the separation ranking loss
/// (Yen et al. 2016, eq. (2); multiclass eq. (3)):
///
///     ℓ(s, y) = max_{n∉y, p∈y} (1 + s_n − s_p)_+ = (1 + max_{n∉y} s_n − min_{p∈y} s_p)_+.
///
/// With one class this is max(0, 1 + max_{r≠y} s_r − s_y), LIBLINEAR's -s 4 loss. Degenerate
/// class sets: an empty y (no positive) or a full y (no negative) leaves no pair to separate, so
/// ℓ ≡ 0 there (the maximum over an empty set of nonnegative terms; it matches PD-Sparse's dual
/// set C_i of eq. (16), which is {0} then). Such samples contribute nothing. K = 1 is the full
/// case.
///
/// - subgradient: e_{n*} − e_{p*} (n* the first argmax over the negatives, p* the first argmin
///   over the positives) when ℓ > 0, else 0 (a valid choice also at the kink ℓ = 0).
/// - prox(s, y, step, out) = argmin_x ½‖x − s‖² + step·ℓ(x, y), exact. Derivation (Chierchia
///   et al. 2015, Prop. 3.1): ℓ = σ_D(· + r) is the support function of
///   D = {v : v_n ≥ 0 (n ∉ y), v_p ≤ 0 (p ∈ y), Σ_N v_n = −Σ_P v_p ≤ 1} shifted by r = 1_{∉y},
///   so by Moreau's decomposition prox_{step·ℓ}(s) = s − P_{step·D}(s + r).
///   Multiclass (y = {c}): ℓ(s) = h(s) − s_c with Chierchia's h(u) = max_k (u_k + r_k) (eq. 6),
///   and the prox of a function plus a linear term is a shifted prox, so
///       prox_{step·ℓ}(s) = prox_{step·h}(s + step·e_c) = (s + step·e_c) − P_{S_step}(s + step·e_c + r),
///   eq. (10) verbatim: one projection onto the simplex of mass `step` (prox/simplex.hpp,
///   O(K) expected), after which out_r = min(s_r, τ − 1) (r ≠ c), out_c = min(s_c + step, τ)
///   for the simplex threshold τ. A multilabel y projects onto step·D with PD-Sparse's
///   bi-simplex projection (Algorithm 2, prox/bi_simplex.hpp; O(K + a log K), a active
///   entries). Either way, when the step is large enough the prox lands exactly on the margin
///   (ℓ(out) = 0), otherwise it moves a total mass `step` off the top negatives and onto the
///   bottom positives. A sample with ℓ(s) = 0 is returned unchanged.
/// - The projection onto the epigraph of the loss (Chierchia Prop. 3.3) is taken in the
///   score-difference space of the paper's operator T; FBPD uses prox/epigraph_max.hpp for it.
///
/// Nonsmooth: `is_smooth = false`; models Loss, SubgradientLoss and ProximableLoss, not
/// SmoothLoss. value/subgradient cost O(K + |y|) and allocate nothing. prox needs work space:
/// the overload with a `scratch` argument uses the caller's vector (grown to at least K entries,
/// never shrunk: no allocation after the first call of the largest K); the concept's
/// four-argument overload uses one thread_local vector per thread and Scalar. `out` must not
/// overlap `s`; `step` must be ≥ 0.
///
/// \code
///   const sparsemc::CrammerSinger loss;
///   const std::array<double, 3> s{0.5, 1.0, -2.0};
///   const std::array<sparsemc::ClassIndex, 1> y{1};
///   std::array<double, 3> x{};
///   double l = loss.value<double>(s, y);        // 1 + 0.5 − 1 = 0.5
///   loss.prox<double>(s, y, 0.1, x);            // {0.4, 1.1, -2}: both scores moved by 0.1
///   loss.prox<double>(s, y, 1.0, x);            // {0.25, 1.25, -2}: margin reached exactly
/// \endcode
struct CrammerSinger {
  static constexpr std::string_view name = "crammer-singer";
  static constexpr bool supports_multilabel = true;
  /// Subgradients bounded by 1 entrywise (BoundedSubgradientLoss).
  static constexpr bool bounded_subgradient = true;
  /// Piecewise linear, not differentiable: no gradient, use subgradient or prox.
  static constexpr bool is_smooth = false;
  /// Multiclass: dom ℓ* = {p − e_y : p in the simplex}. (A multilabel y's domain D above is
  /// not of this shape: solver/duality_gap.hpp refuses the intercept's correction for it.)
  static constexpr DualDomain dual_domain = DualDomain::shifted_simplex;

  /// ℓ(s, y) = (1 + max_{n∉y} s_n − min_{p∈y} s_p)_+, 0 for an empty or full y.
  template <RealScalar Scalar>
  [[nodiscard]] Scalar value(std::span<const Scalar> s, ClassSet y) const noexcept {
    const Extremes<Scalar> e = extremes(s, y);
    return e.defined() ? std::max(Scalar(0), e.margin_violation()) : Scalar(0);
  }

  /// ℓ*(a, y) = −Σ_{n∉y} a_n for a in D (above; multiclass a = p − e_y: ℓ* = a_y = p_y − 1),
  /// the negative mass moved from the positives to the negatives; +∞ when a negative's entry is
  /// below 0 or a positive's above 0 (docs/math.md, "Duality gap").
  template <RealScalar Scalar>
  [[nodiscard]] double conjugate(std::span<const Scalar> a, ClassSet y) const noexcept {
    double mass = 0;
    std::size_t next = 0;
    for (std::size_t k = 0; k < a.size(); ++k) {
      const auto v = static_cast<double>(a[k]);
      const bool positive = next < y.size() && static_cast<std::size_t>(y[next]) == k;
      if (positive) ++next;
      if (positive ? v > 0 : v < 0) return std::numeric_limits<double>::infinity();
      if (!positive) mass += v;
    }
    // The mass is at most 1, up to the rounding of a solver's own dual iterate in Scalar.
    const double rounding = 64 * static_cast<double>(std::numeric_limits<Scalar>::epsilon());
    return mass > 1.0 + rounding ? std::numeric_limits<double>::infinity() : -mass;
  }

  /// Writes e_{n*} − e_{p*} (or 0 when ℓ = 0) into g (size K) and returns ℓ.
  template <RealScalar Scalar>
  Scalar subgradient(std::span<const Scalar> s, ClassSet y, std::span<Scalar> g) const noexcept {
    assert(g.size() == s.size());
    const Extremes<Scalar> e = extremes(s, y);
    std::fill(g.begin(), g.end(), Scalar(0));
    if (!e.defined()) return Scalar(0);
    const Scalar loss = e.margin_violation();
    if (loss <= Scalar(0)) return Scalar(0);
    g[e.negative] = Scalar(1);
    g[e.positive] = Scalar(-1);
    return loss;
  }

  /// out = prox_{step·ℓ(·, y)}(s) using the caller's scratch (see the class comment).
  template <RealScalar Scalar>
  void prox(std::span<const Scalar> s, ClassSet y, Scalar step, std::span<Scalar> out,
            std::vector<Scalar>& scratch) const {
    assert(out.size() == s.size());
    assert(step >= Scalar(0));
    assert(detail::valid_class_set(y, s.size()));
    assert(out.data() + out.size() <= s.data() || s.data() + s.size() <= out.data());
    const std::size_t K = s.size();
    if (y.empty() || y.size() == K || step == Scalar(0)) {  // ℓ ≡ 0 or no step: identity
      std::copy(s.begin(), s.end(), out.begin());
      return;
    }
    if (y.size() > 1) {
      detail::separation_ranking_prox(s, y, step, out, scratch);
      return;
    }
    const auto c = static_cast<std::size_t>(y[0]);
    Scalar rival = -std::numeric_limits<Scalar>::infinity();
    for (std::size_t r = 0; r < c; ++r) rival = std::max(rival, s[r]);
    for (std::size_t r = c + 1; r < K; ++r) rival = std::max(rival, s[r]);
    if (Scalar(1) + rival - s[c] <= Scalar(0)) {  // ℓ(s) = 0: identity
      std::copy(s.begin(), s.end(), out.begin());
      return;
    }
    // Chierchia eq. (10) at z = s + step·e_c: out = z − P_{S_step}(z + r), r = 1 off c, where
    // P_{S_step}(v) = (v − τ)_+: out_r = s_r − (s_r + 1 − τ)_+ = min(s_r, τ − 1) and
    // out_c = min(s_c + step, τ). `out` holds v = z + r while τ is found.
    for (std::size_t r = 0; r < K; ++r) out[r] = s[r] + Scalar(1);
    out[c] = s[c] + step;
    const Scalar tau = prox::simplex_threshold<Scalar>(out, step, scratch);
    const Scalar cap = tau - Scalar(1);
    for (std::size_t r = 0; r < K; ++r) out[r] = std::min(s[r], cap);
    out[c] = std::min(s[c] + step, tau);
  }

  /// out = prox_{step·ℓ(·, y)}(s) with a thread_local scratch (the ProximableLoss signature).
  template <RealScalar Scalar>
  void prox(std::span<const Scalar> s, ClassSet y, Scalar step, std::span<Scalar> out) const {
    thread_local std::vector<Scalar> scratch;
    prox(s, y, step, out, scratch);
  }

 private:
  /// The largest negative score and the smallest positive score with their (first) indices.
  template <RealScalar Scalar>
  struct Extremes {
    Scalar highest_negative = -std::numeric_limits<Scalar>::infinity();
    Scalar lowest_positive = std::numeric_limits<Scalar>::infinity();
    std::size_t negative = 0, positive = 0;
    bool has_negative = false, has_positive = false;

    [[nodiscard]] bool defined() const noexcept { return has_negative && has_positive; }
    [[nodiscard]] Scalar margin_violation() const noexcept {
      return Scalar(1) + highest_negative - lowest_positive;
    }
  };

  template <RealScalar Scalar>
  static Extremes<Scalar> extremes(std::span<const Scalar> s, ClassSet y) noexcept {
    assert(detail::valid_class_set(y, s.size()));
    Extremes<Scalar> e;
    e.has_positive = !y.empty();
    e.has_negative = y.size() < s.size();
    detail::for_each_run(
        s.size(), y,
        [&](std::size_t begin, std::size_t end) {
          for (std::size_t r = begin; r < end; ++r)
            if (s[r] > e.highest_negative) {
              e.highest_negative = s[r];
              e.negative = r;
            }
        },
        [&](std::size_t p) {
          if (s[p] < e.lowest_positive) {
            e.lowest_positive = s[p];
            e.positive = p;
          }
        });
    return e;
  }
};

}  // namespace sparsemc
