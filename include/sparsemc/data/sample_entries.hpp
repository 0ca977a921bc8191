#pragma once
/// \file sample_entries.hpp
/// One sample's features as (feature, value) pairs, for the solvers that visit X sample by
/// sample: a row of a CSR `Problem` (its stored entries) or of a `DenseProblem` (its nonzeros,
/// the zeros skipped). Both walks go up the feature index, so a solver written over
/// `sample_entries` does the same arithmetic on a dense X as on the CSR matrix of its nonzeros,
/// without a copy of X.
///
/// \code
///   for (auto [j, x_ij] : sparsemc::sample_entries(problem, i)) W.row(j) += x_ij * step;
/// \endcode

#include <Eigen/Core>

#include "../core/traits.hpp"
#include "dense_problem.hpp"
#include "problem.hpp"

namespace sparsemc {

/// The nonzero entries of one row of a dense design, ascending.
template <RealScalar Scalar>
class DenseRowEntries {
 public:
  struct Entry {
    Eigen::Index index;
    Scalar value;
  };
  class iterator {
   public:
    iterator(const Scalar* row, Eigen::Index j, Eigen::Index d) : row_(row), j_(j), d_(d) { skip_zeros(); }
    Entry operator*() const { return {j_, row_[j_]}; }
    iterator& operator++() {
      ++j_;
      skip_zeros();
      return *this;
    }
    bool operator==(const iterator& other) const { return j_ == other.j_; }

   private:
    void skip_zeros() {
      while (j_ < d_ && row_[j_] == Scalar(0)) ++j_;
    }
    const Scalar* row_;
    Eigen::Index j_, d_;
  };

  DenseRowEntries(const Scalar* row, Eigen::Index d) noexcept : row_(row), d_(d) {}
  [[nodiscard]] iterator begin() const { return {row_, 0, d_}; }
  [[nodiscard]] iterator end() const { return {row_, d_, d_}; }

 private:
  const Scalar* row_;
  Eigen::Index d_;
};

/// Sample i's stored entries: a CSR row.
template <RealScalar Scalar, StorageIndex Index>
[[nodiscard]] SparseSlice<Scalar, Index> sample_entries(const CsrProblem<Scalar, Index>& problem, Index i) noexcept {
  return problem.X.outer(i);
}

/// Sample i's nonzero entries: a dense row.
template <RealScalar Scalar>
[[nodiscard]] DenseRowEntries<Scalar> sample_entries(const DenseProblem<Scalar>& problem, Eigen::Index i) noexcept {
  return {problem.X.data() + i * problem.X.cols(), problem.X.cols()};
}

/// A problem whose samples `sample_entries` walks: CSR or dense (a CSC X scatters a sample
/// over its columns).
template <class Prob>
concept SampleRowProblem = requires(const Prob& problem, typename Prob::index_type i) { sample_entries(problem, i); };

}  // namespace sparsemc
