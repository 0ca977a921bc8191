#pragma once
/// \file penalties.hpp
/// All penalty policies of objective (1): NoPenalty (ridge only), L1 (lasso / elastic net),
/// L1L2 (group lasso over rows), L1Linf (ℓ1/ℓ∞ over rows). Each carries `lambda` (λ of λR(W))
/// and `mu` (μ of (μ/2)‖W‖²_F) and satisfies sparsemc::Penalty; NoPenalty and L1 are also
/// EntrywisePenalty.
///
/// Example:
/// \code
///   #include <sparsemc/penalty/penalties.hpp>
///   static_assert(sparsemc::Penalty<sparsemc::L1L2, double>);
///   sparsemc::L1 elastic_net{.lambda = 1e-3, .mu = 1e-4};
/// \endcode

#include "concepts.hpp"
#include "l1.hpp"
#include "l1l2.hpp"
#include "l1linf.hpp"
#include "none.hpp"
