#pragma once
/// \file scd.hpp
/// Registers `scd`, `scd-ls` and `scd-rda`: SCD<Loss, Penalty, Smooth / Adaptive / NonsmoothRDA>,
/// stochastic coordinate descent over the single weights w_jr (Tao, Kong, Chu & Wu 2012;
/// solver/scd/scd.hpp), entrywise penalties (l1, none = ridge; the elastic net through --mu),
/// intercept supported, CSC data. `scd` and `scd-ls` take the smooth losses; `scd-rda` the losses
/// with bounded subgradients (the nonsmooth Crammer-Singer hinge and logistic). `auto` picks scd-ls
/// for ovr-squared-hinge on tall data (LIBLINEAR -s 5's problem, where it beats bcd-ls) and
/// scd-rda for crammer-singer when no dual solver applies.

#include <sparsemc/solver/scd/scd.hpp>

#include "registry.hpp"

namespace sparsemc::tools {

/// What the three variants share.
struct ScdFamilyBase {
  /// Column-major: a coordinate w_jr reads column j of X (converted once from the file's rows).
  static constexpr int layout = Eigen::ColMajor;
  /// A column-major dense design too (its columns read in place: data/feature_columns.hpp).
  static constexpr bool takes_dense = true;
};

/// What the two smooth variants share.
struct ScdSmoothFamilyBase : ScdFamilyBase {
  /// The tools sweep the active coordinates in a fresh random permutation per epoch (LIBLINEAR's
  /// order) instead of the paper's i.i.d. draws: every coordinate is visited once per epoch, and on
  /// sector scd-ls reaches LIBLINEAR -s 5's objective in about 25 % fewer epochs (docs/scd.md).
  /// The library's default (SCDOptions::order) stays the paper's uniform rule.
  template <class Options>
  static void configure(Options& o, const FitSettings&) {
    o.order = CoordinateOrder::permuted_cyclic;
  }
};

struct ScdFamily : ScdSmoothFamilyBase {
  template <class Loss, class Penalty>
  using Solver = SCD<Loss, Penalty, Smooth>;
  template <class Loss, class Penalty>
  static constexpr bool accepts = SCDAccepts<Loss, Penalty, Smooth>;
  static constexpr const char* name = "scd";
  static constexpr const char* summary =
      "stochastic coordinate descent, coordinate Lipschitz steps (Tao et al. 2012, Alg. 1)";
  /// Algorithm 1 is the reference form; scd-ls does the same with adaptive steps.
  static int auto_priority(const FitSettings&) { return 0; }
};

struct ScdLsFamily : ScdSmoothFamilyBase {
  template <class Loss, class Penalty>
  using Solver = SCD<Loss, Penalty, Adaptive>;
  template <class Loss, class Penalty>
  static constexpr bool accepts = SCDAccepts<Loss, Penalty, Adaptive>;
  static constexpr const char* name = "scd-ls";
  static constexpr const char* summary =
      "stochastic coordinate descent, adaptive steps with backtracking (Tao et al. 2012, Alg. 2)";
  /// The one-vs-rest problem (LIBLINEAR -s 5) on tall data (fewer features than samples), where
  /// its per-weight shrinking beats bcd-ls's per-row one; on wide data bcd-ls, whose block visit
  /// reads a column once for all K classes, is about twice as fast (docs/scd.md, "auto's choice").
  static int auto_priority(const FitSettings& s) {
    return s.loss == OvrSquaredHinge::name && s.n_features < s.n_samples ? 11 : 0;
  }
};

struct ScdRdaFamily : ScdFamilyBase {
  template <class Loss, class Penalty>
  using Solver = SCD<Loss, Penalty, NonsmoothRDA>;
  /// The losses whose score subgradients are bounded by 1 (BoundedSubgradientLoss, which SCD
  /// requires of this variant), as Algorithm 4's step β_t = γ M_j √t assumes
  /// (solver/scd/variants.hpp): with the squared losses the gradients grow with the iterate and
  /// the default step diverged (F = 2e34 where F* = 1.92). Those have scd-ls.
  template <class Loss, class Penalty>
  static constexpr bool accepts = SCDAccepts<Loss, Penalty, NonsmoothRDA>;
  static constexpr const char* name = "scd-rda";
  static constexpr const char* summary =
      "stochastic coordinate descent by regularised dual averaging, averaged iterate (Tao et al. 2012, Alg. 4)";
  /// A primal fallback for crammer-singer (the dual solvers need mu > 0).
  static int auto_priority(const FitSettings& s) { return s.loss == CrammerSinger::name ? 2 : 0; }
};

template const bool registered<ScdFamily, SPARSEMC_REGISTRY_INDEX>;
template const bool registered<ScdLsFamily, SPARSEMC_REGISTRY_INDEX>;
template const bool registered<ScdRdaFamily, SPARSEMC_REGISTRY_INDEX>;

}  // namespace sparsemc::tools
