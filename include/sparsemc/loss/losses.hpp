#pragma once
/// \file losses.hpp
/// Every loss policy of sparsemc and the concepts they model. All are evaluated per sample in
/// score space (s = Wᵀx + b ∈ R^K, y the sample's sorted class set) and weighed by c_i/n in (1).
///
/// | policy            | name                | ℓ(s, y)                                   | multilabel | models                        | curvature_bound |
/// |-------------------|---------------------|-------------------------------------------|------------|-------------------------------|-----------------|
/// | `SquaredHinge`    | "squared-hinge"     | Σ_{r≠y} (1 − s_y + s_r)_+²  (Blondel eq. 2) | no         | Smooth, Subgradient           | 2K              |
/// | `OvrSquaredHinge` | "ovr-squared-hinge" | Σ_r (1 − Y_r s_r)_+²  (Blondel eq. 11)     | Y_r = ±1   | Smooth, Subgradient           | 2               |
/// | `CrammerSinger`   | "crammer-singer"    | (1 + max_{n∉y} s_n − min_{p∈y} s_p)_+  (PD-Sparse eq. 2) | separation ranking | Subgradient, Proximable | —  |
/// | `Logistic`        | "logistic"          | logsumexp(s) − s_y                        | KL(1_y/|y| ‖ softmax) | Smooth, Subgradient | ½               |
/// | `LeastSquares`    | "least-squares"     | ½‖s − 1_y‖²                               | indicator  | Smooth, Subgradient           | 1               |
///
/// \code
///   #include <sparsemc/loss/losses.hpp>
///   static_assert(sparsemc::SmoothLoss<sparsemc::Logistic, double>);
///   static_assert(sparsemc::ProximableLoss<sparsemc::CrammerSinger, float>);
/// \endcode

#include "concepts.hpp"
#include "crammer_singer.hpp"
#include "least_squares.hpp"
#include "logistic.hpp"
#include "ovr_squared_hinge.hpp"
#include "squared_hinge.hpp"
