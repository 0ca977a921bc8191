#pragma once
/// \file options.hpp
/// The options of `ProxGradient<Loss, Penalty>` (prox_gradient.hpp) and its restart schemes, in
/// their own header so that the solver's engine (detail/engine.hpp) reads them too. Users
/// include prox_gradient.hpp.

#include <cmath>
#include <cstdint>

#include "../../core/validate.hpp"

namespace sparsemc {

/// Adaptive restart of the momentum (O'Donoghue & Candès, "Adaptive restart for accelerated
/// gradient schemes", Found. Comput. Math. 15, 2015): reset t_k = 1 when the step went uphill.
enum class RestartScheme {
  none,      ///< plain FISTA momentum
  function,  ///< restart when F(W_{k+1}) > F(W_k) (the "function scheme"; F never rises twice in a row)
  gradient,  ///< restart when ⟨Y_k − W_{k+1}, W_{k+1} − W_k⟩ > 0, i.e. the gradient mapping at
             ///< Y_k makes an obtuse angle with the momentum (the "gradient scheme")
};

/// Options of `ProxGradient`. Every field has a default; `validate()` names a bad field.
struct ProxGradientOptions {
  /// Converged when the relative duality gap of (1) at the returned point is ≤ tol:
  /// (F − D)/max(|F|, 10⁻¹²) ≤ tol, so F − F* ≤ tol·|F| (solver/duality_gap.hpp). The default
  /// certifies a fit within 0.1 % of the optimum; ask for 1e-6 or less for a reference solution.
  double tol = 1e-3;
  /// Iteration budget; one iteration is one gradient evaluation (XᵀD) plus one objective
  /// evaluation (XW) per backtracking trial.
  std::int64_t max_epochs = 10000;
  /// Wall-clock budget in seconds (0 = none), checked once per iteration.
  double time_limit = 0.0;
  /// Seed of the power method's start vector (the estimate of ‖X̃ᵀCX̃/n‖₂ behind L₀).
  std::uint64_t seed = 0;
  /// Fit an unpenalised intercept b ∈ R^K (scores s_i = Wᵀx_i + b).
  bool fit_intercept = false;
  /// Momentum restart scheme (see RestartScheme). The gradient scheme does not compare
  /// objective values, so it keeps working once they agree to rounding: on dna (logistic,
  /// μ = 10⁻²) it needs 222 iterations for a gradient mapping of 10⁻¹⁰ where the function
  /// scheme needs 373, and the same (±3%) at 10⁻⁸ and above.
  RestartScheme restart = RestartScheme::gradient;
  /// η > 1: L ← ηL while the sufficient-decrease test (3) fails (Beck–Teboulle's backtracking).
  double step_increase = 2.0;
  /// L ← max(L · step_decrease, 10⁻¹² L₀) after every accepted step, in (0, 1]; 1 keeps L
  /// nondecreasing as in Beck–Teboulle, < 1 lets L follow the local curvature down.
  double step_decrease = 0.9;
  /// L₀ = lipschitz_scale · curvature_bound(K) · ‖X̃ᵀCX̃/n‖₂ (> 0); 1 is a global Lipschitz
  /// constant of ∇L, smaller values start with longer steps (backtracking corrects them).
  double lipschitz_scale = 1.0;
  /// Power-method iterations for ‖X̃ᵀCX̃/n‖₂ (≥ 1).
  int power_iterations = 100;
  /// Threads of the passes over X (0 = every available core; core/parallel.hpp): the products
  /// XW and XᵀD split the samples, features or classes, the loss pass fixed chunks of samples,
  /// so that every count gives the same iterates (docs/parallel.md).
  int threads = 0;

  /// Throws std::invalid_argument naming the first field out of range.
  void validate() const {
    detail::require_stopping_rule(tol, max_epochs, time_limit);
    if (!(step_increase > 1.0) || !std::isfinite(step_increase)) detail::fail_option("step_increase", "finite and > 1", step_increase);
    if (!(step_decrease > 0.0 && step_decrease <= 1.0)) detail::fail_option("step_decrease", "in (0, 1]", step_decrease);
    detail::require_positive("lipschitz_scale", lipschitz_scale);
    detail::require_finite("lipschitz_scale", lipschitz_scale);
    detail::require_positive("power_iterations", power_iterations);
    detail::require_nonnegative("threads", threads);
  }
};

}  // namespace sparsemc
