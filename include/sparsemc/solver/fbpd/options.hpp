#pragma once
/// \file options.hpp
/// The options of `FBPD<Loss, Penalty, Formulation>` (fbpd.hpp) and its formulation tags, in
/// their own header so that the solver's engine (detail/engine.hpp) reads them too. Users
/// include fbpd.hpp.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include "../../core/validate.hpp"

namespace sparsemc {

/// Formulation tag: minimise (1), F = (1/n) Σ c_i ℓ_i + λR(W) + (μ/2)‖W‖² — Chierchia's
/// problem (7), solved by their Algorithm 1. Registered as "fbpd".
struct Regularised {
  static constexpr std::string_view solver_name = "fbpd";
};

/// Formulation tag: minimise λR(W) + (μ/2)‖W‖² subject to (1/n) Σ c_i ℓ_i ≤ η — Chierchia's
/// problem (8), solved by their Algorithm 2 (epigraphical splitting). Registered as "fbpd-epi".
struct Constrained {
  static constexpr std::string_view solver_name = "fbpd-epi";
};

/// FBPD's own cheap measure (each relative), reported as `SolverInfo::measure`. For `fbpd`
/// (Algorithm 1) it only decides when the duality gap of (1) is evaluated where that costs a
/// pass (an intercept, a smooth loss); `converged` always means relative gap of (1) ≤ tol.
/// For `fbpd-epi` (Algorithm 2) it is the stopping test itself.
enum class FBPDStopping {
  /// The duality gap of the pair (7)/(11) — Crammer–Singer, regularised form, no intercept —,
  /// the KKT residual with an intercept or for Algorithm 2, else the primal residual.
  automatic,
  /// Primal and dual residuals of the iteration (the larger of the two relative values).
  residuals,
  /// The paper's §4.2 test: ‖x^{i+1} − x^i‖ / ‖x^{i+1}‖ with x = (W, b) (they use 10⁻⁵).
  relative_change,
};

/// Group ids for `FBPDOptions::feature_groups`: consecutive blocks of `block_size` features
/// (the last one possibly shorter), as the paper's blocks of 5 genes.
inline std::vector<std::int64_t> feature_blocks(std::int64_t n_features, std::int64_t block_size) {
  if (block_size < 1) detail::fail_option("block_size", ">= 1", block_size);
  std::vector<std::int64_t> groups(static_cast<std::size_t>(std::max<std::int64_t>(n_features, 0)));
  for (std::size_t j = 0; j < groups.size(); ++j) groups[j] = static_cast<std::int64_t>(j) / block_size;
  return groups;
}

/// Options of `FBPD`. Every field has a default; `validate()` names a bad field.
struct FBPDOptions {
  /// `fbpd`: stop (converged) when the relative duality gap of (1), (F − D)/max(|F|, 10⁻¹²),
  /// is ≤ tol (class comment, "Stopping"). `fbpd-epi`: when its KKT residual (or the measure
  /// chosen by `stopping`) is ≤ tol.
  double tol = 1e-3;
  /// Iteration budget; one iteration is one pass over X (the products T and Tᵀ, fused).
  std::int64_t max_epochs = 100000;
  /// Wall-clock budget in seconds (0 = none), checked once per iteration.
  double time_limit = 0.0;
  /// Seed of the power method's start vector (the estimate of ‖T‖ or ‖X̃ᵀCX̃/n‖).
  std::uint64_t seed = 0;
  /// Fit an unpenalised intercept b ∈ R^K (the paper's φ(u) = [u, 1]).
  bool fit_intercept = false;
  /// η ≥ 0 of the constrained form: (1/n) Σ c_i ℓ_i ≤ η. Must be set for `Constrained`
  /// (default NaN: unset); ignored by `Regularised`. The paper's η = αL is η = α here.
  double eta = std::numeric_limits<double>::quiet_NaN();
  /// Which measure stops the solve (see FBPDStopping).
  FBPDStopping stopping = FBPDStopping::automatic;
  /// Block structure of the penalty: the group id (≥ 0) of every feature, so that the rows of a
  /// group are penalised jointly (λ‖W_{J,:}‖_F for L1L2, λ max |W_{J,:}| for L1Linf); empty
  /// (default) = every feature row on its own. `feature_blocks(d, 5)` makes the paper's blocks.
  std::vector<std::int64_t> feature_groups{};
  /// With feature_groups: penalise each class's part W_{J,k} of a group separately — the
  /// paper's ℓ_{1,p} norm Σ_k Σ_b ‖x^{(k,b)}‖_p (§2) — instead of the whole block W_{J,:}.
  bool groups_per_class = false;
  /// Diagonal step sizes (Pock & Chambolle 2011, α = 1): a step τ_j per feature row and σ_i
  /// per sample from the absolute column and row sums of T (detail/preconditioner.hpp), scaled
  /// so that ‖Σ^{½} T 𝒯^{½}‖ = 1 by the power method. false: scalar τ, σ with τσ‖T‖² = 1.
  bool preconditioning = true;
  /// γ > 0 of the step sizes τ = γτ⁰/‖A‖, σ = σ⁰/(γ‖A‖) (A = Σ⁰^{½}T𝒯⁰^{½}, τ⁰ = σ⁰ = 1
  /// without preconditioning, so τσ‖T‖² = 1): the primal/dual balance. 0 (default) =
  /// automatic, PDLP's primal weight: γ = ‖Σ⁰^{½} r‖ / ‖𝒯⁰^{½} Tᵀy₀‖ (margins over the loss
  /// subgradient at W = 0, the ratio of the dual and primal "objective" scales).
  double step_balance = 0.0;
  /// Adaptive restarts with primal-weight updates (Applegate et al., "Practical large-scale
  /// linear programming using primal-dual hybrid gradient", NeurIPS 2021 — PDLP): every 64
  /// iterations the current point and, when the duality gap is the measure, the average since
  /// the last restart are compared; the better one becomes the new start when its error fell
  /// below 0.2× the error at the last restart (or below 0.8× and rising, or after 36% of all
  /// iterations), and γ ← √(γ·Δx/Δy) with Δ the primal and dual moves since then (a restart
  /// changes γ only, not the scale s of the steps). Crammer–Singer only (a smooth loss has no
  /// dual block).
  bool restarts = true;
  /// Adaptive step sizes (Applegate et al. 2021, PDLP, §3.1 "adaptive step size"): the scale s
  /// of 𝒯 = γs𝒯⁰, Σ = sΣ⁰/γ starts at 1/‖A‖ and after every iteration k becomes
  ///     min((1 − (k+1)^{−0.3}) s̄, (1 + (k+1)^{−0.6}) s),
  ///     s̄ = (‖Δx‖²_{(γ𝒯⁰)⁻¹} + γ‖Δy‖²_{Σ⁰⁻¹}) / (2|⟨Δy, TΔx⟩|),
  /// never below 1/‖A‖; s̄ is the largest scale at which the step just taken satisfies the local
  /// form of the step condition ‖Δx‖²_{𝒯⁻¹} + ‖Δy‖²_{Σ⁻¹} ≥ 2⟨Δy, TΔx⟩ (s̄ ≥ 1/‖A‖ always, by
  /// Cauchy–Schwarz). A step taken with s > s̄ is undone and retaken with the new s (one more pass;
  /// `SolverInfo::epochs` counts accepted iterations). TΔx and Δy come from the pass (Tx of
  /// consecutive iterates is kept), so the test costs O(dK). This is a heuristic without a
  /// convergence proof for the varying steps (as PDLP states); the fixed points are those of
  /// the fixed-step iteration (the saddle points), and the gap or KKT residual that stops the
  /// solve certifies the returned point whatever the steps. Measured on dna (ℓ1,2, λ = 1e-3):
  /// 4.5× fewer passes to a gap of 1e-5, steps settling near 5/‖A‖. false: s = 1/‖A‖ fixed,
  /// Pock–Chambolle's condition, with the convergence guarantee of the fixed-step iteration.
  /// Crammer–Singer only.
  bool adaptive_steps = true;
  /// The power-method estimate of ‖A‖ (or of ‖X̃ᵀCX̃/n‖ for a smooth loss, squared) is
  /// multiplied by this factor ≥ 1 before the steps are set: the method approaches the norm
  /// from below and the step condition must hold for the true norm.
  double norm_safety = 1.05;
  /// Power-method iterations for ‖A‖ (≥ 1); it stops earlier once the estimate changes by
  /// less than 10⁻⁶ relative.
  int power_iterations = 200;
  /// Relaxation ρ ∈ (0, 2) (Condat 2013, Algorithm 3.2): the step gives (x̃, ỹ) and the
  /// iterate becomes (x, y) ← ρ(x̃, ỹ) + (1 − ρ)(x, y); 1 is the plain iteration. The measure is
  /// taken at (x̃, ỹ) and x̃, whose zeros are exact, is the returned model. Crammer–Singer only
  /// (with the forward step of a smooth loss and τ = 2/β, Condat's bound on ρ is about 1).
  double relaxation = 1.9;
  /// Threads of the sample loops in OpenMP builds (SPARSEMC_USE_OPENMP); 0 = OpenMP's default.
  /// Results are reproducible bit for bit for a given thread count.
  int threads = 0;

  /// Throws std::invalid_argument naming the first field out of range.
  void validate() const {
    detail::require_stopping_rule(tol, max_epochs, time_limit);
    if (!std::isnan(eta) && !(eta >= 0.0 && std::isfinite(eta))) detail::fail_option("eta", "finite and >= 0", eta);
    for (const auto g : feature_groups)
      if (g < 0) detail::fail_option("feature_groups", "group ids >= 0", g);
    detail::require_nonnegative("step_balance", step_balance);
    detail::require_finite("step_balance", step_balance);
    if (!(norm_safety >= 1.0) || !std::isfinite(norm_safety)) detail::fail_option("norm_safety", "finite and >= 1", norm_safety);
    detail::require_positive("power_iterations", power_iterations);
    detail::require_in_open_interval("relaxation", relaxation, 0.0, 2.0);
    detail::require_nonnegative("threads", threads);
  }
};

}  // namespace sparsemc
