#pragma once
/// \file linear_model.hpp
/// The one model type every solver returns: W ∈ R^{d×K} stored sparse — only the feature rows
/// with a nonzero weight, and within a row only its nonzero (class, weight) entries, so memory
/// grows with nnz(W), not with d·K or with |support|·K (an extreme-classification model with
/// K = 16000 keeps a few active classes per feature) — an unpenalised intercept b ∈ R^K, the
/// label table, and the provenance of the fit. Scores are s = Wᵀx + b.
///
/// Scoring accepts a `CsrView` (streamed sample by sample), a `CscView` (walked feature by
/// feature) or any dense Eigen matrix with samples in rows (e.g. `DenseRowView`); single
/// samples are scored from a sparse row `X.outer(i)` or a dense `std::span`. Every path sums
/// a sample's terms in the same order — features by increasing index, then the bias
/// feature, then the intercept — so all of them give bit-identical scores, and the order is
/// LIBLINEAR's, so a model exchanged with LIBLINEAR (io/liblinear_model.hpp) predicts alike.
///
/// \code
///   sparsemc::LinearModel<double> model(W_dense, b, encoder.labels());   // keeps the nonzeros
///   auto scores = model.decision_function(test.csr());                  // n × K
///   std::vector<sparsemc::Label> yhat = model.predict(test.csr());
///   sparsemc::ClassRanking best5 = model.top_k(test.csr(), 5);          // n × 5, best first
///   if (model.provenance().loss == "logistic") auto P = model.predict_proba(test.csr());
///   std::vector<double> s(model.n_classes());
///   model.decision_function(test.csr().outer(0), std::span<double>(s)); // one sample, no allocation
/// \endcode

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <limits>
#include <numeric>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "../core/huge_pages.hpp"
#include "../core/parallel.hpp"
#include "../core/status.hpp"
#include "../core/traits.hpp"
#include "../data/feature_map.hpp"
#include "../data/sparse_view.hpp"
#include "../loss/logistic.hpp"

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

/// Per-sample ranking of classes (what `LinearModel::top_k` returns): row i holds sample i's
/// best class indices, best first.
using ClassRanking = Eigen::Matrix<ClassIndex, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

namespace detail {
template <class T, class Scalar>
inline constexpr bool is_csr_view_v = false;
template <class Scalar, class Index>
inline constexpr bool is_csr_view_v<SparseView<Scalar, Index, Eigen::RowMajor>, Scalar> = true;
template <class T, class Scalar>
inline constexpr bool is_csc_view_v = false;
template <class Scalar, class Index>
inline constexpr bool is_csc_view_v<SparseView<Scalar, Index, Eigen::ColMajor>, Scalar> = true;
}  // namespace detail

/// What a `LinearModel<Scalar>` scores: a `CsrView` or `CscView` of the same Scalar, or a
/// dense Eigen matrix expression of the same Scalar with one sample per row.
template <class X, class Scalar>
concept ScorableBy = detail::is_csr_view_v<X, Scalar> || detail::is_csc_view_v<X, Scalar> ||
                     (std::derived_from<X, Eigen::MatrixBase<X>> && std::same_as<typename X::Scalar, Scalar>);

/// A linear multiclass / multilabel model: scores s = Wᵀx + b ∈ R^K (objective (1) of
/// ARCHITECTURE.md), W ∈ R^{d×K} stored by its nonzero entries, labels as read.
///
/// Conventions a user can rely on:
/// - Features at or beyond the model's data features (n_features(), or n_features()−1 when
///   a bias feature is set) are ignored, like LIBLINEAR does for test data wider than the
///   training data; missing features are zeros.
/// - Bias feature (provenance().bias = β ≥ 0): feature n_features()−1 is the constant β,
///   appended by the model itself; a data column at that index is ignored (not counted twice).
/// - Argmax ties go to the first class (smallest class index), like LIBLINEAR; NaN scores
///   rank below every number.
/// - Labels are kept in the order given; class k's label is labels()[k]. Models trained by
///   sparsemc have them sorted (LabelEncoder); imported ones may not: map data labels to
///   classes with class_of().
/// - A weight that is zero is not stored, so it is never multiplied: a NaN or infinite feature
///   value only reaches the classes whose weight for that feature is nonzero.
///
/// \code
///   for (std::size_t r = 0; r < model.support().size(); ++r)   // feature support()[r]:
///     for (auto [k, w] : model.row(r)) use(k, w);              //   its nonzero weights
///   const auto yhat = model.predict(X);                        // labels
///   const auto k = model.predict_classes(X);                   // class indices
///   const sparsemc::ClassRanking top = model.top_k(X, 3);      // n × 3
///   const auto P = model.predict_proba(X);                     // logistic models only
///   const sparsemc::ClassIndex c = model.class_of(label);      // −1 if unknown
/// \endcode
template <RealScalar Scalar>
class LinearModel {
 public:
  using scalar_type = Scalar;
  using RowMatrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using Vector = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;

  /// One stored row of W: its nonzero entries as (class index, weight), classes increasing.
  using Row = SparseSlice<Scalar, ClassIndex>;

  LinearModel() = default;

  /// From a dense W (d × K, row j = feature j's weights over the K classes); only its nonzero
  /// entries are stored. An empty intercept means b = 0.
  LinearModel(const Eigen::Ref<const RowMatrix>& W, Vector intercept, std::vector<Label> labels)
      : n_features_(W.rows()), intercept_(std::move(intercept)), labels_(std::move(labels)) {
    check_shapes(W.cols());
    const auto nonzero = (W.array() != Scalar(0)).count();
    classes_.reserve(static_cast<std::size_t>(nonzero));
    weights_.reserve(static_cast<std::size_t>(nonzero));
    for (Eigen::Index j = 0; j < W.rows(); ++j) append_row(j, W.row(j));
    build_row_of_feature();
    build_label_index();
  }

  /// The model of a dense W that it consumes (the same model as the constructor from a dense
  /// W gives), built from W's last rows up while W shrinks: `conservativeResize` keeps the first
  /// rows and hands the rest back to the allocator, so a large W (a solver's dense d × K) and
  /// its model are not held whole side by side.
  [[nodiscard]] static LinearModel consuming(RowMatrix&& W, Vector intercept, std::vector<Label> labels) {
    LinearModel model;
    model.n_features_ = W.rows();
    model.intercept_ = std::move(intercept);
    model.labels_ = std::move(labels);
    model.check_shapes(W.cols());
    model.take_rows(std::move(W));
    model.build_row_of_feature();
    model.build_label_index();
    return model;
  }

  /// From dense stored rows: `support` (strictly increasing feature indices < n_features) and
  /// the matching rows of W (|support| × K). Zero entries, and rows left empty, are dropped.
  LinearModel(std::int64_t n_features, const std::vector<std::int64_t>& support, const RowMatrix& rows,
              Vector intercept, std::vector<Label> labels)
      : n_features_(n_features), intercept_(std::move(intercept)), labels_(std::move(labels)) {
    check_shapes(rows.cols());
    if (static_cast<Eigen::Index>(support.size()) != rows.rows())
      throw std::invalid_argument("LinearModel: support and rows disagree in length");
    check_support(support);
    for (std::size_t r = 0; r < support.size(); ++r) append_row(support[r], rows.row(static_cast<Eigen::Index>(r)));
    build_row_of_feature();
    build_label_index();
  }

  /// From sparse stored rows (compressed by feature): row r holds feature `support[r]`'s
  /// entries `classes[p]`, `weights[p]` for p in [row_start[r], row_start[r+1]), classes
  /// strictly increasing in [0, K). Zero weights, and rows left empty, are dropped.
  LinearModel(std::int64_t n_features, std::vector<std::int64_t> support, std::vector<std::int64_t> row_start,
              std::vector<ClassIndex> classes, std::vector<Scalar> weights, Vector intercept,
              std::vector<Label> labels)
      : n_features_(n_features), support_(std::move(support)), row_start_(std::move(row_start)),
        classes_(std::move(classes)), weights_(std::move(weights)), intercept_(std::move(intercept)),
        labels_(std::move(labels)) {
    check_shapes(static_cast<Eigen::Index>(labels_.size()));
    check_support(support_);
    if (row_start_.size() != support_.size() + 1 || row_start_.front() != 0 ||
        row_start_.back() != static_cast<std::int64_t>(classes_.size()) || classes_.size() != weights_.size())
      throw std::invalid_argument("LinearModel: row_start must have |support| + 1 entries from 0 to |classes| = |weights|");
    const auto K = static_cast<ClassIndex>(labels_.size());
    for (std::size_t r = 0; r < support_.size(); ++r) {
      if (row_start_[r + 1] < row_start_[r]) throw std::invalid_argument("LinearModel: row_start must not decrease");
      for (auto p = row_start_[r]; p < row_start_[r + 1]; ++p) {
        const ClassIndex k = classes_[static_cast<std::size_t>(p)];
        if (k < 0 || k >= K || (p > row_start_[r] && k <= classes_[static_cast<std::size_t>(p - 1)]))
          throw std::invalid_argument("LinearModel: the classes of a row must be strictly increasing in [0, K)");
      }
    }
    drop_zeros();
    build_row_of_feature();
    build_label_index();
  }

  [[nodiscard]] std::int64_t n_features() const noexcept { return n_features_; }
  [[nodiscard]] ClassIndex n_classes() const noexcept { return static_cast<ClassIndex>(labels_.size()); }
  /// Feature indices of the stored (nonzero) rows, increasing.
  [[nodiscard]] const std::vector<std::int64_t>& support() const noexcept { return support_; }
  /// Stored row r of W (feature support()[r]): its nonzero (class, weight) entries.
  [[nodiscard]] Row row(std::size_t r) const noexcept {
    const auto begin = static_cast<std::size_t>(row_start_[r]);
    const auto size = static_cast<std::size_t>(row_start_[r + 1]) - begin;
    return {std::span<const ClassIndex>(classes_).subspan(begin, size), std::span<const Scalar>(weights_).subspan(begin, size)};
  }
  /// Every stored weight (nnz() values, row by row), e.g. for ‖W‖ as `weights().squaredNorm()`.
  [[nodiscard]] Eigen::Map<const Vector> weights() const noexcept {
    return {weights_.data(), static_cast<Eigen::Index>(weights_.size())};
  }
  /// Writes the stored weights into a dense W (at least d rows, K columns; row j = feature j);
  /// entries not stored are left as they are (zero-initialise W for the model's W).
  template <class Dense>
  void copy_to(Dense&& W) const {
    for (std::size_t r = 0; r < support_.size(); ++r)
      for (auto [k, w] : row(r)) W(static_cast<Eigen::Index>(support_[r]), static_cast<Eigen::Index>(k)) = w;
  }
  /// b ∈ R^K (empty when the model has no intercept).
  [[nodiscard]] const Vector& intercept() const noexcept { return intercept_; }
  [[nodiscard]] bool has_intercept() const noexcept { return intercept_.size() > 0; }
  /// Class k's label as read.
  [[nodiscard]] const std::vector<Label>& labels() const noexcept { return labels_; }
  /// Names the classes: class k gets `labels[k]` (K distinct labels). Solvers return class
  /// indices 0..K−1 as labels, since a Problem holds none; a Dataset's table puts them back:
  /// `result.model.set_labels(train.encoder().labels())`.
  void set_labels(std::vector<Label> labels) {
    if (labels.size() != labels_.size())
      throw std::invalid_argument("LinearModel::set_labels: " + std::to_string(labels.size()) +
                                  " labels for " + std::to_string(labels_.size()) + " classes");
    labels_.swap(labels);
    try {
      build_label_index();
    } catch (...) {  // duplicates: keep the old table
      labels_.swap(labels);
      build_label_index();
      throw;
    }
  }
  [[nodiscard]] ModelProvenance& provenance() noexcept { return provenance_; }
  [[nodiscard]] const ModelProvenance& provenance() const noexcept { return provenance_; }

  /// Number of nonzero weights (all of them stored).
  [[nodiscard]] std::int64_t nnz() const noexcept { return static_cast<std::int64_t>(weights_.size()); }
  /// Number of nonzero feature rows.
  [[nodiscard]] std::int64_t nnz_rows() const noexcept { return static_cast<std::int64_t>(support_.size()); }

  /// Row r of W for feature j, or −1 if the row is zero.
  [[nodiscard]] std::int64_t row_of_feature(std::int64_t j) const noexcept {
    return (j >= 0 && j < n_features_) ? row_at(j) : -1;
  }

  /// Features the data supplies: n_features(), minus the bias feature when there is one.
  /// Data columns at or beyond this are ignored by scoring.
  [[nodiscard]] std::int64_t n_data_features() const noexcept {
    return provenance_.bias >= 0 ? std::max<std::int64_t>(n_features_ - 1, 0) : n_features_;
  }

  /// Class index of a label (O(log K)), or −1 when the model does not know the label.
  [[nodiscard]] ClassIndex class_of(Label label) const noexcept {
    const auto it = std::lower_bound(label_index_.begin(), label_index_.end(), std::pair<Label, ClassIndex>{label, 0});
    return (it != label_index_.end() && it->first == label) ? it->second : ClassIndex{-1};
  }

  /// The same weights over another numbering of the features: stored row j becomes feature
  /// `to(j)` of a model with `n_features` features, and a row mapped to −1 is dropped. `to`
  /// must increase with j. expand_features / restrict_features (below) call it with a FeatureMap.
  template <class Map>
  [[nodiscard]] LinearModel renumbered(std::int64_t n_features, const Map& to) const& {
    return LinearModel(*this).renumbered(n_features, to);
  }
  /// The same, consuming this model: the kept rows move forward in place, no weight is copied
  /// into new storage (the const form runs it on a copy).
  template <class Map>
  [[nodiscard]] LinearModel renumbered(std::int64_t n_features, const Map& to) && {
    std::size_t kept_rows = 0, kept = 0, begin = 0;
    for (std::size_t r = 0; r < support_.size(); ++r) {
      const auto end = static_cast<std::size_t>(row_start_[r + 1]);  // read before row_start_[r + 1] is rewritten
      const std::int64_t j = to(support_[r]);
      if (j >= 0) {
        const auto first = static_cast<std::ptrdiff_t>(begin), last = static_cast<std::ptrdiff_t>(end);
        const auto to_slot = static_cast<std::ptrdiff_t>(kept);
        std::move(classes_.begin() + first, classes_.begin() + last, classes_.begin() + to_slot);
        std::move(weights_.begin() + first, weights_.begin() + last, weights_.begin() + to_slot);
        kept += end - begin;
        support_[kept_rows] = j;
        row_start_[++kept_rows] = static_cast<std::int64_t>(kept);
      }
      begin = end;
    }
    support_.resize(kept_rows);
    row_start_.resize(kept_rows + 1);
    classes_.resize(kept);
    weights_.resize(kept);
    n_features_ = n_features;
    check_support(support_);
    build_row_of_feature();
    return std::move(*this);
  }

  /// W as a dense d × K matrix.
  [[nodiscard]] RowMatrix dense() const {
    RowMatrix W = detail::advised_zeros<RowMatrix>(n_features_, n_classes());
    copy_to(W);
    return W;
  }

  // ---- scores of one sample (no allocation) -------------------------------------------------

  /// Scores s = Wᵀx + b of one sparse sample, e.g. `X.outer(i)` of a CsrView, written into
  /// `out` (K entries). Indices must be increasing (views guarantee it).
  template <StorageIndex Index>
  void decision_function(const SparseSlice<Scalar, Index>& x, std::span<Scalar> out) const {
    auto s = output_row(out);
    s.setZero();
    const std::int64_t data_features = n_data_features();
    for (auto [j, x_j] : x) {
      if (j >= data_features) break;
      const std::int64_t r = row_at(static_cast<std::int64_t>(j));
      if (r >= 0) add_row(s, static_cast<std::size_t>(r), x_j);
    }
    finish_scores(s);
  }

  /// Scores of one dense sample x (entry j = feature j; a shorter x means trailing zeros),
  /// written into `out` (K entries). Zero entries are skipped, so a dense sample scores
  /// bit-identically to the same sample stored sparse.
  void decision_function(std::span<const Scalar> x, std::span<Scalar> out) const {
    auto s = output_row(out);
    s.setZero();
    const std::int64_t data_features = std::min<std::int64_t>(n_data_features(), static_cast<std::int64_t>(x.size()));
    for (std::size_t r = 0; r < support_.size() && support_[r] < data_features; ++r) {
      const Scalar x_j = x[static_cast<std::size_t>(support_[r])];
      if (x_j != Scalar(0)) add_row(s, r, x_j);
    }
    finish_scores(s);
  }

  /// Predicted class of one sparse sample (argmax of its scores, first on ties).
  template <StorageIndex Index>
  [[nodiscard]] ClassIndex predict_class(const SparseSlice<Scalar, Index>& x) const {
    require_classes("predict_class");
    std::vector<Scalar> s(static_cast<std::size_t>(n_classes()));
    decision_function(x, std::span<Scalar>(s));
    return argmax(s);
  }

  /// Predicted class of one dense sample.
  [[nodiscard]] ClassIndex predict_class(std::span<const Scalar> x) const {
    require_classes("predict_class");
    std::vector<Scalar> s(static_cast<std::size_t>(n_classes()));
    decision_function(x, std::span<Scalar>(s));
    return argmax(s);
  }

  // ---- scores of many samples ---------------------------------------------------------------

  /// Scores S = XW + 1bᵀ (n × K) for a CSR X, one sample at a time (parallel over samples
  /// with SPARSEMC_USE_OPENMP, on the threads its nnz(X)·K multiply-adds keep busy).
  template <StorageIndex Index>
  [[nodiscard]] RowMatrix decision_function(const CsrView<Scalar, Index>& X) const {
    RowMatrix S;
    detail::resize_advised(S, X.rows(), n_classes());
    const Eigen::Index n = X.rows();
#ifdef SPARSEMC_USE_OPENMP
#pragma omp parallel for schedule(static) num_threads(busy_threads(X.nnz()))
#endif
    for (Eigen::Index i = 0; i < n; ++i) decision_function(X.outer(static_cast<Index>(i)), row_span(S, i));
    return S;
  }

  /// Scores S = XW + 1bᵀ for a CSC X, walking the model's features column by column. Each
  /// sample still receives its terms in increasing feature order: same result as for CSR.
  template <StorageIndex Index>
  [[nodiscard]] RowMatrix decision_function(const CscView<Scalar, Index>& X) const {
    RowMatrix S = detail::advised_zeros<RowMatrix>(X.rows(), n_classes());
    const std::int64_t data_features = std::min<std::int64_t>(n_data_features(), X.cols());
    for (std::size_t r = 0; r < support_.size() && support_[r] < data_features; ++r) {
      for (auto [i, x_ij] : X.outer(static_cast<Index>(support_[r]))) {
        auto s = S.row(i);
        add_row(s, r, x_ij);
      }
    }
    for (Eigen::Index i = 0; i < S.rows(); ++i) {
      auto s = S.row(i);
      finish_scores(s);
    }
    return S;
  }

  /// Scores S = XW + 1bᵀ for a dense X with samples in rows (a `DenseRowView`, an Eigen
  /// matrix of either storage order — a column-major one is copied once — or a block).
  [[nodiscard]] RowMatrix decision_function(const Eigen::Ref<const RowMatrix>& X) const {
    RowMatrix S;
    detail::resize_advised(S, X.rows(), n_classes());
    const Eigen::Index n = X.rows();
#ifdef SPARSEMC_USE_OPENMP
#pragma omp parallel for schedule(static) num_threads(busy_threads(X.size()))
#endif
    for (Eigen::Index i = 0; i < n; ++i) decision_function(dense_row(X, i), row_span(S, i));
    return S;
  }

  /// Predicted class index per sample: argmax of the scores (first maximum on ties). Streams
  /// samples: no n × K matrix is formed (except for a CscView).
  template <class Design>
    requires ScorableBy<Design, Scalar>
  [[nodiscard]] std::vector<ClassIndex> predict_classes(const Design& X) const {
    require_classes("predict_classes");
    std::vector<ClassIndex> out(static_cast<std::size_t>(X.rows()));
    for_each_sample_scores(X, [&](Eigen::Index i, std::span<const Scalar> s, std::vector<ClassIndex>&) {
      out[static_cast<std::size_t>(i)] = argmax(s);
    });
    return out;
  }

  /// Predicted label (as read) per sample.
  template <class Design>
    requires ScorableBy<Design, Scalar>
  [[nodiscard]] std::vector<Label> predict(const Design& X) const {
    const auto classes = predict_classes(X);
    std::vector<Label> out(classes.size());
    for (std::size_t i = 0; i < classes.size(); ++i) out[i] = labels_[static_cast<std::size_t>(classes[i])];
    return out;
  }

  /// The k best classes of every sample, best first (n × min(k, K)); ties go to the smaller
  /// class index, NaN scores rank last, so column 0 equals predict_classes(). For multilabel
  /// and extreme classification (precision@k, model/metrics.hpp). Throws
  /// `std::invalid_argument` for k < 1; k > K is clamped to K.
  template <class Design>
    requires ScorableBy<Design, Scalar>
  [[nodiscard]] ClassRanking top_k(const Design& X, ClassIndex k) const {
    require_classes("top_k");
    if (k < 1) throw std::invalid_argument("top_k: k must be >= 1, got " + std::to_string(k));
    const ClassIndex K = n_classes();
    const ClassIndex kept = std::min(k, K);
    ClassRanking ranking(X.rows(), kept);
    // Per sample: sort the class indices by (score descending, index ascending) — a strict
    // total order even with ties and NaN — keeping only the first `kept`. `order` is the
    // per-thread scratch, sized once.
    for_each_sample_scores(X, [&](Eigen::Index i, std::span<const Scalar> s, std::vector<ClassIndex>& order) {
      order.resize(static_cast<std::size_t>(K));
      std::iota(order.begin(), order.end(), ClassIndex{0});
      const auto better = [s](ClassIndex a, ClassIndex b) {
        const Scalar sa = rank_key(s[static_cast<std::size_t>(a)]);
        const Scalar sb = rank_key(s[static_cast<std::size_t>(b)]);
        return sa > sb || (sa == sb && a < b);
      };
      // O(K) selection, then an O(k log k) sort of the selected.
      if (kept < K) std::nth_element(order.begin(), order.begin() + kept - 1, order.end(), better);
      std::sort(order.begin(), order.begin() + kept, better);
      std::copy(order.begin(), order.begin() + kept, ranking.row(i).data());
    });
    return ranking;
  }

  /// Class probabilities P(k | x) = exp(s_k) / Σ_r exp(s_r) (n × K, rows sum to 1), for
  /// models trained with the multinomial logistic loss (provenance().loss == "logistic");
  /// any other model throws `std::logic_error` (its scores are not log-odds). Computed with
  /// the max shift, so no score overflows: scores of ±1e6 give 0/1, never NaN. An infinite
  /// score takes the whole mass (shared among equal infinite scores); only NaN scores (from
  /// NaN data) give NaN.
  template <class Design>
    requires ScorableBy<Design, Scalar>
  [[nodiscard]] RowMatrix predict_proba(const Design& X) const {
    require_logistic("predict_proba");
    RowMatrix P(X.rows(), n_classes());
    for_each_sample_scores(X, [&](Eigen::Index i, std::span<const Scalar> s, std::vector<ClassIndex>&) {
      softmax(s, row_span(P, i));
    });
    return P;
  }

  /// log P(k | x) = s_k − logsumexp(s) (n × K), the stable way to a log-likelihood: a
  /// probability that underflows to 0 in predict_proba is still a finite log here. Logistic
  /// models only (`std::logic_error` otherwise).
  template <class Design>
    requires ScorableBy<Design, Scalar>
  [[nodiscard]] RowMatrix predict_log_proba(const Design& X) const {
    require_logistic("predict_log_proba");
    RowMatrix L(X.rows(), n_classes());
    for_each_sample_scores(X, [&](Eigen::Index i, std::span<const Scalar> s, std::vector<ClassIndex>&) {
      log_softmax(s, row_span(L, i));
    });
    return L;
  }

 private:
  using RowVectorMap = Eigen::Map<Eigen::Matrix<Scalar, 1, Eigen::Dynamic>>;

  void check_shapes(Eigen::Index K) const {
    if (K != static_cast<Eigen::Index>(labels_.size()))
      throw std::invalid_argument("LinearModel: W has " + std::to_string(K) + " columns but there are " +
                                  std::to_string(labels_.size()) + " labels");
    if (intercept_.size() != 0 && intercept_.size() != K)
      throw std::invalid_argument("LinearModel: intercept must be empty or have K entries");
  }
  void check_support(const std::vector<std::int64_t>& support) const {
    for (std::size_t r = 0; r < support.size(); ++r) {
      if (support[r] < 0 || support[r] >= n_features_ || (r > 0 && support[r] <= support[r - 1]))
        throw std::invalid_argument("LinearModel: support must be strictly increasing feature indices in [0, n_features)");
    }
  }
  /// Appends feature j's nonzero entries of a dense row (nothing when the row is zero).
  template <class DenseRow>
  void append_row(std::int64_t j, const DenseRow& w) {
    const auto before = classes_.size();
    for (Eigen::Index k = 0; k < w.size(); ++k) {
      if (w[k] == Scalar(0)) continue;
      classes_.push_back(static_cast<ClassIndex>(k));
      weights_.push_back(w[k]);
    }
    if (classes_.size() == before) return;
    support_.push_back(j);
    row_start_.push_back(static_cast<std::int64_t>(classes_.size()));
  }
  /// The times a consumed dense W is shrunk while its model is built (each one a realloc).
  static constexpr Eigen::Index consumed_shrink_steps = 32;
  /// The nonzero entries of W, rows last to first and each row's entries last to first (W
  /// shrinking behind them), then reversed in place into the stored order.
  void take_rows(RowMatrix&& W) {
    const auto nonzero = static_cast<std::size_t>((W.array() != Scalar(0)).count());
    classes_.reserve(nonzero);
    weights_.reserve(nonzero);
    detail::advise_huge_pages(classes_.data(), nonzero * sizeof(ClassIndex));
    detail::advise_huge_pages(weights_.data(), nonzero * sizeof(Scalar));
    std::vector<std::int64_t> row_size;
    const Eigen::Index step = std::max<Eigen::Index>(1, W.rows() / consumed_shrink_steps);
    for (Eigen::Index j = W.rows(); j-- > 0;) {
      const std::size_t before = classes_.size();
      for (Eigen::Index k = W.cols(); k-- > 0;) {
        if (W(j, k) == Scalar(0)) continue;
        classes_.push_back(static_cast<ClassIndex>(k));
        weights_.push_back(W(j, k));
      }
      if (classes_.size() > before) {
        support_.push_back(j);
        row_size.push_back(static_cast<std::int64_t>(classes_.size() - before));
      }
      if (j % step == 0) W.conservativeResize(j, Eigen::NoChange);
    }
    W = RowMatrix();
    std::reverse(classes_.begin(), classes_.end());
    std::reverse(weights_.begin(), weights_.end());
    std::reverse(support_.begin(), support_.end());
    row_start_.reserve(row_size.size() + 1);
    for (auto size = row_size.rbegin(); size != row_size.rend(); ++size) row_start_.push_back(row_start_.back() + *size);
  }
  /// Removes stored zero weights and the rows they leave empty, in place.
  void drop_zeros() {
    std::size_t kept_rows = 0, kept = 0, p = 0;
    for (std::size_t r = 0; r < support_.size(); ++r) {
      const std::size_t first = kept;
      for (const auto end = static_cast<std::size_t>(row_start_[r + 1]); p < end; ++p) {
        if (weights_[p] == Scalar(0)) continue;
        classes_[kept] = classes_[p];
        weights_[kept++] = weights_[p];
      }
      if (kept == first) continue;
      support_[kept_rows] = support_[r];
      row_start_[++kept_rows] = static_cast<std::int64_t>(kept);
    }
    support_.resize(kept_rows);
    row_start_.resize(kept_rows + 1);
    classes_.resize(kept);
    weights_.resize(kept);
  }
  /// s += x_j · (stored row r of W).
  template <class ScoreRow>
  void add_row(ScoreRow& s, std::size_t r, Scalar x_j) const {
    for (auto p = row_start_[r]; p < row_start_[r + 1]; ++p) {
      const auto q = static_cast<std::size_t>(p);
      s[classes_[q]] += x_j * weights_[q];
    }
  }
  /// The feature → row lookup: a table of d entries when d is small or the rows are many
  /// (O(1) per lookup), else a binary search in support_ (O(log |support|)), so that memory
  /// follows the stored rows and not d (a model of hashed features, or a file's n_features).
  void build_row_of_feature() {
    row_of_feature_.clear();
    const auto d = static_cast<std::uint64_t>(n_features_);
    if (d > dense_lookup_features && d > 8 * static_cast<std::uint64_t>(support_.size())) return;
    row_of_feature_.assign(static_cast<std::size_t>(n_features_), -1);
    for (std::size_t r = 0; r < support_.size(); ++r)
      row_of_feature_[static_cast<std::size_t>(support_[r])] = static_cast<std::int64_t>(r);
  }
  /// Row of feature j in [0, d), or −1.
  [[nodiscard]] std::int64_t row_at(std::int64_t j) const noexcept {
    if (!row_of_feature_.empty()) return row_of_feature_[static_cast<std::size_t>(j)];
    const auto it = std::lower_bound(support_.begin(), support_.end(), j);
    return (it != support_.end() && *it == j) ? static_cast<std::int64_t>(it - support_.begin()) : -1;
  }
  /// d up to which the lookup is always a table (8 MiB).
  static constexpr std::uint64_t dense_lookup_features = std::uint64_t{1} << 20;
  /// Sorted (label, class) pairs for class_of(); rejects a label table with duplicates.
  void build_label_index() {
    label_index_.resize(labels_.size());
    for (std::size_t k = 0; k < labels_.size(); ++k) label_index_[k] = {labels_[k], static_cast<ClassIndex>(k)};
    std::sort(label_index_.begin(), label_index_.end());
    for (std::size_t k = 1; k < label_index_.size(); ++k)
      if (label_index_[k].first == label_index_[k - 1].first)
        throw std::invalid_argument("LinearModel: label " + std::to_string(label_index_[k].first) +
                                    " appears twice in the label table");
  }

  void require_classes(const char* what) const {
    if (labels_.empty()) throw std::logic_error(std::string(what) + ": the model has no classes");
  }
  void require_logistic(const char* what) const {
    if (provenance_.loss != Logistic::name)
      throw std::logic_error(std::string(what) + " needs a model trained with the logistic loss; this one has loss '" +
                             provenance_.loss + "', whose scores are not log-probabilities");
    require_classes(what);
  }

  /// `out` as an Eigen row (K entries, checked: a wrong size would write out of bounds).
  RowVectorMap output_row(std::span<Scalar> out) const {
    if (static_cast<ClassIndex>(out.size()) != n_classes())
      throw std::invalid_argument("decision_function: the output has " + std::to_string(out.size()) +
                                  " entries, the model has " + std::to_string(n_classes()) + " classes");
    return RowVectorMap(out.data(), static_cast<Eigen::Index>(out.size()));
  }
  /// Adds the bias feature's row, then the intercept (LIBLINEAR's order: bias feature last).
  template <class Row>
  void finish_scores(Row& s) const {
    if (provenance_.bias >= 0 && n_features_ > 0) {
      const std::int64_t r = row_at(n_features_ - 1);
      if (r >= 0) add_row(s, static_cast<std::size_t>(r), static_cast<Scalar>(provenance_.bias));
    }
    if (has_intercept()) s += intercept_.transpose();
  }

  /// Row i of a row-major matrix, or of a dense design, as a contiguous span.
  static std::span<Scalar> row_span(RowMatrix& M, Eigen::Index i) {
    return {M.row(i).data(), static_cast<std::size_t>(M.cols())};
  }
  static std::span<const Scalar> dense_row(const Eigen::Ref<const RowMatrix>& X, Eigen::Index i) {
    return {X.row(i).data(), static_cast<std::size_t>(X.cols())};
  }

  /// NaN ranks below every number.
  static Scalar rank_key(Scalar v) noexcept { return std::isnan(v) ? -std::numeric_limits<Scalar>::infinity() : v; }
  /// First maximum (LIBLINEAR's rule: a later class must be strictly better).
  static ClassIndex argmax(std::span<const Scalar> s) noexcept {
    std::size_t best = 0;
    for (std::size_t k = 1; k < s.size(); ++k)
      if (rank_key(s[k]) > rank_key(s[best])) best = k;
    return static_cast<ClassIndex>(best);
  }

  /// p = softmax(s) with the max shift; see predict_proba for the infinite cases.
  static void softmax(std::span<const Scalar> s, std::span<Scalar> p) {
    constexpr Scalar inf = std::numeric_limits<Scalar>::infinity();
    Scalar m = -inf;
    for (Scalar v : s) m = v > m ? v : m;
    if (std::isinf(m)) {  // +inf: the infinite scores share the mass; −inf: every number is −inf
      std::size_t count = 0;
      for (Scalar v : s) count += v == m ? 1 : 0;
      for (std::size_t k = 0; k < s.size(); ++k)
        p[k] = std::isnan(s[k]) ? s[k] : (s[k] == m ? Scalar(1) / static_cast<Scalar>(count) : Scalar(0));
      return;
    }
    // Every exponent is ≤ 0 and the largest is exp(0) = 1: no overflow, z ≥ 1, no 0/0.
    Scalar z = 0;
    for (std::size_t k = 0; k < s.size(); ++k) z += (p[k] = std::exp(s[k] - m));
    for (Scalar& v : p) v /= z;
  }
  /// log softmax(s) = (s − m) − log Σ exp(s − m).
  static void log_softmax(std::span<const Scalar> s, std::span<Scalar> out) {
    constexpr Scalar inf = std::numeric_limits<Scalar>::infinity();
    Scalar m = -inf;
    for (Scalar v : s) m = v > m ? v : m;
    if (std::isinf(m)) {
      softmax(s, out);
      for (Scalar& v : out) v = std::log(v);
      return;
    }
    Scalar z = 0;
    for (Scalar v : s) z += std::exp(v - m);
    const Scalar log_z = std::log(z);  // subtracted after the shift: no cancellation against m
    for (std::size_t k = 0; k < s.size(); ++k) out[k] = (s[k] - m) - log_z;
  }

  /// Calls f(i, scores of sample i, per-thread scratch) for every sample, streaming (one
  /// K-buffer per thread) except for a CscView, which is scored as a whole first.
  template <class Design, class F>
  void for_each_sample_scores(const Design& X, F&& f) const {
    if constexpr (detail::is_csc_view_v<Design, Scalar>) {
      RowMatrix S = decision_function(X);
      std::vector<ClassIndex> scratch;
      for (Eigen::Index i = 0; i < S.rows(); ++i) f(i, std::span<const Scalar>(row_span(S, i)), scratch);
    } else if constexpr (detail::is_csr_view_v<Design, Scalar>) {
      stream_samples(X.rows(), X.nnz(), f, [&](Eigen::Index i, std::span<Scalar> out) {
        decision_function(X.outer(static_cast<typename Design::index_type>(i)), out);
      });
    } else {
      const Eigen::Ref<const RowMatrix> Xd(X);
      stream_samples(Xd.rows(), Xd.size(), f,
                     [&](Eigen::Index i, std::span<Scalar> out) { decision_function(dense_row(Xd, i), out); });
    }
  }
  /// The threads that scoring `entries` entries of X (times K) keeps busy.
  [[nodiscard]] int busy_threads(std::int64_t entries) const noexcept {
    return detail::team_for_work(available_threads(),
                                 static_cast<double>(entries) * static_cast<double>(std::max<Eigen::Index>(n_classes(), 1)));
  }
  /// The loop of for_each_sample_scores over n samples with `entries` entries of X in all.
  template <class F, class Score>
  void stream_samples(Eigen::Index n, std::int64_t entries, F& f, const Score& score) const {
#ifdef SPARSEMC_USE_OPENMP
#pragma omp parallel num_threads(busy_threads(entries))
#endif
    {
      std::vector<Scalar> buffer(static_cast<std::size_t>(n_classes()));
      std::vector<ClassIndex> scratch;
#ifdef SPARSEMC_USE_OPENMP
#pragma omp for schedule(static)
#endif
      for (Eigen::Index i = 0; i < n; ++i) {
        score(i, std::span<Scalar>(buffer));
        f(i, std::span<const Scalar>(buffer), scratch);
      }
    }
  }

  std::int64_t n_features_ = 0;  // d, bias feature included
  std::vector<std::int64_t> support_;    // feature of each stored row, increasing
  std::vector<std::int64_t> row_start_{0};  // |support| + 1 offsets into classes_ / weights_
  std::vector<ClassIndex> classes_;      // class of each stored weight, increasing within a row
  std::vector<Scalar> weights_;          // the nonzero weights, row by row
  Vector intercept_;
  std::vector<Label> labels_;
  std::vector<std::int64_t> row_of_feature_;               // empty, or d entries: row of W or −1
  std::vector<std::pair<Label, ClassIndex>> label_index_;  // (label, class) sorted by label
  ModelProvenance provenance_;
};

/// A model fitted on columns compacted by `map` (Dataset::compact_features) with its rows back
/// at their original feature indices: W = P W′ in the notation of data/feature_map.hpp. This
/// form consumes `model` (`r.model = expand_features(std::move(r.model), map)`): no copy of the
/// weights, which for a dense W of d × K entries is the size of the fit's own W.
template <RealScalar Scalar>
[[nodiscard]] LinearModel<Scalar> expand_features(LinearModel<Scalar>&& model, const FeatureMap& map) {
  if (map.identity() && model.n_features() == map.n_features()) return std::move(model);
  return std::move(model).renumbered(map.n_features(), [&](std::int64_t c) { return map.original(c); });
}
/// The same on a copy of `model`.
template <RealScalar Scalar>
[[nodiscard]] LinearModel<Scalar> expand_features(const LinearModel<Scalar>& model, const FeatureMap& map) {
  return expand_features(LinearModel<Scalar>(model), map);
}

/// A model over original features restricted to the columns `map` keeps, renumbered onto them
/// (W′ = Pᵀ W; a warm start for a fit on compacted data). Rows of unused features are dropped.
/// This form consumes `model`.
template <RealScalar Scalar>
[[nodiscard]] LinearModel<Scalar> restrict_features(LinearModel<Scalar>&& model, const FeatureMap& map) {
  if (map.identity() && model.n_features() == map.n_features()) return std::move(model);
  return std::move(model).renumbered(map.n_used(), [&](std::int64_t j) { return map.compact(j); });
}
/// The same on a copy of `model`.
template <RealScalar Scalar>
[[nodiscard]] LinearModel<Scalar> restrict_features(const LinearModel<Scalar>& model, const FeatureMap& map) {
  return restrict_features(LinearModel<Scalar>(model), map);
}

/// What every solver's fit() returns: the model and the information block.
template <RealScalar Scalar>
struct Result {
  LinearModel<Scalar> model;
  SolverInfo info;
};

}  // namespace sparsemc
