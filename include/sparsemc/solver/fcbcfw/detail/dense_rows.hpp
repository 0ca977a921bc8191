#pragma once
/// \file dense_rows.hpp
/// A dense design read as CSR rows, for FC-BCFW, which indexes a row's entries by position
/// (the prefetches of the exact search, the importance sampling (25), the gathered block
/// entries): `outer(i)` gathers row i's nonzeros, ascending, into the calling thread's buffers
/// and views them; a row without zeros (marked when X is first scanned) is viewed in place.
/// No copy of X: a row with zeros costs one scan per read.

#include <Eigen/Core>

#include <algorithm>
#include <cstddef>
#include <numeric>
#include <span>
#include <vector>

#include "../../../core/parallel.hpp"
#include "../../../core/traits.hpp"
#include "../../../data/dense_view.hpp"
#include "../../../data/sparse_view.hpp"

namespace sparsemc::detail::fcbcfw {

template <RealScalar Scalar>
class GatheredDenseRows {
 public:
  /// `team`: the threads that may call `outer` at once (one buffer each).
  GatheredDenseRows(const DenseRowView<Scalar>& X, int team)
      : X_(X),
        has_zeros_(static_cast<std::size_t>(X.rows())),
        every_feature_(static_cast<std::size_t>(X.cols())),
        buffers_(static_cast<std::size_t>(std::max(team, 1)),
                 Buffer{std::vector<Eigen::Index>(static_cast<std::size_t>(X.cols())),
                        std::vector<Scalar>(static_cast<std::size_t>(X.cols()))}) {
    std::iota(every_feature_.begin(), every_feature_.end(), Eigen::Index{0});
    for (Eigen::Index i = 0; i < X.rows(); ++i) {
      const Eigen::Index nonzeros = (X.row(i).array() != Scalar(0)).count();
      has_zeros_[static_cast<std::size_t>(i)] = nonzeros < X.cols();
      nnz_ += nonzeros;
    }
  }

  [[nodiscard]] Eigen::Index rows() const noexcept { return X_.rows(); }
  [[nodiscard]] Eigen::Index cols() const noexcept { return X_.cols(); }
  /// The nonzeros of X (counted once).
  [[nodiscard]] Eigen::Index nnz() const noexcept { return nnz_; }

  /// Row i's nonzeros, valid until this thread's next call.
  [[nodiscard]] SparseSlice<Scalar, Eigen::Index> outer(Eigen::Index i) const {
    // Inside the engine's own parallel passes the threads are 0..team−1; a serial caller may
    // be thread t of an enclosing team of the user's, and no pass of this solve runs beside it.
    const auto d = static_cast<std::size_t>(X_.cols());
    const std::span<const Scalar> row(X_.data() + i * X_.cols(), d);
    if (!has_zeros_[static_cast<std::size_t>(i)]) return {every_feature_, row};
    Buffer& buffer = buffers_[static_cast<std::size_t>(thread_index()) % buffers_.size()];
    std::size_t count = 0;
    for (std::size_t j = 0; j < d; ++j) {  // without a branch: every entry is written, a nonzero kept
      buffer.indices[count] = static_cast<Eigen::Index>(j);
      buffer.values[count] = row[j];
      count += row[j] != Scalar(0);
    }
    return {std::span<const Eigen::Index>(buffer.indices.data(), count),
            std::span<const Scalar>(buffer.values.data(), count)};
  }

 private:
  struct Buffer {
    std::vector<Eigen::Index> indices;
    std::vector<Scalar> values;
  };
  DenseRowView<Scalar> X_;
  Eigen::Index nnz_ = 0;
  std::vector<char> has_zeros_;  ///< per row: gathered (1) or viewed in place (0)
  std::vector<Eigen::Index> every_feature_;  ///< 0, …, d − 1: the indices of a row without zeros
  /// Per-thread scratch: a view of X stays const to its readers.
  mutable std::vector<Buffer> buffers_;
};

}  // namespace sparsemc::detail::fcbcfw
