#pragma once
/// \file problem.hpp
/// A training problem as solvers take it: the design matrix X (n × d) in the layout the
/// solver needs, the per-sample class sets y and the sample costs c_i of objective (1)
///
///     F(W) = (1/n) Σ_i c_i ℓ(s_i, y_i) + λ R(W) + (μ/2) ‖W‖²,   s_i = Wᵀx_i + b.
///
/// Everything is a view: a Problem owns nothing. `Dataset::problem<Order>()` makes one from
/// data read from a file; users with their own arrays fill it directly.
///
/// \code
///   sparsemc::CscProblem<double> problem{.X = sparsemc::CscView<double>(A), .y = labels.view()};
/// \endcode

#include <cmath>
#include <concepts>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>

#include "labels.hpp"
#include "sparse_view.hpp"

namespace sparsemc {

template <RealScalar Scalar, StorageIndex Index, int Order>
struct Problem {
  using scalar_type = Scalar;
  using index_type = Index;
  using View = SparseView<Scalar, Index, Order>;

  View X;                                 ///< n samples × d features
  LabelView y;                            ///< class set of every sample, K = y.n_classes()
  std::span<const Scalar> sample_weights; ///< c_i (sample × class weight); empty means all 1
  /// n of (1) when these samples are one part of a problem split by samples among processes
  /// (sparsemc/mpi/sample_partition.hpp); 0: this problem is whole, n = n_samples().
  std::int64_t n_total = 0;

  [[nodiscard]] Index n_samples() const noexcept { return X.rows(); }
  /// The n that (1) divides the summed loss by.
  [[nodiscard]] double normaliser() const noexcept {
    return static_cast<double>(n_total > 0 ? n_total : static_cast<std::int64_t>(X.rows()));
  }
  [[nodiscard]] Index n_features() const noexcept { return X.cols(); }
  [[nodiscard]] ClassIndex n_classes() const noexcept { return y.n_classes(); }
  /// c_i of objective (1).
  [[nodiscard]] Scalar weight(Index i) const noexcept {
    return sample_weights.empty() ? Scalar(1) : sample_weights[static_cast<std::size_t>(i)];
  }

  /// Throws `std::invalid_argument` if the parts do not fit together.
  void validate() const {
    if (static_cast<std::size_t>(X.rows()) != y.size())
      throw std::invalid_argument("Problem: X has " + std::to_string(X.rows()) + " rows but y has " +
                                  std::to_string(y.size()) + " samples");
    if (X.rows() == 0) throw std::invalid_argument("Problem: no samples");
    if (y.n_classes() < 1) throw std::invalid_argument("Problem: y has no classes");
    if (n_total != 0 && n_total < static_cast<std::int64_t>(X.rows()))
      throw std::invalid_argument("Problem: n_total = " + std::to_string(n_total) + " is below the part's " +
                                  std::to_string(X.rows()) + " samples");
    if (!sample_weights.empty()) {
      if (sample_weights.size() != y.size())
        throw std::invalid_argument("Problem: sample_weights has " + std::to_string(sample_weights.size()) +
                                    " entries for " + std::to_string(y.size()) + " samples");
      for (std::size_t i = 0; i < sample_weights.size(); ++i)
        if (!(sample_weights[i] >= Scalar(0)) || !std::isfinite(sample_weights[i]))
          throw std::invalid_argument("Problem: sample_weights[" + std::to_string(i) + "] is not a finite value >= 0");
    }
  }
};

/// X as an Eigen expression for `X * W` and `X.transpose() * D` (the sparse map).
template <RealScalar Scalar, StorageIndex Index, int Order>
[[nodiscard]] auto design(const Problem<Scalar, Index, Order>& problem) {
  return problem.X.eigen();
}

/// What the solvers' shared steps (solver/objective.hpp, solver/duality_gap.hpp) read of a
/// training problem: a sparse `Problem` or a `DenseProblem` (dense_problem.hpp). Only the
/// products with X and the walks over its entries are written once per kind.
template <class P>
concept TrainingProblem = requires(const P& p, typename P::index_type i) {
  typename P::scalar_type;
  typename P::index_type;
  p.y;
  { p.n_samples() } -> std::convertible_to<std::int64_t>;
  { p.n_features() } -> std::convertible_to<std::int64_t>;
  { p.n_classes() } -> std::convertible_to<ClassIndex>;
  { p.weight(i) } -> std::convertible_to<typename P::scalar_type>;
  { p.normaliser() } -> std::convertible_to<double>;
  design(p);
};

template <TrainingProblem Prob>
using ProblemScalar = typename Prob::scalar_type;
template <TrainingProblem Prob>
using ProblemIndex = typename Prob::index_type;

template <RealScalar Scalar, StorageIndex Index = std::int32_t>
using CscProblem = Problem<Scalar, Index, Eigen::ColMajor>;
template <RealScalar Scalar, StorageIndex Index = std::int32_t>
using CsrProblem = Problem<Scalar, Index, Eigen::RowMajor>;

}  // namespace sparsemc
