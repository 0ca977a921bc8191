#pragma once
/// \file block_kernel.hpp
/// What a loss gives BlockCD to be fast: its block kernel, the per-sample cache of Blondel,
/// Seki & Uehara (2013, §4.3).
///
/// A block update changes one feature row W_j: of W, hence the scores s_i = Wᵀx_i + b only of
/// the samples i ∈ supp(x_j), each by x_ij·δ. A block kernel keeps, per sample, what the loss
/// needs to produce its gradient, its generalised Hessian diagonal (eq. 6) and its value without
/// touching W: the scores S (n × K, row-major, so a sample's K scores are contiguous), the loss
/// values ℓ_i (the line search's objective difference, eq. 7, is then a sum over supp(x_j) of
/// c_i(ℓ_i' − ℓ_i)/n), and whatever else makes the loss's own terms cheap (Logistic keeps the
/// max-shifted exponentials, so gradients and curvatures cost no exponential).
///
/// A loss owns its kernel: it declares a member class template `BlockKernel<Scalar, Index>`
/// (loss/squared_hinge.hpp shows one), built from (loss, problem, longest column) — the problem
/// CSC or column-major dense, its columns walked through data/feature_columns.hpp — and
/// deriving from `ScoreCache` below; `BlockKernelFor` finds it, and falls back to
/// `GenericBlockKernel` for a SmoothLoss that declares none. Every kernel offers, for a column
/// (x_ij)_{i ∈ supp(x_j)} given as a SparseSlice:
///   refresh()                           ℓ_i from the current scores, for every sample
///   gradient<WithCurvature>(col, G, H)  G = (1/n) Σ_i c_i x_ij ∇ℓ_i  (block gradient, eq. 5)
///                                       H = (1/n) Σ_i c_i x_ij² h_i   (eq. 6)
///   trial(col, δ, α)     Σ_i c_i (ℓ(s_i + α x_ij δ) − ℓ_i)/n, remembering the trial state
///   commit(col, δ, α)    makes the last trial the current state (after an accepted step)
///   apply(col, δ, α)     trial + commit in one pass (steps that need no test)
/// each O(|supp(x_j)|·K) and allocation-free. G, H and δ are `stride()` long; entries past K
/// are zero (δ) or written as zero (G, H). A kernel whose per-class margins move independently
/// (OvrSquaredHinge) may also offer, in O(|supp(x_j)|·|classes|), and BlockCD then uses them:
///   trial(col, δ, α, moved), commit(col, δ, α, moved)   for a δ zero outside `moved` (an ℓ1
///                                       step moves a few entries of a row: LIBLINEAR's CDN)
///   gradient<WithCurvature>(col, G, H, listed, is_listed)   on a row's working set of classes
/// and a kernel that keeps its gradient's buffers in a `Workspace` (every built-in kernel; the
/// `ParallelBlockKernel` concept below) lets BlockCD's parallel step (Richtárik & Takáč: τ
/// blocks at once) take several block gradients side by side:
///   workspace()                                           a new Workspace (one per thread)
///   gradient<WithCurvature>(col, G, H, workspace) const   gradient() with the caller's buffers
/// and apply() on parts of columns with disjoint samples side by side (it writes nothing but
/// the caches of the column's samples).
///
/// Layout for SIMD: a fused kernel stores each sample's scores in a row padded to a multiple of
/// the SIMD width and aligned (`ScoreCache<…, true>`), with −∞ in the padding. −∞ is neutral for
/// the built-in kernels (a margin max(0, 1 + s − s_y) of 0, a probability exp(−∞) = 0), so every
/// per-sample operation is a whole-row Eigen array expression with aligned packets, no peeling,
/// no per-class branch.

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <limits>
#include <span>
#include <vector>

#include "../../core/huge_pages.hpp"
#include "../../data/problem.hpp"
#include "../../data/sparse_view.hpp"
#include "../concepts.hpp"

namespace sparsemc::kernels {

/// The loss part's change Σ_i c_i (ℓ(s_i + α x_ij δ) − ℓ(s_i))/n for a trial step on one
/// column, and a bound on its rounding error: the line search cannot decide eq. (7) for
/// predicted decreases below `noise`.
struct Trial {
  double difference = 0.0;
  double noise = 0.0;
};

/// What every block kernel stores: scores, loss values, per-sample costs c_i/n and the labels.
/// With `Padded`, rows are `stride()` ≥ K long (a multiple of the SIMD alignment, so every row
/// is aligned) and hold −∞ past K; otherwise rows are exactly K long.
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
  void set_scores(const auto& X, const Scalar* W, const Scalar* b) {
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
  void allocate(const TrainingProblem auto& problem, std::size_t max_column) {
    n_ = static_cast<std::size_t>(problem.n_samples());
    K_ = static_cast<std::size_t>(problem.n_classes());
    stride_ = stride_for(K_);
    y_ = problem.y;
    cost_.resize(n_);
    const Scalar inv_n = Scalar(1) / static_cast<Scalar>(n_);
    for (std::size_t i = 0; i < n_; ++i) cost_[i] = problem.weight(static_cast<Index>(i)) * inv_n;
    detail::resize_advised(S_, static_cast<Eigen::Index>(n_ * stride_), 1);
    S_.setConstant(-std::numeric_limits<Scalar>::infinity());
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

/// The block kernel of a SmoothLoss that declares none: the loss's own gradient, curvature and
/// value per sample, on unpadded rows (O(K) calls of the loss per touched sample).
template <class Loss, RealScalar Scalar, StorageIndex Index>
class GenericBlockKernel : public ScoreCache<Scalar, Index, false> {
  using Base = ScoreCache<Scalar, Index, false>;
  using Base::cost_, Base::K_, Base::n_, Base::y_, Base::value_, Base::trial_value_;

 public:
  using Column = typename Base::Column;

  /// One sample's gradient and curvature: a gradient call's buffers.
  struct Workspace {
    std::vector<Scalar> g, h;
  };

  GenericBlockKernel(const Loss& loss, const TrainingProblem auto& problem, std::size_t max_column)
      : loss_(loss) {
    Base::allocate(problem, max_column);
    own_ = workspace();
    s_.resize(K_);
  }

  [[nodiscard]] Workspace workspace() const { return {std::vector<Scalar>(K_), std::vector<Scalar>(K_)}; }

  /// ℓ_i from the current scores, for every sample.
  void refresh() {
    for (std::size_t i = 0; i < n_; ++i) value_[i] = loss_.value(scores(i), y_[i]);
  }

  template <bool WithCurvature>
  void gradient(const Column& col, Scalar* G, Scalar* H) {
    gradient<WithCurvature>(col, G, H, own_);
  }

  template <bool WithCurvature>
  void gradient(const Column& col, Scalar* G, Scalar* H, Workspace& work) const {
    std::fill_n(G, K_, Scalar(0));
    if constexpr (WithCurvature) std::fill_n(H, K_, Scalar(0));
    for (std::size_t p = 0; p < col.size(); ++p) {
      const auto i = static_cast<std::size_t>(col.indices[p]);
      const Scalar x = col.values[p];
      const Scalar c = cost_[i] * x;
      loss_.gradient(scores(i), y_[i], std::span<Scalar>(work.g));
      for (std::size_t r = 0; r < K_; ++r) G[r] += c * work.g[r];
      if constexpr (WithCurvature) {
        loss_.curvature(scores(i), y_[i], std::span<Scalar>(work.h));
        const Scalar cx = c * x;
        for (std::size_t r = 0; r < K_; ++r) H[r] += cx * work.h[r];
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
  Workspace own_;         // gradient()'s buffers
  std::vector<Scalar> s_;  // one sample's trial scores
};

/// A block kernel whose gradients can run side by side, each with its own Workspace: what
/// BlockCD's parallel step needs (with apply(), which every kernel has).
template <class Kernel, class Scalar>
concept ParallelBlockKernel = requires(const Kernel& kernel, typename Kernel::Workspace& work,
                                       const typename Kernel::Column& col, Scalar* out) {
  { kernel.workspace() } -> std::same_as<typename Kernel::Workspace>;
  kernel.template gradient<false>(col, out, out, work);
};

/// Whether `Loss` declares its own block kernel for (Scalar, Index).
template <class Loss, class Scalar, class Index>
concept OwnsBlockKernel = requires { typename Loss::template BlockKernel<Scalar, Index>; };

template <class Loss, class Scalar, class Index>
struct BlockKernelOf {
  using type = GenericBlockKernel<Loss, Scalar, Index>;
};
template <class Loss, class Scalar, class Index>
  requires OwnsBlockKernel<Loss, Scalar, Index>
struct BlockKernelOf<Loss, Scalar, Index> {
  using type = typename Loss::template BlockKernel<Scalar, Index>;
};

/// The block kernel BlockCD runs `Loss` with: the loss's own, else the generic one.
template <class Loss, RealScalar Scalar, StorageIndex Index>
using BlockKernelFor = typename BlockKernelOf<Loss, Scalar, Index>::type;

}  // namespace sparsemc::kernels
