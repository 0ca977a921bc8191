#pragma once
/// \file dataset.hpp
/// A training or test set: X as read (CSR), converted at most once to the other layout when a
/// solver asks for it; the class sets; the label table; optional sample weights and class
/// weights, which combine into the costs c_i of objective (1).
///
/// X is owned (read from a file, built by the caller) or borrowed (`Dataset::borrowing`: arrays
/// somebody else owns, such as a scipy matrix's buffers, which must outlive the data set and
/// are never copied; only the other layout, if a solver needs it, is built and owned).
///
/// \code
///   auto data = sparsemc::io::read_libsvm<double>("dna.scale");
///   auto problem = data.problem<Eigen::ColMajor>();     // CSC, converted once, cached
///   auto result = solver.fit(problem);
///   // over the caller's CSC arrays: a CSC solver walks them in place
///   auto view = sparsemc::Dataset<double>::borrowing(sparsemc::CscView<double>(n, d, indptr, indices, values),
///                                                    std::move(y), encoder);
/// \endcode

#include <algorithm>
#include <cstdint>
#include <map>
#include <numeric>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "feature_map.hpp"
#include "labels.hpp"
#include "problem.hpp"
#include "sparse_view.hpp"

namespace sparsemc {

template <RealScalar Scalar, StorageIndex Index = std::int32_t>
class Dataset {
 public:
  Dataset() = default;
  Dataset(CsrMatrix<Scalar, Index> X, LabelSets y, LabelEncoder encoder)
      : y_(std::move(y)), encoder_(std::move(encoder)) {
    X_csr_.swap(X);  // Eigen 3.4's SparseMatrix has no move constructor: swap instead of copying
    X_csr_.makeCompressed();
    if (static_cast<std::size_t>(X_csr_.rows()) != y_.size())
      throw std::invalid_argument("Dataset: X and y disagree on the number of samples");
  }
  Dataset(const Dataset&) = default;
  Dataset& operator=(const Dataset&) = default;
  /// Moves swap the sparse storage (Eigen 3.4's SparseMatrix copies on "move").
  Dataset(Dataset&& other) noexcept { swap(other); }
  Dataset& operator=(Dataset&& other) noexcept {
    swap(other);
    return *this;
  }
  /// A data set over X that the caller owns and keeps alive (zero copy); y and the encoder as
  /// in the owning constructor. The other layout is converted once, on first use.
  template <int Order>
  [[nodiscard]] static Dataset borrowing(SparseView<Scalar, Index, Order> X, LabelSets y, LabelEncoder encoder) {
    if (static_cast<std::size_t>(X.rows()) != y.size())
      throw std::invalid_argument("Dataset: X and y disagree on the number of samples");
    Dataset out;
    out.y_ = std::move(y);
    out.encoder_ = std::move(encoder);
    if constexpr (Order == Eigen::RowMajor)
      out.borrowed_csr_ = X;
    else
      out.borrowed_csc_ = X, out.has_csr_ = false;
    return out;
  }

  void swap(Dataset& other) noexcept {
    X_csr_.swap(other.X_csr_);
    X_csc_.swap(other.X_csc_);
    std::swap(has_csc_, other.has_csc_);
    std::swap(has_csr_, other.has_csr_);
    std::swap(borrowed_csr_, other.borrowed_csr_);
    std::swap(borrowed_csc_, other.borrowed_csc_);
    std::swap(y_, other.y_);
    std::swap(encoder_, other.encoder_);
    std::swap(sample_weights_, other.sample_weights_);
    std::swap(class_weights_, other.class_weights_);
    std::swap(costs_, other.costs_);
  }

  [[nodiscard]] Index n_samples() const noexcept { return any_view().rows(); }
  [[nodiscard]] Index n_features() const noexcept { return any_view().cols(); }
  [[nodiscard]] ClassIndex n_classes() const noexcept { return y_.n_classes(); }
  [[nodiscard]] Index nnz() const noexcept { return any_view().nnz(); }
  /// True when X is the caller's (Dataset::borrowing).
  [[nodiscard]] bool borrowed() const noexcept { return borrowed_csr_ || borrowed_csc_; }

  /// X row-major: as read or borrowed, or converted from the CSC (borrowed, or kept by
  /// `keep_csc_only`) on the first call only. Not thread-safe.
  [[nodiscard]] CsrView<Scalar, Index> csr() const {
    if (borrowed_csr_) return *borrowed_csr_;
    if (!has_csr_) {
      replace(X_csr_, borrowed_csc_ ? to_csr(*borrowed_csc_) : to_csr(CscView<Scalar, Index>(X_csc_)));
      has_csr_ = true;
    }
    return CsrView<Scalar, Index>(X_csr_);
  }
  /// X row-major as an Eigen sparse matrix (a Map: of the owned storage or the borrowed arrays).
  [[nodiscard]] Eigen::Map<const CsrMatrix<Scalar, Index>> matrix() const { return csr().eigen(); }
  /// X column-major: borrowed, or converted on the first call only. Not thread-safe.
  [[nodiscard]] CscView<Scalar, Index> csc() const {
    if (borrowed_csc_) return *borrowed_csc_;
    if (!has_csc_) {
      replace(X_csc_, to_csc(csr()));
      has_csc_ = true;
    }
    return CscView<Scalar, Index>(X_csc_);
  }

  /// Keeps owned X column-major only: builds the CSC if needed and frees the CSR, which a fit
  /// that walks columns (BlockCD, SCD) never reads — it had stayed beside the CSC for the whole
  /// solve. `csr()` converts back on demand. Borrowed X is left as it is.
  void keep_csc_only() {
    if (borrowed()) return;
    (void)csc();
    replace(X_csr_, {});
    has_csr_ = false;
  }

  /// Renumbers the columns onto the features that occur (data/feature_map.hpp), in place, so
  /// that a solver's per-feature state follows the used features, not the largest index.
  /// Returns the map; `expand_features(model, map)` gives a model fitted here the original
  /// indices. Costs O(nnz) and no copy of owned X; borrowed X is copied (only) when a column goes.
  FeatureMap compact_features() {
    FeatureMap map = FeatureMap::used_by(matrix());
    apply_feature_map(map);
    return map;
  }
  /// Renumbers the columns with another set's map (held-out data with the training map);
  /// entries in features the map lacks are dropped.
  void apply_feature_map(const FeatureMap& map) {
    if (map.identity() && map.n_features() == n_features()) return;
    own();
    (void)csr();  // the map renumbers the row-major copy
    map.apply(X_csr_);
    replace(X_csc_, {});
    has_csc_ = false;
  }

  /// The samples `rows` (in that order, repeats allowed) as a data set of their own: the same
  /// features, label table and class weights, and their sample weights — a fold of a
  /// cross-validation (data/folds.hpp). Costs one copy of their rows of X, row-major, taken from
  /// the row-major X or, when only the column-major one is held (`keep_csc_only`, a borrowed
  /// CSC), gathered from its columns without converting the whole of X back.
  [[nodiscard]] Dataset subset(std::span<const std::int64_t> rows) const {
    LabelSets y(n_classes());
    std::vector<Scalar> weights;
    for (const std::int64_t i : rows) {
      if (i < 0 || i >= n_samples())
        throw std::out_of_range("Dataset::subset: sample " + std::to_string(i) + " is not in [0, " +
                                std::to_string(n_samples()) + ")");
      y.push_back(y_.view()[static_cast<std::size_t>(i)]);
      if (!sample_weights_.empty()) weights.push_back(sample_weights_[static_cast<std::size_t>(i)]);
    }
    Dataset out(borrowed_csr_ || has_csr_ ? rows_of_csr(rows) : rows_of_csc(rows), std::move(y), encoder_);
    out.sample_weights_ = std::move(weights);
    out.class_weights_ = class_weights_;
    out.update_costs();
    return out;
  }

  [[nodiscard]] const LabelSets& labels() const noexcept { return y_; }
  [[nodiscard]] const LabelEncoder& encoder() const noexcept { return encoder_; }
  [[nodiscard]] bool multilabel() const noexcept { return y_.view().multilabel(); }

  /// Sets per-sample weights (size n, finite, >= 0); empty clears them.
  void set_sample_weights(std::vector<Scalar> weights) {
    sample_weights_ = std::move(weights);
    update_costs();
  }
  /// Sets weights by label as read (LIBLINEAR's -wi); a label missing from the table throws.
  /// For multilabel data a sample's class weight is the mean over its classes (1 if none).
  void set_class_weights(const std::map<Label, double>& weights) {
    class_weights_.assign(static_cast<std::size_t>(n_classes()), 1.0);
    for (const auto& [label, w] : weights) {
      if (!(w >= 0.0) || !std::isfinite(w))
        throw std::invalid_argument("class weight of label " + std::to_string(label) + " must be a finite value >= 0");
      class_weights_[static_cast<std::size_t>(encoder_.index_of(label))] = w;
    }
    if (weights.empty()) class_weights_.clear();
    update_costs();
  }
  /// c_i of objective (1): sample weight × class weight; empty when all are 1.
  [[nodiscard]] std::span<const Scalar> costs() const noexcept { return costs_; }

  /// The problem in the layout a solver asks for (`Eigen::ColMajor` or `Eigen::RowMajor`).
  template <int Order>
  [[nodiscard]] Problem<Scalar, Index, Order> problem() const {
    if constexpr (Order == Eigen::ColMajor)
      return {csc(), y_.view(), costs()};
    else
      return {csr(), y_.view(), costs()};
  }

 private:
  /// The shape and nnz of X, whichever layout holds it.
  struct Shape {
    Index rows_, cols_, nnz_;
    [[nodiscard]] Index rows() const noexcept { return rows_; }
    [[nodiscard]] Index cols() const noexcept { return cols_; }
    [[nodiscard]] Index nnz() const noexcept { return nnz_; }
  };
  [[nodiscard]] Shape any_view() const noexcept {
    if (borrowed_csr_) return {borrowed_csr_->rows(), borrowed_csr_->cols(), borrowed_csr_->nnz()};
    if (borrowed_csc_) return {borrowed_csc_->rows(), borrowed_csc_->cols(), borrowed_csc_->nnz()};
    if (!has_csr_)
      return {static_cast<Index>(X_csc_.rows()), static_cast<Index>(X_csc_.cols()), static_cast<Index>(X_csc_.nonZeros())};
    return {static_cast<Index>(X_csr_.rows()), static_cast<Index>(X_csr_.cols()), static_cast<Index>(X_csr_.nonZeros())};
  }
  /// m = value without a copy, the old storage freed: Eigen 3.4's SparseMatrix has no move
  /// assignment, so assigning a temporary copies it and assigning an empty matrix keeps the
  /// old arrays allocated (a dropped CSR had stayed at full size beside the CSC).
  template <class Matrix>
  static void replace(Matrix& m, Matrix value) noexcept {
    m.swap(value);
  }

  /// The rows `rows` of the row-major X, in that order.
  [[nodiscard]] CsrMatrix<Scalar, Index> rows_of_csr(std::span<const std::int64_t> rows) const {
    const CsrView<Scalar, Index> X = csr();
    CsrMatrix<Scalar, Index> out(static_cast<Index>(rows.size()), X.cols());
    Index* outer = out.outerIndexPtr();
    for (std::size_t r = 0; r < rows.size(); ++r)
      outer[r + 1] = outer[r] + static_cast<Index>(X.outer(static_cast<Index>(rows[r])).size());
    out.resizeNonZeros(outer[rows.size()]);
    for (std::size_t r = 0; r < rows.size(); ++r) {
      const auto x = X.outer(static_cast<Index>(rows[r]));
      std::copy(x.indices.begin(), x.indices.end(), out.innerIndexPtr() + outer[r]);
      std::copy(x.values.begin(), x.values.end(), out.valuePtr() + outer[r]);
    }
    return out;
  }

  /// The rows `rows` of X gathered from its columns: a transposition restricted to those rows,
  /// O(nnz(X) + n + |rows|). The columns in increasing order leave each row's indices sorted.
  [[nodiscard]] CsrMatrix<Scalar, Index> rows_of_csc(std::span<const std::int64_t> rows) const {
    const CscView<Scalar, Index> X = csc();
    const auto n = static_cast<std::size_t>(X.rows());
    // The places of each sample in `rows` (repeats allowed): places[first[i] .. first[i + 1]).
    std::vector<std::size_t> first(n + 1, 0), places(rows.size());
    for (const std::int64_t i : rows) ++first[static_cast<std::size_t>(i) + 1];
    std::partial_sum(first.begin(), first.end(), first.begin());
    {
      std::vector<std::size_t> next(first.begin(), first.end() - 1);
      for (std::size_t r = 0; r < rows.size(); ++r) places[next[static_cast<std::size_t>(rows[r])]++] = r;
    }
    std::vector<Index> row_nnz(n, 0);
    for (const Index i : X.inner_indices()) ++row_nnz[static_cast<std::size_t>(i)];
    CsrMatrix<Scalar, Index> out(static_cast<Index>(rows.size()), X.cols());
    Index* outer = out.outerIndexPtr();
    for (std::size_t r = 0; r < rows.size(); ++r) outer[r + 1] = outer[r] + row_nnz[static_cast<std::size_t>(rows[r])];
    out.resizeNonZeros(outer[rows.size()]);
    std::vector<Index> fill(outer, outer + rows.size());
    for (Index j = 0; j < X.cols(); ++j)
      for (auto [i, x] : X.outer(j))
        for (std::size_t p = first[static_cast<std::size_t>(i)]; p < first[static_cast<std::size_t>(i) + 1]; ++p) {
          const Index at = fill[places[p]]++;
          out.innerIndexPtr()[at] = j;
          out.valuePtr()[at] = x;
        }
    return out;
  }

  /// Makes X owned (a copy of borrowed arrays) before an in-place change.
  void own() {
    if (!borrowed()) return;
    if (borrowed_csr_) replace(X_csr_, to_csr(*borrowed_csr_));
    else if (!has_csr_) replace(X_csr_, to_csr(*borrowed_csc_));
    replace(X_csc_, {});
    has_csc_ = false;
    has_csr_ = true;
    borrowed_csr_.reset();
    borrowed_csc_.reset();
  }

  void update_costs() {
    const auto n = static_cast<std::size_t>(n_samples());
    if (!sample_weights_.empty() && sample_weights_.size() != n)
      throw std::invalid_argument("sample weights: " + std::to_string(sample_weights_.size()) +
                                  " weights for " + std::to_string(n) + " samples");
    costs_.clear();
    if (sample_weights_.empty() && class_weights_.empty()) return;
    costs_.assign(n, Scalar(1));
    const auto y = y_.view();
    for (std::size_t i = 0; i < n; ++i) {
      double c = sample_weights_.empty() ? 1.0 : static_cast<double>(sample_weights_[i]);
      if (!class_weights_.empty() && !y[i].empty()) {
        double mean = 0.0;
        for (ClassIndex k : y[i]) mean += class_weights_[static_cast<std::size_t>(k)];
        c *= mean / static_cast<double>(y[i].size());
      }
      costs_[i] = static_cast<Scalar>(c);
    }
  }

  mutable CsrMatrix<Scalar, Index> X_csr_;  ///< valid when has_csr_ (and X is not a borrowed CSR)
  mutable CscMatrix<Scalar, Index> X_csc_;  ///< valid when has_csc_
  mutable bool has_csc_ = false;
  /// false while a borrowed CSC has not been converted, or after keep_csc_only
  mutable bool has_csr_ = true;
  std::optional<CsrView<Scalar, Index>> borrowed_csr_;
  std::optional<CscView<Scalar, Index>> borrowed_csc_;
  LabelSets y_;
  LabelEncoder encoder_;
  std::vector<Scalar> sample_weights_;
  std::vector<double> class_weights_;
  std::vector<Scalar> costs_;
};

}  // namespace sparsemc
