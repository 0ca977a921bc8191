#pragma once
/// \file sparse_view.hpp
/// Non-owning compressed sparse views: `CscView` (column-major, what coordinate-descent
/// solvers walk feature by feature) and `CsrView` (row-major, what sample-wise solvers and
/// prediction walk). A view is three arrays — outer pointers (size outer+1), inner indices
/// and values (size nnz) — owned by somebody else: an `Eigen::SparseMatrix`, an
/// `Eigen::Map`, a scipy buffer, a `Dataset`. Nothing is copied.
///
/// \code
///   Eigen::SparseMatrix<double, Eigen::ColMajor, int> A = ...;   // compressed
///   sparsemc::CscView<double, int> X(A);                          // zero copy
///   for (auto [i, x_ij] : X.outer(j)) { ... }                     // column j
///   // raw arrays (validated: pointers monotone, indices in range and increasing):
///   sparsemc::CsrView<float, std::int64_t> Y(n, d, row_ptr, col_idx, vals);
/// \endcode

#include <Eigen/SparseCore>

#include <cstddef>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>

#include "../core/traits.hpp"

namespace sparsemc {

/// One outer slice (a column of a CSC view, a row of a CSR view): sorted inner indices and
/// their values. Iterating yields (index, value) pairs.
template <RealScalar Scalar, StorageIndex Index>
struct SparseSlice {
  std::span<const Index> indices;
  std::span<const Scalar> values;

  [[nodiscard]] std::size_t size() const noexcept { return indices.size(); }
  [[nodiscard]] bool empty() const noexcept { return indices.empty(); }

  struct Entry {
    Index index;
    Scalar value;
  };
  class iterator {
   public:
    iterator(const Index* idx, const Scalar* val) : idx_(idx), val_(val) {}
    Entry operator*() const { return {*idx_, *val_}; }
    iterator& operator++() {
      ++idx_;
      ++val_;
      return *this;
    }
    bool operator==(const iterator& other) const { return idx_ == other.idx_; }

   private:
    const Index* idx_;
    const Scalar* val_;
  };
  [[nodiscard]] iterator begin() const { return {indices.data(), values.data()}; }
  [[nodiscard]] iterator end() const {
    return {indices.data() + indices.size(), values.data() + values.size()};
  }
};

/// A non-owning compressed sparse matrix view; `Order` is `Eigen::ColMajor` (CSC) or
/// `Eigen::RowMajor` (CSR). Use the aliases `CscView` and `CsrView`.
template <RealScalar Scalar, StorageIndex Index, int Order>
class SparseView {
  static_assert(Order == Eigen::ColMajor || Order == Eigen::RowMajor,
                "SparseView: Order must be Eigen::ColMajor (CSC) or Eigen::RowMajor (CSR)");

 public:
  using scalar_type = Scalar;
  using index_type = Index;
  using EigenMatrix = Eigen::SparseMatrix<Scalar, Order, Index>;
  static constexpr int storage_order = Order;
  static constexpr bool is_csc = Order == Eigen::ColMajor;

  SparseView() = default;

  /// Views raw compressed arrays: `outer_ptr` has outer_size()+1 entries starting at 0;
  /// `inner_idx` and `values` have outer_ptr[outer_size()] entries. With `validate` (the
  /// default) the arrays are checked in O(nnz) and a violation throws
  /// `std::invalid_argument` naming the array and the position.
  SparseView(Index rows, Index cols, const Index* outer_ptr, const Index* inner_idx,
             const Scalar* values, bool validate = true)
      : rows_(rows), cols_(cols), outer_(outer_ptr), inner_(inner_idx), values_(values) {
    if (validate) check();
  }

  /// Views a compressed `Eigen::SparseMatrix` of the same storage order. An uncompressed
  /// matrix is rejected (call `makeCompressed()` first).
  explicit SparseView(const EigenMatrix& m)
      : SparseView(static_cast<Index>(m.rows()), static_cast<Index>(m.cols()), m.outerIndexPtr(),
                   m.innerIndexPtr(), m.valuePtr(), false) {
    if (!m.isCompressed())
      throw std::invalid_argument("SparseView: the Eigen::SparseMatrix is not compressed; call makeCompressed() first");
  }

  /// Views an `Eigen::Map<const SparseMatrix>` of the same storage order (e.g. scipy buffers).
  explicit SparseView(const Eigen::Map<const EigenMatrix>& m)
      : SparseView(static_cast<Index>(m.rows()), static_cast<Index>(m.cols()), m.outerIndexPtr(),
                   m.innerIndexPtr(), m.valuePtr(), !m.isCompressed()) {
    if (!m.isCompressed())
      throw std::invalid_argument("SparseView: the Eigen::Map is not compressed (it has inner non-zero counts)");
  }

  /// A matrix of the other storage order cannot be viewed without copying.
  template <int OtherOrder>
    requires(OtherOrder != Order)
  explicit SparseView(const Eigen::SparseMatrix<Scalar, OtherOrder, Index>&) {
    static_assert(OtherOrder == Order,
                  "sparsemc: this view needs the other storage order (CscView takes a ColMajor "
                  "Eigen::SparseMatrix, CsrView a RowMajor one). Convert once with "
                  "sparsemc::to_csc / sparsemc::to_csr, or use a Dataset.");
  }

  [[nodiscard]] Index rows() const noexcept { return rows_; }
  [[nodiscard]] Index cols() const noexcept { return cols_; }
  /// Number of outer slices: columns for CSC, rows for CSR.
  [[nodiscard]] Index outer_size() const noexcept { return is_csc ? cols_ : rows_; }
  /// Length of an outer slice: rows for CSC, columns for CSR.
  [[nodiscard]] Index inner_size() const noexcept { return is_csc ? rows_ : cols_; }
  [[nodiscard]] Index nnz() const noexcept { return outer_ ? outer_[outer_size()] : 0; }

  [[nodiscard]] std::span<const Index> outer_ptr() const noexcept {
    return {outer_, outer_ ? static_cast<std::size_t>(outer_size()) + 1 : 0};
  }
  [[nodiscard]] std::span<const Index> inner_indices() const noexcept {
    return {inner_, static_cast<std::size_t>(nnz())};
  }
  [[nodiscard]] std::span<const Scalar> values() const noexcept {
    return {values_, static_cast<std::size_t>(nnz())};
  }

  /// Outer slice k: column k of a CSC view, row k of a CSR view.
  [[nodiscard]] SparseSlice<Scalar, Index> outer(Index k) const noexcept {
    const auto begin = static_cast<std::size_t>(outer_[k]);
    const auto count = static_cast<std::size_t>(outer_[k + 1] - outer_[k]);
    return {{inner_ + begin, count}, {values_ + begin, count}};
  }

  /// The same arrays as an Eigen expression, for Eigen's sparse products.
  [[nodiscard]] Eigen::Map<const EigenMatrix> eigen() const {
    return {rows_, cols_, nnz(), outer_, inner_, values_};
  }

 private:
  void check() const {
    auto fail = [](const std::string& what) {
      throw std::invalid_argument((is_csc ? "CscView: " : "CsrView: ") + what);
    };
    if (rows_ < 0 || cols_ < 0) fail("negative dimensions");
    if (outer_ == nullptr) fail("outer_ptr is null");
    if (outer_[0] != 0) fail("outer_ptr[0] must be 0, got " + std::to_string(outer_[0]));
    const Index outer_n = outer_size();
    const Index inner_n = inner_size();
    for (Index k = 0; k < outer_n; ++k) {
      if (outer_[k + 1] < outer_[k]) {
        std::ostringstream os;
        os << "outer_ptr is not monotone at position " << k + 1 << " (" << outer_[k] << " then "
           << outer_[k + 1] << ")";
        fail(os.str());
      }
    }
    if (nnz() > 0 && (inner_ == nullptr || values_ == nullptr))
      fail("inner_idx or values is null while nnz > 0");
    for (Index k = 0; k < outer_n; ++k) {
      for (Index p = outer_[k]; p < outer_[k + 1]; ++p) {
        const Index i = inner_[p];
        if (i < 0 || i >= inner_n) {
          std::ostringstream os;
          os << "inner_idx[" << p << "] = " << i << " is out of range [0, " << inner_n << ")";
          fail(os.str());
        }
        if (p > outer_[k] && inner_[p - 1] >= i) {
          std::ostringstream os;
          os << "inner_idx is not strictly increasing within " << (is_csc ? "column " : "row ")
             << k << " at position " << p;
          fail(os.str());
        }
      }
    }
  }

  Index rows_ = 0;
  Index cols_ = 0;
  const Index* outer_ = nullptr;
  const Index* inner_ = nullptr;
  const Scalar* values_ = nullptr;
};

/// Column-major (compressed sparse column) view: the layout of coordinate-descent solvers.
template <RealScalar Scalar, StorageIndex Index = std::int32_t>
using CscView = SparseView<Scalar, Index, Eigen::ColMajor>;

/// Row-major (compressed sparse row) view: the layout of sample-wise solvers and prediction.
template <RealScalar Scalar, StorageIndex Index = std::int32_t>
using CsrView = SparseView<Scalar, Index, Eigen::RowMajor>;

/// Owning compressed matrices, the storage behind views made by conversion or reading.
template <RealScalar Scalar, StorageIndex Index = std::int32_t>
using CscMatrix = Eigen::SparseMatrix<Scalar, Eigen::ColMajor, Index>;
template <RealScalar Scalar, StorageIndex Index = std::int32_t>
using CsrMatrix = Eigen::SparseMatrix<Scalar, Eigen::RowMajor, Index>;

/// CSR → CSC (or back): one O(nnz) transposition into owning storage, compressed.
template <int TargetOrder, RealScalar Scalar, StorageIndex Index, int Order>
Eigen::SparseMatrix<Scalar, TargetOrder, Index> convert(const SparseView<Scalar, Index, Order>& view) {
  Eigen::SparseMatrix<Scalar, TargetOrder, Index> out = view.eigen();
  out.makeCompressed();
  return out;
}

template <RealScalar Scalar, StorageIndex Index, int Order>
CscMatrix<Scalar, Index> to_csc(const SparseView<Scalar, Index, Order>& view) {
  return convert<Eigen::ColMajor>(view);
}

template <RealScalar Scalar, StorageIndex Index, int Order>
CsrMatrix<Scalar, Index> to_csr(const SparseView<Scalar, Index, Order>& view) {
  return convert<Eigen::RowMajor>(view);
}

/// Concept of any compressed sparse view; `DesignMatrix<V, Eigen::ColMajor>` asks for CSC.
template <class V>
concept DesignMatrix = requires { typename V::scalar_type; typename V::index_type; } &&
    std::same_as<V, SparseView<typename V::scalar_type, typename V::index_type, V::storage_order>>;

template <class V>
concept CscDesign = DesignMatrix<V> && V::is_csc;

template <class V>
concept CsrDesign = DesignMatrix<V> && !V::is_csc;

}  // namespace sparsemc
