#pragma once
/// \file options.hpp
/// The options of `BlockCD<Loss, Penalty, StepRule>` (block_cd.hpp), in their own header so
/// that the solver's engine (detail/engine.hpp) reads them too. Users include block_cd.hpp.

#include <cstdint>

#include "../../core/validate.hpp"

namespace sparsemc {

/// Options of `BlockCD`. Every field has a default; `validate()` names a bad field.
template <class StepRule>
struct BlockCDOptions {
  /// Stop (Status::converged) when the relative duality gap of (1) at the current iterate,
  /// (F − D)/max(|F|, 10⁻¹²) (solver/duality_gap.hpp), is ≤ tol: the returned F is then within
  /// a factor 1 + tol of the optimum. The cheap KKT measure of eq. (10) only decides when the
  /// gap is evaluated (and stays in info.measure as a diagnostic).
  double tol = 1e-3;
  /// Epoch budget; an epoch is d (+1 with an intercept) block updates, fewer when shrinking.
  std::int64_t max_epochs = 1000;
  /// Wall-clock budget in seconds (0 = none), checked after every epoch.
  double time_limit = 0.0;
  /// Seed of the block order (RichtarikTakac draws, TsengYun with `permute`).
  std::uint64_t seed = 0;
  /// Fit an unpenalised intercept b ∈ R^K, updated as one more block (a column of ones).
  bool fit_intercept = false;
  /// Safe shrinking (§5.2.4; Yuan et al. 2010): skip zero rows whose violation is 0 with a
  /// margin, R°(G_j) < λ − M/n (M the largest violation of the previous epoch); the gap is
  /// evaluated (and convergence reported) only after an epoch over every block.
  bool shrinking = true;
  /// Sequential strong rules on a path (`fit_path`; Tibshirani et al., "Strong rules for
  /// discarding predictors in lasso-type problems", JRSS B 74, 2012): at λ_k, a zero row j with
  /// R°(∇_j L(W(λ_{k−1}))) < 2λ_k − λ_{k−1} is left out until the kept rows meet the tolerance;
  /// then a full pass checks every row and any violator re-enters. Safe: convergence is only
  /// reported after a full pass and a certifying gap, as for an unscreened solve.
  bool screening = true;
  /// On a path (`fit_path`), start λ_k (k ≥ 2) from the solutions extrapolated linearly in
  /// ln λ, W_{k−1} + r (W_{k−1} − W_{k−2}) on W_{k−1}'s nonzero rows (b likewise),
  /// r = ln(λ_k/λ_{k−1}) / ln(λ_{k−1}/λ_{k−2}) (1 on a log-uniform grid), when its F at λ_k
  /// is below W_{k−1}'s; else from W_{k−1}. Keeps the nonzero rows of the last two solutions
  /// (twice |supp W| × K numbers).
  bool extrapolate_path = true;
  /// Threads (0 = every available core; core/parallel.hpp). Where (1) separates over the
  /// classes — a one-vs-rest loss (ClassSeparableLoss) with an entrywise penalty (L1, ridge) —
  /// the classes are cut into 2·`threads` ranges solved side by side (detail/class_ranges.hpp):
  /// the iterates depend on the count, the certified optimum does not, and a given count
  /// reproduces its result bit for bit. Otherwise RichtarikTakac updates τ blocks at once on
  /// the threads (richtarik_takac.hpp; a count reproduces its result bit for bit), TsengYun's
  /// cyclic line search runs on one; both evaluate the certificate's product on every thread.
  int threads = 0;
  /// Parameters of the step rule (σ, β, ε, … for TsengYun; none for RichtarikTakac).
  StepRule step_rule{};

  /// Throws std::invalid_argument naming the first field out of range.
  void validate() const {
    detail::require_stopping_rule(tol, max_epochs, time_limit);
    detail::require_nonnegative("threads", threads);
    step_rule.validate();
  }
};

}  // namespace sparsemc
