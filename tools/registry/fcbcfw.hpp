#pragma once
/// \file fcbcfw.hpp
/// Registers `fcbcfw`: FCBCFW<CrammerSinger, L1 | NoPenalty>, PD-Sparse's fully-corrective
/// block-coordinate Frank-Wolfe on the dual (Yen et al. 2016; solver/fcbcfw/fcbcfw.hpp), for
/// the Crammer-Singer loss (multilabel: separation ranking) with the elastic net, mu > 0,
/// no intercept (use --bias), CSR data or a dense design. `auto` picks it for crammer-singer
/// when mu > 0, unless sdm takes the problem (lambda = 0 on multiclass data:
/// tools/registry/sdm.hpp).

#include <sparsemc/solver/fcbcfw/fcbcfw.hpp>

#include "registry.hpp"

namespace sparsemc::tools {

struct FcbcfwFamily {
  template <class Loss, class Penalty>
  using Solver = FCBCFW<Loss, Penalty>;
  template <class Loss, class Penalty>
  static constexpr bool accepts = FCBCFWAccepts<Loss, Penalty>;
  static constexpr int layout = Eigen::RowMajor;
  /// A dense design too (DenseProblem: its rows read as CSR rows of their nonzeros, no copy of X).
  static constexpr bool takes_dense = true;
  static constexpr const char* name = "fcbcfw";
  static constexpr const char* summary =
      "PD-Sparse fully-corrective block-coordinate Frank-Wolfe on the dual (Yen et al. 2016)";
  /// Its fit returns the held-out early stop's best model (--heldout).
  static constexpr bool returns_heldout_best = true;
  /// The dual needs the ridge term.
  static std::string requirement(const FitSettings& s) { return s.mu > 0 ? "" : "needs --mu > 0 (the ridge term of its dual)"; }
  static int auto_priority(const FitSettings& s) { return s.mu > 0 ? 10 : 0; }
};

template const bool registered<FcbcfwFamily, SPARSEMC_REGISTRY_INDEX>;

}  // namespace sparsemc::tools
