#pragma once
/// \file tseng_yun.hpp
/// The line-search step rule of BlockCD (Blondel, Seki & Uehara 2013, §4.4.1; Tseng & Yun 2009).

#include <cstdint>
#include <string_view>

#include "../../core/validate.hpp"

namespace sparsemc {

/// Tseng–Yun coordinate gradient descent step rule for `BlockCD` ("bcd-ls").
///
/// Blocks are visited cyclically (j = 1, …, d every epoch; with `permute`, in a fresh random
/// order each epoch, an essentially cyclic rule that Tseng & Yun's convergence theory still
/// covers since every block is visited within 2d consecutive updates). Block j is updated by
///
///     L_j = max(‖h_j‖_∞, ε),   h_j = (1/n) Σ_i c_i x_ij² diag ∇²ℓ(s_i)        (eq. 6)
///     W_j*  = prox_{(λR + μ/2‖·‖²)/L_j}(W_j − G_j/L_j),   δ = W_j* − W_j       (eq. 3–4)
///     Δ     = G_jᵀδ + P(W_j + δ) − P(W_j),   P = λR + (μ/2)‖·‖²
///     α ∈ {1, β, β², …} the first with F(W + αδe_jᵀ) − F(W) ≤ σ α Δ            (eq. 7)
///
/// where G_j is the block gradient of the loss part (eq. 5). Tseng & Yun allow any positive
/// definite model H_j in place of L_j I: with L1L2 the model is diag(h_j) (entries floored at
/// 10⁻³ max_k h_jk), W_j* = argmin_u G_jᵀu + ½(u − W_j)ᵀH_j(u − W_j) + P(u), the group prox in
/// that metric (prox/group_soft_threshold.hpp, G2), taken on Σ_k u_k = 0 for losses invariant
/// to a shift of all scores; with OvrSquaredHinge and an entrywise penalty, each entry's own
/// h_jk. The objective difference is summed over supp(x_j) only (the other samples' scores do
/// not move). Since W_j* minimises the model, Δ ≤ −δᵀH_jδ < 0 and every accepted step
/// decreases F: the objective is monotone. If no α ≤ β^max_backtracks passes (it only happens
/// within rounding of a block's optimum), the block is left unchanged for this epoch.
///
/// \code
///   sparsemc::BlockCD<sparsemc::SquaredHinge, sparsemc::L1L2, sparsemc::TsengYun> solver(
///       {}, {.lambda = 1e-3}, {.tol = 1e-4, .step_rule = {.sigma = 0.01, .permute = false}});
/// \endcode
struct TsengYun {
  /// Registered solver name (tools: `--solver bcd-ls`).
  static constexpr std::string_view name = "bcd-ls";
  /// Blocks in cyclic order; the stopping measure of eq. (10) sums the epoch's violations.
  static constexpr bool random_blocks = false;
  /// Armijo backtracking on eq. (7).
  static constexpr bool line_search = true;

  /// σ ∈ (0, 1): sufficient-decrease constant of eq. (7).
  double sigma = 0.01;
  /// β ∈ (0, 1): backtracking factor, α ∈ {1, β, β², …}.
  double beta = 0.5;
  /// ε > 0: floor of L_j = max(‖h_j‖_∞, ε), keeps the step 1/L_j finite on flat blocks.
  double epsilon = 1e-12;
  /// Largest number of backtracking halvings before a block is left unchanged (≥ 0).
  std::int32_t max_backtracks = 30;
  /// Visit the blocks in a new random permutation each epoch (seeded by Options::seed); false
  /// gives the plain cyclic order j = 1, …, d. Permuting is the default: on the bundled dna
  /// data plain cyclic order needs several times more epochs (features come in correlated
  /// groups), and it is no worse on text data such as sector.
  bool permute = true;
  /// After each epoch over a shrunk active set, the `focus_share` of its rows with the largest
  /// violations v_j (eq. 10) are swept `focus_sweeps` more times (0: off). Every active block
  /// is still visited once per epoch, so Tseng & Yun's rule and the monotone descent hold; the
  /// extra visits go where the epoch found the most left to gain (a Gauss–Southwell-style
  /// priority). On text data the slow tail is a few hundred coupled rows: on sector (λ = 1e-4)
  /// the default fit certifies in about 110 epochs instead of 390 (docs/bcd.md). Not at a path
  /// point started on the strong rule's set (Options::screening): warm started, it has no such
  /// tail, and the sweeps cost sector's path more than they saved.
  std::int32_t focus_sweeps = 3;
  /// The share of an epoch's violating rows that the focus sweeps revisit, in (0, 1].
  double focus_share = 0.25;

  /// Throws std::invalid_argument naming the field out of range.
  void validate() const {
    detail::require_in_open_interval("step_rule.sigma", sigma, 0.0, 1.0);
    detail::require_in_open_interval("step_rule.beta", beta, 0.0, 1.0);
    detail::require_positive("step_rule.epsilon", epsilon);
    detail::require_nonnegative("step_rule.max_backtracks", max_backtracks);
    detail::require_nonnegative("step_rule.focus_sweeps", focus_sweeps);
    detail::require_in_half_open_interval("step_rule.focus_share", focus_share, 0.0, 1.0);
  }
};

}  // namespace sparsemc
