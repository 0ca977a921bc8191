#pragma once
/// \file dense_view.hpp
/// Non-owning dense design matrices (n samples × d features) over caller memory, for dense
/// data such as images or random features. Row-major walks samples, column-major features.

#include <Eigen/Core>

#include "../core/traits.hpp"

namespace sparsemc {

template <RealScalar Scalar>
using DenseRowView = Eigen::Map<const Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>;

template <RealScalar Scalar>
using DenseColView = Eigen::Map<const Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>>;

}  // namespace sparsemc
