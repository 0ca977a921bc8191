#pragma once
/// \file ovr_squared_hinge.hpp
/// The one-vs-rest ("multitask") squared hinge of Blondel, Seki & Uehara (2013), eq. (11):
/// K independent binary squared hinges sharing the row-sparse penalty. Natural for multilabel
/// data; LIBLINEAR's -s 5 is this loss with an L1 penalty.

#include <Eigen/Core>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "concepts.hpp"
#include "detail/class_set.hpp"
#include "detail/positive_part.hpp"
#include "kernels/block_kernel.hpp"
#include "kernels/coordinate_kernel.hpp"

namespace sparsemc {

/// One-vs-rest squared hinge (Blondel et al. 2013, eq. (11)):
///
///     ℓ(s, y) = Σ_r a_r²,   a_r = max(0, 1 − Y_r s_r),   Y_r = +1 if r ∈ y, −1 otherwise.
///
/// Multiclass: y = {class}, exactly eq. (11). Multilabel: Y_r = +1 iff r ∈ y (an empty y makes
/// every class a negative; a full y every class a positive).
///
/// - gradient: ∂ℓ/∂s_r = −2 Y_r a_r
/// - curvature (generalised Hessian, diagonal here, Blondel eq. 6 analogue): h_r = 2·[a_r > 0]
/// - curvature_bound(K) = 2 (the generalised Hessian is diagonal with entries in {0, 2}), so
///   K_j = (2/n) Σ_i c_i x_ij² in (1).
///
/// Every member costs O(K + |y|), allocates nothing and is safe to call concurrently.
///
/// \code
///   const sparsemc::OvrSquaredHinge loss;
///   const std::array<double, 3> s{0.5, 1.0, -2.0};
///   const std::array<sparsemc::ClassIndex, 2> y{0, 1};   // multilabel: classes 0 and 1
///   std::array<double, 3> g{};
///   double l = loss.gradient<double>(s, y, g);   // l = 0.25, g = {-1, 0, 0}
/// \endcode
struct OvrSquaredHinge {
  static constexpr std::string_view name = "ovr-squared-hinge";
  static constexpr bool supports_multilabel = true;
  /// Per class, a_r = −Y_r β_r with β_r ≥ 0, the classes independent.
  static constexpr DualDomain dual_domain = DualDomain::signed_per_class;
  /// Its block kernel for BlockCD (defined below; loss/kernels/block_kernel.hpp).
  template <RealScalar Scalar, StorageIndex Index>
  class BlockKernel;
  /// Its coordinate kernel for SCD (defined below; loss/kernels/coordinate_kernel.hpp).
  template <RealScalar Scalar, StorageIndex Index>
  class CoordinateKernel;
  /// One term per class: ClassSeparableLoss (loss/concepts.hpp).
  static constexpr bool separates_classes = true;

  /// ℓ(s, y) = Σ_r max(0, 1 − Y_r s_r)².
  template <RealScalar Scalar>
  [[nodiscard]] Scalar value(std::span<const Scalar> s, ClassSet y) const noexcept {
    assert(detail::valid_class_set(y, s.size()));
    Scalar sum = 0;
    detail::for_each_run(
        s.size(), y,
        [&](std::size_t begin, std::size_t end) {
          for (std::size_t r = begin; r < end; ++r) {
            const Scalar a = detail::positive_part(Scalar(1) + s[r]);
            sum += a * a;
          }
        },
        [&](std::size_t p) {
          const Scalar a = detail::positive_part(Scalar(1) - s[p]);
          sum += a * a;
        });
    return sum;
  }

  /// Writes ∇ℓ into g (size K) and returns ℓ.
  template <RealScalar Scalar>
  Scalar gradient(std::span<const Scalar> s, ClassSet y, std::span<Scalar> g) const noexcept {
    assert(g.size() == s.size());
    assert(detail::valid_class_set(y, s.size()));
    Scalar sum = 0;
    detail::for_each_run(
        s.size(), y,
        [&](std::size_t begin, std::size_t end) {
          for (std::size_t r = begin; r < end; ++r) {
            const Scalar a = detail::positive_part(Scalar(1) + s[r]);
            g[r] = Scalar(2) * a;
            sum += a * a;
          }
        },
        [&](std::size_t p) {
          const Scalar a = detail::positive_part(Scalar(1) - s[p]);
          g[p] = Scalar(-2) * a;
          sum += a * a;
        });
    return sum;
  }

  /// The gradient (the only subgradient of a differentiable loss); returns ℓ.
  template <RealScalar Scalar>
  Scalar subgradient(std::span<const Scalar> s, ClassSet y, std::span<Scalar> g) const noexcept {
    return gradient(s, y, g);
  }

  /// Writes the generalised Hessian diagonal 2·[a_r > 0] into h.
  template <RealScalar Scalar>
  void curvature(std::span<const Scalar> s, ClassSet y, std::span<Scalar> h) const noexcept {
    assert(h.size() == s.size());
    assert(detail::valid_class_set(y, s.size()));
    detail::for_each_run(
        s.size(), y,
        [&](std::size_t begin, std::size_t end) {
          for (std::size_t r = begin; r < end; ++r) h[r] = s[r] > Scalar(-1) ? Scalar(2) : Scalar(0);
        },
        [&](std::size_t p) { h[p] = s[p] < Scalar(1) ? Scalar(2) : Scalar(0); });
  }

  /// ℓ*(a, y) = Σ_r (β_r²/4 − β_r), β_r = −Y_r a_r, +∞ if some β_r < 0 (docs/math.md, "Duality gap").
  template <RealScalar Scalar>
  [[nodiscard]] double conjugate(std::span<const Scalar> a, ClassSet y) const noexcept {
    double sum = 0;
    std::size_t next = 0;  // position in the sorted y
    for (std::size_t r = 0; r < a.size(); ++r) {
      const bool positive = next < y.size() && static_cast<std::size_t>(y[next]) == r;
      if (positive) ++next;
      const double beta = positive ? -static_cast<double>(a[r]) : static_cast<double>(a[r]);
      if (beta < 0) return std::numeric_limits<double>::infinity();
      sum += beta * (0.25 * beta - 1.0);
    }
    return sum;
  }

  /// sup_s λ_max(∇²ℓ(s)) = 2.
  template <RealScalar Scalar>
  [[nodiscard]] static constexpr Scalar curvature_bound(ClassIndex /*K*/) noexcept {
    return Scalar(2);
  }
};

/// One-vs-rest squared hinge (Blondel eq. 11): a_r = max(0, 1 − Y_r s_r), ℓ = Σ_r a_r²,
/// ∇ℓ = −2Y_r a_r, h = 2[a_r > 0]; Y_r = +1 for the sample's classes (any number), −1 else.
/// Every class is first treated as a negative (a whole-row operation, neutral on the −∞
/// padding); the few positive classes are corrected one by one in accumulators apart from G
/// and H.
template <RealScalar Scalar, StorageIndex Index>
class OvrSquaredHinge::BlockKernel : public kernels::ScoreCache<Scalar, Index, true> {
  using Base = kernels::ScoreCache<Scalar, Index, true>;
  using Base::cost_, Base::K_, Base::n_, Base::y_, Base::value_, Base::trial_value_, Base::trial_change_,
      Base::stride_;
  using Array = typename Base::Array;

 public:
  using Column = typename Base::Column;

  /// A gradient call's buffers: one sample's margins and [a_r > 0], the positives' corrections.
  struct Workspace {
    Array a, on, G_y, H_y;
  };

  BlockKernel(const OvrSquaredHinge&, const TrainingProblem auto& problem,
              std::size_t max_column) {
    Base::allocate(problem, max_column);
    own_ = workspace();
    d_.resize(static_cast<Eigen::Index>(stride_));
  }

  [[nodiscard]] Workspace workspace() const {
    const auto size = static_cast<Eigen::Index>(stride_);
    return {Array(size), Array(size), Array(size), Array(size)};
  }

  void refresh() {
    for (std::size_t i = 0; i < n_; ++i) value_[i] = value(this->row(i), y_[i]);
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
    for (std::size_t p = 0; p < col.size(); ++p) {
      this->prefetch_ahead(col, p);
      const auto i = static_cast<std::size_t>(col.indices[p]);
      const Scalar x = col.values[p];
      const Scalar g2 = Scalar(2) * cost_[i] * x;
      const Scalar h2 = g2 * x;
      const Scalar* s = this->row(i);
      a = (this->row_map(s) + Scalar(1)).max(Scalar(0));  // every class as a negative
      G += g2 * a;
      if constexpr (WithCurvature) {
        this->indicator_positive(a.data(), on.data());
        this->row_map(H_out) += h2 * on;
      }
      for (const ClassIndex q : y_[i]) {  // positives: replace +a_neg by −a_pos
        const Scalar neg = std::max(Scalar(0), Scalar(1) + s[q]);
        const Scalar pos = std::max(Scalar(0), Scalar(1) - s[q]);
        G_y[q] += g2 * (pos + neg);
        if constexpr (WithCurvature)
          H_y[q] += h2 * (static_cast<Scalar>(pos > Scalar(0)) - static_cast<Scalar>(neg > Scalar(0)));
      }
    }
    G -= G_y;
    if constexpr (WithCurvature) this->row_map(H_out) += H_y;
  }

  kernels::Trial trial(const Column& col, const Scalar* delta, Scalar alpha) {
    for (std::size_t p = 0; p < col.size(); ++p) {
      this->prefetch_ahead(col, p);
      const auto i = static_cast<std::size_t>(col.indices[p]);
      const Scalar t = alpha * col.values[p];
      const Scalar* s = this->row(i);
      // As a negative, class r has margin m = 1 + s_r moving by u = tδ_r; a = max(m, 0) becomes
      // a + d with d = max(min(m, 0) + u, −a), and Σ a² changes by Σ d(2a + d) (see the squared
      // hinge kernel). Positives are then corrected one by one (margin 1 − s_q, move −tδ_q).
      const auto m = this->row_map(s) + Scalar(1);
      own_.a = m.max(Scalar(0));
      d_ = (m.min(Scalar(0)) + t * this->row_map(delta)).max(-own_.a);
      Scalar change = (d_ * (Scalar(2) * own_.a + d_)).sum();
      Scalar value = (own_.a + d_).square().sum();
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
  kernels::Trial trial(const Column& col, const Scalar* delta, Scalar alpha, std::span<const ClassIndex> moved) {
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

  Workspace own_;  // gradient()'s buffers (own_.a also holds a trial's margins)
  Array d_;        // a trial's change of the margins
};

/// OvrSquaredHinge (Blondel et al. eq. 11): ℓ_i = Σ_r a_ir², a_ir = max(0, b_ir), with the
/// slack b_ir = 1 − Y_ir s_ir (LIBLINEAR's b vector, one per class), so that
///
///     a'(0) = −2 Σ_i x_ij (Y_ir c_i/n) a_ir,   a''(0) = 2 Σ_i x_ij² (c_i/n) [b_ir > 0],
///     L_jr  =  2 Σ_i x_ij² (c_i/n),            step: b_ir ← b_ir − Y_ir x_ij z,
///
/// everything O(1) per sample: a coordinate costs O(nnz_j). The signed costs Y_ir c_i/n are kept
/// next to the slacks (a zero cost keeps its sign as −0).
///
/// Along one coordinate the loss part is piecewise quadratic, and exactly g z + (h/2) z² as long
/// as no sample changes side of its margin. A tracked step therefore gets the excess over that
/// model from the samples that cross only: +c_i b'_ir² for one that becomes active (b ≤ 0 < b'),
/// −c_i b'_ir² for one that becomes inactive (b > 0 ≥ b'); in the common case no sample crosses,
/// the excess is exactly 0 and the step costs what an untracked one does.
///
/// Mirror mode (K = 2, one class per sample): the two columns are the same binary problem with
/// opposite labels (Y_i0 = −Y_i1), so W = [−u, u] keeps b_i0 = b_i1. The kernel then keeps
/// class 1 only and counts its loss twice in loss_part(); the solver updates class-1 coordinates
/// only, whose one-variable problems are the paper's binary ones (w = u, y_i = Y_i1).
template <RealScalar Scalar, StorageIndex Index>
class OvrSquaredHinge::CoordinateKernel : public kernels::CoordinateCache<Scalar, Index> {
  using Base = kernels::CoordinateCache<Scalar, Index>;
  using Base::cost_, Base::K_, Base::n_;

 public:
  using Column = typename Base::Column;
  static constexpr bool mirror_symmetric = true;
  static constexpr bool constant_bound = true;

  CoordinateKernel(const OvrSquaredHinge&, const TrainingProblem auto& problem, std::size_t max_column,
                   bool mirror)
      : mirror_(mirror) {
    Base::allocate_base(problem);
    slots_ = mirror_ ? 1 : K_;
    detail::assign_advised(slack_, n_ * slots_, Scalar(1));
    detail::assign_advised(signed_cost_, n_ * slots_, Scalar(0));
    for (std::size_t slot = 0; slot < slots_; ++slot) {
      const ClassIndex r = class_of_slot(slot);
      for (std::size_t i = 0; i < n_; ++i)
        signed_cost_[slot * n_ + i] = this->in_class_set(i, r) ? cost_[i] : -cost_[i];
    }
    undo_.resize(max_column);
  }

  /// sup ∂²ℓ/∂s_r² = 2.
  [[nodiscard]] static constexpr double kappa() noexcept { return 2.0; }

  void set_scores(const auto& X, const ClassMatrix<Scalar>* W, const ClassVector<Scalar>* b) {
    for (std::size_t slot = 0; slot < slots_; ++slot) {
      Scalar* slack = slack_.data() + slot * n_;
      const Scalar* yc = signed_cost_.data() + slot * n_;
      this->class_scores(X, W, b, class_of_slot(slot), slack);
      for (std::size_t i = 0; i < n_; ++i) slack[i] = Scalar(1) - std::copysign(Scalar(1), yc[i]) * slack[i];
    }
  }

  template <kernels::CoordinateNeed Need>
  kernels::CoordinatePartial partial(const Column& col, ClassIndex r) const {
    const Scalar* slack = slack_.data() + slot_of(r) * n_;
    const Scalar* yc = signed_cost_.data() + slot_of(r) * n_;
    const Index* index = col.indices.data();
    const Scalar* value = col.values.data();
    kernels::Sum4 g, h;
    kernels::unroll4(col.size(), [&](std::size_t p, auto lane) {
      const auto i = static_cast<std::size_t>(index[p]);
      const Scalar x = value[p];
      const Scalar b = slack[i];
      const Scalar xc = x * yc[i];
      g.lane[lane] += static_cast<double>(xc * detail::positive_part(b));
      if constexpr (Need == kernels::CoordinateNeed::curvature)  // branch-free: [b > 0] as 0 or 1
        h.lane[lane] += static_cast<double>(std::abs(xc * x) * static_cast<Scalar>(b > Scalar(0)));
    });
    return {-2.0 * g.total(), 2.0 * h.total(), 0.0};
  }

  double subgradient(const Column& col, ClassIndex r) const {
    return partial<kernels::CoordinateNeed::gradient>(col, r).gradient;
  }

  template <bool Track>
  kernels::LossChange step(const Column& col, ClassIndex r, Scalar z, double = 0.0, double = 0.0) {
    Scalar* slack = slack_.data() + slot_of(r) * n_;
    const Scalar* yc = signed_cost_.data() + slot_of(r) * n_;
    const Index* index = col.indices.data();
    const Scalar* value = col.values.data();
    kernels::LossChange change;
    for (std::size_t p = 0; p < col.size(); ++p) {
      const auto i = static_cast<std::size_t>(index[p]);
      const Scalar before = slack[i];
      const Scalar after = before - std::copysign(Scalar(1), yc[i]) * (z * value[p]);
      slack[i] = after;
      if constexpr (Track) {
        undo_[p] = before;
        if ((before > Scalar(0)) != (after > Scalar(0))) [[unlikely]] {  // crossed its margin
          const double a = static_cast<double>(after);
          const double term = static_cast<double>(std::abs(yc[i])) * a * a;
          change.excess += after > Scalar(0) ? term : -term;
          change.magnitude += term;
        }
      }
    }
    return change;
  }

  void undo(const Column& col, ClassIndex r) {
    Scalar* slack = slack_.data() + slot_of(r) * n_;
    for (std::size_t p = 0; p < col.size(); ++p) slack[static_cast<std::size_t>(col.indices[p])] = undo_[p];
  }

  [[nodiscard]] double loss_part() const {
    double sum = 0.0;
    for (std::size_t k = 0; k < slack_.size(); ++k) {
      const double a = static_cast<double>(detail::positive_part(slack_[k]));
      sum += static_cast<double>(std::abs(signed_cost_[k])) * a * a;
    }
    return sum * (mirror_ ? 2.0 : 1.0);
  }

 private:
  [[nodiscard]] std::size_t slot_of(ClassIndex r) const noexcept { return mirror_ ? 0 : static_cast<std::size_t>(r); }
  [[nodiscard]] ClassIndex class_of_slot(std::size_t slot) const noexcept {
    return mirror_ ? ClassIndex{1} : static_cast<ClassIndex>(slot);
  }

  bool mirror_ = false;
  std::size_t slots_ = 0;
  std::vector<Scalar> slack_;        ///< b_ir = 1 − Y_ir s_ir, class-major
  std::vector<Scalar> signed_cost_;  ///< Y_ir c_i / n, class-major
  std::vector<Scalar> undo_;         ///< slacks before the last tracked step, per position
};

}  // namespace sparsemc
