#pragma once
/// \file class_matrix.hpp
/// The dense matrices with one column per class that solvers, losses' kernels and models share.

#include <Eigen/Core>

#include "traits.hpp"

namespace sparsemc {

/// Dense row-major matrix with one column per class: W (d × K), scores S and score
/// gradients D (n × K), weight gradients G (d × K). The same type as LinearModel::RowMatrix.
template <RealScalar Scalar>
using ClassMatrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// A vector over the K classes (the intercept b and its gradient).
template <RealScalar Scalar>
using ClassVector = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;

}  // namespace sparsemc
