#pragma once
/// \file richtarik_takac.hpp
/// The constant-step rule of BlockCD (Blondel, Seki & Uehara 2013, §4.4.2 and Appendix A;
/// Richtárik & Takáč 2012).

#include <string_view>

namespace sparsemc {

/// Richtárik–Takáč randomized block coordinate descent step rule for `BlockCD` ("bcd-cst").
///
/// Each update draws a block uniformly at random (with replacement; an epoch is as many draws
/// as there are blocks) and takes the full proximal step with the block Lipschitz constant,
/// no line search (α = 1):
///
///     W_j ← prox_{(λR + μ/2‖·‖²)/K_j}(W_j − G_j/K_j),   K_j = κ · (1/n) Σ_i c_i x_ij²
///
/// where κ = `Loss::curvature_bound(K)` bounds the largest eigenvalue of the per-sample
/// (generalised) Hessian ∇²ℓ(s) over all s.
///
/// Why K_j is a Lipschitz constant of the block gradient (Appendix A, in our convention):
/// G_j(W) = (1/n) Σ_i c_i x_ij ∇ℓ(s_i). Moving W_j by Δ moves s_i by x_ij Δ, and ∇ℓ is
/// κ-Lipschitz (ℓ is convex with generalised Hessian ⪯ κI, piecewise-quadratic for the hinges),
/// so ‖G_j(W + e_jΔᵀ) − G_j(W)‖ ≤ (1/n) Σ_i c_i |x_ij| κ |x_ij| ‖Δ‖ = K_j ‖Δ‖. Per loss:
///   - SquaredHinge: ∇²ℓ = 2 Σ_{r active} (e_r − e_y)(e_r − e_y)ᵀ ⪯ 2 Σ_{r≠y} (e_r − e_y)(e_r − e_y)ᵀ,
///     whose eigenvalues are {0, 2 (K−2 times), 2K}: κ = 2K, K_j = (2K/n) Σ c_i x_ij², tighter
///     than the paper's 4(K−1)/n Σ x_ij² for K ≥ 3 (equal for K = 2);
///   - OvrSquaredHinge: ∇²ℓ = diag(2[a_r > 0]) ⪯ 2I: κ = 2, K_j = (2/n) Σ c_i x_ij²;
///   - Logistic: ∇²ℓ = diag(p) − ppᵀ ⪯ ½I: κ = ½, K_j = (1/(2n)) Σ c_i x_ij².
/// The ridge term μ is handled exactly inside the prox, so it needs no share of K_j. The bound
/// is checked on sampled pairs in tests/test_bcd.cpp.
///
/// The stopping measure of eq. (10) takes the maximum of the violations met in an epoch.
///
/// \code
///   sparsemc::BlockCD<sparsemc::Logistic, sparsemc::L1, sparsemc::RichtarikTakac> solver(
///       {}, {.lambda = 1e-3}, {.tol = 1e-3, .seed = 7});
/// \endcode
struct RichtarikTakac {
  /// Registered solver name (tools: `--solver bcd-cst`).
  static constexpr std::string_view name = "bcd-cst";
  /// Uniform random blocks; the stopping measure of eq. (10) maxes the epoch's violations.
  static constexpr bool random_blocks = true;
  /// Constant step 1/K_j, no line search.
  static constexpr bool line_search = false;

  /// Nothing to check: the rule has no parameter.
  void validate() const {}
};

}  // namespace sparsemc
