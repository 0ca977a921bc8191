#pragma once
/// \file fista.hpp
/// Registers `fista`: ProxGradient<Loss, Penalty>, accelerated proximal gradient with
/// backtracking and adaptive restart (solver/fista/prox_gradient.hpp). It takes every smooth
/// loss with every penalty, fits an intercept, and is `auto`'s fallback for smooth losses.

#include <sparsemc/solver/fista/prox_gradient.hpp>

#include "registry.hpp"

namespace sparsemc::tools {

struct FistaFamily {
  template <class Loss, class Penalty>
  using Solver = ProxGradient<Loss, Penalty>;
  using Losses = TypeList<SquaredHinge, OvrSquaredHinge, Logistic, LeastSquares>;
  using Penalties = TypeList<L1L2, L1, L1Linf, NoPenalty>;
  /// Row-major: the data as read, no conversion; Eigen parallelises its products in OpenMP builds.
  static constexpr int layout = Eigen::RowMajor;
  static constexpr const char* name = "fista";
  static constexpr const char* summary =
      "accelerated proximal gradient (FISTA, backtracking, adaptive restart); converged = relative duality "
      "gap of (1) <= --tol (default 1e-3)";
  /// The reference solver: chosen by auto only when no specialised solver accepts the problem.
  static int auto_priority(const FitSettings&) { return 1; }
};

template const bool registered<FistaFamily, SPARSEMC_REGISTRY_INDEX>;

}  // namespace sparsemc::tools
