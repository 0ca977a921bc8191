#pragma once
/// \file fbpd.hpp
/// Registers `fbpd` and `fbpd-epi`: FBPD<Loss, Penalty, Regularised | Constrained>, the
/// forward-backward primal-dual method of Chierchia et al. 2015 (solver/fbpd/fbpd.hpp).
///   fbpd      Algorithm 1: objective (1) with the exact Crammer-Singer hinge (its dual blocks
///             are projected onto simplices) or a smooth loss (forward step); every penalty.
///             `auto` picks it for crammer-singer with l1l2 or l1linf (no other solver takes
///             them), and with l1/none when fcbcfw cannot run (mu = 0).
///   fbpd-epi  Algorithm 2: lambda R(W) + (mu/2)||W||^2 subject to (1/n) sum_i c_i l_i <= eta
///             (--eta), Crammer-Singer only (epigraphical projections).
/// Both fit an intercept (--intercept), on CSR data or a dense design (the Python package's numpy
/// arrays, without a copy).

#include <sparsemc/solver/fbpd/fbpd.hpp>

#include "registry.hpp"

namespace sparsemc::tools {

struct FbpdFamily {
  template <class Loss, class Penalty>
  using Solver = FBPD<Loss, Penalty, Regularised>;
  template <class Loss, class Penalty>
  static constexpr bool accepts = FBPDAccepts<Loss, Penalty, Regularised>;
  /// Row-major: one fused pass over the samples per iteration.
  static constexpr int layout = Eigen::RowMajor;
  /// A dense design too (DenseProblem: its rows walked by their nonzeros, no copy of X).
  static constexpr bool takes_dense = true;
  static constexpr const char* name = "fbpd";
  static constexpr const char* summary =
      "forward-backward primal-dual (Chierchia et al. 2015, Algorithm 1): exact Crammer-Singer hinge or a smooth "
      "loss with any penalty";
  static int auto_priority(const FitSettings& s) {
    if (s.loss != CrammerSinger::name) return 0;  // smooth losses: bcd-ls and fista do better
    return s.penalty == L1L2::name || s.penalty == L1Linf::name ? 10 : 5;
  }
};

struct FbpdEpiFamily {
  template <class Loss, class Penalty>
  using Solver = FBPD<Loss, Penalty, Constrained>;
  template <class Loss, class Penalty>
  static constexpr bool accepts = FBPDAccepts<Loss, Penalty, Constrained>;
  static constexpr int layout = Eigen::RowMajor;
  static constexpr bool takes_dense = true;
  static constexpr const char* name = "fbpd-epi";
  static constexpr const char* summary =
      "forward-backward primal-dual with epigraphical splitting (Chierchia et al. 2015, Algorithm 2): "
      "minimises lambda R(W) + mu/2 ||W||^2 subject to the mean hinge loss <= --eta";
  /// It solves another problem than (1): its stop certifies that one.
  static constexpr const char* stop =
      "certifies its own constrained problem (relative KKT residual <= --tol), not (1)";
  static std::string requirement(const FitSettings& s) { return s.eta ? "" : "needs --eta (the bound on the mean loss)"; }
  template <class Options>
  static void configure(Options& o, const FitSettings& s) {
    if (s.eta) o.eta = *s.eta;
  }
  /// Only on request: the bound eta must be chosen by the user.
  static int auto_priority(const FitSettings&) { return 0; }
};

template const bool registered<FbpdFamily, SPARSEMC_REGISTRY_INDEX>;
template const bool registered<FbpdEpiFamily, SPARSEMC_REGISTRY_INDEX>;

}  // namespace sparsemc::tools
