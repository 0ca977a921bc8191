#pragma once
/// \file linear_model.hpp
/// The one model type every solver returns: W ∈ R^{d×K} stored row-sparse (only the feature
/// rows with a nonzero weight — sparse models are tiny), an unpenalised intercept b ∈ R^K,
/// the label table, and the provenance of the fit. Scores are s = Wᵀx + b.
///
/// \code
///   sparsemc::LinearModel<double> model(W_dense, b, encoder.labels());   // keeps nonzero rows
///   auto scores = model.decision_function(test.csr());                  // n × K
///   std::vector<sparsemc::Label> yhat = model.predict(test.csr());
/// \endcode

#include <Eigen/Core>

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "../core/status.hpp"
#include "../core/traits.hpp"
#include "../data/sparse_view.hpp"

namespace sparsemc {

/// How a model was made; saved with it, printed by the tools.
struct ModelProvenance {
  std::string loss;     ///< "squared-hinge", "ovr-squared-hinge", "crammer-singer", "logistic", "least-squares"
  std::string penalty;  ///< "l1", "l1l2", "l1linf", "none"
  std::string solver;   ///< registered solver name, e.g. "fista"
  double lambda = 0.0;  ///< λ of (1)
  double mu = 0.0;      ///< μ of (1)
  std::string status;   ///< to_string(Status) of the solve
  /// LIBLINEAR-style constant feature: when >= 0, the last feature (index n_features()−1) is
  /// a column of this value appended to every sample; predict appends it too.
  double bias = -1.0;
};

template <RealScalar Scalar>
class LinearModel {
 public:
  using scalar_type = Scalar;
  using RowMatrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using Vector = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;

  LinearModel() = default;

  /// From a dense W (d × K, row j = feature j's weights over the K classes); only rows with a
  /// nonzero entry are stored. An empty intercept means b = 0.
  LinearModel(const Eigen::Ref<const RowMatrix>& W, Vector intercept, std::vector<Label> labels)
      : n_features_(W.rows()), intercept_(std::move(intercept)), labels_(std::move(labels)) {
    const Eigen::Index K = W.cols();
    check_shapes(K);
    std::int64_t kept = 0;
    for (Eigen::Index j = 0; j < W.rows(); ++j) kept += (W.row(j).array() != Scalar(0)).any() ? 1 : 0;
    support_.reserve(static_cast<std::size_t>(kept));
    rows_.resize(kept, K);
    Eigen::Index r = 0;
    for (Eigen::Index j = 0; j < W.rows(); ++j) {
      if ((W.row(j).array() != Scalar(0)).any()) {
        support_.push_back(j);
        rows_.row(r++) = W.row(j);
      }
    }
    build_row_of_feature();
  }

  /// From stored rows: `support` (strictly increasing feature indices < n_features) and the
  /// matching rows of W (|support| × K).
  LinearModel(std::int64_t n_features, std::vector<std::int64_t> support, RowMatrix rows,
              Vector intercept, std::vector<Label> labels)
      : n_features_(n_features), support_(std::move(support)), rows_(std::move(rows)),
        intercept_(std::move(intercept)), labels_(std::move(labels)) {
    check_shapes(rows_.cols());
    if (static_cast<Eigen::Index>(support_.size()) != rows_.rows())
      throw std::invalid_argument("LinearModel: support and rows disagree in length");
    for (std::size_t r = 0; r < support_.size(); ++r) {
      if (support_[r] < 0 || support_[r] >= n_features_ || (r > 0 && support_[r] <= support_[r - 1]))
        throw std::invalid_argument("LinearModel: support must be strictly increasing feature indices in [0, n_features)");
    }
    build_row_of_feature();
  }

  [[nodiscard]] std::int64_t n_features() const noexcept { return n_features_; }
  [[nodiscard]] ClassIndex n_classes() const noexcept { return static_cast<ClassIndex>(labels_.size()); }
  /// Feature indices of the stored (nonzero) rows, increasing.
  [[nodiscard]] const std::vector<std::int64_t>& support() const noexcept { return support_; }
  /// The stored rows of W, |support| × K, in the order of support().
  [[nodiscard]] const RowMatrix& rows() const noexcept { return rows_; }
  /// b ∈ R^K (empty when the model has no intercept).
  [[nodiscard]] const Vector& intercept() const noexcept { return intercept_; }
  [[nodiscard]] bool has_intercept() const noexcept { return intercept_.size() > 0; }
  /// Class k's label as read.
  [[nodiscard]] const std::vector<Label>& labels() const noexcept { return labels_; }
  [[nodiscard]] ModelProvenance& provenance() noexcept { return provenance_; }
  [[nodiscard]] const ModelProvenance& provenance() const noexcept { return provenance_; }

  /// Number of nonzero weights.
  [[nodiscard]] std::int64_t nnz() const noexcept { return (rows_.array() != Scalar(0)).count(); }
  /// Number of nonzero feature rows.
  [[nodiscard]] std::int64_t nnz_rows() const noexcept { return static_cast<std::int64_t>(support_.size()); }

  /// Row r of W for feature j, or −1 if the row is zero.
  [[nodiscard]] std::int64_t row_of_feature(std::int64_t j) const noexcept {
    return (j >= 0 && j < n_features_) ? row_of_feature_[static_cast<std::size_t>(j)] : -1;
  }

  /// W as a dense d × K matrix.
  [[nodiscard]] RowMatrix dense() const {
    RowMatrix W = RowMatrix::Zero(n_features_, n_classes());
    for (std::size_t r = 0; r < support_.size(); ++r) W.row(support_[r]) = rows_.row(static_cast<Eigen::Index>(r));
    return W;
  }

  /// Scores S = XW + 1bᵀ (n × K) for a CSR X. Features at or beyond n_features() (or
  /// beyond the data columns when a bias feature is set) are ignored, like LIBLINEAR; the bias
  /// feature, if any, is appended.
  template <StorageIndex Index>
  [[nodiscard]] RowMatrix decision_function(const CsrView<Scalar, Index>& X) const {
    RowMatrix S(X.rows(), n_classes());
    const std::int64_t data_features = provenance_.bias >= 0 ? n_features_ - 1 : n_features_;
    const std::int64_t bias_row = provenance_.bias >= 0 ? row_of_feature(n_features_ - 1) : -1;
    for (Index i = 0; i < X.rows(); ++i) {
      auto s = S.row(i);
      if (has_intercept()) s = intercept_.transpose();
      else s.setZero();
      for (auto [j, x_ij] : X.outer(i)) {
        if (j >= data_features) break;
        const std::int64_t r = row_of_feature_[static_cast<std::size_t>(j)];
        if (r >= 0) s += x_ij * rows_.row(r);
      }
      if (bias_row >= 0) s += static_cast<Scalar>(provenance_.bias) * rows_.row(bias_row);
    }
    return S;
  }

  /// Predicted class index per sample: argmax of the scores (first maximum on ties).
  template <StorageIndex Index>
  [[nodiscard]] std::vector<ClassIndex> predict_classes(const CsrView<Scalar, Index>& X) const {
    const RowMatrix S = decision_function(X);
    std::vector<ClassIndex> out(static_cast<std::size_t>(S.rows()));
    for (Eigen::Index i = 0; i < S.rows(); ++i) {
      Eigen::Index k = 0;
      S.row(i).maxCoeff(&k);
      out[static_cast<std::size_t>(i)] = static_cast<ClassIndex>(k);
    }
    return out;
  }

  /// Predicted label (as read) per sample.
  template <StorageIndex Index>
  [[nodiscard]] std::vector<Label> predict(const CsrView<Scalar, Index>& X) const {
    const auto classes = predict_classes(X);
    std::vector<Label> out(classes.size());
    for (std::size_t i = 0; i < classes.size(); ++i) out[i] = labels_[static_cast<std::size_t>(classes[i])];
    return out;
  }

 private:
  void check_shapes(Eigen::Index K) const {
    if (K != static_cast<Eigen::Index>(labels_.size()))
      throw std::invalid_argument("LinearModel: W has " + std::to_string(K) + " columns but there are " +
                                  std::to_string(labels_.size()) + " labels");
    if (intercept_.size() != 0 && intercept_.size() != K)
      throw std::invalid_argument("LinearModel: intercept must be empty or have K entries");
  }
  void build_row_of_feature() {
    row_of_feature_.assign(static_cast<std::size_t>(n_features_), -1);
    for (std::size_t r = 0; r < support_.size(); ++r)
      row_of_feature_[static_cast<std::size_t>(support_[r])] = static_cast<std::int64_t>(r);
  }

  std::int64_t n_features_ = 0;
  std::vector<std::int64_t> support_;
  RowMatrix rows_;
  Vector intercept_;
  std::vector<Label> labels_;
  std::vector<std::int64_t> row_of_feature_;
  ModelProvenance provenance_;
};

/// What every solver's fit() returns: the model and the information block.
template <RealScalar Scalar>
struct Result {
  LinearModel<Scalar> model;
  SolverInfo info;
};

}  // namespace sparsemc
