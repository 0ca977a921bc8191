#pragma once
/// \file coordinate_kernel.hpp
/// The per-sample caches behind SCD (solver/scd/scd.hpp): what a step on one coordinate w_jr
/// of W needs, per loss, without touching W or any other coordinate.
///
/// A step w_jr ← w_jr + z moves only the scores s_ir (class r) of the samples i ∈ supp(x_j),
/// each by x_ij·z. The coordinate quantities of the loss part L of objective (1),
///
///     a'(0)  = ∂L/∂w_jr = (1/n) Σ_{i∈supp(x_j)} c_i x_ij ∂ℓ_i/∂s_ir          (derivative)
///     a''(0) =            (1/n) Σ_{i∈supp(x_j)} c_i x_ij² h_ir              (Tao et al. eq. 8)
///     L_jr   =            (1/n) Σ_{i∈supp(x_j)} c_i x_ij² sup_s ∂²ℓ_i/∂s_r²   (coordinate Lipschitz)
///
/// (h_ir the generalised second derivative, Blondel et al. eq. 6) therefore cost one pass over
/// supp(x_j) as soon as ∂ℓ_i/∂s_ir comes out of a per-sample cache in O(1) instead of a call
/// of the loss on all K scores, O(K). The kernels keep that cache, class-major (class r's n
/// values contiguous, so a coordinate's pass reads one array per cached quantity):
///
/// | loss            | cached per sample (and per class)                     | ∂ℓ_i/∂s_ir | step, per sample of supp(x_j)        |
/// |-----------------|--------------------------------------------------------|-----------|--------------------------------------|
/// | OvrSquaredHinge | slack b_ir = 1 − Y_ir s_ir, signed cost Y_ir c_i/n     | O(1)      | O(1)                                 |
/// | SquaredHinge    | s_ir; 1 − s_iy, Σ_r a_ir, #{a_ir > 0}, ℓ_i              | O(1)      | O(1); O(K) for the samples of class r |
/// | Logistic        | s_ir, e_ir = exp(s_ir − m_i); m_i, its class, Z'_i, ℓ_i | O(1)      | O(1), one exp; O(K) when r is or becomes the argmax |
/// | CrammerSinger   | s_ir; highest negative and lowest positive score       | O(1)      | O(1); O(K) when that extreme moves inward |
/// | any other loss  | s_ir (sample-major); calls the loss on the whole row   | O(K)      | O(1); O(K) with the loss tracked     |
///
/// so a coordinate costs O(nnz_j) for the one-vs-rest loss, O(nnz_j) amortised for the coupled
/// ones on balanced classes (the O(K) refreshes concern the 1/K of samples whose class is r, or
/// the few whose extreme class is r), O(nnz_j·K) in the worst case, and O(nnz_j·K) for a loss
/// with no kernel here. No allocation after construction.
///
/// The members every kernel offers (Column = a SparseSlice of X, or the all-ones intercept
/// column):
///   set_scores(X, W, b)         scores s_i = Wᵀx_i + b (null W or b = 0) and the cache from them
///   partial<Need>(col, r)       a'(0), and a''(0) and/or L_jr as `Need` asks (smooth losses;
///                               kernels with `constant_bound` leave L_jr = kappa()·(1/n)Σc_i x_ij²
///                               to the caller, who knows the column sums)
///   subgradient(col, r)         (1/n) Σ c_i x_ij g_ir for one subgradient g_i ∈ ∂ℓ_i (RDA)
///   step<Track>(col, r, z, g, h) s_ir += z x_ij on supp(x_j); with Track, returns by how much the
///                               change of L exceeds the model g z + (h/2) z² (g = a'(0), h = a''(0)
///                               at the step's start) and remembers the old state for one `undo`
///   undo(col, r)                reverts the last tracked step
///   loss_part()                 L = (1/n) Σ c_i ℓ_i, exact from the current scores (refreshes
///                               incrementally kept sums, O(nK))
/// Derivatives are accumulated in double whatever the Scalar.

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <type_traits>
#include <vector>

#include "../../../data/problem.hpp"
#include "../../../data/sparse_view.hpp"
#include "../../../loss/concepts.hpp"
#include "../../../loss/crammer_singer.hpp"
#include "../../../loss/detail/positive_part.hpp"
#include "../../../loss/logistic.hpp"
#include "../../../loss/ovr_squared_hinge.hpp"
#include "../../../loss/squared_hinge.hpp"
#include "../../objective.hpp"

namespace sparsemc::detail {

/// What `partial` accumulates besides the derivative a'(0).
enum class CoordinateNeed {
  gradient,   ///< a'(0) only
  bound,      ///< a'(0) and L_jr (Algorithm 1)
  curvature,  ///< a'(0), a''(0) and L_jr (Algorithm 2)
};

/// One coordinate's derivative information for the loss part of (1), in double.
struct CoordinatePartial {
  double gradient = 0.0;   ///< a'(0)
  double curvature = 0.0;  ///< a''(0), the generalised second derivative (Need::curvature)
  double bound = 0.0;      ///< L_jr, an upper bound of a''(z) for every z (Need::bound, curvature)
};

/// What a tracked step reports: the excess ΔL − (g z + (h/2) z²) of the change of the loss part
/// over its quadratic model at the start of the step, and the size of the terms it was computed
/// from (a rounding allowance: |error| ≲ ε·magnitude).
struct LossChange {
  double excess = 0.0;
  double magnitude = 0.0;
};

/// The excess of a change ΔL over the model g z + (h/2) z², with the magnitude of the summed terms.
inline LossChange excess_over_model(double delta, double magnitude, double g, double h, double z) {
  const double linear = g * z, quadratic = 0.5 * h * z * z;
  return {delta - linear - quadratic, magnitude + std::abs(linear) + quadratic};
}

/// Calls body(p, lane) for p = 0 … size−1 with lane = p mod 4 for the unrolled part (0 for the
/// tail), so that a loop summing into four accumulators indexed by lane runs four independent
/// addition chains instead of one (the latency of the additions bounds these gather loops).
template <class Body>
inline void unroll4(std::size_t size, Body&& body) {
  std::size_t p = 0;
  for (; p + 4 <= size; p += 4) {
    body(p, std::integral_constant<int, 0>{});
    body(p + 1, std::integral_constant<int, 1>{});
    body(p + 2, std::integral_constant<int, 2>{});
    body(p + 3, std::integral_constant<int, 3>{});
  }
  for (; p < size; ++p) body(p, std::integral_constant<int, 0>{});
}

/// Four partial sums (one per lane of unroll4).
struct Sum4 {
  double lane[4] = {0.0, 0.0, 0.0, 0.0};
  [[nodiscard]] double total() const noexcept { return (lane[0] + lane[1]) + (lane[2] + lane[3]); }
};

/// What all kernels share: sizes, the per-sample costs c_i/n, the labels.
template <RealScalar Scalar, StorageIndex Index>
class KernelBase {
 public:
  using Column = SparseSlice<Scalar, Index>;

 protected:
  void allocate_base(const CscProblem<Scalar, Index>& problem) {
    n_ = static_cast<std::size_t>(problem.n_samples());
    K_ = static_cast<std::size_t>(problem.n_classes());
    y_ = problem.y;
    cost_.resize(n_);
    const double inv_n = 1.0 / static_cast<double>(n_);
    for (std::size_t i = 0; i < n_; ++i)
      cost_[i] = static_cast<Scalar>(static_cast<double>(problem.weight(static_cast<Index>(i))) * inv_n);
    multilabel_ = problem.y.multilabel();
    label_.assign(multilabel_ ? 0 : n_, 0);
    for (std::size_t i = 0; !multilabel_ && i < n_; ++i) label_[i] = y_.single(i);
  }

  /// Whether class r belongs to sample i's class set (O(1) multiclass, O(log|y_i|) multilabel).
  [[nodiscard]] bool in_class_set(std::size_t i, ClassIndex r) const noexcept {
    if (!multilabel_) return label_[i] == r;
    const ClassSet y = y_[i];
    return std::binary_search(y.begin(), y.end(), r);
  }

  /// s_:r = X W_:r + b_r into out (n values); null W or b counts as zero. O(nnz of the columns
  /// with W_jr ≠ 0).
  void class_scores(const CscView<Scalar, Index>& X, const ClassMatrix<Scalar>* W, const ClassVector<Scalar>* b,
                    ClassIndex r, Scalar* out) const {
    const Scalar offset = (b != nullptr && b->size() > 0) ? (*b)[r] : Scalar(0);
    std::fill(out, out + n_, offset);
    if (W == nullptr) return;
    for (Index j = 0; j < X.cols(); ++j) {
      const Scalar w = (*W)(j, r);
      if (w == Scalar(0)) continue;
      for (auto [i, x] : X.outer(j)) out[static_cast<std::size_t>(i)] += x * w;
    }
  }

  std::size_t n_ = 0;
  std::size_t K_ = 0;
  LabelView y_;
  std::vector<Scalar> cost_;      ///< c_i / n
  bool multilabel_ = false;
  std::vector<ClassIndex> label_;  ///< y_i for multiclass problems
};

// --------------------------------------------------------------------------------------------
// Any loss: the loss's own members on the whole score row.
// --------------------------------------------------------------------------------------------

/// Fallback for any loss without a kernel below: scores sample-major (n × K), and the loss's
/// gradient / curvature / subgradient / value called on a sample's whole row, O(K) per sample.
/// The coordinate Lipschitz constant uses curvature_bound(K), which bounds every diagonal entry
/// of the Hessian.
template <class Loss, RealScalar Scalar, StorageIndex Index>
class CoordinateKernel : public KernelBase<Scalar, Index> {
  using Base = KernelBase<Scalar, Index>;
  using Base::cost_, Base::K_, Base::n_, Base::y_;

 public:
  using Column = typename Base::Column;
  /// Only the one-vs-rest kernel supports the binary mirror reduction.
  static constexpr bool mirror_symmetric = false;
  /// Whether ℓ is a sum of per-class terms (the classes are independent problems).
  static constexpr bool separable = false;
  /// L_jr = kappa() · (1/n) Σ_i c_i x_ij², computed by the caller.
  static constexpr bool constant_bound = true;

  CoordinateKernel(const Loss& loss, const CscProblem<Scalar, Index>& problem, std::size_t max_column, bool)
      : loss_(loss) {
    Base::allocate_base(problem);
    S_.setZero(static_cast<Eigen::Index>(n_), static_cast<Eigen::Index>(K_));
    row_.resize(K_);
    undo_score_.resize(max_column);
    if constexpr (SmoothLoss<Loss, Scalar>) kappa_ = static_cast<double>(Loss::template curvature_bound<Scalar>(static_cast<ClassIndex>(K_)));
  }

  /// curvature_bound(K): it bounds every diagonal entry of the Hessian.
  [[nodiscard]] double kappa() const noexcept { return kappa_; }

  void set_scores(const CscView<Scalar, Index>& X, const ClassMatrix<Scalar>* W, const ClassVector<Scalar>* b) {
    std::vector<Scalar> column(n_);
    for (std::size_t r = 0; r < K_; ++r) {
      this->class_scores(X, W, b, static_cast<ClassIndex>(r), column.data());
      for (std::size_t i = 0; i < n_; ++i) S_(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(r)) = column[i];
    }
  }

  template <CoordinateNeed Need>
  CoordinatePartial partial(const Column& col, ClassIndex r) {
    CoordinatePartial out;
    for (std::size_t p = 0; p < col.size(); ++p) {
      const auto i = static_cast<std::size_t>(col.indices[p]);
      const double x = static_cast<double>(col.values[p]);
      const double c = static_cast<double>(cost_[i]);
      loss_.gradient(scores(i), y_[i], std::span<Scalar>(row_));
      out.gradient += c * x * static_cast<double>(row_[static_cast<std::size_t>(r)]);
      if constexpr (Need == CoordinateNeed::curvature) {
        loss_.curvature(scores(i), y_[i], std::span<Scalar>(row_));
        out.curvature += c * x * x * static_cast<double>(row_[static_cast<std::size_t>(r)]);
      }
    }
    return out;
  }

  double subgradient(const Column& col, ClassIndex r) {
    double g = 0.0;
    for (std::size_t p = 0; p < col.size(); ++p) {
      const auto i = static_cast<std::size_t>(col.indices[p]);
      if constexpr (SmoothLoss<Loss, Scalar>) loss_.gradient(scores(i), y_[i], std::span<Scalar>(row_));
      else loss_.subgradient(scores(i), y_[i], std::span<Scalar>(row_));
      g += static_cast<double>(cost_[i]) * static_cast<double>(col.values[p]) *
           static_cast<double>(row_[static_cast<std::size_t>(r)]);
    }
    return g;
  }

  template <bool Track>
  LossChange step(const Column& col, ClassIndex r, Scalar z, double g = 0.0, double h = 0.0) {
    double delta = 0.0, magnitude = 0.0;
    for (std::size_t p = 0; p < col.size(); ++p) {
      const auto i = static_cast<std::size_t>(col.indices[p]);
      Scalar& s = S_(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(r));
      if constexpr (Track) {
        const double c = static_cast<double>(cost_[i]);
        const double before = static_cast<double>(loss_.value(scores(i), y_[i]));
        undo_score_[p] = s;
        s += z * col.values[p];
        const double after = static_cast<double>(loss_.value(scores(i), y_[i]));
        delta += c * (after - before);
        magnitude += c * (std::abs(after) + std::abs(before));
      } else {
        s += z * col.values[p];
      }
    }
    if constexpr (Track) return excess_over_model(delta, magnitude, g, h, static_cast<double>(z));
    return {};
  }

  void undo(const Column& col, ClassIndex r) {
    for (std::size_t p = 0; p < col.size(); ++p)
      S_(static_cast<Eigen::Index>(col.indices[p]), static_cast<Eigen::Index>(r)) = undo_score_[p];
  }

  double loss_part() {
    double sum = 0.0;
    for (std::size_t i = 0; i < n_; ++i) {
      if (cost_[i] == Scalar(0)) continue;
      sum += static_cast<double>(cost_[i]) * static_cast<double>(loss_.value(scores(i), y_[i]));
    }
    return sum;
  }

 private:
  [[nodiscard]] std::span<const Scalar> scores(std::size_t i) const {
    return {S_.data() + i * K_, K_};
  }

  Loss loss_;
  ClassMatrix<Scalar> S_;           ///< scores, sample-major
  std::vector<Scalar> row_;         ///< one sample's gradient / curvature / subgradient
  std::vector<Scalar> undo_score_;  ///< scores before the last tracked step, per position
  double kappa_ = 1.0;              ///< curvature_bound(K)
};

// --------------------------------------------------------------------------------------------
// One-vs-rest squared hinge: K independent binary problems.
// --------------------------------------------------------------------------------------------

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
class CoordinateKernel<OvrSquaredHinge, Scalar, Index> : public KernelBase<Scalar, Index> {
  using Base = KernelBase<Scalar, Index>;
  using Base::cost_, Base::K_, Base::n_;

 public:
  using Column = typename Base::Column;
  static constexpr bool mirror_symmetric = true;
  static constexpr bool separable = true;
  static constexpr bool constant_bound = true;

  CoordinateKernel(const OvrSquaredHinge&, const CscProblem<Scalar, Index>& problem, std::size_t max_column,
                   bool mirror)
      : mirror_(mirror) {
    Base::allocate_base(problem);
    slots_ = mirror_ ? 1 : K_;
    slack_.assign(n_ * slots_, Scalar(1));
    signed_cost_.resize(n_ * slots_);
    for (std::size_t slot = 0; slot < slots_; ++slot) {
      const ClassIndex r = class_of_slot(slot);
      for (std::size_t i = 0; i < n_; ++i)
        signed_cost_[slot * n_ + i] = this->in_class_set(i, r) ? cost_[i] : -cost_[i];
    }
    undo_.resize(max_column);
  }

  /// sup ∂²ℓ/∂s_r² = 2.
  [[nodiscard]] static constexpr double kappa() noexcept { return 2.0; }

  void set_scores(const CscView<Scalar, Index>& X, const ClassMatrix<Scalar>* W, const ClassVector<Scalar>* b) {
    for (std::size_t slot = 0; slot < slots_; ++slot) {
      Scalar* slack = slack_.data() + slot * n_;
      const Scalar* yc = signed_cost_.data() + slot * n_;
      this->class_scores(X, W, b, class_of_slot(slot), slack);
      for (std::size_t i = 0; i < n_; ++i) slack[i] = Scalar(1) - std::copysign(Scalar(1), yc[i]) * slack[i];
    }
  }

  template <CoordinateNeed Need>
  CoordinatePartial partial(const Column& col, ClassIndex r) const {
    const Scalar* slack = slack_.data() + slot_of(r) * n_;
    const Scalar* yc = signed_cost_.data() + slot_of(r) * n_;
    const Index* index = col.indices.data();
    const Scalar* value = col.values.data();
    Sum4 g, h;
    unroll4(col.size(), [&](std::size_t p, auto lane) {
      const auto i = static_cast<std::size_t>(index[p]);
      const Scalar x = value[p];
      const Scalar b = slack[i];
      const Scalar xc = x * yc[i];
      g.lane[lane] += static_cast<double>(xc * positive_part(b));
      if constexpr (Need == CoordinateNeed::curvature)  // branch-free: [b > 0] as 0 or 1
        h.lane[lane] += static_cast<double>(std::abs(xc * x) * static_cast<Scalar>(b > Scalar(0)));
    });
    return {-2.0 * g.total(), 2.0 * h.total(), 0.0};
  }

  double subgradient(const Column& col, ClassIndex r) const {
    return partial<CoordinateNeed::gradient>(col, r).gradient;
  }

  template <bool Track>
  LossChange step(const Column& col, ClassIndex r, Scalar z, double = 0.0, double = 0.0) {
    Scalar* slack = slack_.data() + slot_of(r) * n_;
    const Scalar* yc = signed_cost_.data() + slot_of(r) * n_;
    const Index* index = col.indices.data();
    const Scalar* value = col.values.data();
    LossChange change;
    for (std::size_t p = 0; p < col.size(); ++p) {
      const auto i = static_cast<std::size_t>(index[p]);
      const Scalar before = slack[i];
      const Scalar after = before - std::copysign(Scalar(1), yc[i]) * (z * value[p]);
      slack[i] = after;
      if constexpr (Track) {
        undo_[p] = before;
        if ((before > Scalar(0)) != (after > Scalar(0))) [[unlikely]] {  // crossed its margin
          const double term = static_cast<double>(std::abs(yc[i])) * static_cast<double>(after) * static_cast<double>(after);
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
      const double a = static_cast<double>(positive_part(slack_[k]));
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

// --------------------------------------------------------------------------------------------
// Multiclass squared hinge (Weston–Watkins): coupled through the true class.
// --------------------------------------------------------------------------------------------

/// SquaredHinge (Blondel et al. eq. 2): ℓ_i = Σ_{r≠y} a_ir², a_ir = max(0, t_i + s_ir) with
/// t_i = 1 − s_iy. Per sample the kernel keeps t_i, A_i = Σ_{r≠y} a_ir, N_i = #{r ≠ y : a_ir > 0}
/// and ℓ_i; then
///
///     ∂ℓ_i/∂s_ir = 2a_ir (r ≠ y_i),  −2A_i (r = y_i);    h_ir = 2[a_ir > 0],  2N_i;
///     sup h_ir   = 2,                 2(K − 1),
///
/// all O(1). A step on class r ≠ y_i changes one a_ir (O(1) update of A_i, N_i, ℓ_i); on
/// r = y_i it moves t_i and every margin (O(K) recount). The incrementally updated sums are
/// recomputed exactly by loss_part().
template <RealScalar Scalar, StorageIndex Index>
class CoordinateKernel<SquaredHinge, Scalar, Index> : public KernelBase<Scalar, Index> {
  using Base = KernelBase<Scalar, Index>;
  using Base::cost_, Base::K_, Base::n_, Base::label_;

 public:
  using Column = typename Base::Column;
  static constexpr bool mirror_symmetric = false;
  static constexpr bool separable = false;
  /// L_jr depends on which samples have class r: accumulated by `partial`.
  static constexpr bool constant_bound = false;

  CoordinateKernel(const SquaredHinge&, const CscProblem<Scalar, Index>& problem, std::size_t max_column, bool) {
    Base::allocate_base(problem);
    S_.assign(n_ * K_, Scalar(0));
    shift_.assign(n_, Scalar(1));
    sum_.assign(n_, Scalar(0));
    active_.assign(n_, Scalar(0));
    value_.assign(n_, Scalar(0));
    undo_.resize(max_column);
    refresh();
  }

  void set_scores(const CscView<Scalar, Index>& X, const ClassMatrix<Scalar>* W, const ClassVector<Scalar>* b) {
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
        const Scalar a = positive_part(shift_[i] + s[i]);
        g.lane[lane] += cx * static_cast<double>(a);
        if constexpr (Need != CoordinateNeed::gradient) L.lane[lane] += cx * x;
        if constexpr (Need == CoordinateNeed::curvature) h.lane[lane] += a > Scalar(0) ? cx * x : 0.0;
      } else {
        g.lane[lane] -= cx * static_cast<double>(sum_[i]);
        if constexpr (Need != CoordinateNeed::gradient) L.lane[lane] += cx * x * upper;
        if constexpr (Need == CoordinateNeed::curvature) h.lane[lane] += cx * x * static_cast<double>(active_[i]);
      }
    });
    return {2.0 * g.total(), 2.0 * h.total(), 2.0 * L.total()};
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
      if constexpr (Track) undo_[p] = {s[i], shift_[i], sum_[i], active_[i], value_[i]};
      if (label_[i] != r) {
        const Scalar a0 = positive_part(shift_[i] + s[i]);
        s[i] += dz;
        const Scalar a1 = positive_part(shift_[i] + s[i]);
        sum_[i] += a1 - a0;
        active_[i] += static_cast<Scalar>(a1 > Scalar(0)) - static_cast<Scalar>(a0 > Scalar(0));
        value_[i] += (a1 - a0) * (a1 + a0);
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
      sum_[i] = u.sum;
      active_[i] = u.active;
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
    Scalar score, shift, sum, active, value;
  };

  /// t_i, A_i, N_i, ℓ_i from the scores of sample i, O(K).
  void recount(std::size_t i) {
    const auto y = static_cast<std::size_t>(label_[i]);
    const Scalar t = Scalar(1) - S_[y * n_ + i];
    Scalar sum = 0, active = 0, value = 0;
    for (std::size_t r = 0; r < K_; ++r) {
      if (r == y) continue;
      const Scalar a = positive_part(t + S_[r * n_ + i]);
      sum += a;
      active += static_cast<Scalar>(a > Scalar(0));
      value += a * a;
    }
    shift_[i] = t;
    sum_[i] = sum;
    active_[i] = active;
    value_[i] = value;
  }
  void refresh() {
    for (std::size_t i = 0; i < n_; ++i) recount(i);
  }

  std::vector<Scalar> S_;       ///< scores, class-major
  std::vector<Scalar> shift_;   ///< t_i = 1 − s_iy
  std::vector<Scalar> sum_;     ///< A_i = Σ_{r≠y} a_ir
  std::vector<Scalar> active_;  ///< N_i = #{r ≠ y : a_ir > 0}
  std::vector<Scalar> value_;   ///< ℓ_i
  std::vector<Saved> undo_;     ///< per position, before the last tracked step
};

// --------------------------------------------------------------------------------------------
// Multinomial logistic: coupled through the softmax normaliser.
// --------------------------------------------------------------------------------------------

/// Logistic (softmax cross-entropy; multilabel: KL to the uniform target over y_i, as in
/// loss/logistic.hpp). Per sample the kernel keeps the max-shift m_i and its class a_i, the
/// exponentials e_ir = exp(s_ir − m_i) (class-major), Z'_i = Σ_{k≠a_i} e_ik, the target term
/// τ_i = mean_{c∈y_i} s_ic + log|y_i| and ℓ_i = m_i − τ_i + log1p(Z'_i); then with
/// p_ir = e_ir/(1 + Z'_i) and q_ir = [r ∈ y_i]/|y_i|,
///
///     ∂ℓ_i/∂s_ir = p_ir − q_ir,   h_ir = p_ir(1 − p_ir),   sup h_ir = ¼,
///
/// all O(1), no exponential (1 − p_ia = Z'_i/(1 + Z'_i) is used for the argmax class, as the
/// loss does). A step costs one exponential per sample and an O(1) update of Z'_i, or a full
/// O(K) recomputation when r is the sample's argmax class or its new score exceeds m_i (the
/// shift must stay the maximum so that nothing overflows).
template <RealScalar Scalar, StorageIndex Index>
class CoordinateKernel<Logistic, Scalar, Index> : public KernelBase<Scalar, Index> {
  using Base = KernelBase<Scalar, Index>;
  using Base::cost_, Base::K_, Base::n_, Base::y_;

 public:
  using Column = typename Base::Column;
  static constexpr bool mirror_symmetric = false;
  static constexpr bool separable = false;
  static constexpr bool constant_bound = true;

  /// sup p(1 − p) = ¼.
  [[nodiscard]] static constexpr double kappa() noexcept { return 0.25; }

  CoordinateKernel(const Logistic&, const CscProblem<Scalar, Index>& problem, std::size_t max_column, bool) {
    Base::allocate_base(problem);
    S_.assign(n_ * K_, Scalar(0));
    E_.assign(n_ * K_, Scalar(1));
    max_.assign(n_, Scalar(0));
    arg_.assign(n_, 0);
    rest_.assign(n_, Scalar(0));
    target_.assign(n_, Scalar(0));
    value_.assign(n_, Scalar(0));
    inv_size_.resize(n_);
    for (std::size_t i = 0; i < n_; ++i)
      inv_size_[i] = y_[i].empty() ? Scalar(0) : Scalar(1) / static_cast<Scalar>(y_[i].size());
    undo_.resize(max_column);
    refresh();
  }

  void set_scores(const CscView<Scalar, Index>& X, const ClassMatrix<Scalar>* W, const ClassVector<Scalar>* b) {
    for (std::size_t r = 0; r < K_; ++r) this->class_scores(X, W, b, static_cast<ClassIndex>(r), S_.data() + r * n_);
    refresh();
  }

  template <CoordinateNeed Need>
  CoordinatePartial partial(const Column& col, ClassIndex r) const {
    const Scalar* e = E_.data() + static_cast<std::size_t>(r) * n_;
    Sum4 g, h;
    unroll4(col.size(), [&](std::size_t p, auto lane) {
      const auto i = static_cast<std::size_t>(col.indices[p]);
      if (inv_size_[i] == Scalar(0)) return;  // empty class set: ℓ_i ≡ 0
      const double x = static_cast<double>(col.values[p]);
      const double c = static_cast<double>(cost_[i]);
      const double z = 1.0 + static_cast<double>(rest_[i]);
      const double q = this->in_class_set(i, r) ? static_cast<double>(inv_size_[i]) : 0.0;
      double derivative, prob, complement;
      if (arg_[i] == r) {  // p = 1/(1 + Z'), 1 − p = Z'/(1 + Z')
        prob = 1.0 / z;
        complement = static_cast<double>(rest_[i]) / z;
        derivative = q == 1.0 ? -complement : prob - q;
      } else {
        prob = static_cast<double>(e[i]) / z;
        complement = 1.0 - prob;
        derivative = prob - q;
      }
      g.lane[lane] += c * x * derivative;
      if constexpr (Need == CoordinateNeed::curvature) h.lane[lane] += c * x * x * prob * complement;
    });
    return {g.total(), h.total(), 0.0};
  }

  double subgradient(const Column& col, ClassIndex r) const {
    return partial<CoordinateNeed::gradient>(col, r).gradient;
  }

  template <bool Track>
  LossChange step(const Column& col, ClassIndex r, Scalar z, double g = 0.0, double h = 0.0) {
    const auto rr = static_cast<std::size_t>(r);
    Scalar* s = S_.data() + rr * n_;
    Scalar* e = E_.data() + rr * n_;
    double delta = 0.0, magnitude = 0.0;
    for (std::size_t p = 0; p < col.size(); ++p) {
      const auto i = static_cast<std::size_t>(col.indices[p]);
      const Scalar dz = z * col.values[p];
      const Scalar before = value_[i];
      if constexpr (Track) undo_[p] = {s[i], e[i], max_[i], rest_[i], target_[i], value_[i], false};
      s[i] += dz;
      if (inv_size_[i] != Scalar(0) && this->in_class_set(i, r)) target_[i] += dz * inv_size_[i];
      if (arg_[i] == r || s[i] > max_[i]) {
        recompute(i);
        if constexpr (Track) undo_[p].recomputed = true;
      } else {
        const Scalar fresh = std::exp(s[i] - max_[i]);
        rest_[i] = std::max(Scalar(0), rest_[i] + (fresh - e[i]));
        e[i] = fresh;
        value_[i] = loss_value(i);
      }
      if constexpr (Track) {
        const double c = static_cast<double>(cost_[i]);
        delta += c * (static_cast<double>(value_[i]) - static_cast<double>(before));
        magnitude += c * (std::abs(static_cast<double>(value_[i])) + std::abs(static_cast<double>(before)));
      }
    }
    if constexpr (Track) return excess_over_model(delta, magnitude, g, h, static_cast<double>(z));
    return {};
  }

  void undo(const Column& col, ClassIndex r) {
    const auto rr = static_cast<std::size_t>(r);
    for (std::size_t p = 0; p < col.size(); ++p) {
      const auto i = static_cast<std::size_t>(col.indices[p]);
      const Saved& u = undo_[p];
      S_[rr * n_ + i] = u.score;
      if (u.recomputed) {
        target_[i] = u.target;
        recompute(i);  // every e_ik moved with the shift: rebuild them from the restored scores
        value_[i] = u.value;
      } else {
        E_[rr * n_ + i] = u.exp;
        max_[i] = u.max;
        rest_[i] = u.rest;
        target_[i] = u.target;
        value_[i] = u.value;
      }
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
    Scalar score, exp, max, rest, target, value;
    bool recomputed;
  };

  [[nodiscard]] Scalar loss_value(std::size_t i) const {
    return inv_size_[i] == Scalar(0) ? Scalar(0) : (max_[i] - target_[i]) + std::log1p(rest_[i]);
  }

  /// m_i, a_i, e_i:, Z'_i and ℓ_i from the scores of sample i (τ_i is kept as is), O(K).
  void recompute(std::size_t i) {
    std::size_t a = 0;
    Scalar m = S_[i];
    for (std::size_t k = 1; k < K_; ++k)
      if (S_[k * n_ + i] > m) m = S_[k * n_ + i], a = k;
    Scalar rest = 0;
    for (std::size_t k = 0; k < K_; ++k) {
      const Scalar e = k == a ? Scalar(1) : std::exp(S_[k * n_ + i] - m);
      E_[k * n_ + i] = e;
      if (k != a) rest += e;
    }
    max_[i] = m;
    arg_[i] = static_cast<ClassIndex>(a);
    rest_[i] = rest;
    value_[i] = loss_value(i);
  }

  /// Everything from the scores, τ_i included.
  void refresh() {
    for (std::size_t i = 0; i < n_; ++i) {
      const ClassSet y = y_[i];
      Scalar target = 0;
      if (y.size() == 1) {
        target = S_[static_cast<std::size_t>(y[0]) * n_ + i];
      } else if (!y.empty()) {
        for (const ClassIndex c : y) target += S_[static_cast<std::size_t>(c) * n_ + i];
        target = target * inv_size_[i] + std::log(static_cast<Scalar>(y.size()));
      }
      target_[i] = target;
      recompute(i);
    }
  }

  std::vector<Scalar> S_;         ///< scores, class-major
  std::vector<Scalar> E_;         ///< exp(s_ir − m_i), class-major
  std::vector<Scalar> max_;       ///< m_i
  std::vector<ClassIndex> arg_;   ///< a_i, the class of m_i
  std::vector<Scalar> rest_;      ///< Z'_i = Σ_{k≠a_i} e_ik
  std::vector<Scalar> target_;    ///< τ_i
  std::vector<Scalar> value_;     ///< ℓ_i
  std::vector<Scalar> inv_size_;  ///< 1/|y_i| (0 for an empty class set)
  std::vector<Saved> undo_;
};

// --------------------------------------------------------------------------------------------
// Crammer–Singer (multiclass hinge / separation ranking loss): nonsmooth, for RDA.
// --------------------------------------------------------------------------------------------

/// CrammerSinger (loss/crammer_singer.hpp): ℓ_i = (1 + hi_i − lo_i)_+ with hi_i the highest
/// score outside y_i and lo_i the lowest score inside (multiclass: lo_i = s_iy). The kernel keeps
/// both extremes and their classes, and the loss's subgradient e_{hi class} − e_{lo class} of
/// each sample as the pair of classes (−1 when ℓ_i = 0), so that its coordinate component is
/// O(1): [r = hi class] − [r = lo class]. A step keeps the extremes up to date in O(1), except
/// when the extreme class itself moves inward (hi decreases, lo increases): an O(K) rescan.
/// Samples with an empty or full class set have ℓ_i ≡ 0.
template <RealScalar Scalar, StorageIndex Index>
class CoordinateKernel<CrammerSinger, Scalar, Index> : public KernelBase<Scalar, Index> {
  using Base = KernelBase<Scalar, Index>;
  using Base::cost_, Base::K_, Base::n_, Base::y_;

 public:
  using Column = typename Base::Column;
  static constexpr bool mirror_symmetric = false;
  static constexpr bool separable = false;

  CoordinateKernel(const CrammerSinger&, const CscProblem<Scalar, Index>& problem, std::size_t, bool) {
    Base::allocate_base(problem);
    S_.assign(n_ * K_, Scalar(0));
    hi_.assign(n_, Scalar(0));
    lo_.assign(n_, Scalar(0));
    extreme_.assign(n_, Extreme{});
    subgradient_.assign(n_, Pair{});
    defined_.assign(n_, 0);
    for (std::size_t i = 0; i < n_; ++i) defined_[i] = !y_[i].empty() && y_[i].size() < K_;
    refresh();
  }

  void set_scores(const CscView<Scalar, Index>& X, const ClassMatrix<Scalar>* W, const ClassVector<Scalar>* b) {
    for (std::size_t r = 0; r < K_; ++r) this->class_scores(X, W, b, static_cast<ClassIndex>(r), S_.data() + r * n_);
    refresh();
  }

  double subgradient(const Column& col, ClassIndex r) const {
    const Index* index = col.indices.data();
    const Scalar* value = col.values.data();
    Sum4 g;
    unroll4(col.size(), [&](std::size_t p, auto lane) {
      const auto i = static_cast<std::size_t>(index[p]);
      const Pair e = subgradient_[i];
      const int coefficient = static_cast<int>(e.negative == r) - static_cast<int>(e.positive == r);
      g.lane[lane] += static_cast<double>(cost_[i] * value[p]) * coefficient;
    });
    return g.total();
  }

  template <bool Track>
  LossChange step(const Column& col, ClassIndex r, Scalar z, double = 0.0, double = 0.0) {
    static_assert(!Track, "the Crammer-Singer kernel serves the RDA variant, which needs no line search");
    Scalar* s = S_.data() + static_cast<std::size_t>(r) * n_;
    for (std::size_t p = 0; p < col.size(); ++p) {
      const auto i = static_cast<std::size_t>(col.indices[p]);
      const Scalar dz = z * col.values[p];
      s[i] += dz;
      if (!defined_[i]) continue;
      Extreme& e = extreme_[i];
      if (this->in_class_set(i, r)) {  // a positive class: lo_i = min over y_i
        if (e.positive == r) {
          if (dz <= Scalar(0) || y_[i].size() == 1) lo_[i] = s[i];
          else rescan(i);
        } else if (s[i] < lo_[i]) {
          lo_[i] = s[i];
          e.positive = r;
        }
      } else {  // a negative class: hi_i = max outside y_i
        if (e.negative == r) {
          if (dz >= Scalar(0)) hi_[i] = s[i];
          else rescan(i);
        } else if (s[i] > hi_[i]) {
          hi_[i] = s[i];
          e.negative = r;
        }
      }
      update_subgradient(i);
    }
    return {};
  }

  double loss_part() const {
    double sum = 0.0;
    for (std::size_t i = 0; i < n_; ++i)
      if (defined_[i])
        sum += static_cast<double>(cost_[i]) * static_cast<double>(std::max(Scalar(0), Scalar(1) + hi_[i] - lo_[i]));
    return sum;
  }

 private:
  /// A pair of classes: the highest negative and the lowest positive (or −1, −1).
  struct Pair {
    ClassIndex negative = -1, positive = -1;
  };
  using Extreme = Pair;

  /// The subgradient's classes of sample i: its extremes when ℓ_i > 0, none otherwise.
  void update_subgradient(std::size_t i) {
    subgradient_[i] = Scalar(1) + hi_[i] - lo_[i] > Scalar(0) ? extreme_[i] : Pair{};
  }

  /// hi_i, lo_i and their classes from the scores of sample i, O(K).
  void rescan(std::size_t i) {
    Scalar hi = -std::numeric_limits<Scalar>::infinity(), lo = std::numeric_limits<Scalar>::infinity();
    Pair e{0, 0};
    for (std::size_t k = 0; k < K_; ++k) {
      const Scalar v = S_[k * n_ + i];
      const auto kc = static_cast<ClassIndex>(k);
      if (this->in_class_set(i, kc)) {
        if (v < lo) lo = v, e.positive = kc;
      } else if (v > hi) {
        hi = v, e.negative = kc;
      }
    }
    hi_[i] = hi;
    lo_[i] = lo;
    extreme_[i] = e;
  }
  void refresh() {
    for (std::size_t i = 0; i < n_; ++i) {
      if (!defined_[i]) continue;
      rescan(i);
      update_subgradient(i);
    }
  }

  std::vector<Scalar> S_;              ///< scores, class-major
  std::vector<Scalar> hi_, lo_;        ///< highest negative / lowest positive score
  std::vector<Extreme> extreme_;       ///< their classes
  std::vector<Pair> subgradient_;      ///< the subgradient's classes (−1 when ℓ_i = 0)
  std::vector<std::uint8_t> defined_;  ///< y_i neither empty nor full
};

}  // namespace sparsemc::detail
