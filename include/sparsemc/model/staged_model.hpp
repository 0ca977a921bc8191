#pragma once
/// \file staged_model.hpp
/// `StagedModel<Scalar>`: the model of calibrated least squares (Agarwal et al. 2014,
/// Algorithm 2) and stagewise regression (Algorithm 3). Their predictions are not a linear
/// function of x — each stage adds a linear fit to the previous predictions, and a calibrated
/// stage passes the sum through a fitted polynomial link and the simplex projection — so the
/// model stores the whole chain, and the feature generator of every stage:
///
///     ŷ⁽⁰⁾ = 0,   for t = 1..T:   ỹ = ŷ⁽ᵗ⁻¹⁾ + W_tᵀ φ_t(x) + b_t                        (10)
///                                 ŷ⁽ᵗ⁾ = clip(W̃_tᵀ u(ỹ))   (calibrated stage)          (11)
///                                 ŷ⁽ᵗ⁾ = ỹ                 (otherwise)
///
/// with φ_t either the original features (W_t row-sparse over them: a sampled block is the
/// support of W_t) or random Fourier features regenerated from their seed, u(ỹ) = [ỹ, ỹ², …,
/// ỹ^m, 1] elementwise (m = calibration_degree; the constant makes the basis contain affine
/// maps), clip = Euclidean projection onto the probability simplex (prox/simplex.hpp). The
/// prediction is argmax ŷ⁽ᵀ⁾ (first class on ties, as `LinearModel`).
///
/// \code
///   sparsemc::StagedModel<double> model = stagewise.fit(problem).model;
///   auto scores = model.decision_function(test.csr());   // ŷ⁽ᵀ⁾, n × K
///   std::vector<sparsemc::Label> yhat = model.predict(test.csr());
///   sparsemc::io::save_staged_model(model, "mnist.staged");   // io/staged_model_io.hpp
/// \endcode

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "../core/parallel.hpp"
#include "../core/rng.hpp"
#include "../core/traits.hpp"
#include "../data/sparse_view.hpp"
#include "../prox/simplex.hpp"
#include "linear_model.hpp"

namespace sparsemc {

/// Random Fourier features of the Gaussian kernel k(x, x') = exp(−‖x − x'‖² / (2σ²))
/// (Rahimi & Recht, "Random features for large-scale kernel machines", NIPS 2007):
///
///     φ(x) = √(2/p) cos(Ωᵀx + β),   Ω ∈ R^{d×p} i.i.d. N(0, σ⁻²),   β_k ~ U[0, 2π),
///
/// so that E[φ(x)ᵀφ(x')] = k(x, x'). (The paper's kernel exp(−‖x − x'‖²/s) is σ² = s/2.)
/// Ω and β are drawn from `seed` with core/rng.hpp (mt19937_64; normals by Box–Muller), so
/// the same (seed, d, p, σ) gives the same features on every run: a model stores the four
/// numbers, not the d × p matrix.
template <RealScalar Scalar>
struct RandomFourierFeatures {
  using RowMatrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using Vector = Eigen::Matrix<Scalar, 1, Eigen::Dynamic>;

  std::uint64_t seed = 0;
  std::int64_t input_dim = 0;   ///< d, the original features read
  std::int64_t output_dim = 0;  ///< p, the features made
  double bandwidth = 1.0;       ///< σ > 0
  RowMatrix omega;              ///< Ω (d × p)
  Vector phase;                 ///< β (p)

  RandomFourierFeatures() = default;
  RandomFourierFeatures(std::uint64_t seed_, std::int64_t d, std::int64_t p, double sigma)
      : seed(seed_), input_dim(d), output_dim(p), bandwidth(sigma), omega(d, p), phase(p) {
    if (d < 0 || p < 1 || !(sigma > 0.0) || !std::isfinite(sigma))
      throw std::invalid_argument("RandomFourierFeatures: needs d >= 0, p >= 1 and a finite bandwidth > 0");
    Rng rng(seed);
    constexpr double two_pi = 2.0 * std::numbers::pi;
    for (std::int64_t k = 0; k < p; ++k) phase[k] = static_cast<Scalar>(two_pi * uniform_real(rng));
    for (std::int64_t j = 0; j < d; ++j)
      for (std::int64_t k = 0; k < p; ++k) {
        const double u1 = 1.0 - uniform_real(rng);  // (0, 1]: log is finite
        const double u2 = uniform_real(rng);
        omega(j, k) = static_cast<Scalar>(std::sqrt(-2.0 * std::log(u1)) * std::cos(two_pi * u2) / sigma);
      }
  }

  /// φ(X) for n samples (n × p): X any Eigen expression with samples in rows (a sparse map,
  /// a dense matrix); columns of X beyond d are ignored, missing ones are zeros.
  template <class Design>
  [[nodiscard]] RowMatrix transform(const Design& X) const {
    RowMatrix Z(X.rows(), output_dim);
    const Eigen::Index used = std::min<Eigen::Index>(X.cols(), input_dim);
    if (used == X.cols()) Z.noalias() = X * omega.topRows(used);
    else Z.noalias() = X.leftCols(used) * omega.topRows(used);
    const auto scale = static_cast<Scalar>(std::sqrt(2.0 / static_cast<double>(output_dim)));
    Z.rowwise() += phase;
    Z = scale * Z.array().cos().matrix();
    return Z;
  }
};

/// The default bandwidth of the random Fourier features: σ with σ² = (1/n) Σ_i ‖x_i − x̄‖²
/// (half the mean squared distance between two samples; 1 when the samples coincide). X: any
/// Eigen expression with samples in rows (a sparse map, a dense matrix).
template <class Design>
[[nodiscard]] double rff_default_bandwidth(const Design& X) {
  using Scalar = typename Design::Scalar;
  const auto n = static_cast<double>(X.rows());
  if (n == 0) return 1.0;
  const Eigen::Matrix<Scalar, Eigen::Dynamic, 1> ones = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>::Ones(X.rows());
  const Eigen::Matrix<Scalar, Eigen::Dynamic, 1> mean = (X.transpose() * ones) / static_cast<Scalar>(n);
  const double spread = static_cast<double>(X.squaredNorm()) / n - static_cast<double>(mean.squaredNorm());
  return spread > 0.0 ? std::sqrt(spread) : 1.0;
}

/// u(ỹ) = [ỹ, ỹ², …, ỹ^m, 1] for every row of `Y` (n × K) into `U` (n × (mK + 1)).
template <class Scalar>
void calibration_basis(const Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>& Y, int degree,
                       Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>& U) {
  const Eigen::Index K = Y.cols();
  U.resize(Y.rows(), degree * K + 1);
  U.leftCols(K) = Y;
  for (int m = 1; m < degree; ++m) U.middleCols(m * K, K) = U.middleCols((m - 1) * K, K).cwiseProduct(Y);
  U.col(degree * K).setOnes();
}

/// Projects every row of `Y` onto the probability simplex {v ≥ 0, Σv = 1} (clip of (11)).
template <class Scalar>
void clip_rows_to_simplex(Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>& Y) {
  const Eigen::Index n = Y.rows();
#ifdef SPARSEMC_USE_OPENMP
#pragma omp parallel num_threads(detail::team_for_work(available_threads(), static_cast<double>(Y.size())))
#endif
  {
    std::vector<Scalar> scratch;
#ifdef SPARSEMC_USE_OPENMP
#pragma omp for schedule(static)
#endif
    for (Eigen::Index i = 0; i < n; ++i)
      prox::project_simplex(std::span<Scalar>(Y.row(i).data(), static_cast<std::size_t>(Y.cols())), Scalar(1), scratch);
  }
}

/// The chain model of Algorithms 2 and 3 (see the file comment).
template <RealScalar Scalar>
class StagedModel {
 public:
  using RowMatrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

  /// Where a stage's features come from.
  enum class Features {
    original,  ///< the data's own features; the stage's W is row-sparse over all d of them
    rff,       ///< random Fourier features, `rff` regenerated from its seed
  };

  /// One stage: features, the linear fit on them (W_t, b_t) and the optional calibration W̃_t
  /// ((mK + 1) × K; empty: the stage is not calibrated).
  struct Stage {
    Features features = Features::original;
    RandomFourierFeatures<Scalar> rff;  ///< used when features == rff
    LinearModel<Scalar> linear;
    RowMatrix calibration;
  };

  StagedModel() = default;
  /// An empty chain (predicts ŷ = 0) over d features with the given labels and calibration degree m ≥ 1.
  StagedModel(std::int64_t n_features, std::vector<Label> labels, int calibration_degree)
      : n_features_(n_features), labels_(std::move(labels)), degree_(calibration_degree) {
    if (labels_.empty()) throw std::invalid_argument("StagedModel: no classes");
    if (degree_ < 1) throw std::invalid_argument("StagedModel: calibration_degree must be >= 1");
  }

  [[nodiscard]] std::int64_t n_features() const noexcept { return n_features_; }
  [[nodiscard]] ClassIndex n_classes() const noexcept { return static_cast<ClassIndex>(labels_.size()); }
  [[nodiscard]] const std::vector<Label>& labels() const noexcept { return labels_; }
  [[nodiscard]] int calibration_degree() const noexcept { return degree_; }
  [[nodiscard]] const std::vector<Stage>& stages() const noexcept { return stages_; }
  [[nodiscard]] ModelProvenance& provenance() noexcept { return provenance_; }
  [[nodiscard]] const ModelProvenance& provenance() const noexcept { return provenance_; }

  /// Names the classes as `LinearModel::set_labels` does (K distinct labels), in every stage:
  /// the solvers' chains carry class indices 0..K−1 as labels.
  void set_labels(std::vector<Label> labels) {
    if (labels.size() != labels_.size())
      throw std::invalid_argument("StagedModel::set_labels: " + std::to_string(labels.size()) + " labels for " +
                                  std::to_string(labels_.size()) + " classes");
    std::vector<Label> sorted = labels;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
      throw std::invalid_argument("StagedModel::set_labels: the labels must be distinct");
    for (Stage& stage : stages_) stage.linear.set_labels(labels);
    labels_ = std::move(labels);
  }

  /// Appends a stage (checked: shapes must match the model).
  void add_stage(Stage stage) {
    const auto K = n_classes();
    const std::int64_t inputs = stage.features == Features::original ? n_features_ : stage.rff.output_dim;
    if (stage.linear.n_classes() != K || stage.linear.n_features() != inputs)
      throw std::invalid_argument("StagedModel::add_stage: the stage's linear part is " +
                                  std::to_string(stage.linear.n_features()) + " × " +
                                  std::to_string(stage.linear.n_classes()) + ", expected " + std::to_string(inputs) +
                                  " × " + std::to_string(K));
    if (stage.features == Features::rff && stage.rff.input_dim != n_features_)
      throw std::invalid_argument("StagedModel::add_stage: the random features read " +
                                  std::to_string(stage.rff.input_dim) + " features, the model has " +
                                  std::to_string(n_features_));
    if (stage.calibration.size() > 0 && (stage.calibration.rows() != degree_ * K + 1 || stage.calibration.cols() != K))
      throw std::invalid_argument("StagedModel::add_stage: the calibration must be (m·K + 1) × K");
    stages_.push_back(std::move(stage));
  }

  /// Applies stage t to the predictions Y (n × K) of the samples X — the step (10)–(11).
  /// X: a CsrView, a CscView or a dense row-major Eigen matrix of this Scalar.
  template <class Design>
  void apply_stage(std::size_t t, const Design& X, RowMatrix& Y) const {
    const Stage& stage = stages_.at(t);
    if (stage.features == Features::original) {
      Y += stage.linear.decision_function(X);
    } else {
      Y += stage.linear.decision_function(stage.rff.transform(eigen_of(X)));
    }
    if (stage.calibration.size() > 0) calibrate(stage, Y);
  }

  /// ŷ⁽ᵀ⁾ (n × K) for the samples X (CsrView, CscView or dense row-major matrix).
  /// Consecutive stages on the same random features (calibrated least squares on φ(x)) share
  /// one transform.
  template <class Design>
  [[nodiscard]] RowMatrix decision_function(const Design& X) const {
    RowMatrix Y = RowMatrix::Zero(X.rows(), n_classes());
    RowMatrix Z;  // φ(X) of the last random-feature stage
    const RandomFourierFeatures<Scalar>* made = nullptr;
    for (std::size_t t = 0; t < stages_.size(); ++t) {
      const Stage& stage = stages_[t];
      if (stage.features == Features::original) {
        apply_stage(t, X, Y);
        continue;
      }
      if (made == nullptr || !same_generator(*made, stage.rff)) {
        Z = stage.rff.transform(eigen_of(X));
        made = &stage.rff;
      }
      Y += stage.linear.decision_function(Z);
      if (stage.calibration.size() > 0) calibrate(stage, Y);
    }
    return Y;
  }

  /// True when two generators make the same features (same seed, dimensions and bandwidth).
  [[nodiscard]] static bool same_generator(const RandomFourierFeatures<Scalar>& a, const RandomFourierFeatures<Scalar>& b) {
    return a.seed == b.seed && a.input_dim == b.input_dim && a.output_dim == b.output_dim && a.bandwidth == b.bandwidth;
  }

  /// Predicted class index per sample: argmax of ŷ⁽ᵀ⁾, first maximum on ties.
  template <class Design>
  [[nodiscard]] std::vector<ClassIndex> predict_classes(const Design& X) const {
    return argmax_rows(decision_function(X));
  }

  /// Predicted label per sample.
  template <class Design>
  [[nodiscard]] std::vector<Label> predict(const Design& X) const {
    const auto classes = predict_classes(X);
    std::vector<Label> out(classes.size());
    for (std::size_t i = 0; i < classes.size(); ++i) out[i] = labels_[static_cast<std::size_t>(classes[i])];
    return out;
  }

  /// First maximum of every row (NaN ranks below every number).
  [[nodiscard]] static std::vector<ClassIndex> argmax_rows(const RowMatrix& Y) {
    std::vector<ClassIndex> out(static_cast<std::size_t>(Y.rows()));
    for (Eigen::Index i = 0; i < Y.rows(); ++i) {
      Eigen::Index best = 0;
      for (Eigen::Index k = 1; k < Y.cols(); ++k)
        if (Y(i, k) > Y(i, best) || (std::isnan(Y(i, best)) && !std::isnan(Y(i, k)))) best = k;
      out[static_cast<std::size_t>(i)] = static_cast<ClassIndex>(best);
    }
    return out;
  }

 private:
  /// Y ← clip(W̃ᵀu(Y)), step (11).
  void calibrate(const Stage& stage, RowMatrix& Y) const {
    RowMatrix U;
    calibration_basis(Y, degree_, U);
    Y.noalias() = U * stage.calibration;
    clip_rows_to_simplex(Y);
  }

  template <class Design>
  static decltype(auto) eigen_of(const Design& X) {
    if constexpr (requires { X.eigen(); }) return X.eigen();
    else return (X);
  }

  std::int64_t n_features_ = 0;
  std::vector<Label> labels_;
  int degree_ = 3;
  std::vector<Stage> stages_;
  ModelProvenance provenance_;
};

/// What CalibratedLS and Stagewise return: the chain model and the information block.
template <RealScalar Scalar>
struct StagedResult {
  StagedModel<Scalar> model;
  SolverInfo info;
};

}  // namespace sparsemc
