#pragma once
/// \file loss_state.hpp
/// The per-sample cache behind BlockCD (Blondel, Seki & Uehara 2013, §4.3).
///
/// A block update changes one feature row W_j: of W, hence the scores s_i = Wᵀx_i + b only of
/// the samples i ∈ supp(x_j), each by x_ij·δ. The cache keeps, per sample, what the loss needs
/// to produce its gradient, its generalised Hessian diagonal (eq. 6) and its value without
/// touching W: the scores S (n × K, row-major, so a sample's K scores are contiguous), the
/// loss values ℓ_i (the line search's objective difference, eq. 7, is then a sum over
/// supp(x_j) of c_i(ℓ_i' − ℓ_i)/n), and for the logistic loss the max-shifted exponentials
/// exp(s_i − max s_i) and Z'_i = Σ_{k≠argmax} exp(s_ik − max s_i), so that gradients and
/// curvatures cost no exponential and a step costs K exponentials per touched sample.
///
/// Every kernel offers, for a column (x_ij)_{i ∈ supp(x_j)} given as a SparseSlice:
///   gradient<WithCurvature>(col, G, H)  G = (1/n) Σ_i c_i x_ij ∇ℓ_i  (block gradient, eq. 5)
///                                       H = (1/n) Σ_i c_i x_ij² h_i   (eq. 6)
///   trial(col, δ, α)     Σ_i c_i (ℓ(s_i + α x_ij δ) − ℓ_i)/n, remembering the trial state
///   commit(col, δ, α)    makes the last trial the current state (after an accepted step)
///   apply(col, δ, α)     trial + commit in one pass (steps that need no test)
/// each O(|supp(x_j)|·K) and allocation-free. G, H and δ are `stride()` long; entries past K
/// are zero (δ) or written as zero (G, H). A kernel whose per-class margins move independently
/// (OvrSquaredHinge) also offers, in O(|supp(x_j)|·|classes|):
///   trial(col, δ, α, moved), commit(col, δ, α, moved)   for a δ zero outside `moved` (an ℓ1
///                                       step moves a few entries of a row: LIBLINEAR's CDN)
///   gradient<WithCurvature>(col, G, H, listed, is_listed)   on a row's working set of classes
/// (the class-by-class trial keeps ℓ_i as ℓ_i + Δℓ_i, not recomputed; refresh() resets it).
///
/// Layout for SIMD: the fused kernels (SquaredHinge, OvrSquaredHinge, Logistic) store each
/// sample's scores in a row padded to a multiple of the SIMD width and aligned, with −∞ in the
/// padding. −∞ is neutral for all three losses (a margin max(0, 1 + s − s_y) of 0, a
/// probability exp(−∞) = 0), so every per-sample operation is a whole-row Eigen array
/// expression with aligned packets, no peeling, no per-class branch. `BlockKernel<Loss, …>`
/// for any other SmoothLoss falls back to the loss's own gradient/curvature/value on unpadded
/// rows.

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "../../../data/problem.hpp"
#include "../../../data/sparse_view.hpp"
#include "../../../loss/concepts.hpp"
#include "../../../loss/logistic.hpp"
#include "../../../loss/ovr_squared_hinge.hpp"
#include "../../../loss/squared_hinge.hpp"

namespace sparsemc::detail {

/// What every kernel stores: scores, loss values, per-sample costs c_i/n and the labels.
/// With `Padded`, rows are `stride()` ≥ K long (a multiple of the SIMD alignment, so every row
/// is aligned) and hold −∞ past K; otherwise rows are exactly K long.
/// The loss part's change Σ_i c_i (ℓ(s_i + α x_ij δ) − ℓ(s_i))/n for a trial step on one
/// column, and a bound on its rounding error: the line search cannot decide eq. (7) for
/// predicted decreases below `noise`.
struct Trial {
  double difference = 0.0;
  double noise = 0.0;
};

template <RealScalar Scalar, StorageIndex Index, bool Padded>
class ScoreCache {
 public:
  using Column = SparseSlice<Scalar, Index>;
  using Array = Eigen::Array<Scalar, Eigen::Dynamic, 1>;
  /// A whole row (aligned when padded) and its const version.
  using RowMap = Eigen::Map<Array, Padded ? Eigen::AlignedMax : Eigen::Unaligned>;
  using ConstRowMap = Eigen::Map<const Array, Padded ? Eigen::AlignedMax : Eigen::Unaligned>;

  /// Row length for K classes: K rounded up to the SIMD alignment when padded, else K.
  static std::size_t stride_for(std::size_t K) noexcept {
    constexpr std::size_t lanes = std::max<std::size_t>(1, EIGEN_MAX_ALIGN_BYTES / sizeof(Scalar));
    return Padded ? (K + lanes - 1) / lanes * lanes : K;
  }

  /// Row length of S (and of the G, H, δ buffers the kernels take).
  [[nodiscard]] std::size_t stride() const noexcept { return stride_; }
  [[nodiscard]] std::size_t n_samples() const noexcept { return n_; }
  [[nodiscard]] const Scalar* row(std::size_t i) const noexcept { return S_.data() + i * stride_; }
  [[nodiscard]] Scalar* row(std::size_t i) noexcept { return S_.data() + i * stride_; }

  /// The cached scores as an n × K row-major matrix (rows `stride()` apart; the padding is
  /// not part of it): what the duality gap of (1) reads (solver/duality_gap.hpp).
  [[nodiscard]] Eigen::Map<const Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>, 0,
                           Eigen::OuterStride<>>
  scores_matrix() const noexcept {
    return {S_.data(), static_cast<Eigen::Index>(n_), static_cast<Eigen::Index>(K_),
            Eigen::OuterStride<>(static_cast<Eigen::Index>(stride_))};
  }

  /// S = XW + 1bᵀ for a row-major d × K matrix W (only its nonzero rows are read) and b
  /// (null for b = 0).
  void set_scores(const CscView<Scalar, Index>& X, const Scalar* W, const Scalar* b) {
    for (std::size_t i = 0; i < n_; ++i) {
      Scalar* s = row(i);
      for (std::size_t r = 0; r < K_; ++r) s[r] = b != nullptr ? b[r] : Scalar(0);
    }
    if (W == nullptr) return;
    for (Index j = 0; j < X.cols(); ++j) {
      const Scalar* w = W + static_cast<std::size_t>(j) * K_;
      if (std::all_of(w, w + K_, [](Scalar v) { return v == Scalar(0); })) continue;
      for (auto [i, x] : X.outer(j)) {
        Scalar* s = row(static_cast<std::size_t>(i));
        for (std::size_t r = 0; r < K_; ++r) s[r] += x * w[r];
      }
    }
  }

  /// (1/n) Σ_i c_i ℓ_i, the loss part of objective (1), from the cached values.
  [[nodiscard]] double loss_part() const {
    double sum = 0.0;
    for (std::size_t i = 0; i < n_; ++i) sum += static_cast<double>(cost_[i]) * static_cast<double>(value_[i]);
    return sum;
  }

 protected:
  /// Sizes the cache for a problem; `max_column` is the largest |supp(x_j)| a step will touch.
  void allocate(const Problem<Scalar, Index, Eigen::ColMajor>& problem, std::size_t max_column) {
    n_ = static_cast<std::size_t>(problem.n_samples());
    K_ = static_cast<std::size_t>(problem.n_classes());
    stride_ = stride_for(K_);
    y_ = problem.y;
    cost_.resize(n_);
    const Scalar inv_n = Scalar(1) / static_cast<Scalar>(n_);
    for (std::size_t i = 0; i < n_; ++i) cost_[i] = problem.weight(static_cast<Index>(i)) * inv_n;
    S_.setConstant(static_cast<Eigen::Index>(n_ * stride_), -std::numeric_limits<Scalar>::infinity());
    value_.assign(n_, Scalar(0));
    trial_value_.assign(max_column, Scalar(0));
    trial_change_.assign(max_column, Scalar(0));
  }

  [[nodiscard]] ConstRowMap row_map(const Scalar* p) const noexcept {
    return {p, static_cast<Eigen::Index>(stride_)};
  }
  [[nodiscard]] RowMap row_map(Scalar* p) const noexcept { return {p, static_cast<Eigen::Index>(stride_)}; }

  /// s ← s + t δ over a whole row.
  void axpy(Scalar* s, Scalar t, const Scalar* delta) const noexcept { row_map(s) += t * row_map(delta); }

  /// on_r = [a_r > 0] over a whole row: a plain loop the compiler vectorises (compare and
  /// mask), which Eigen 3.4's boolean array expressions are not.
  void indicator_positive(const Scalar* __restrict a, Scalar* __restrict on) const noexcept {
    for (std::size_t r = 0; r < stride_; ++r) on[r] = a[r] > Scalar(0) ? Scalar(1) : Scalar(0);
  }

  /// Asks the cache for a row of S (or of a kernel's own n-row table) ahead of its use (rows are scattered in S,
  /// which is often larger than the cache: hiding that latency is most of a block's speed).
  void prefetch(const Scalar* row_start) const noexcept {
#if defined(__GNUC__) || defined(__clang__)
    const char* p = reinterpret_cast<const char*>(row_start);
    for (std::size_t offset = 0; offset < stride_ * sizeof(Scalar); offset += 64) __builtin_prefetch(p + offset);
#else
    (void)row_start;
#endif
  }
  /// The score row of the sample `prefetch_distance` positions further down the column.
  void prefetch_ahead(const Column& col, std::size_t p) const noexcept {
    if (p + prefetch_distance < col.size()) prefetch(row(static_cast<std::size_t>(col.indices[p + prefetch_distance])));
  }
  /// How many samples ahead a column loop prefetches.
  static constexpr std::size_t prefetch_distance = 4;

  /// Σ_i c_i (ℓ_i' − ℓ_i)/n over a column from the trial values just computed, with a bound on
  /// its rounding error (the difference of two nearly equal sums).
  [[nodiscard]] Trial difference_of_values(const Column& col) const noexcept {
    Trial out;
    for (std::size_t p = 0; p < col.size(); ++p) {
      const auto i = static_cast<std::size_t>(col.indices[p]);
      const double c = static_cast<double>(cost_[i]);
      const double before = static_cast<double>(value_[i]), after = static_cast<double>(trial_value_[p]);
      out.difference += c * (after - before);
      out.noise += c * (std::abs(after) + std::abs(before));
    }
    out.noise *= 4 * static_cast<double>(std::numeric_limits<Scalar>::epsilon());
    return out;
  }
  /// Σ_i c_i Δℓ_i/n over a column from per-sample changes computed without cancellation.
  [[nodiscard]] Trial sum_of_changes(const Column& col) const noexcept {
    Trial out;
    for (std::size_t p = 0; p < col.size(); ++p) {
      const double term = static_cast<double>(cost_[static_cast<std::size_t>(col.indices[p])]) *
                          static_cast<double>(trial_change_[p]);
      out.difference += term;
      out.noise += std::abs(term);
    }
    out.noise *= 4 * static_cast<double>(std::numeric_limits<Scalar>::epsilon());
    return out;
  }

  /// Makes the trial values of a column current, with the scores moved by α x_ij δ.
  void commit_scores(const Column& col, const Scalar* delta, Scalar alpha) {
    for (std::size_t p = 0; p < col.size(); ++p) {
      prefetch_ahead(col, p);
      const auto i = static_cast<std::size_t>(col.indices[p]);
      axpy(row(i), alpha * col.values[p], delta);
      value_[i] = trial_value_[p];
    }
  }

  std::size_t n_ = 0;
  std::size_t K_ = 0;
  std::size_t stride_ = 0;
  LabelView y_;
  std::vector<Scalar> cost_;         ///< c_i / n
  Array S_;                          ///< scores, n rows of `stride_` (aligned by Eigen)
  std::vector<Scalar> value_;        ///< ℓ_i at the current scores
  std::vector<Scalar> trial_value_;  ///< ℓ at the last trial, per position in the column
  std::vector<Scalar> trial_change_;  ///< ℓ' − ℓ of the last trial without cancellation (fused kernels)
};

/// Fallback for any SmoothLoss: the loss's own gradient, curvature and value per sample, on
/// unpadded rows.
template <class Loss, RealScalar Scalar, StorageIndex Index>
class BlockKernel : public ScoreCache<Scalar, Index, false> {
  using Base = ScoreCache<Scalar, Index, false>;
  using Base::cost_, Base::K_, Base::n_, Base::y_, Base::value_, Base::trial_value_;

 public:
  using Column = typename Base::Column;

  BlockKernel(const Loss& loss, const Problem<Scalar, Index, Eigen::ColMajor>& problem, std::size_t max_column)
      : loss_(loss) {
    Base::allocate(problem, max_column);
    g_.resize(K_);
    h_.resize(K_);
    s_.resize(K_);
  }

  /// ℓ_i from the current scores, for every sample.
  void refresh() {
    for (std::size_t i = 0; i < n_; ++i) value_[i] = loss_.value(scores(i), y_[i]);
  }

  template <bool WithCurvature>
  void gradient(const Column& col, Scalar* G, Scalar* H) {
    std::fill_n(G, K_, Scalar(0));
    if constexpr (WithCurvature) std::fill_n(H, K_, Scalar(0));
    for (std::size_t p = 0; p < col.size(); ++p) {
      const auto i = static_cast<std::size_t>(col.indices[p]);
      const Scalar x = col.values[p];
      const Scalar c = cost_[i] * x;
      loss_.gradient(scores(i), y_[i], std::span<Scalar>(g_));
      for (std::size_t r = 0; r < K_; ++r) G[r] += c * g_[r];
      if constexpr (WithCurvature) {
        loss_.curvature(scores(i), y_[i], std::span<Scalar>(h_));
        const Scalar cx = c * x;
        for (std::size_t r = 0; r < K_; ++r) H[r] += cx * h_[r];
      }
    }
  }

  Trial trial(const Column& col, const Scalar* delta, Scalar alpha) {
    for (std::size_t p = 0; p < col.size(); ++p) {
      const auto i = static_cast<std::size_t>(col.indices[p]);
      const Scalar t = alpha * col.values[p];
      const Scalar* s = this->row(i);
      for (std::size_t r = 0; r < K_; ++r) s_[r] = s[r] + t * delta[r];
      trial_value_[p] = loss_.value(std::span<const Scalar>(s_), y_[i]);
    }
    return this->difference_of_values(col);
  }

  void commit(const Column& col, const Scalar* delta, Scalar alpha) { this->commit_scores(col, delta, alpha); }

  void apply(const Column& col, const Scalar* delta, Scalar alpha) {
    for (std::size_t p = 0; p < col.size(); ++p) {
      const auto i = static_cast<std::size_t>(col.indices[p]);
      this->axpy(this->row(i), alpha * col.values[p], delta);
      value_[i] = loss_.value(scores(i), y_[i]);
    }
  }

 private:
  [[nodiscard]] std::span<const Scalar> scores(std::size_t i) const { return {this->row(i), K_}; }

  Loss loss_;
  std::vector<Scalar> g_, h_, s_;  // one sample's gradient, curvature, trial scores
};

/// Multiclass squared hinge (Blondel eq. 2): a_r = max(0, 1 − s_y + s_r), ℓ = Σ_{r≠y} a_r²,
/// ∇ℓ = 2a_r (r ≠ y), −2Σa_r (y); h = 2[a_r > 0] (r ≠ y), 2·#active (y). Algorithm 3 of the
/// paper as whole-row array operations: the row of margins is computed over every r, r = y
/// included (its "margin" max(0, (1 − s_y) + s_y) ≈ 1 is taken back out algebraically), and the
/// true-class terms are accumulated apart from G and H, then added once per column.
template <RealScalar Scalar, StorageIndex Index>
class BlockKernel<SquaredHinge, Scalar, Index> : public ScoreCache<Scalar, Index, true> {
  using Base = ScoreCache<Scalar, Index, true>;
  using Base::cost_, Base::K_, Base::n_, Base::y_, Base::value_, Base::trial_value_, Base::trial_change_,
      Base::stride_;
  using Array = typename Base::Array;

 public:
  using Column = typename Base::Column;

  BlockKernel(const SquaredHinge&, const Problem<Scalar, Index, Eigen::ColMajor>& problem, std::size_t max_column) {
    Base::allocate(problem, max_column);
    a_.resize(static_cast<Eigen::Index>(stride_));
    on_.resize(static_cast<Eigen::Index>(stride_));
    d_.resize(static_cast<Eigen::Index>(stride_));
    G_y_.resize(static_cast<Eigen::Index>(stride_));
    H_y_.resize(static_cast<Eigen::Index>(stride_));
  }

  void refresh() {
    for (std::size_t i = 0; i < n_; ++i) value_[i] = value(this->row(i), label(i));
  }

  template <bool WithCurvature>
  void gradient(const Column& col, Scalar* G_out, Scalar* H_out) {
    auto G = this->row_map(G_out);
    G.setZero();
    G_y_.setZero();
    if constexpr (WithCurvature) {
      this->row_map(H_out).setZero();
      H_y_.setZero();
    }
    for (std::size_t p = 0; p < col.size(); ++p) {
      this->prefetch_ahead(col, p);
      const auto i = static_cast<std::size_t>(col.indices[p]);
      const Scalar x = col.values[p];
      const Scalar g2 = Scalar(2) * cost_[i] * x;  // 2 c_i x_ij / n
      const std::size_t y = label(i);
      const Scalar* s = this->row(i);
      const Scalar shift = Scalar(1) - s[y];
      a_ = (this->row_map(s) + shift).max(Scalar(0));  // every r, y included
      G += g2 * a_;
      // −2Σ_{r≠y} a_r for the true class, and cancel the +2a_y just added: −2Σ_r a_r.
      G_y_[static_cast<Eigen::Index>(y)] += g2 * a_.sum();
      if constexpr (WithCurvature) {
        const Scalar h2 = g2 * x;
        this->indicator_positive(a_.data(), on_.data());
        this->row_map(H_out) += h2 * on_;
        // 2·#{r ≠ y active} for the true class, and cancel the 2[a_y > 0] just added.
        const auto on_y = static_cast<Scalar>(shift + s[y] > Scalar(0));
        H_y_[static_cast<Eigen::Index>(y)] += h2 * (on_.sum() - Scalar(2) * on_y);
      }
    }
    G -= G_y_;
    if constexpr (WithCurvature) this->row_map(H_out) += H_y_;
  }

  Trial trial(const Column& col, const Scalar* delta, Scalar alpha) {
    for (std::size_t p = 0; p < col.size(); ++p) {
      this->prefetch_ahead(col, p);
      const auto i = static_cast<std::size_t>(col.indices[p]);
      const Scalar t = alpha * col.values[p];
      const std::size_t y = label(i);
      const Scalar* s = this->row(i);
      // Margins m = 1 + s_r − s_y move by u = t(δ_r − δ_y): a = max(m, 0) becomes a + d with
      // d = max(min(m, 0) + u, −a) (= max(u, −m) on active margins: no cancellation), and the
      // change of Σ a² is Σ d(2a + d). The true class has u = 0, d = 0.
      const auto m = this->row_map(s) + (Scalar(1) - s[y]);
      a_ = m.max(Scalar(0));
      d_ = (m.min(Scalar(0)) + t * (this->row_map(delta) - delta[y])).max(-a_);
      trial_change_[p] = (d_ * (Scalar(2) * a_ + d_)).sum();
      const Scalar a_y = a_[static_cast<Eigen::Index>(y)];
      trial_value_[p] = (a_ + d_).square().sum() - a_y * a_y;
    }
    return this->sum_of_changes(col);
  }

  void commit(const Column& col, const Scalar* delta, Scalar alpha) { this->commit_scores(col, delta, alpha); }

  void apply(const Column& col, const Scalar* delta, Scalar alpha) {
    for (std::size_t p = 0; p < col.size(); ++p) {
      this->prefetch_ahead(col, p);
      const auto i = static_cast<std::size_t>(col.indices[p]);
      Scalar* s = this->row(i);
      this->axpy(s, alpha * col.values[p], delta);
      value_[i] = value(s, label(i));
    }
  }

 private:
  [[nodiscard]] std::size_t label(std::size_t i) const noexcept { return static_cast<std::size_t>(y_.single(i)); }

  /// ℓ at s: Σ_r a_r² over every r, minus a_y² computed the same way.
  Scalar value(const Scalar* s, std::size_t y) const {
    const Scalar shift = Scalar(1) - s[y];
    return (this->row_map(s) + shift).max(Scalar(0)).square().sum() - square(std::max(Scalar(0), shift + s[y]));
  }
  static Scalar square(Scalar a) noexcept { return a * a; }

  Array a_, on_, d_;  // one sample's margins, their activity [a_r > 0], a trial's change
  Array G_y_, H_y_;  // true-class parts of G and H
};

/// One-vs-rest squared hinge (Blondel eq. 11): a_r = max(0, 1 − Y_r s_r), ℓ = Σ_r a_r²,
/// ∇ℓ = −2Y_r a_r, h = 2[a_r > 0]; Y_r = +1 for the sample's classes (any number), −1 else.
/// Every class is first treated as a negative (a whole-row operation, neutral on the −∞
/// padding); the few positive classes are corrected one by one in accumulators apart from G
/// and H.
template <RealScalar Scalar, StorageIndex Index>
class BlockKernel<OvrSquaredHinge, Scalar, Index> : public ScoreCache<Scalar, Index, true> {
  using Base = ScoreCache<Scalar, Index, true>;
  using Base::cost_, Base::K_, Base::n_, Base::y_, Base::value_, Base::trial_value_, Base::trial_change_,
      Base::stride_;
  using Array = typename Base::Array;

 public:
  using Column = typename Base::Column;

  BlockKernel(const OvrSquaredHinge&, const Problem<Scalar, Index, Eigen::ColMajor>& problem,
              std::size_t max_column) {
    Base::allocate(problem, max_column);
    a_.resize(static_cast<Eigen::Index>(stride_));
    on_.resize(static_cast<Eigen::Index>(stride_));
    d_.resize(static_cast<Eigen::Index>(stride_));
    G_y_.resize(static_cast<Eigen::Index>(stride_));
    H_y_.resize(static_cast<Eigen::Index>(stride_));
  }

  void refresh() {
    for (std::size_t i = 0; i < n_; ++i) value_[i] = value(this->row(i), y_[i]);
  }

  template <bool WithCurvature>
  void gradient(const Column& col, Scalar* G_out, Scalar* H_out) {
    auto G = this->row_map(G_out);
    G.setZero();
    G_y_.setZero();
    if constexpr (WithCurvature) {
      this->row_map(H_out).setZero();
      H_y_.setZero();
    }
    for (std::size_t p = 0; p < col.size(); ++p) {
      this->prefetch_ahead(col, p);
      const auto i = static_cast<std::size_t>(col.indices[p]);
      const Scalar x = col.values[p];
      const Scalar g2 = Scalar(2) * cost_[i] * x;
      const Scalar h2 = g2 * x;
      const Scalar* s = this->row(i);
      a_ = (this->row_map(s) + Scalar(1)).max(Scalar(0));  // every class as a negative
      G += g2 * a_;
      if constexpr (WithCurvature) {
        this->indicator_positive(a_.data(), on_.data());
        this->row_map(H_out) += h2 * on_;
      }
      for (const ClassIndex q : y_[i]) {  // positives: replace +a_neg by −a_pos
        const Scalar neg = std::max(Scalar(0), Scalar(1) + s[q]);
        const Scalar pos = std::max(Scalar(0), Scalar(1) - s[q]);
        G_y_[q] += g2 * (pos + neg);
        if constexpr (WithCurvature)
          H_y_[q] += h2 * (static_cast<Scalar>(pos > Scalar(0)) - static_cast<Scalar>(neg > Scalar(0)));
      }
    }
    G -= G_y_;
    if constexpr (WithCurvature) this->row_map(H_out) += H_y_;
  }

  Trial trial(const Column& col, const Scalar* delta, Scalar alpha) {
    for (std::size_t p = 0; p < col.size(); ++p) {
      this->prefetch_ahead(col, p);
      const auto i = static_cast<std::size_t>(col.indices[p]);
      const Scalar t = alpha * col.values[p];
      const Scalar* s = this->row(i);
      // As a negative, class r has margin m = 1 + s_r moving by u = tδ_r; a = max(m, 0) becomes
      // a + d with d = max(min(m, 0) + u, −a), and Σ a² changes by Σ d(2a + d) (see the squared
      // hinge kernel). Positives are then corrected one by one (margin 1 − s_q, move −tδ_q).
      const auto m = this->row_map(s) + Scalar(1);
      a_ = m.max(Scalar(0));
      d_ = (m.min(Scalar(0)) + t * this->row_map(delta)).max(-a_);
      Scalar change = (d_ * (Scalar(2) * a_ + d_)).sum();
      Scalar value = (a_ + d_).square().sum();
      for (const ClassIndex q : y_[i]) {
        const auto [neg_change, neg_after] = margin_change(Scalar(1) + s[q], t * delta[q]);
        const auto [pos_change, pos_after] = margin_change(Scalar(1) - s[q], -t * delta[q]);
        change += pos_change - neg_change;
        value += pos_after * pos_after - neg_after * neg_after;
      }
      trial_change_[p] = change;
      trial_value_[p] = value;
    }
    return this->sum_of_changes(col);
  }

  void commit(const Column& col, const Scalar* delta, Scalar alpha) { this->commit_scores(col, delta, alpha); }

  /// gradient() on the classes `listed` alone (`is_listed` marks them over 0..K−1): G and H
  /// must be zero on entry, and stay zero on the other classes.
  template <bool WithCurvature>
  void gradient(const Column& col, Scalar* G, Scalar* H, std::span<const ClassIndex> listed,
                const char* is_listed) {
    for (std::size_t p = 0; p < col.size(); ++p) {
      const auto i = static_cast<std::size_t>(col.indices[p]);
      const Scalar x = col.values[p];
      const Scalar g2 = Scalar(2) * cost_[i] * x;
      const Scalar h2 = g2 * x;
      const Scalar* s = this->row(i);
      for (const ClassIndex k : listed) {  // as a negative
        const Scalar neg = std::max(Scalar(0), Scalar(1) + s[k]);
        G[k] += g2 * neg;
        if constexpr (WithCurvature) H[k] += h2 * static_cast<Scalar>(neg > Scalar(0));
      }
      for (const ClassIndex q : y_[i]) {  // positives: replace +a_neg by −a_pos
        if (!is_listed[q]) continue;
        const Scalar neg = std::max(Scalar(0), Scalar(1) + s[q]);
        const Scalar pos = std::max(Scalar(0), Scalar(1) - s[q]);
        G[q] -= g2 * (pos + neg);
        if constexpr (WithCurvature)
          H[q] += h2 * (static_cast<Scalar>(pos > Scalar(0)) - static_cast<Scalar>(neg > Scalar(0)));
      }
    }
  }

  /// trial() for a δ that is zero outside the classes `moved`: only their margins change
  /// (each as a negative, the sample's positives among them corrected as above).
  Trial trial(const Column& col, const Scalar* delta, Scalar alpha, std::span<const ClassIndex> moved) {
    for (std::size_t p = 0; p < col.size(); ++p) {
      const auto i = static_cast<std::size_t>(col.indices[p]);
      const Scalar t = alpha * col.values[p];
      const Scalar* s = this->row(i);
      Scalar change = 0;
      for (const ClassIndex k : moved) change += margin_change(Scalar(1) + s[k], t * delta[k]).first;
      for (const ClassIndex q : y_[i]) {
        if (delta[q] == Scalar(0)) continue;
        change += margin_change(Scalar(1) - s[q], -t * delta[q]).first -
                  margin_change(Scalar(1) + s[q], t * delta[q]).first;
      }
      trial_change_[p] = change;
      trial_value_[p] = value_[i] + change;
    }
    return this->sum_of_changes(col);
  }

  /// commit() of a trial over the classes `moved`.
  void commit(const Column& col, const Scalar* delta, Scalar alpha, std::span<const ClassIndex> moved) {
    for (std::size_t p = 0; p < col.size(); ++p) {
      const auto i = static_cast<std::size_t>(col.indices[p]);
      const Scalar t = alpha * col.values[p];
      Scalar* s = this->row(i);
      for (const ClassIndex k : moved) s[k] += t * delta[k];
      value_[i] = trial_value_[p];
    }
  }

  void apply(const Column& col, const Scalar* delta, Scalar alpha) {
    for (std::size_t p = 0; p < col.size(); ++p) {
      this->prefetch_ahead(col, p);
      const auto i = static_cast<std::size_t>(col.indices[p]);
      Scalar* s = this->row(i);
      this->axpy(s, alpha * col.values[p], delta);
      value_[i] = value(s, y_[i]);
    }
  }

 private:
  /// ℓ at s: every class as a negative, then the positives corrected.
  Scalar value(const Scalar* s, ClassSet y) const {
    Scalar sum = (this->row_map(s) + Scalar(1)).max(Scalar(0)).square().sum();
    for (const ClassIndex q : y) {
      const Scalar neg = std::max(Scalar(0), Scalar(1) + s[q]);
      const Scalar pos = std::max(Scalar(0), Scalar(1) - s[q]);
      sum += pos * pos - neg * neg;
    }
    return sum;
  }

  /// For one margin m moving by u: the change of max(m, 0)² without cancellation, and the new
  /// max(m + u, 0).
  static std::pair<Scalar, Scalar> margin_change(Scalar m, Scalar u) noexcept {
    const Scalar a = std::max(m, Scalar(0));
    const Scalar d = std::max(std::min(m, Scalar(0)) + u, -a);
    return {d * (Scalar(2) * a + d), a + d};
  }

  Array a_, on_, d_;  // one sample's margins (every class as a negative), [a_r > 0], change
  Array G_y_, H_y_;  // corrections of the positive classes
};

/// Multinomial logistic (Blondel eq. 12; multilabel: KL to the uniform target over y, as in
/// loss/logistic.hpp). Besides the scores it keeps, per sample, e = exp(s − max s) (n × K) and
/// Z' = Σ_{k≠argmax} e_k, so p = e/(1 + Z') needs no exponential: the gradient and curvature
/// passes are as cheap as the squared hinge's, and only a step pays K exponentials per sample.
template <RealScalar Scalar, StorageIndex Index>
class BlockKernel<Logistic, Scalar, Index> : public ScoreCache<Scalar, Index, true> {
  using Base = ScoreCache<Scalar, Index, true>;
  using Base::cost_, Base::K_, Base::n_, Base::y_, Base::value_, Base::trial_value_, Base::trial_change_,
      Base::stride_;
  using Array = typename Base::Array;

 public:
  using Column = typename Base::Column;

  BlockKernel(const Logistic&, const Problem<Scalar, Index, Eigen::ColMajor>& problem, std::size_t max_column) {
    Base::allocate(problem, max_column);
    G_y_.resize(static_cast<Eigen::Index>(stride_));
    em1_.resize(static_cast<Eigen::Index>(stride_));
    E_.setZero(static_cast<Eigen::Index>(n_ * stride_));
    rest_.assign(n_, Scalar(0));
    trial_S_.setZero(static_cast<Eigen::Index>(max_column * stride_));
    trial_E_.setZero(static_cast<Eigen::Index>(max_column * stride_));
    trial_rest_.assign(max_column, Scalar(0));
  }

  void refresh() {
    for (std::size_t i = 0; i < n_; ++i) value_[i] = evaluate(this->row(i), exps(i), rest_[i], y_[i]);
  }

  template <bool WithCurvature>
  void gradient(const Column& col, Scalar* G_out, Scalar* H_out) {
    auto G = this->row_map(G_out);
    G.setZero();
    G_y_.setZero();
    if constexpr (WithCurvature) this->row_map(H_out).setZero();
    for (std::size_t p = 0; p < col.size(); ++p) {
      prefetch_exps_ahead(col, p);
      const auto i = static_cast<std::size_t>(col.indices[p]);
      const ClassSet y = y_[i];
      if (y.empty()) continue;  // no target: ℓ = 0
      const Scalar x = col.values[p];
      const Scalar c = cost_[i] * x;
      const Scalar inv_z = Scalar(1) / (Scalar(1) + rest_[i]);
      const auto e = this->row_map(exps(i));
      G += (c * inv_z) * e;  // c p
      const Scalar target = c / static_cast<Scalar>(y.size());
      for (const ClassIndex k : y) G_y_[k] += target;  // c q, subtracted at the end
      if constexpr (WithCurvature) this->row_map(H_out) += (c * x * inv_z) * e * (Scalar(1) - inv_z * e);
    }
    G -= G_y_;
  }

  Trial trial(const Column& col, const Scalar* delta, Scalar alpha) {
    const auto dv = this->row_map(delta);
    const Scalar delta_max = dv.abs().maxCoeff();
    for (std::size_t p = 0; p < col.size(); ++p) {
      this->prefetch_ahead(col, p);
      const auto i = static_cast<std::size_t>(col.indices[p]);
      const Scalar t = alpha * col.values[p];
      Scalar* s = trial_S_.data() + p * stride_;
      this->row_map(s) = this->row_map(this->row(i)) + t * dv;
      trial_value_[p] = evaluate(s, trial_E_.data() + p * stride_, trial_rest_[p], y_[i]);
      trial_change_[p] = change(i, dv, t, std::abs(t) * delta_max);
    }
    return this->sum_of_changes(col);
  }

  void commit(const Column& col, const Scalar*, Scalar) {
    for (std::size_t p = 0; p < col.size(); ++p) {
      this->prefetch_ahead(col, p);
      prefetch_exps_ahead(col, p);
      const auto i = static_cast<std::size_t>(col.indices[p]);
      this->row_map(this->row(i)) = this->row_map(trial_S_.data() + p * stride_);
      this->row_map(exps(i)) = this->row_map(trial_E_.data() + p * stride_);
      rest_[i] = trial_rest_[p];
      value_[i] = trial_value_[p];
    }
  }

  void apply(const Column& col, const Scalar* delta, Scalar alpha) {
    for (std::size_t p = 0; p < col.size(); ++p) {
      this->prefetch_ahead(col, p);
      const auto i = static_cast<std::size_t>(col.indices[p]);
      Scalar* s = this->row(i);
      this->axpy(s, alpha * col.values[p], delta);
      value_[i] = evaluate(s, exps(i), rest_[i], y_[i]);
    }
  }

 private:
  [[nodiscard]] Scalar* exps(std::size_t i) noexcept { return E_.data() + i * stride_; }
  void prefetch_exps_ahead(const Column& col, std::size_t p) const noexcept {
    if (p + Base::prefetch_distance < col.size())
      this->prefetch(exps(static_cast<std::size_t>(col.indices[p + Base::prefetch_distance])));
  }
  [[nodiscard]] const Scalar* exps(std::size_t i) const noexcept { return E_.data() + i * stride_; }

  /// ℓ(s + u) − ℓ(s) for u = tδ without cancellation: log Σ_k p_k e^{u_k} − mean_{c∈y} u_c =
  /// log1p(Σ_k p_k expm1(u_k)) − mean_{c∈y} u_c, with expm1 by its Taylor polynomial of degree
  /// 5 when every |u_k| ≤ `taylor_limit` (relative error below u⁵/720, under the Scalar's ε)
  /// and exp(u) − 1 otherwise (then no u is small enough for the subtraction to matter).
  Scalar change(std::size_t i, const typename Base::ConstRowMap& dv, Scalar t, Scalar u_max) {
    const ClassSet y = y_[i];
    if (y.empty()) return Scalar(0);
    constexpr Scalar taylor_limit = std::is_same_v<Scalar, float> ? Scalar(0.05) : Scalar(1e-3);
    if (u_max <= taylor_limit) {
      const auto u = t * dv;
      em1_ = u * (Scalar(1) + u * (Scalar(1) / 2 + u * (Scalar(1) / 6 + u * (Scalar(1) / 24 + u * (Scalar(1) / 120)))));
    } else {
      em1_ = (t * dv).exp() - Scalar(1);
    }
    const Scalar moved = (this->row_map(exps(i)) * em1_).sum() / (Scalar(1) + rest_[i]);  // Σ p_k expm1(u_k)
    Scalar target = 0;
    for (const ClassIndex c : y) target += t * dv[c];
    return std::log1p(moved) - target / static_cast<Scalar>(y.size());
  }

  /// From scores s: e = exp(s − m) with m = max s, Z' = Σ_{k≠a} e_k (a = first argmax), and
  /// returns ℓ = (m − mean_{c∈y} s_c) − log|y| + log1p(Z') (0 for an empty y).
  Scalar evaluate(const Scalar* s, Scalar* e, Scalar& rest, ClassSet y) const {
    const auto sv = this->row_map(s);
    auto ev = this->row_map(e);
    const Scalar m = sv.maxCoeff();
    ev = (sv - m).exp();
    rest = ev.sum() - Scalar(1);  // e_a = exp(0) = 1 (Z' below machine ε is lost: ℓ ≈ Z' then)
    if (y.empty()) return Scalar(0);
    Scalar gap;
    if (y.size() == 1) {
      gap = m - s[y[0]];
    } else {
      gap = 0;
      for (const ClassIndex c : y) gap += m - s[c];
      const auto size = static_cast<Scalar>(y.size());
      gap = gap / size - std::log(size);
    }
    return gap + std::log1p(rest);
  }

  Array G_y_;                       ///< the target part c q of G, accumulated apart
  Array em1_;                       ///< expm1(u) of one sample's trial move
  Array E_;                         ///< exp(s − max s), n rows of `stride_` (0 in the padding)
  std::vector<Scalar> rest_;        ///< Z' per sample
  Array trial_S_;                   ///< trial scores, per position in the column
  Array trial_E_;                   ///< trial exponentials, per position in the column
  std::vector<Scalar> trial_rest_;  ///< trial Z', per position in the column
};

}  // namespace sparsemc::detail
