#pragma once
/// \file bcd.hpp
/// Registers `bcd-ls`: BlockCD<Loss, Penalty, TsengYun>, block coordinate descent over the feature
/// rows of W with the Tseng-Yun line search (Blondel, Seki & Uehara 2013; solver/bcd/block_cd.hpp).
/// Every smooth loss with every row-separable penalty, intercept supported, CSC data. `auto` picks
/// bcd-ls for the smooth losses. bcd_cst.hpp registers the constant-step rule in a translation
/// unit of its own (the two instantiate 16 loss x penalty pairs each).

#include "bcd_base.hpp"

namespace sparsemc::tools {

struct BcdLsFamily : BcdFamilyBase {
  template <class Loss, class Penalty>
  using Solver = BlockCD<Loss, Penalty, TsengYun>;
  static constexpr const char* name = "bcd-ls";
  static constexpr const char* summary =
      "block coordinate descent, cyclic, Tseng-Yun line search (Blondel et al. 2013)";
  /// The workhorse for smooth losses: preferred over fista.
  static int auto_priority(const FitSettings&) { return 10; }
};

template const bool registered<BcdLsFamily, SPARSEMC_REGISTRY_INDEX>;

}  // namespace sparsemc::tools
