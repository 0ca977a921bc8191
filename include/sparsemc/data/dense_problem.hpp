#pragma once
/// \file dense_problem.hpp
/// A training problem over a dense design matrix: X (n × d, caller-owned memory), the
/// per-sample class sets y and the sample costs c_i of objective (1). The dense counterpart of
/// `Problem` (problem.hpp) for dense features — images, random Fourier features, numpy arrays.
/// Like `Problem` it owns nothing, and like `Problem` its `Order` is the layout a solver walks:
/// row-major (the default, C order) for the solvers that visit X sample by sample or by
/// products (GLS, FISTA, FBPD, FCBCFW, sdm), column-major (Fortran order) for the coordinate
/// solvers that visit it feature by feature (BlockCD, SCD).
///
/// \code
///   Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> Z = ...;  // n × d
///   sparsemc::DenseProblem<double> problem{.X = {Z.data(), Z.rows(), Z.cols()}, .y = labels.view()};
///   Eigen::MatrixXd F = Z;                                                          // column-major
///   sparsemc::DenseProblem<double, Eigen::ColMajor> columns{.X = {F.data(), F.rows(), F.cols()}, .y = labels.view()};
/// \endcode

#include <cmath>
#include <span>
#include <stdexcept>
#include <string>

#include "dense_view.hpp"
#include "labels.hpp"

namespace sparsemc {

template <RealScalar Scalar, int Order = Eigen::RowMajor>
struct DenseProblem {
  using scalar_type = Scalar;
  using index_type = Eigen::Index;
  static constexpr int storage_order = Order;

  DenseView<Scalar, Order> X{nullptr, 0, 0};  ///< n samples × d features
  LabelView y;                            ///< class set of every sample, K = y.n_classes()
  std::span<const Scalar> sample_weights; ///< c_i (sample × class weight); empty means all 1

  [[nodiscard]] Eigen::Index n_samples() const noexcept { return X.rows(); }
  /// The n that (1) divides the summed loss by: the rows (a dense problem is never a part).
  [[nodiscard]] double normaliser() const noexcept { return static_cast<double>(X.rows()); }
  [[nodiscard]] Eigen::Index n_features() const noexcept { return X.cols(); }
  [[nodiscard]] ClassIndex n_classes() const noexcept { return y.n_classes(); }
  /// c_i of objective (1).
  [[nodiscard]] Scalar weight(Eigen::Index i) const noexcept {
    return sample_weights.empty() ? Scalar(1) : sample_weights[static_cast<std::size_t>(i)];
  }

  /// Throws `std::invalid_argument` if the parts do not fit together.
  void validate() const {
    if (static_cast<std::size_t>(X.rows()) != y.size())
      throw std::invalid_argument("DenseProblem: X has " + std::to_string(X.rows()) + " rows but y has " +
                                  std::to_string(y.size()) + " samples");
    if (X.rows() == 0) throw std::invalid_argument("DenseProblem: no samples");
    if (y.n_classes() < 1) throw std::invalid_argument("DenseProblem: y has no classes");
    if (!sample_weights.empty()) {
      if (sample_weights.size() != y.size())
        throw std::invalid_argument("DenseProblem: sample_weights has " + std::to_string(sample_weights.size()) +
                                    " entries for " + std::to_string(y.size()) + " samples");
      for (std::size_t i = 0; i < sample_weights.size(); ++i)
        if (!(sample_weights[i] >= Scalar(0)) || !std::isfinite(sample_weights[i]))
          throw std::invalid_argument("DenseProblem: sample_weights[" + std::to_string(i) +
                                      "] is not a finite value >= 0");
    }
  }
};

/// X as an Eigen expression for `X * W` and `X.transpose() * D` (the map itself).
template <RealScalar Scalar, int Order>
[[nodiscard]] const DenseView<Scalar, Order>& design(const DenseProblem<Scalar, Order>& problem) noexcept {
  return problem.X;
}

}  // namespace sparsemc
