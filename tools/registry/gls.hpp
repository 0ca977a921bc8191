#pragma once
/// \file gls.hpp
/// Registers `gls`: GLS<Link>, generalized least squares (Agarwal et al. 2014, Algorithm 1;
/// solver/gls/gls.hpp) — preconditioned by the factorised second moment (LΣ̂ + μI)⁻¹, for
/// the logistic loss (softmax link) and least squares (identity link: the ridge solution in
/// one step) with the ridge μ only (--penalty none). Meant for dense, ill-conditioned
/// features with d up to a few thousand (Σ̂ is d × d). Never picked by auto.

#include <sparsemc/solver/gls/gls.hpp>

#include "registry.hpp"

namespace sparsemc::tools {

struct GlsFamily {
  template <class Loss, class Penalty>
  using Solver = GLS<Loss>;
  using Losses = TypeList<Logistic, LeastSquares>;
  using Penalties = TypeList<NoPenalty>;
  static constexpr int layout = Eigen::RowMajor;
  static constexpr const char* name = "gls";
  static constexpr const char* summary =
      "generalized least squares (Agarwal et al. 2014, Alg. 1, Nesterov-accelerated): steps preconditioned by "
      "the factorised d x d second moment; stops on the relative gradient norm";
  /// The accelerated variant: fewer iterations at the same cost per iteration.
  template <class Options>
  static void configure(Options& o, const FitSettings&) {
    o.accelerated = true;
  }
  static int auto_priority(const FitSettings&) { return 0; }
};

inline const bool gls_registered = Registry::add(make_spec<GlsFamily>());

}  // namespace sparsemc::tools
