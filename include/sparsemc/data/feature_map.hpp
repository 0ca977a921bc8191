#pragma once
/// \file feature_map.hpp
/// The features a data set uses, and its columns renumbered onto them. Hashed features
/// (2²⁴–2³¹ buckets) or sparse vocabularies give a largest index far above the number of
/// columns that hold an entry; a solver keeps O(d·K) state (W, gradients, Lipschitz constants,
/// CSC column pointers), so it should see only the d′ used columns. An unused column holds no
/// entry, so its row of W is zero at the optimum of (1) for every loss and penalty, and
/// fitting on the compact columns changes nothing but the numbering:
///
///     X ∈ R^{n×d}  ─compact→  X′ = X P ∈ R^{n×d′},   W = P W′,
///
/// with P ∈ {0,1}^{d×d′} the selection of the used columns, in increasing order.
///
/// \code
///   sparsemc::Dataset<double> train = sparsemc::io::read_libsvm<double>("hashed.txt");
///   const sparsemc::FeatureMap features = train.compact_features();  // X ← X P
///   auto result = solver.fit(train.problem<Eigen::ColMajor>());
///   result.model = sparsemc::expand_features(result.model, features); // W = P W′
/// \endcode

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "sparse_view.hpp"

namespace sparsemc {

/// The increasing list of used columns of a d-column matrix: compact column c is original
/// column used()[c]. The identity map (every column used) costs nothing to apply.
class FeatureMap {
 public:
  FeatureMap() = default;

  /// The columns of X that hold at least one stored entry. Memory follows nnz(X): a bitmap of
  /// d bits when it is no larger than the entries' indices, else a sorted copy of them.
  /// X: a compressed row-major Eigen sparse matrix, or a Map of one.
  template <class RowMajorSparse>
  [[nodiscard]] static FeatureMap used_by(const RowMajorSparse& X) {
    static_assert(RowMajorSparse::IsRowMajor, "FeatureMap::used_by: X must be row-major (CSR)");
    using Index = typename RowMajorSparse::StorageIndex;
    FeatureMap map;
    map.n_features_ = X.cols();
    const std::span<const Index> indices(X.innerIndexPtr(), static_cast<std::size_t>(X.nonZeros()));
    if (static_cast<std::uint64_t>(X.cols()) / 8 <= indices.size_bytes()) {
      std::vector<bool> occurs(static_cast<std::size_t>(X.cols()), false);
      for (Index j : indices) occurs[static_cast<std::size_t>(j)] = true;
      for (std::size_t j = 0; j < occurs.size(); ++j)
        if (occurs[j]) map.used_.push_back(static_cast<std::int64_t>(j));
    } else {
      map.used_.assign(indices.begin(), indices.end());
      std::sort(map.used_.begin(), map.used_.end());
      map.used_.erase(std::unique(map.used_.begin(), map.used_.end()), map.used_.end());
    }
    return map;
  }

  /// Adds features (increasing), e.g. a model's support, so that its rows outside the data
  /// keep a column of their own.
  void add(std::span<const std::int64_t> features) {
    if (features.empty()) return;
    const auto middle = static_cast<std::ptrdiff_t>(used_.size());
    used_.insert(used_.end(), features.begin(), features.end());
    std::inplace_merge(used_.begin(), used_.begin() + middle, used_.end());
    used_.erase(std::unique(used_.begin(), used_.end()), used_.end());
    n_features_ = std::max(n_features_, used_.back() + 1);
  }

  /// d, the number of original columns.
  [[nodiscard]] std::int64_t n_features() const noexcept { return n_features_; }
  /// d′, the number of used columns.
  [[nodiscard]] std::int64_t n_used() const noexcept { return static_cast<std::int64_t>(used_.size()); }
  /// True when every column is used (the renumbering is the identity).
  [[nodiscard]] bool identity() const noexcept { return n_used() == n_features_; }
  /// Original index of every compact column, increasing.
  [[nodiscard]] std::span<const std::int64_t> used() const noexcept { return used_; }

  /// Original column of compact column c.
  [[nodiscard]] std::int64_t original(std::int64_t c) const noexcept { return used_[static_cast<std::size_t>(c)]; }
  /// Compact column of original column j, or −1 when j is not used (O(log d′)).
  [[nodiscard]] std::int64_t compact(std::int64_t j) const noexcept {
    const auto it = std::lower_bound(used_.begin(), used_.end(), j);
    return it != used_.end() && *it == j ? static_cast<std::int64_t>(it - used_.begin()) : -1;
  }

  /// Renumbers the columns of X in place onto the used ones (X ← X P): an entry in an original
  /// column the map lacks is dropped (it meets a zero row of W), and X gets d′ columns. A
  /// dense lookup of d entries is used when it is no larger than X's indices, else a binary
  /// search per entry.
  template <RealScalar Scalar, StorageIndex Index>
  void apply(CsrMatrix<Scalar, Index>& X) const {
    constexpr Index dropped = -1;
    std::span<Index> indices(X.innerIndexPtr(), static_cast<std::size_t>(X.nonZeros()));
    if (static_cast<std::uint64_t>(X.cols()) <= indices.size()) {
      std::vector<Index> compact_of(static_cast<std::size_t>(X.cols()), dropped);
      for (std::size_t c = 0; c < used_.size() && used_[c] < X.cols(); ++c)
        compact_of[static_cast<std::size_t>(used_[c])] = static_cast<Index>(c);
      for (Index& j : indices) j = compact_of[static_cast<std::size_t>(j)];
    } else {
      for (Index& j : indices) j = static_cast<Index>(compact(j));
    }
    X.prune([](Eigen::Index, Eigen::Index j, const Scalar&) { return j != dropped; });
    // Shrinking the inner size leaves X uncompressed (Eigen 3.4); no entry lies beyond it.
    X.conservativeResize(X.rows(), static_cast<Eigen::Index>(used_.size()));
    X.makeCompressed();
  }

 private:
  std::int64_t n_features_ = 0;
  std::vector<std::int64_t> used_;
};

}  // namespace sparsemc
