#pragma once
/// \file products.hpp
/// The two products over X of a FISTA iteration, S = XW + 1bᵀ and ∇_W L = XᵀD, on `team`
/// threads (implementation detail). One of them scatters rows for either storage order of X
/// (XᵀD for CSR, XW for CSC) and does not split over threads (detail::gather_product); with
/// more than one thread the engine therefore keeps a copy of X in the other order (nnz entries
/// again, a fraction of the n × K and d × K iterates) so that both gather. The sums run in the
/// order of Eigen's serial products, so the iterates are the same at every thread count. A
/// dense X (DenseProblem) needs no copy: both products are matrix products over row blocks
/// (objective.hpp).

#include <Eigen/SparseCore>

#include "../../../core/traits.hpp"
#include "../../../data/dense_problem.hpp"
#include "../../../data/problem.hpp"
#include "../../objective.hpp"

namespace sparsemc::detail {

template <TrainingProblem Prob>
class FistaProducts;

template <RealScalar Scalar, StorageIndex Index, int Order>
class FistaProducts<Problem<Scalar, Index, Order>> {
 public:
  FistaProducts(const Problem<Scalar, Index, Order>& problem, int team) : problem_(problem), team_(team) {
    if (team_ > 1) X_other_order_ = problem.X.eigen();
  }

  /// S = XW + 1bᵀ (an empty b: b = 0).
  void scores(ClassMatrixRef<Scalar> W, ClassVectorRef<Scalar> b, ClassMatrix<Scalar>& S) const {
    if constexpr (Order == Eigen::ColMajor) {
      if (team_ > 1) {
        S.resize(problem_.n_samples(), W.cols());
        gather_product<false>(team_, X_other_order_, W, S);
        if (b.size() > 0) S.rowwise() += b.transpose();
        return;
      }
    }
    compute_scores(problem_, W, b, S, team_);
  }

  /// G = XᵀD.
  void weight_gradient(ClassMatrixRef<Scalar> D, ClassMatrix<Scalar>& G) const {
    if constexpr (Order == Eigen::RowMajor) {
      if (team_ > 1) {
        G.resize(problem_.n_features(), D.cols());
        gather_product<true>(team_, X_other_order_, D, G);
        return;
      }
    }
    sparsemc::weight_gradient(problem_, D, G, team_);
  }

 private:
  static constexpr int other_order = Order == Eigen::RowMajor ? Eigen::ColMajor : Eigen::RowMajor;

  const Problem<Scalar, Index, Order>& problem_;
  int team_;
  Eigen::SparseMatrix<Scalar, other_order, Index> X_other_order_;  // empty on one thread
};

template <RealScalar Scalar>
class FistaProducts<DenseProblem<Scalar>> {
 public:
  FistaProducts(const DenseProblem<Scalar>& problem, int team) : problem_(problem), team_(team) {}

  /// S = XW + 1bᵀ (an empty b: b = 0).
  void scores(ClassMatrixRef<Scalar> W, ClassVectorRef<Scalar> b, ClassMatrix<Scalar>& S) const {
    compute_scores(problem_, W, b, S, team_);
  }

  /// G = XᵀD.
  void weight_gradient(ClassMatrixRef<Scalar> D, ClassMatrix<Scalar>& G) const {
    sparsemc::weight_gradient(problem_, D, G, team_);
  }

 private:
  const DenseProblem<Scalar>& problem_;
  int team_;
};

}  // namespace sparsemc::detail
