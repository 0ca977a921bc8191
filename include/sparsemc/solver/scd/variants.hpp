#pragma once
/// \file variants.hpp
/// The three algorithms of Tao, Kong, Chu & Wu, "Stochastic coordinate descent methods for
/// regularized smooth and nonsmooth losses" (ECML PKDD 2012), as the `Variant` policy of
/// `SCD<Loss, Penalty, Variant>` (scd.hpp): Algorithm 1 (`Smooth`, "scd"), Algorithm 2
/// (`Adaptive`, "scd-ls") and Algorithm 4 (`NonsmoothRDA`, "scd-rda"). Each carries its own
/// parameters (`SCDOptions::variant`) and registered name.

#include <cmath>
#include <cstdint>
#include <string_view>

#include "../../core/validate.hpp"

namespace sparsemc {

/// Algorithm 1, smooth SCD: a proximal-gradient step on the drawn coordinate with its
/// Lipschitz constant L_jr (eq. 6),
///
///     w_jr ← argmin_ω ω(g_jr − L_jr w_jr) + λp(ω) + (L_jr/2)ω² = prox_{p/L_jr}(w_jr − g_jr/L_jr),
///
/// g_jr = ∂L/∂w_jr the coordinate derivative of the loss part and p the entrywise penalty
/// (λ|ω| + (μ/2)ω²: the ridge sits inside the prox, exactly). L_jr = (1/n) Σ_i c_i x_ij² κ_ir
/// with κ_ir = sup_s ∂²ℓ/∂s_r² for sample i (2 for the squared hinges' wrong classes and for the
/// one-vs-rest loss, 2(K − 1) for SquaredHinge's true class, ¼ for Logistic, curvature_bound(K)
/// for any other loss), a global bound along the coordinate, so every step decreases F (no
/// line search). Theorem 2.1: E F(w^t) − F* = O(L/t) for ℓ1, linear for a strongly convex P.
struct Smooth {
  /// Registered name (tools: `--solver scd`, provenance).
  static constexpr std::string_view name = "scd";
  static constexpr bool line_search = false;
  static constexpr bool dual_averaging = false;
  static constexpr std::int64_t default_max_epochs = 10000;
  void validate() const {}
};

/// Algorithm 2, adaptive smooth SCD: the step of eq. (6) with a local Lipschitz constant found
/// by backtracking from the generalised second derivative (a coordinate-wise ISTA with
/// backtracking, Beck & Teboulle):
///
///     L ← max(a''(0), ε L_jr)                                                      (eqs. 8–9)
///     repeat: z = prox_{p/L}(w_jr − a'(0)/L) − w_jr                                  (eq. 8 in closed form)
///             accept if  L(w + z e_jr) − L(w) ≤ a'(0) z + (L/2) z²                   (eq. 10 / eq. 7)
///             else L ← min(βL, L_jr)
///
/// a'(0), a''(0) are the coordinate derivative and generalised second derivative of the loss
/// part L (Blondel eq. 6 per coordinate); the ridge μ is inside the prox. The paper's eq. (10)
/// is printed garbled; this is its stated intent, the local Lipschitz condition (7) along the
/// coordinate, with γ = L the adaptive constant growing by β > 1 from a''(0). A constant that
/// reaches L_jr (the global coordinate bound of `Smooth`) is accepted untested: (7) holds there
/// by (4), so at most ⌈log_β(1/ε)⌉ tests are made. The test allows rounding: 10ε_mach times
/// the size of the summed terms. F decreases monotonically.
struct Adaptive {
  static constexpr std::string_view name = "scd-ls";
  static constexpr bool line_search = true;
  static constexpr bool dual_averaging = false;
  static constexpr std::int64_t default_max_epochs = 10000;

  /// β > 1: the backtracking factor of L (eq. 10).
  double beta = 2.0;
  /// ε ∈ (0, 1]: floor of a''(0) relative to the coordinate bound L_jr (eq. 9); keeps the first
  /// trial finite where the loss is locally flat (no active margin).
  double epsilon = 1e-6;

  void validate() const {
    if (!(beta > 1.0) || !std::isfinite(beta)) detail::fail_option("variant.beta", "finite and > 1", beta);
    if (!(epsilon > 0.0 && epsilon <= 1.0)) detail::fail_option("variant.epsilon", "in (0, 1]", epsilon);
  }
};

/// Algorithm 4, nonsmooth SCD: regularised dual averaging (Xiao 2010; Nesterov 2009) on the
/// drawn coordinate. Coordinate k = (j, r) keeps its own clock t_k (the number of times it was
/// drawn) and the running average ḡ_k of the coordinate components of the loss subgradients it
/// saw (step 3); the step is eq. (12) with the prox-function ½(ω − w⁰_k)² centred at the start
/// point (w⁰ = 0 from a cold start, as in the paper):
///
///     w_k ← argmin_ω ω ḡ_k + λ|ω| + (μ/2)ω² + (β_t/(2t))(ω − w⁰_k)²,   t = t_k
///         = prox_{p·t/β_t}(w⁰_k − (t/β_t) ḡ_k),
///     β_t = γ M_j √t           when μ = 0  (ℓ1: Theorem 3.2 i, O(1/√t)),
///     β_t = γ M_j (1 + ln t)   when μ > 0  (strongly convex: Theorem 3.2 ii, O(ln t / t)),
///
/// with M_j = (1/n) Σ_i c_i |x_ij| (bounds |g_k| for losses whose score subgradients are at most
/// 1 in magnitude, e.g. CrammerSinger, Logistic), so γ is scale-free; γ is the one tuning
/// parameter (larger: shorter steps). The theorems bound the objective of the averaged
/// iterate w̄^T = (1/T) Σ_{τ≤T} w^τ over all T steps taken, which is what the solver returns
/// (kept in O(1) per step by lazy per-coordinate sums) unless `average` is false. The iterate
/// itself is sparse (|ḡ_k| ≤ λ gives w_k = 0 exactly); the average is nonzero wherever some
/// iterate was.
struct NonsmoothRDA {
  static constexpr std::string_view name = "scd-rda";
  static constexpr bool line_search = false;
  static constexpr bool dual_averaging = true;
  static constexpr std::int64_t default_max_epochs = 10000;

  /// γ > 0 in β_t (see above).
  double gamma = 0.1;
  /// Return (and evaluate every epoch) the averaged iterate w̄ of Theorem 3.2; false returns
  /// the last iterate, which is sparser but carries no rate guarantee.
  bool average = true;

  void validate() const {
    if (!(gamma > 0.0) || !std::isfinite(gamma)) detail::fail_option("variant.gamma", "finite and > 0", gamma);
  }
};

}  // namespace sparsemc
