#pragma once
/// \file sdm.hpp
/// Registers `sdm`: SequentialDual<CrammerSinger, Penalty>, the sequential dual method of
/// Keerthi et al. (2008; LIBLINEAR -s 4, solver/sdm/sequential_dual.hpp) for the ridge-only
/// Crammer-Singer SVM: lambda = 0 (any --penalty: at lambda = 0 each is the ridge term alone, so
/// the default l1l2 at --lambda 0 comes here too), mu > 0, multiclass, no intercept (use --bias),
/// CSR data or a dense design (the Python package's numpy arrays, without a copy); and its
/// proximal form for the elastic net (--penalty l1, lambda > 0).
/// `auto` picks it over fcbcfw at lambda = 0: W is dense there and the dual method's class
/// shrinking is what makes large K fast. At lambda > 0 fcbcfw's active sets exploit W's sparsity.

#include <sparsemc/solver/sdm/sequential_dual.hpp>

#include "registry.hpp"

namespace sparsemc::tools {

struct SdmFamily {
  template <class Loss, class Penalty>
  using Solver = SequentialDual<Loss, Penalty>;
  template <class Loss, class Penalty>
  static constexpr bool accepts = SequentialDualAccepts<Loss, Penalty>;
  static constexpr int layout = Eigen::RowMajor;
  /// A dense design too (DenseProblem: its rows walked by their nonzeros, no copy of X).
  static constexpr bool takes_dense = true;
  static constexpr const char* name = "sdm";
  static constexpr const char* summary =
      "sequential dual method for the ridge-only Crammer-Singer SVM (Keerthi et al. 2008, LIBLINEAR -s 4)";
  static std::string requirement(const FitSettings& s) {
    if (s.lambda != 0.0 && s.penalty != "none" && s.penalty != "l1")
      return "needs --lambda 0 (the ridge-only Crammer-Singer SVM) or --penalty l1 (the elastic net)";
    if (!(s.mu > 0.0)) return "needs --mu > 0 (the ridge term of its dual)";
    if (s.multilabel) return "solves multiclass data only (multilabel: fcbcfw)";
    if (s.heldout) return "has no held-out early stop (--heldout: fcbcfw)";
    return "";
  }
  static int auto_priority(const FitSettings& s) {
    const bool ridge_only = s.lambda == 0.0 || s.penalty == "none";
    return ridge_only && requirement(s).empty() ? 20 : 0;
  }
};

template const bool registered<SdmFamily, SPARSEMC_REGISTRY_INDEX>;

}  // namespace sparsemc::tools
