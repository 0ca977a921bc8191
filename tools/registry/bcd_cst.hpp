#pragma once
/// \file bcd_cst.hpp
/// Registers `bcd-cst`: BlockCD<Loss, Penalty, RichtarikTakac>, block coordinate descent over
/// random feature rows with the constant step 1/K_j (Blondel, Seki & Uehara 2013, after
/// Richtarik & Takac; solver/bcd/block_cd.hpp), on several threads their parallel method (τ rows
/// at once, τ chosen from the data: solver/bcd/richtarik_takac.hpp). Same losses, penalties and
/// layout as bcd-ls (bcd.hpp), compiled in a translation unit of its own.

#include "bcd_base.hpp"

namespace sparsemc::tools {

struct BcdCstFamily : BcdFamilyBase {
  template <class Loss, class Penalty>
  using Solver = BlockCD<Loss, Penalty, RichtarikTakac>;
  static constexpr const char* name = "bcd-cst";
  static constexpr const char* summary =
      "block coordinate descent, random blocks, constant step 1/K_j (Richtarik-Takac; on several "
      "threads tau blocks at once)";
  /// Never chosen by auto (bcd-ls does the same job with line search).
  static int auto_priority(const FitSettings&) { return 0; }
};

template const bool registered<BcdCstFamily, SPARSEMC_REGISTRY_INDEX>;

}  // namespace sparsemc::tools
