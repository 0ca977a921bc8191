#pragma once
/// \file coordinate_kernel.hpp
/// What a loss gives SCD (solver/scd/scd.hpp) to be fast: its coordinate kernel, the per-sample
/// cache that a step on one coordinate w_jr of W needs, without touching W or any other
/// coordinate.
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
/// with no kernel of its own. No allocation after construction.
///
/// A loss owns its kernel: it declares a member class template `CoordinateKernel<Scalar,
/// Index>` (each loss header defines its own below the loss), built from (loss, problem (CSC or
/// column-major dense), longest column, mirror) and deriving from `CoordinateCache`; `CoordinateKernelFor` finds it,
/// and falls back to `GenericCoordinateKernel`. The members every kernel offers (Column = a
/// SparseSlice of X, or the all-ones intercept column), with the flags `mirror_symmetric`
/// (the K = 2 binary reduction, one-vs-rest only) and `constant_bound`:
///   set_scores(X, W, b)         scores s_i = Wᵀx_i + b (null W or b = 0) and the cache from them,
///                               X the problem's feature_columns
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
#include <span>
#include <type_traits>
#include <vector>

#include "../../core/class_matrix.hpp"
#include "../../core/huge_pages.hpp"
#include "../../data/problem.hpp"
#include "../../data/sparse_view.hpp"
#include "../concepts.hpp"

namespace sparsemc::kernels {

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

/// What every coordinate kernel stores: sizes, the per-sample costs c_i/n, the labels.
template <RealScalar Scalar, StorageIndex Index>
class CoordinateCache {
 public:
  using Column = SparseSlice<Scalar, Index>;

 protected:
  void allocate_base(const TrainingProblem auto& problem) {
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
  void class_scores(const auto& X, const ClassMatrix<Scalar>* W, const ClassVector<Scalar>* b,
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

/// The coordinate kernel of a loss that declares none: scores sample-major (n × K), and the
/// loss's gradient / curvature / subgradient / value called on a sample's whole row, O(K) per
/// sample.
/// The coordinate Lipschitz constant uses curvature_bound(K), which bounds every diagonal entry
/// of the Hessian.
template <class Loss, RealScalar Scalar, StorageIndex Index>
class GenericCoordinateKernel : public CoordinateCache<Scalar, Index> {
  using Base = CoordinateCache<Scalar, Index>;
  using Base::cost_, Base::K_, Base::n_, Base::y_;

 public:
  using Column = typename Base::Column;
  /// Only the one-vs-rest kernel supports the binary mirror reduction.
  static constexpr bool mirror_symmetric = false;
  /// L_jr = kappa() · (1/n) Σ_i c_i x_ij², computed by the caller.
  static constexpr bool constant_bound = true;

  GenericCoordinateKernel(const Loss& loss, const TrainingProblem auto& problem, std::size_t max_column,
                          bool)
      : loss_(loss) {
    Base::allocate_base(problem);
    S_.setZero(static_cast<Eigen::Index>(n_), static_cast<Eigen::Index>(K_));
    row_.resize(K_);
    undo_score_.resize(max_column);
    if constexpr (SmoothLoss<Loss, Scalar>)
      kappa_ = static_cast<double>(loss.template curvature_bound<Scalar>(static_cast<ClassIndex>(K_)));
  }

  /// curvature_bound(K): it bounds every diagonal entry of the Hessian.
  [[nodiscard]] double kappa() const noexcept { return kappa_; }

  void set_scores(const auto& X, const ClassMatrix<Scalar>* W, const ClassVector<Scalar>* b) {
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

/// Whether `Loss` declares its own coordinate kernel for (Scalar, Index).
template <class Loss, class Scalar, class Index>
concept OwnsCoordinateKernel = requires { typename Loss::template CoordinateKernel<Scalar, Index>; };

template <class Loss, class Scalar, class Index>
struct CoordinateKernelOf {
  using type = GenericCoordinateKernel<Loss, Scalar, Index>;
};
template <class Loss, class Scalar, class Index>
  requires OwnsCoordinateKernel<Loss, Scalar, Index>
struct CoordinateKernelOf<Loss, Scalar, Index> {
  using type = typename Loss::template CoordinateKernel<Scalar, Index>;
};

/// The coordinate kernel SCD runs `Loss` with: the loss's own, else the generic one.
template <class Loss, RealScalar Scalar, StorageIndex Index>
using CoordinateKernelFor = typename CoordinateKernelOf<Loss, Scalar, Index>::type;

}  // namespace sparsemc::kernels
