#pragma once
/// \file weston_watkins.hpp
/// The block and coordinate kernels of every Weston–Watkins loss, ℓ(s, y) = Σ_{r≠y} φ(z_r) with
/// the margins z_r = 1 − s_y + s_r and a margin function φ: SquaredHinge (φ = (z)_+², Blondel
/// et al. eq. 2) and HuberHinge (the Huber-smoothed hinge). A loss of this family hands the
/// kernels its φ as a `Margin` (its `margin()` member) and declares its kernels as
///     template <RealScalar S, StorageIndex I>
///     using BlockKernel = kernels::WestonWatkinsBlockKernel<Loss, S, I>;      // and CoordinateKernel
///
/// φ is convex, C¹ and piecewise quadratic with φ = 0 for z ≤ 0. A Margin offers, in the units
/// its kernels accumulate in (the squared hinge's a = (z)_+ and its factor 2 are the paper's):
///   gradient_factor(), curvature_factor()  γ with φ'(z) = γ slope(z); κ = φ'' on the zone
///   slope(z), zone(a)                       the slope at z; whether a slope value a lies where φ'' > 0
///   phi(z), change(z0, z1)                  φ(z), and φ(z1) − φ(z0) without cancellation
///   slope_row(m), value_row(m)              the slopes of a row of margins (an Eigen expression), Σ_r φ(m_r)
///   trial_row(m, u, w0, w1, w2)             {Σ_r φ(m_r + u_r) − φ(m_r), Σ_r φ(m_r + u_r)}; w: row buffers
/// and every row member maps a margin of −∞ (the padding of a SIMD row) to 0.

#include <Eigen/Core>

#include <cstddef>
#include <span>
#include <utility>
#include <vector>

#include "../../core/class_matrix.hpp"
#include "../../data/problem.hpp"
#include "block_kernel.hpp"
#include "coordinate_kernel.hpp"

namespace sparsemc::kernels {

/// BlockCD's kernel (Blondel et al. Algorithm 3) as whole-row array operations: the row of
/// margins is taken over every r, r = y included (its margin ≈ 1 is taken back out), and the
/// true-class terms −Σ_{r≠y} φ'(z_r) and Σ_{r≠y} φ''(z_r) are accumulated apart from G and H,
/// then added once per column:
///     ∇ℓ_r = φ'(z_r) (r ≠ y), −Σ_{r≠y} φ'(z_r) (y);   h_r = φ''(z_r) (r ≠ y), Σ_{r≠y} φ''(z_r) (y).
/// A trial's change per sample is the margin's cancellation-free change over the row.
template <class Loss, RealScalar Scalar, StorageIndex Index>
class WestonWatkinsBlockKernel : public ScoreCache<Scalar, Index, true> {
  using Base = ScoreCache<Scalar, Index, true>;
  using Base::cost_, Base::K_, Base::n_, Base::y_, Base::value_, Base::trial_value_, Base::trial_change_,
      Base::stride_;
  using Array = typename Base::Array;

 public:
  using Column = typename Base::Column;

  /// A gradient call's buffers: one sample's slopes and their zone, the true-class parts of G, H.
  struct Workspace {
    Array a, on, G_y, H_y;
  };

  WestonWatkinsBlockKernel(const Loss& loss, const TrainingProblem auto& problem,
                           std::size_t max_column)
      : margin_(loss.margin()) {
    Base::allocate(problem, max_column);
    own_ = workspace();
    for (Array* a : {&d_, &w_}) a->resize(static_cast<Eigen::Index>(stride_));
  }

  [[nodiscard]] Workspace workspace() const {
    const auto size = static_cast<Eigen::Index>(stride_);
    return {Array(size), Array(size), Array(size), Array(size)};
  }

  void refresh() {
    for (std::size_t i = 0; i < n_; ++i) value_[i] = value(this->row(i), label(i));
  }

  template <bool WithCurvature>
  void gradient(const Column& col, Scalar* G_out, Scalar* H_out) {
    gradient<WithCurvature>(col, G_out, H_out, own_);
  }

  template <bool WithCurvature>
  void gradient(const Column& col, Scalar* G_out, Scalar* H_out, Workspace& work) const {
    auto& [a, on, G_y, H_y] = work;
    auto G = this->row_map(G_out);
    G.setZero();
    G_y.setZero();
    if constexpr (WithCurvature) {
      this->row_map(H_out).setZero();
      H_y.setZero();
    }
    const auto gradient_factor = static_cast<Scalar>(margin_.gradient_factor());
    const auto curvature_ratio = static_cast<Scalar>(margin_.curvature_factor() / margin_.gradient_factor());
    for (std::size_t p = 0; p < col.size(); ++p) {
      this->prefetch_ahead(col, p);
      const auto i = static_cast<std::size_t>(col.indices[p]);
      const Scalar x = col.values[p];
      const Scalar g = gradient_factor * cost_[i] * x;  // c_i x_ij / n in φ's units
      const std::size_t y = label(i);
      const Scalar* s = this->row(i);
      const Scalar shift = Scalar(1) - s[y];
      a = margin_.slope_row(this->row_map(s) + shift);  // every r, y included
      G += g * a;
      // −Σ_{r≠y} φ'(z_r) for the true class, and cancel the φ'(z_y) just added: −Σ_r φ'(z_r).
      G_y[static_cast<Eigen::Index>(y)] += g * a.sum();
      if constexpr (WithCurvature) {
        const Scalar h = g * x * curvature_ratio;
        zone_row(a.data(), on.data());
        this->row_map(H_out) += h * on;
        // Σ_{r≠y} φ''(z_r) for the true class, and cancel the φ''(z_y) just added.
        H_y[static_cast<Eigen::Index>(y)] += h * (on.sum() - Scalar(2) * on[static_cast<Eigen::Index>(y)]);
      }
    }
    G -= G_y;
    if constexpr (WithCurvature) this->row_map(H_out) += H_y;
  }

  Trial trial(const Column& col, const Scalar* delta, Scalar alpha) {
    for (std::size_t p = 0; p < col.size(); ++p) {
      this->prefetch_ahead(col, p);
      const auto i = static_cast<std::size_t>(col.indices[p]);
      const Scalar t = alpha * col.values[p];
      const std::size_t y = label(i);
      const Scalar* s = this->row(i);
      // Margins m = 1 + s_r − s_y move by u = t(δ_r − δ_y); the true class has u = 0.
      const Scalar shift = Scalar(1) - s[y];
      const auto [change, after] = margin_.trial_row(this->row_map(s) + shift,
                                                     t * (this->row_map(delta) - delta[y]), own_.a, d_, w_);
      trial_change_[p] = change;
      trial_value_[p] = after - margin_.phi(s[y] + shift);
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

  /// on_r = [a_r in φ's zone] over a whole row: a plain loop the compiler vectorises (compare
  /// and mask), which Eigen 3.4's boolean array expressions are not.
  void zone_row(const Scalar* __restrict a, Scalar* __restrict on) const noexcept {
    for (std::size_t r = 0; r < stride_; ++r) on[r] = margin_.zone(a[r]) ? Scalar(1) : Scalar(0);
  }

  /// ℓ at s: Σ_r φ(z_r) over every r, minus φ(z_y) computed the same way.
  Scalar value(const Scalar* s, std::size_t y) const {
    const Scalar shift = Scalar(1) - s[y];
    return margin_.value_row(this->row_map(s) + shift) - margin_.phi(shift + s[y]);
  }

  typename Loss::Margin margin_;
  Workspace own_;  // gradient()'s buffers (own_.a is also a trial's first row buffer)
  Array d_, w_;    // a trial's other row buffers
};

/// SCD's kernel: per sample the kernel keeps t_i = 1 − s_iy, A_i = Σ_{r≠y} slope(z_ir),
/// N_i = #{r ≠ y : z_ir in φ's zone} and ℓ_i (z_ir = t_i + s_ir); then, with γ and κ the
/// margin's gradient and curvature factors,
///
///     ∂ℓ_i/∂s_ir = γ slope(z_ir) (r ≠ y_i),  −γ A_i (r = y_i);   h_ir = κ [z_ir in the zone],  κ N_i;
///     sup h_ir   = κ,                         κ (K − 1),
///
/// all O(1). A step on class r ≠ y_i changes one margin (O(1) update of A_i, N_i, ℓ_i); on
/// r = y_i it moves t_i and every margin (O(K) recount). loss_part() recomputes the
/// incrementally kept sums exactly.
template <class Loss, RealScalar Scalar, StorageIndex Index>
class WestonWatkinsCoordinateKernel : public CoordinateCache<Scalar, Index> {
  using Base = CoordinateCache<Scalar, Index>;
  using Base::cost_, Base::K_, Base::n_, Base::label_;

 public:
  using Column = typename Base::Column;
  static constexpr bool mirror_symmetric = false;
  /// L_jr depends on which samples have class r: accumulated by `partial`.
  static constexpr bool constant_bound = false;

  WestonWatkinsCoordinateKernel(const Loss& loss, const TrainingProblem auto& problem, std::size_t max_column,
                                bool)
      : margin_(loss.margin()) {
    Base::allocate_base(problem);
    S_.assign(n_ * K_, Scalar(0));
    shift_.assign(n_, Scalar(1));
    slopes_.assign(n_, Scalar(0));
    zone_.assign(n_, Scalar(0));
    value_.assign(n_, Scalar(0));
    undo_.resize(max_column);
    refresh();
  }

  void set_scores(const auto& X, const ClassMatrix<Scalar>* W, const ClassVector<Scalar>* b) {
    for (std::size_t r = 0; r < K_; ++r) this->class_scores(X, W, b, static_cast<ClassIndex>(r), S_.data() + r * n_);
    refresh();
  }

  template <CoordinateNeed Need>
  CoordinatePartial partial(const Column& col, ClassIndex r) const {
    const Scalar* s = S_.data() + static_cast<std::size_t>(r) * n_;
    const double upper = static_cast<double>(K_) - 1.0;
    Sum4 g, h, L;
    unroll4(col.size(), [&](std::size_t p, auto lane) {
      const auto i = static_cast<std::size_t>(col.indices[p]);
      const double x = static_cast<double>(col.values[p]);
      const double cx = static_cast<double>(cost_[i]) * x;
      if (label_[i] != r) {
        const Scalar a = margin_.slope(shift_[i] + s[i]);
        g.lane[lane] += cx * static_cast<double>(a);
        if constexpr (Need != CoordinateNeed::gradient) L.lane[lane] += cx * x;
        if constexpr (Need == CoordinateNeed::curvature) h.lane[lane] += margin_.zone(a) ? cx * x : 0.0;
      } else {
        g.lane[lane] -= cx * static_cast<double>(slopes_[i]);
        if constexpr (Need != CoordinateNeed::gradient) L.lane[lane] += cx * x * upper;
        if constexpr (Need == CoordinateNeed::curvature) h.lane[lane] += cx * x * static_cast<double>(zone_[i]);
      }
    });
    const double gamma = margin_.gradient_factor(), kappa = margin_.curvature_factor();
    return {gamma * g.total(), kappa * h.total(), kappa * L.total()};
  }

  double subgradient(const Column& col, ClassIndex r) const {
    return partial<CoordinateNeed::gradient>(col, r).gradient;
  }

  template <bool Track>
  LossChange step(const Column& col, ClassIndex r, Scalar z, double g = 0.0, double h = 0.0) {
    Scalar* s = S_.data() + static_cast<std::size_t>(r) * n_;
    double delta = 0.0, magnitude = 0.0;
    for (std::size_t p = 0; p < col.size(); ++p) {
      const auto i = static_cast<std::size_t>(col.indices[p]);
      const Scalar dz = z * col.values[p];
      const Scalar before = value_[i];
      if constexpr (Track) undo_[p] = {s[i], shift_[i], slopes_[i], zone_[i], value_[i]};
      if (label_[i] != r) {
        const Scalar z0 = shift_[i] + s[i];
        s[i] += dz;
        const Scalar z1 = shift_[i] + s[i];
        const Scalar a0 = margin_.slope(z0), a1 = margin_.slope(z1);
        slopes_[i] += a1 - a0;
        zone_[i] += static_cast<Scalar>(margin_.zone(a1)) - static_cast<Scalar>(margin_.zone(a0));
        value_[i] += margin_.change(z0, z1);
      } else {
        s[i] += dz;
        recount(i);
      }
      if constexpr (Track) {
        const double c = static_cast<double>(cost_[i]);
        delta += c * (static_cast<double>(value_[i]) - static_cast<double>(before));
        magnitude += c * (static_cast<double>(value_[i]) + static_cast<double>(before));
      }
    }
    if constexpr (Track) return excess_over_model(delta, magnitude, g, h, static_cast<double>(z));
    return {};
  }

  void undo(const Column& col, ClassIndex r) {
    Scalar* s = S_.data() + static_cast<std::size_t>(r) * n_;
    for (std::size_t p = 0; p < col.size(); ++p) {
      const auto i = static_cast<std::size_t>(col.indices[p]);
      const Saved& u = undo_[p];
      s[i] = u.score;
      shift_[i] = u.shift;
      slopes_[i] = u.slopes;
      zone_[i] = u.zone;
      value_[i] = u.value;
    }
  }

  double loss_part() {
    refresh();
    double sum = 0.0;
    for (std::size_t i = 0; i < n_; ++i) sum += static_cast<double>(cost_[i]) * static_cast<double>(value_[i]);
    return sum;
  }

 private:
  struct Saved {
    Scalar score, shift, slopes, zone, value;
  };

  /// t_i, A_i, N_i, ℓ_i from the scores of sample i, O(K).
  void recount(std::size_t i) {
    const auto y = static_cast<std::size_t>(label_[i]);
    const Scalar t = Scalar(1) - S_[y * n_ + i];
    Scalar slopes = 0, zone = 0, value = 0;
    for (std::size_t r = 0; r < K_; ++r) {
      if (r == y) continue;
      const Scalar z = t + S_[r * n_ + i];
      const Scalar a = margin_.slope(z);
      slopes += a;
      zone += static_cast<Scalar>(margin_.zone(a));
      value += margin_.phi(z);
    }
    shift_[i] = t;
    slopes_[i] = slopes;
    zone_[i] = zone;
    value_[i] = value;
  }
  void refresh() {
    for (std::size_t i = 0; i < n_; ++i) recount(i);
  }

  typename Loss::Margin margin_;
  std::vector<Scalar> S_;       ///< scores, class-major
  std::vector<Scalar> shift_;   ///< t_i = 1 − s_iy
  std::vector<Scalar> slopes_;  ///< A_i = Σ_{r≠y} slope(z_ir)
  std::vector<Scalar> zone_;    ///< N_i = #{r ≠ y : z_ir in φ's zone}
  std::vector<Scalar> value_;   ///< ℓ_i
  std::vector<Saved> undo_;     ///< per position, before the last tracked step
};

}  // namespace sparsemc::kernels
