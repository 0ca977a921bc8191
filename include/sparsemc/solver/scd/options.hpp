#pragma once
/// \file options.hpp
/// The options of `SCD<Loss, Penalty, Variant>` (scd.hpp) and its coordinate orders, in their
/// own header so that the solver's engine (detail/engine.hpp) reads them too. Users include
/// scd.hpp.

#include <cstdint>

#include "../../core/validate.hpp"

namespace sparsemc {

/// How SCD picks its coordinates.
enum class CoordinateOrder {
  uniform,          ///< i.i.d. uniform draws (with replacement) — the paper's rule; an epoch is N draws
  permuted_cyclic,  ///< every coordinate once per epoch, in a fresh random permutation
};

/// Options of `SCD`. Every field has a default; `validate()` names a bad field.
template <class Variant>
struct SCDOptions {
  /// Stop (`converged`) when the relative duality gap of (1) at the returned iterate is ≤ tol
  /// (solver/duality_gap.hpp): (F − D)/max(|F|, 10⁻¹²) ≤ tol certifies F − F* ≤ tol·|F|. The
  /// cheap measure (info.measure) only decides when the gap is evaluated.
  double tol = 1e-3;
  /// Epoch budget; an epoch is N coordinate steps, N the number of (active) coordinates.
  std::int64_t max_epochs = Variant::default_max_epochs;
  /// Wall-clock budget in seconds (0 = none), checked after every epoch.
  double time_limit = 0.0;
  /// Seed of the coordinate draws; a seed reproduces the result bit for bit.
  std::uint64_t seed = 0;
  /// Fit an unpenalised intercept b ∈ R^K; b_r are K more coordinates (columns of ones).
  bool fit_intercept = false;
  /// Uniform i.i.d. draws (Algorithms 1, 2, 4) or a random permutation per epoch.
  CoordinateOrder order = CoordinateOrder::uniform;
  /// Smooth variants: drop a zero coordinate whose violation is 0 with a margin,
  /// |∂L/∂w_jr| + M/n ≤ λ (M the largest violation of the previous epoch; LIBLINEAR's rule),
  /// from the draws; an exact check over every coordinate brings back the ones that violate.
  /// Ignored by RDA.
  bool shrinking = true;
  /// K = 2 with the one-vs-rest loss and one class per sample: solve the single binary problem
  /// (the paper's setting) and return W = [−u, u] (see SCD's comment). Exact; halves the work.
  bool binary_mirror = true;
  /// Threads (0 = every available core; core/parallel.hpp). Algorithms 1 and 2 on a one-vs-rest
  /// loss (ClassSeparableLoss) with K > 2 cut the classes into 2·`threads` ranges solved side by
  /// side, each with draws seeded from `seed` and its range (detail/class_ranges.hpp): the
  /// iterates depend on the count, the certified optimum does not, and a seed and a count
  /// reproduce the result bit for bit. Everything else runs on one thread.
  int threads = 0;
  /// The variant's own parameters (β, ε for Adaptive; γ, average for NonsmoothRDA).
  Variant variant{};

  /// Throws std::invalid_argument naming the first field out of range.
  void validate() const {
    detail::require_stopping_rule(tol, max_epochs, time_limit);
    detail::require_nonnegative("threads", threads);
    variant.validate();
  }
};

}  // namespace sparsemc
