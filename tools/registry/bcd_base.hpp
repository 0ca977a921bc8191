#pragma once
/// \file bcd_base.hpp
/// What the two BlockCD registrations (bcd.hpp: bcd-ls, bcd_cst.hpp: bcd-cst) share: the losses,
/// the penalties and the layout. Not a family of its own (families.hpp does not list it).

#include <sparsemc/solver/bcd/block_cd.hpp>

#include "registry.hpp"

namespace sparsemc::tools {

/// The losses x penalties both step rules accept.
struct BcdFamilyBase {
  /// Every smooth loss with any penalty (BlockCDAccepts, solver/bcd/block_cd.hpp).
  template <class Loss, class Penalty>
  static constexpr bool accepts = BlockCDAccepts<Loss, Penalty>;
  /// Column-major: a block is a column of X (converted once from the file's rows).
  static constexpr int layout = Eigen::ColMajor;
  /// A column-major dense design too (its columns read in place: data/feature_columns.hpp).
  static constexpr bool takes_dense = true;
};

}  // namespace sparsemc::tools
