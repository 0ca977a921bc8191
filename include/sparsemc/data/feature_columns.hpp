#pragma once
/// \file feature_columns.hpp
/// The columns of X as (sample, value) slices, for the solvers that visit X feature by feature
/// (BlockCD, SCD): of a CSC `Problem` its own view (each column's stored entries), of a
/// column-major `DenseProblem` a `DenseColumns` (each column as all n samples, zeros included,
/// the values read in place). Both give `SparseSlice`s with ascending sample indices, so a
/// solver written over `feature_columns` runs on a Fortran-ordered dense X without a copy of it.
///
/// \code
///   const auto columns = sparsemc::feature_columns(problem);
///   for (auto [i, x_ij] : columns.outer(j)) scores.row(i) += x_ij * W.row(j);
/// \endcode

#include <Eigen/Core>

#include <cstddef>
#include <numeric>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "../core/traits.hpp"
#include "dense_problem.hpp"
#include "problem.hpp"

namespace sparsemc {

/// The columns of a column-major dense X as slices of all n samples. Every slice shares one
/// list of the sample indices 0 … n−1, which this object holds (n indices, the only memory it
/// takes: the values are X's own). A zero entry is an entry like any other, so the fit is the
/// one of the CSC matrix that stores all n·d entries, bit for bit; against the CSC matrix of the
/// nonzeros only the work counts differ (and with them when the certificate is evaluated, and
/// BlockCD's intercept schedule), not the optimum.
template <RealScalar Scalar>
class DenseColumns {
 public:
  using scalar_type = Scalar;
  using index_type = Eigen::Index;

  explicit DenseColumns(const DenseColView<Scalar>& X) : X_(X), samples_(static_cast<std::size_t>(X.rows())) {
    std::iota(samples_.begin(), samples_.end(), Eigen::Index{0});
  }

  [[nodiscard]] Eigen::Index rows() const noexcept { return X_.rows(); }
  [[nodiscard]] Eigen::Index cols() const noexcept { return X_.cols(); }
  /// Column j: every sample, with x_ij (zero or not).
  [[nodiscard]] SparseSlice<Scalar, Eigen::Index> outer(Eigen::Index j) const noexcept {
    return {samples_, {X_.data() + j * X_.rows(), samples_.size()}};
  }

 private:
  DenseColView<Scalar> X_;
  std::vector<Eigen::Index> samples_;
};

/// The columns of a CSC problem: its view.
template <RealScalar Scalar, StorageIndex Index>
[[nodiscard]] const CscView<Scalar, Index>& feature_columns(const CscProblem<Scalar, Index>& problem) noexcept {
  return problem.X;
}

/// The columns of a column-major dense problem.
template <RealScalar Scalar>
[[nodiscard]] DenseColumns<Scalar> feature_columns(const DenseProblem<Scalar, Eigen::ColMajor>& problem) {
  return DenseColumns<Scalar>(problem.X);
}

/// A problem whose features `feature_columns` walks: CSC or column-major dense (a row-major X
/// scatters a feature over its rows).
template <class Prob>
concept FeatureColumnProblem = requires(const Prob& problem) { feature_columns(problem); };

/// What `feature_columns` gives for a problem, held by value: the CSC view or a DenseColumns.
template <FeatureColumnProblem Prob>
using FeatureColumns = std::remove_cvref_t<decltype(feature_columns(std::declval<const Prob&>()))>;

}  // namespace sparsemc
