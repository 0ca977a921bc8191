#pragma once
/// \file options.hpp
/// `SequentialDualOptions`, the options of `SequentialDual` (sequential_dual.hpp).

#include <cstdint>

#include "../../core/validate.hpp"

namespace sparsemc {

/// Options of `SequentialDual`. Every field has a default; `validate()` names a bad field.
struct SequentialDualOptions {
  /// Stop (Status::converged) when the relative duality gap of (1), (F(W) − D(α))/max(|F|,
  /// 10⁻¹²), is ≤ tol; F and D come from the solver's own primal–dual pair.
  double tol = 1e-3;
  /// Epoch budget; an epoch visits every active sample once. Epochs on shrunk sets are cheap
  /// and the tail to a tight gap can take thousands of them (dna at C = 1: ~1000 for 1e-3).
  std::int64_t max_epochs = 100000;
  /// Wall-clock budget in seconds (0 = none), checked after every epoch.
  double time_limit = 0.0;
  /// Seed of the sample order (a fresh permutation of the active samples every epoch).
  std::uint64_t seed = 0;
  /// The first level of the dual violation max_i (max_m G_im − min_m G_im) that asks for the
  /// certificate at a full pass (LIBLINEAR's `-e`, default 0.1); it is tightened each time the
  /// gap refuses to certify (solver/gap_schedule.hpp).
  double first_trigger = 0.1;
  /// Threads of the certificate's pass over the samples (0 = every core, see core/parallel.hpp);
  /// the epochs are sequential, as the method is. The gap's sums are taken over fixed chunks of
  /// samples, so every thread count gives the same bits.
  int threads = 0;

  /// Throws std::invalid_argument naming the first field out of range.
  void validate() const {
    detail::require_stopping_rule(tol, max_epochs, time_limit);
    detail::require_positive("first_trigger", first_trigger);
    detail::require_nonnegative("threads", threads);
  }
};

}  // namespace sparsemc
