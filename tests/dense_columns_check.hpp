#pragma once
/// What a coordinate solver (BlockCD, SCD) must give on a column-major dense X, which it walks
/// in place as all n samples of each column (data/feature_columns.hpp): the fit of the CSC
/// matrix that stores every entry, zeros too — the same model and epochs, F and the gap up to
/// the rounding of the dense products X·W and Xᵀ·D —, the certified optimum of the CSC matrix of
/// the nonzeros (whose work counts, and so the certificate's schedule, differ), and a warm start
/// at its model that converges.

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include <sparsemc/core/status.hpp>
#include <sparsemc/data/dense_problem.hpp>

#include "random_problem.hpp"

namespace sparsemc_test {

template <class Scalar, class Solver>
void check_dense_columns_fit(const RandomProblem<Scalar>& rp, const Solver& solver, double tol) {
  const auto columns = rp.dense_columns();
  const DenseProblem<Scalar, Eigen::ColMajor> dense{{columns.X.data(), columns.X.rows(), columns.X.cols()},
                                                     rp.labels.view(), rp.weights};
  const CscProblem<Scalar> stored{CscView<Scalar>(columns.stored), rp.labels.view(), rp.weights};
  const double rounding = 100 * std::numeric_limits<Scalar>::epsilon();
  const auto a = solver.fit(stored), b = solver.fit(dense), sparse = solver.fit(rp.problem());
  REQUIRE(b.info.status == Status::converged);
  CHECK(a.model.dense() == b.model.dense());
  CHECK(a.info.epochs == b.info.epochs);
  CHECK(std::abs(a.info.objective - b.info.objective) <= rounding * a.info.objective);
  CHECK(std::abs(a.info.duality_gap - b.info.duality_gap) <= rounding * a.info.objective);
  CHECK(std::abs(b.info.objective - sparse.info.objective) <= 2 * tol * sparse.info.objective);
  const auto warm = solver.fit(dense, b.model);
  CHECK(warm.info.status == Status::converged);
  CHECK(warm.info.objective <= b.info.objective * (1 + tol));
}

}  // namespace sparsemc_test
