#pragma once
/// \file fista.hpp
/// Registers `fista`: ProxGradient<Loss, Penalty>, accelerated proximal gradient with
/// backtracking and adaptive restart (solver/fista/prox_gradient.hpp). It takes every smooth
/// loss with every penalty, fits an intercept, and is `auto`'s choice for the coupled losses on
/// tall data, its fallback for the other smooth losses. It also fits a dense design.

#include <sparsemc/solver/fista/prox_gradient.hpp>

#include "registry.hpp"

namespace sparsemc::tools {

struct FistaFamily {
  template <class Loss, class Penalty>
  using Solver = ProxGradient<Loss, Penalty>;
  template <class Loss, class Penalty>
  static constexpr bool accepts = ProxGradientAccepts<Loss, Penalty>;
  /// Row-major: the data as read, no conversion; Eigen parallelises its products in OpenMP builds.
  static constexpr int layout = Eigen::RowMajor;
  /// A dense design too (DenseProblem: both products are matrix products, no copy of X).
  static constexpr bool takes_dense = true;
  static constexpr const char* name = "fista";
  static constexpr const char* summary =
      "accelerated proximal gradient (FISTA, backtracking, adaptive restart); converged = relative duality "
      "gap of (1) <= --tol (default 1e-3)";
  /// The multiclass squared hinge and the multinomial logistic loss on tall data (fewer features
  /// than samples): there a visit of bcd-ls re-evaluates the loss of every sample in its column,
  /// so an epoch costs nnz(X)/n times one of fista's gradients, and there its row-by-row steps
  /// converge the gradients slowly: on eight tall sets at two lambdas fista certified 19 of 32
  /// default fits, bcd-ls 9 (all also certified by fista; bcd-ls first in 3 of them: letter and
  /// mnist with the squared hinge) — docs/bcd.md, "auto on tall data". Elsewhere the reference
  /// solver, chosen only when no specialised one accepts the problem.
  static int auto_priority(const FitSettings& s) {
    // HuberHinge shares SquaredHinge's Weston–Watkins block kernel, and with it that cost.
    const bool coupled = s.loss == SquaredHinge::name || s.loss == HuberHinge::name || s.loss == Logistic::name;
    return coupled && s.n_features < s.n_samples ? 11 : 1;
  }
};

template const bool registered<FistaFamily, SPARSEMC_REGISTRY_INDEX>;

}  // namespace sparsemc::tools
