#pragma once
/// \file losses.hpp
/// Every loss policy of sparsemc and the concepts they model. All are evaluated per sample in
/// score space (s = Wᵀx + b ∈ R^K, y the sample's sorted class set) and weighed by c_i/n in (1).
///
/// | policy            | name              | ℓ(s, y)                                   | multilabel     | models, traits            | bound |
/// |-------------------|-------------------|-------------------------------------------|----------------|---------------------------|-------|
/// | `SquaredHinge`    | squared-hinge     | Σ_{r≠y} (1 − s_y + s_r)_+² (Blondel eq. 2) | no             | Smooth                    | 2K    |
/// | `HuberHinge`      | huber-hinge       | Σ_{r≠y} φ_δ(1 − s_y + s_r), φ_δ Huber     | no             | Smooth                    | K/δ   |
/// | `OvrSquaredHinge` | ovr-squared-hinge | Σ_r (1 − Y_r s_r)_+² (Blondel eq. 11)      | Y_r = ±1       | Smooth, class-separable   | 2     |
/// | `CrammerSinger`   | crammer-singer    | (1 + max_{n∉y} s_n − min_{p∈y} s_p)_+      | separation ranking | Subgradient, separation ranking | — |
/// | `Logistic`        | logistic          | logsumexp(s) − s_y                        | KL(1_y/|y| ‖ softmax) | Smooth, softmax link | ½ |
/// | `LeastSquares`    | least-squares     | ½‖s − 1_y‖²                               | indicator      | Smooth, identity link, class-separable | 1 |
///
/// Every smooth loss is also a SubgradientLoss; every one has a conjugate (ConjugateLoss, the
/// certificate). "bound" is curvature_bound(K). The fused kernels BlockCD and SCD run them with
/// are in the loss headers (loss/kernels/ has the contract and the generic fallback).
///
/// \code
///   #include <sparsemc/loss/losses.hpp>
///   static_assert(sparsemc::SmoothLoss<sparsemc::Logistic, double>);
///   static_assert(sparsemc::SeparationRankingLoss<sparsemc::CrammerSinger>);
/// \endcode

#include "concepts.hpp"
#include "crammer_singer.hpp"
#include "huber_hinge.hpp"
#include "least_squares.hpp"
#include "logistic.hpp"
#include "ovr_squared_hinge.hpp"
#include "squared_hinge.hpp"
