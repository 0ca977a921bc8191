#pragma once
/// \file dense_view.hpp
/// Non-owning dense design matrices (n samples × d features) over caller memory, for dense
/// data such as images or random features. Row-major walks samples, column-major features.

#include <Eigen/Core>

#include "../core/traits.hpp"

namespace sparsemc {

/// `Order`: Eigen::RowMajor (samples contiguous, C order) or Eigen::ColMajor (features
/// contiguous, Fortran order).
template <RealScalar Scalar, int Order>
using DenseView = Eigen::Map<const Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Order>>;

template <RealScalar Scalar>
using DenseRowView = DenseView<Scalar, Eigen::RowMajor>;

template <RealScalar Scalar>
using DenseColView = DenseView<Scalar, Eigen::ColMajor>;

}  // namespace sparsemc
