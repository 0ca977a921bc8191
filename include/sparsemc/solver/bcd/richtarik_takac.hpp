#pragma once
/// \file richtarik_takac.hpp
/// The constant-step rule of BlockCD (Blondel, Seki & Uehara 2013, §4.4.2 and Appendix A;
/// Richtárik & Takáč 2014) and its parallel form (Richtárik & Takáč, "Parallel coordinate
/// descent methods for big data optimization", Math. Program. 156, 2016).

#include <cstdint>
#include <string_view>

#include "../../core/validate.hpp"

namespace sparsemc {

/// Richtárik–Takáč randomized block coordinate descent step rule for `BlockCD` ("bcd-cst").
///
/// Serial (τ = 1): each update draws a block uniformly at random (with replacement; an epoch is
/// as many draws as there are blocks) and takes the full proximal step with the block Lipschitz
/// constant, no line search (α = 1):
///
///     W_j ← prox_{(λR + μ/2‖·‖²)/K_j}(W_j − G_j/K_j),   K_j = κ · (1/n) Σ_i c_i x_ij²
///
/// where κ = `Loss::curvature_bound(K)` bounds the largest eigenvalue of the per-sample
/// (generalised) Hessian ∇²ℓ(s): K_j is a Lipschitz constant of the block gradient G_j (eq. 5;
/// Appendix A: moving W_j by Δ moves s_i by x_ij Δ). κ = 2K for SquaredHinge (tighter than the
/// paper's 4(K−1) for K ≥ 3), 2 for OvrSquaredHinge, ½ for Logistic; μ is handled exactly
/// inside the prox. The bound is checked on sampled pairs in tests/test_bcd.cpp.
///
/// Parallel (τ > 1, PCDM): each round draws τ distinct blocks uniformly from the active ones (a
/// τ-nice sampling of m blocks), computes all their steps from the same scores and applies them
/// at once, each with the constant v_j of an expected separable overapproximation (ESO):
///
///     W_j ← prox_{P/v_j}(W_j − G_j/v_j),   v_j = κ (1/n) Σ_i c_i β_i x_ij²,
///     β_i = 1 + (ω_i − 1)(τ − 1)/max(1, m − 1),   ω_i = |{j : x_ij ≠ 0}| (+1 with the intercept).
///
/// With every ω_i replaced by ω = max_i ω_i this is Richtárik & Takáč's β = 1 + (ω − 1)(τ − 1)/
/// max(1, d − 1) times K_j (their ESO of the τ-nice sampling for a function of partial
/// separability degree ω); per sample it is the tighter ESO of Fercoq & Richtárik ("Accelerated,
/// parallel and proximal coordinate descent", SIAM J. Optim. 25, 2015) for Σ_i φ_i(x_iᵀW),
/// derived for (1) in docs/bcd.md. Under it the rounds decrease F in expectation as serial steps
/// would, so an epoch of |active|/τ rounds does about the serial epoch's work, shared by the
/// threads, with steps shortened by the mean of β_i. Each thread owns a contiguous range of
/// samples: it sums the round's block gradients over its samples and moves its samples' scores,
/// so the cached scores never travel between cores; the partial gradients are added in range
/// order. A seed, τ and thread count reproduce the iterates bit for bit; other thread counts
/// give other roundings of the same steps (the same certified optimum).
///
/// The stopping measure of eq. (10) takes the maximum of the violations met in an epoch.
///
/// \code
///   sparsemc::BlockCD<sparsemc::Logistic, sparsemc::L1, sparsemc::RichtarikTakac> solver(
///       {}, {.lambda = 1e-3}, {.tol = 1e-3, .seed = 7, .threads = 4});   // τ chosen for 4 threads
/// \endcode
struct RichtarikTakac {
  /// Registered solver name (tools: `--solver bcd-cst`).
  static constexpr std::string_view name = "bcd-cst";
  /// Uniform random blocks; the stopping measure of eq. (10) maxes the epoch's violations.
  static constexpr bool random_blocks = true;
  /// Constant step 1/K_j (1/v_j in parallel), no line search.
  static constexpr bool line_search = false;

  /// τ, the blocks updated at once (≥ 0). 0 chooses from the data and the solver's thread
  /// count: 1 on one thread, else the largest τ whose ESO lengthens the average step by at most
  /// a quarter, at most enough for the round's work to outweigh its synchronisation (and 1 when
  /// that leaves fewer than two blocks per thread: on data with few features, such as dna, the
  /// steps of one round would touch the same samples). 1 is the serial method.
  std::int32_t tau = 0;

  /// Throws std::invalid_argument naming the field out of range.
  void validate() const { detail::require_nonnegative("step_rule.tau", tau); }
};

}  // namespace sparsemc
