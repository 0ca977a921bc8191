#pragma once
/// \file simplex.hpp
/// Euclidean projections onto the simplex, the "sub-simplex" and the ℓ1 ball, in time linear in
/// K in practice (Condat 2016, "Fast projection onto the simplex and the ℓ1 ball", Math.
/// Program. 158; its worst case is quadratic, its observed cost linear: a few passes over v).
///
/// All three reduce to one scalar threshold τ:
///
///   P_Δ(v) = (v − τ·1)_+  with  Σ_k (v_k − τ)_+ = a,      Δ = {x ≥ 0, Σ x = a}           (S1)
///   P_{B1}(v) = sign(v) ⊙ (|v| − τ)_+,  τ = 0 if ‖v‖₁ ≤ r, else P_Δ(|v|) with a = r        (S2)
///
/// Chierchia et al. (2015) need (S1) for Prop. 3.1, prox_{λh}(y) = y − P_{S_λ}(y + r) with
/// S_λ = {u ≥ 0, Σu = λ}; the ℓ1-ball projection gives the prox of the ℓ∞ norm by Moreau's
/// identity (penalty/l1linf.hpp); PD-Sparse's multiclass dual blocks need the sub-simplex
/// {x ≥ 0, Σx ≤ a} (project_simplex_le).
///
/// Every function works in place on a std::span and takes a caller-owned scratch vector that
/// grows to K entries on first use and is never shrunk, so a solver that keeps one scratch
/// vector per thread allocates nothing after warm-up. Inputs must be finite.
///
/// Accuracy: the threshold is searched on the shifted values v_k − max v (the projection is
/// invariant to adding a constant to v), so that huge inputs (|v| ~ 1e30 with a ~ 1) still
/// give Σx = a to a few ulps instead of losing a entirely in max v − a; sums accumulate in
/// double for float inputs too.
///
/// Example:
/// \code
///   std::vector<double> v{0.3, 1.2, -0.5}, scratch;
///   sparsemc::prox::project_simplex(std::span<double>(v), 1.0, scratch);   // v = {0.05, 0.95, 0}
/// \endcode

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <type_traits>
#include <vector>

#include "../core/traits.hpp"

namespace sparsemc::prox {

namespace detail {

/// Grows `scratch` to at least n entries (never shrinks) and returns its storage.
template <class Scalar>
Scalar* workspace(std::vector<Scalar>& scratch, std::size_t n) {
  if (scratch.size() < n) scratch.resize(n);
  return scratch.data();
}

/// Streaming search for the threshold θ of the piecewise-linear equation
///
///   Σ_k (y_k − θ)_+ = a + Γ·θ,                                                            (T)
///
/// Γ = 0 (simplex (S1), a > 0, at least one value pushed) or Γ = 1 (epigraph of the max,
/// Chierchia Prop. 3.3, where a = −ζ: θ = ζ + Σ(y_k − θ)_+, any a).
///
/// For an active set A, (T) restricted to A gives θ_A = (Σ_A y − a)/(|A| + Γ) and
/// θ_A ≤ θ* for every A, because Σ_A (y − θ) − a − Γθ lower-bounds the decreasing left-minus-
/// right side of (T). So any value y ≤ θ_A is inactive at the solution and can be discarded
/// for good. Condat's algorithm exploits this in a Gauss–Seidel fashion: one pass keeps a
/// running θ_A over a candidate list v (restarting v at a value whose singleton estimate
/// beats it, the old list going to a waiting list ṽ), then ṽ is merged back and the list is
/// swept until no value ≤ θ_A remains. Both lists live in one buffer of K entries:
/// ṽ = aux[0, waiting_end), v = aux[v_begin, v_end).
///
/// Usage: construct, push() every value once, call finish() once.
template <RealScalar Scalar, int Gamma>
class ThresholdSearch {
  static_assert(Gamma == 0 || Gamma == 1, "ThresholdSearch solves (T) for Gamma = 0 or 1");

 public:
  /// `aux` must hold as many entries as values will be pushed.
  ThresholdSearch(Scalar* aux, Scalar a) : aux_(aux), a_(a), rho_(-a) {}

  /// First pass: offer one value.
  void push(Scalar y) {
    if constexpr (Gamma == 0) {
      if (count_ == 0) {  // the simplex needs one value before θ_A is defined
        aux_[v_end_++] = y;
        rho_ = y - a_;
        count_ = 1;
        return;
      }
    }
    if (!(y > rho_)) return;  // y ≤ θ_A ≤ θ*: inactive
    const Scalar merged = rho_ + (y - rho_) / static_cast<Scalar>(count_ + 1);
    const Scalar single = (y - a_) / static_cast<Scalar>(1 + Gamma);
    if (merged > single) {
      aux_[v_end_++] = y;
      rho_ = merged;
      ++count_;
    } else {  // {y} alone gives the larger (still valid) lower bound: park v in ṽ
      waiting_end_ = v_end_;
      aux_[v_end_++] = y;
      rho_ = single;
      count_ = 1 + Gamma;
    }
  }

  /// Merges the waiting list, sweeps out inactive values and returns θ* (recomputed from the
  /// final active set with a fresh sum, so Σ(y − θ)_+ = a + Γθ holds to rounding).
  Scalar finish() {
    std::size_t v_begin = waiting_end_;
    for (std::size_t i = waiting_end_; i-- > 0;) {  // ṽ values above θ_A join v (in front)
      const Scalar y = aux_[i];
      if (y > rho_) {
        aux_[--v_begin] = y;
        ++count_;
        rho_ += (y - rho_) / static_cast<Scalar>(count_);
      }
    }
    for (bool removed = true; removed;) {  // remove values ≤ θ_A until none is left
      removed = false;
      std::size_t kept = v_begin;
      for (std::size_t i = v_begin; i < v_end_; ++i) {
        const Scalar y = aux_[i];
        if (y > rho_ || (Gamma == 0 && count_ == 1)) {  // the simplex keeps one value
          aux_[kept++] = y;
        } else {
          --count_;
          rho_ += (rho_ - y) / static_cast<Scalar>(count_);
          removed = true;
        }
      }
      v_end_ = kept;
    }
    double sum = -static_cast<double>(a_);
    for (std::size_t i = v_begin; i < v_end_; ++i) sum += static_cast<double>(aux_[i]);
    return static_cast<Scalar>(sum / static_cast<double>(v_end_ - v_begin + Gamma));
  }

 private:
  Scalar* aux_;
  Scalar a_;
  Scalar rho_;                     // θ_A of the current candidate list v (a lower bound of θ*)
  std::size_t count_ = Gamma;      // |v| + Γ
  std::size_t waiting_end_ = 0;    // ṽ = aux[0, waiting_end_)
  std::size_t v_end_ = 0;          // v = aux[waiting_end_, v_end_) during the first pass
};

}  // namespace detail

/// Threshold τ of the projection onto the simplex Δ_a = {x ≥ 0, Σx = a}, a > 0 (S1):
/// P_Δ(v) = (v − τ)_+. Linear time in practice; `v` is not modified. Requires K ≥ 1.
template <RealScalar Scalar>
Scalar simplex_threshold(std::span<const Scalar> v, std::type_identity_t<Scalar> mass,
                         std::vector<Scalar>& scratch) {
  const Scalar top = *std::max_element(v.begin(), v.end());
  detail::ThresholdSearch<Scalar, 0> search(detail::workspace(scratch, v.size()), mass);
  for (const Scalar x : v) search.push(x - top);
  return top + search.finish();
}

/// Projects v in place onto the simplex Δ_a = {x ∈ R^K : x ≥ 0, Σ_k x_k = a} (S1), a ≥ 0
/// (a = 0 gives x = 0). Returns the threshold τ (x = (v − τ)_+; for a = 0, τ = max v).
/// Chierchia Prop. 3.1's S_λ is Δ_λ. Linear time in practice, K entries of scratch.
template <RealScalar Scalar>
Scalar project_simplex(std::span<Scalar> v, std::type_identity_t<Scalar> mass, std::vector<Scalar>& scratch) {
  if (v.empty()) return Scalar(0);
  const Scalar top = *std::max_element(v.begin(), v.end());
  if (!(mass > 0)) {
    std::fill(v.begin(), v.end(), Scalar(0));
    return top;
  }
  detail::ThresholdSearch<Scalar, 0> search(detail::workspace(scratch, v.size()), mass);
  for (const Scalar x : v) search.push(x - top);
  const Scalar theta = search.finish();  // threshold in shifted coordinates: τ = top + θ
  for (Scalar& x : v) x = std::max((x - top) - theta, Scalar(0));
  return top + theta;
}

/// Projects v in place onto {x ≥ 0, Σ_k x_k ≤ a}, a ≥ 0: x = v_+ when Σ(v_k)_+ ≤ a, else the
/// simplex projection (S1). Returns τ ≥ 0 with x = (v − τ)_+ (τ = 0 when the cap is inactive).
template <RealScalar Scalar>
Scalar project_simplex_le(std::span<Scalar> v, std::type_identity_t<Scalar> mass, std::vector<Scalar>& scratch) {
  double positive = 0;
  for (const Scalar x : v) positive += static_cast<double>(std::max(x, Scalar(0)));
  if (positive <= static_cast<double>(mass)) {
    for (Scalar& x : v) x = std::max(x, Scalar(0));
    return Scalar(0);
  }
  return project_simplex(v, mass, scratch);
}

namespace detail {

/// The ℓ1-ball threshold of (S2) as τ = shift + theta, kept apart so that (|v_k| − shift) − theta
/// is exact-ish even when |v| ≫ r; `inside` when ‖v‖₁ ≤ r (then τ = 0).
template <RealScalar Scalar>
struct L1BallThreshold {
  Scalar shift = 0;
  Scalar theta = 0;
  bool inside = true;
  Scalar tau() const { return inside ? Scalar(0) : std::max(shift + theta, Scalar(0)); }
};

template <RealScalar Scalar>
L1BallThreshold<Scalar> l1_ball_threshold(std::span<const Scalar> v, Scalar radius, std::vector<Scalar>& scratch) {
  double l1 = 0;
  Scalar top = 0;
  for (const Scalar x : v) {
    l1 += static_cast<double>(std::abs(x));
    top = std::max(top, std::abs(x));
  }
  if (l1 <= static_cast<double>(radius)) return {};
  if (!(radius > 0)) return {top, Scalar(0), false};  // B1(0) = {0}
  ThresholdSearch<Scalar, 0> search(workspace(scratch, v.size()), radius);
  for (const Scalar x : v) search.push(std::abs(x) - top);
  return {top, search.finish(), false};
}

}  // namespace detail

/// Threshold τ ≥ 0 of the projection onto the ℓ1 ball B1(r) = {x : ‖x‖₁ ≤ r} (S2):
/// P_{B1}(v) = sign(v) ⊙ (|v| − τ)_+, τ = 0 when ‖v‖₁ ≤ r; for r = 0, τ = max|v|.
/// `v` is not modified. Also gives the prox of the ℓ∞ norm: v − P_{B1(r)}(v) = clamp(v, −τ, τ).
template <RealScalar Scalar>
Scalar l1_ball_threshold(std::span<const Scalar> v, std::type_identity_t<Scalar> radius,
                         std::vector<Scalar>& scratch) {
  return detail::l1_ball_threshold(v, radius, scratch).tau();
}

/// Projects v in place onto the ℓ1 ball B1(r) = {x : ‖x‖₁ ≤ r}, r ≥ 0 (S2); a no-op (bit for
/// bit) when ‖v‖₁ ≤ r. Returns the threshold τ (0 inside the ball). Linear time in practice.
template <RealScalar Scalar>
Scalar project_l1_ball(std::span<Scalar> v, std::type_identity_t<Scalar> radius, std::vector<Scalar>& scratch) {
  const auto threshold = detail::l1_ball_threshold(std::span<const Scalar>(v), radius, scratch);
  if (threshold.inside) return Scalar(0);
  for (Scalar& x : v) {
    x = std::copysign(std::max((std::abs(x) - threshold.shift) - threshold.theta, Scalar(0)), x);
  }
  return threshold.tau();
}

}  // namespace sparsemc::prox
