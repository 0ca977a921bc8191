#pragma once
/// \file calibration.hpp
/// Pieces of Algorithm 2 (calibrated least squares) shared by CalibratedLS and Stagewise: the
/// class-indicator targets, the weighted square loss of predictions, and the calibration fit
/// (11) with its safeguard.

#include <Eigen/Core>
#include <Eigen/QR>

#include <cstdint>

#include "../../../model/staged_model.hpp"
#include "../../objective.hpp"

namespace sparsemc::detail::gls {

/// Y (n × K): row i is the indicator of sample i's class set (e_{y_i} for multiclass).
template <class Prob>
ClassMatrix<typename Prob::scalar_type> indicator_targets(const Prob& problem) {
  using Scalar = typename Prob::scalar_type;
  ClassMatrix<Scalar> Y = ClassMatrix<Scalar>::Zero(problem.n_samples(), problem.n_classes());
  for (Eigen::Index i = 0; i < Y.rows(); ++i)
    for (const ClassIndex k : problem.y[static_cast<std::size_t>(i)]) Y(i, k) = Scalar(1);
  return Y;
}

/// (1/n) Σ_i c_i ½‖ŷ_i − y_i‖²: the least-squares loss part of (1) at the predictions Ŷ.
template <class Scalar>
double square_loss(const ClassMatrix<Scalar>& Yhat, const ClassMatrix<Scalar>& Y,
                   const Eigen::Matrix<Scalar, Eigen::Dynamic, 1>& c) {
  const Eigen::Matrix<Scalar, Eigen::Dynamic, 1> r = (Yhat - Y).rowwise().squaredNorm();
  return 0.5 * static_cast<double>(c.dot(r)) / static_cast<double>(Y.rows());
}

/// The calibration step (11): W̃ = argmin Σ_i c_i ‖y_i − W̃ᵀu(ỹ_i)‖² over the basis u of
/// `calibration_basis`, solved from its (mK + 1)-sized normal equations by a complete
/// orthogonal decomposition (the minimum-norm solution when the basis is collinear), then
/// Ŷ = clip(U W̃). Safeguard: if rounding made the fit worse than ỹ itself (W̃ = [I; 0]),
/// that selection is used instead, so the square loss never increases: ‖Ŷ − Y‖ ≤ ‖Ỹ − Y‖
/// (the simplex projection only brings a row closer to its target, which lies in the simplex).
/// Writes Ŷ into `Yhat` and returns W̃.
template <class Scalar>
ClassMatrix<Scalar> calibrate(const ClassMatrix<Scalar>& Ytilde, const ClassMatrix<Scalar>& Y,
                              const Eigen::Matrix<Scalar, Eigen::Dynamic, 1>& c, int degree, ClassMatrix<Scalar>& U,
                              ClassMatrix<Scalar>& Yhat) {
  using Square = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>;
  const Eigen::Index K = Y.cols();
  calibration_basis(Ytilde, degree, U);
  const Square A = U.transpose() * c.asDiagonal() * U;
  const Square B = U.transpose() * c.asDiagonal() * Y;
  ClassMatrix<Scalar> Wc = Eigen::CompleteOrthogonalDecomposition<Square>(A).solve(B);
  Yhat.noalias() = U * Wc;
  if (!(square_loss(Yhat, Y, c) <= square_loss(Ytilde, Y, c)) || !Wc.allFinite()) {
    Wc.setZero(U.cols(), K);
    Wc.topRows(K).setIdentity();
    Yhat = Ytilde;
  }
  clip_rows_to_simplex(Yhat);
  return Wc;
}

}  // namespace sparsemc::detail::gls
