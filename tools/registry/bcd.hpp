#pragma once
/// \file bcd.hpp
/// Registers `bcd-ls` and `bcd-cst`: BlockCD<Loss, Penalty, TsengYun / RichtarikTakac>, block
/// coordinate descent over the feature rows of W (Blondel, Seki & Uehara 2013;
/// solver/bcd/block_cd.hpp). Every smooth loss with every row-separable penalty, intercept
/// supported, CSC data. `auto` picks bcd-ls for the smooth losses.

#include <sparsemc/solver/bcd/block_cd.hpp>

#include "registry.hpp"

namespace sparsemc::tools {

/// What the two step rules share.
struct BcdFamilyBase {
  using Losses = TypeList<SquaredHinge, OvrSquaredHinge, Logistic, LeastSquares>;
  using Penalties = TypeList<L1L2, L1, L1Linf, NoPenalty>;
  /// Column-major: a block is a column of X (converted once from the file's rows).
  static constexpr int layout = Eigen::ColMajor;
};

struct BcdLsFamily : BcdFamilyBase {
  template <class Loss, class Penalty>
  using Solver = BlockCD<Loss, Penalty, TsengYun>;
  static constexpr const char* name = "bcd-ls";
  static constexpr const char* summary =
      "block coordinate descent, cyclic, Tseng-Yun line search (Blondel et al. 2013); stops on the KKT violation";
  /// The workhorse for smooth losses: preferred over fista.
  static int auto_priority(const FitSettings&) { return 10; }
};

struct BcdCstFamily : BcdFamilyBase {
  template <class Loss, class Penalty>
  using Solver = BlockCD<Loss, Penalty, RichtarikTakac>;
  static constexpr const char* name = "bcd-cst";
  static constexpr const char* summary =
      "block coordinate descent, random blocks, constant step 1/K_j (Richtarik-Takac); stops on the KKT violation";
  /// Never chosen by auto (bcd-ls does the same job with line search).
  static int auto_priority(const FitSettings&) { return 0; }
};

inline const bool bcd_ls_registered = Registry::add(make_spec<BcdLsFamily>());
inline const bool bcd_cst_registered = Registry::add(make_spec<BcdCstFamily>());

}  // namespace sparsemc::tools
