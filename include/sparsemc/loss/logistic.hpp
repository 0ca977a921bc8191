#pragma once
/// \file logistic.hpp
/// Multinomial logistic loss (softmax cross-entropy; Blondel et al. 2013, eq. (12)), computed
/// with the max shift so that no score, however large, overflows or produces NaN.

#include <Eigen/Core>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstddef>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include "concepts.hpp"
#include "detail/class_set.hpp"
#include "kernels/block_kernel.hpp"
#include "kernels/coordinate_kernel.hpp"

namespace sparsemc {

/// Multinomial logistic loss (Blondel et al. 2013, eq. (12); scikit-learn's multinomial
/// LogisticRegression):
///
///     ℓ(s, y) = log Σ_k exp(s_k) − s_y = log(1 + Σ_{r≠y} exp(s_r − s_y)),
///     ∇ℓ = p − e_y,   p = softmax(s),   ∇²ℓ = diag(p) − ppᵀ.
///
/// Multilabel (normalised): the target is the uniform distribution q = 1_y/|y| over the
/// sample's classes and the loss is the Kullback–Leibler divergence KL(q ‖ p),
///
///     ℓ(s, y) = log Σ_k exp(s_k) − (1/|y|) Σ_{c∈y} s_c − log|y|,   ∇ℓ = p − q,
///
/// i.e. the cross-entropy against q minus its constant entropy log|y|, so ℓ ≥ 0 with equality
/// iff p = q, the Hessian is unchanged, and |y| = 1 is exactly the multiclass loss. A sample with
/// an empty class set has no target distribution and contributes ℓ = 0 (gradient and curvature 0).
///
/// Numerics: with m = max_k s_k attained first at index a and Z' = Σ_{k≠a} exp(s_k − m) ∈
/// [0, K−1], ℓ = (m − s_y) + log1p(Z') (both terms ≥ 0, no cancellation, accurate to the last
/// digits even when ℓ ≪ 1; scores of ±1e6 give finite, exact values), p_k = exp(s_k − m)/(1 + Z')
/// and 1 − p_a = Z'/(1 + Z') without cancellation.
///
/// - curvature: the exact Hessian diagonal h_k = p_k(1 − p_k) ≤ ¼ (Blondel eq. 6 analogue)
/// - curvature_bound(K) = ½ = sup_s λ_max(diag(p) − ppᵀ) (attained as p → (½, ½, 0, …)), so
///   K_j = (1/(2n)) Σ_i c_i x_ij² in (1) (Blondel §5.3). For K = 1 the loss is 0 and ½ is safe.
///
/// Every member costs O(K) exponentials, allocates nothing, is safe to call concurrently.
///
/// \code
///   const sparsemc::Logistic loss;
///   const std::array<double, 2> s{1e6, -1e6};
///   const std::array<sparsemc::ClassIndex, 1> y{1};
///   std::array<double, 2> g{};
///   double l = loss.gradient<double>(s, y, g);   // l = 2e6, g = {1, -1}
/// \endcode
struct Logistic {
  static constexpr std::string_view name = "logistic";
  static constexpr bool supports_multilabel = true;
  /// Subgradients bounded by 1 entrywise (BoundedSubgradientLoss).
  static constexpr bool bounded_subgradient = true;
  /// ∇ℓ = softmax(s) − t_y: the softmax link of GLS (GeneralizedLinearLoss).
  static constexpr InverseLink inverse_link = InverseLink::softmax;
  /// dom ℓ* = {p − t : p in the simplex}, t = 1_y/|y| the target ({0} for an empty y).
  static constexpr DualDomain dual_domain = DualDomain::shifted_simplex;
  /// Its block kernel for BlockCD (defined below; loss/kernels/block_kernel.hpp).
  template <RealScalar Scalar, StorageIndex Index>
  class BlockKernel;
  /// Its coordinate kernel for SCD (defined below; loss/kernels/coordinate_kernel.hpp).
  template <RealScalar Scalar, StorageIndex Index>
  class CoordinateKernel;

  /// ℓ(s, y) as in the class comment; O(K).
  template <RealScalar Scalar>
  [[nodiscard]] Scalar value(std::span<const Scalar> s, ClassSet y) const noexcept {
    assert(detail::valid_class_set(y, s.size()));
    if (y.empty()) return Scalar(0);
    const std::size_t a = argmax(s);
    const Scalar m = s[a];
    Scalar rest = 0;  // Z' = Σ_{k≠a} exp(s_k − m)
    for (std::size_t k = 0; k < a; ++k) rest += std::exp(s[k] - m);
    for (std::size_t k = a + 1; k < s.size(); ++k) rest += std::exp(s[k] - m);
    return target_gap(s, y, m) + std::log1p(rest);
  }

  /// Writes ∇ℓ = p − q into g (size K) and returns ℓ; g holds exp(s − m) in between, so the
  /// call makes K exponentials and no other pass over memory than two over s and g.
  template <RealScalar Scalar>
  Scalar gradient(std::span<const Scalar> s, ClassSet y, std::span<Scalar> g) const noexcept {
    assert(g.size() == s.size());
    assert(detail::valid_class_set(y, s.size()));
    if (y.empty()) {
      std::fill(g.begin(), g.end(), Scalar(0));
      return Scalar(0);
    }
    const std::size_t a = argmax(s);
    const Scalar rest = softmax(s, a, g);
    const Scalar inv = Scalar(1) / static_cast<Scalar>(y.size());
    for (const ClassIndex c : y) g[static_cast<std::size_t>(c)] -= inv;
    // 1 − p_a = Z'/(1 + Z') exactly when a is the only class of y (the common, well-fitted case).
    if (y.size() == 1 && static_cast<std::size_t>(y[0]) == a) g[a] = -rest / (Scalar(1) + rest);
    return target_gap(s, y, s[a]) + std::log1p(rest);
  }

  /// The gradient (the only subgradient of a differentiable loss); returns ℓ.
  template <RealScalar Scalar>
  Scalar subgradient(std::span<const Scalar> s, ClassSet y, std::span<Scalar> g) const noexcept {
    return gradient(s, y, g);
  }

  /// Writes the Hessian diagonal p_k(1 − p_k) into h (0 for an empty class set).
  template <RealScalar Scalar>
  void curvature(std::span<const Scalar> s, ClassSet y, std::span<Scalar> h) const noexcept {
    assert(h.size() == s.size());
    assert(detail::valid_class_set(y, s.size()));
    if (y.empty()) {
      std::fill(h.begin(), h.end(), Scalar(0));
      return;
    }
    const std::size_t a = argmax(s);
    const Scalar rest = softmax(s, a, h);
    for (Scalar& p : h) p *= Scalar(1) - p;
    h[a] = rest / ((Scalar(1) + rest) * (Scalar(1) + rest));  // p_a (1 − p_a) = Z'/(1 + Z')²
  }

  /// ℓ*(a, y) = Σ_k p_k log p_k − Σ_k t_k log t_k with p = a + t, t = 1_y/|y| (negative
  /// entries of p from rounding count as 0); an empty y gives ℓ ≡ 0, ℓ*(0) = 0.
  template <RealScalar Scalar>
  [[nodiscard]] double conjugate(std::span<const Scalar> a, ClassSet y) const noexcept {
    if (y.empty()) return 0.0;
    const double t = 1.0 / static_cast<double>(y.size());
    double sum = std::log(static_cast<double>(y.size()));  // −Σ t log t
    std::size_t next = 0;
    for (std::size_t k = 0; k < a.size(); ++k) {
      double p = static_cast<double>(a[k]);
      if (next < y.size() && static_cast<std::size_t>(y[next]) == k) {
        p += t;
        ++next;
      }
      if (p > 0) sum += p * std::log(p);
    }
    return sum;
  }

  /// sup_s λ_max(∇²ℓ(s)) = ½.
  template <RealScalar Scalar>
  [[nodiscard]] static constexpr Scalar curvature_bound(ClassIndex /*K*/) noexcept {
    return Scalar(0.5);
  }

 private:
  /// First index of the largest score (K ≥ 1).
  template <RealScalar Scalar>
  static std::size_t argmax(std::span<const Scalar> s) noexcept {
    assert(!s.empty());
    return static_cast<std::size_t>(std::max_element(s.begin(), s.end()) - s.begin());
  }

  /// Writes p = softmax(s) into p and returns Z' = Σ_{k≠a} exp(s_k − s_a) (summed without the
  /// exp(0) = 1 of index a, so that no bit of a small Z' is lost).
  template <RealScalar Scalar>
  static Scalar softmax(std::span<const Scalar> s, std::size_t a, std::span<Scalar> p) noexcept {
    const Scalar m = s[a];
    Scalar rest = 0;
    for (std::size_t k = 0; k < a; ++k) rest += (p[k] = std::exp(s[k] - m));
    for (std::size_t k = a + 1; k < s.size(); ++k) rest += (p[k] = std::exp(s[k] - m));
    p[a] = Scalar(1);
    const Scalar inv = Scalar(1) / (Scalar(1) + rest);
    for (Scalar& v : p) v *= inv;
    return rest;
  }

  /// (m − mean_{c∈y} s_c) − log|y| ≥ −log|y|: the part of ℓ besides log1p(Z'); for one class
  /// simply m − s_y ≥ 0.
  template <RealScalar Scalar>
  static Scalar target_gap(std::span<const Scalar> s, ClassSet y, Scalar m) noexcept {
    if (y.size() == 1) return m - s[static_cast<std::size_t>(y[0])];
    Scalar gap = 0;
    for (const ClassIndex c : y) gap += m - s[static_cast<std::size_t>(c)];
    const auto size = static_cast<Scalar>(y.size());
    return gap / size - std::log(size);
  }
};

/// Multinomial logistic (Blondel eq. 12; multilabel: KL to the uniform target over y, as in
/// loss/logistic.hpp). Besides the scores it keeps, per sample, e = exp(s − max s) (n × K) and
/// Z' = Σ_{k≠argmax} e_k, so p = e/(1 + Z') needs no exponential: the gradient and curvature
/// passes are as cheap as the squared hinge's, and only a step pays K exponentials per sample.
template <RealScalar Scalar, StorageIndex Index>
class Logistic::BlockKernel : public kernels::ScoreCache<Scalar, Index, true> {
  using Base = kernels::ScoreCache<Scalar, Index, true>;
  using Base::cost_, Base::K_, Base::n_, Base::y_, Base::value_, Base::trial_value_, Base::trial_change_,
      Base::stride_;
  using Array = typename Base::Array;

 public:
  using Column = typename Base::Column;

  /// A gradient call's buffer: the target part c q of G, accumulated apart.
  struct Workspace {
    Array G_y;
  };

  BlockKernel(const Logistic&, const TrainingProblem auto& problem, std::size_t max_column) {
    Base::allocate(problem, max_column);
    own_ = workspace();
    em1_.resize(static_cast<Eigen::Index>(stride_));
    detail::resize_advised(E_, static_cast<Eigen::Index>(n_ * stride_), 1);
    E_.setZero();
    rest_.assign(n_, Scalar(0));
    trial_S_.setZero(static_cast<Eigen::Index>(max_column * stride_));
    trial_E_.setZero(static_cast<Eigen::Index>(max_column * stride_));
    trial_rest_.assign(max_column, Scalar(0));
  }

  [[nodiscard]] Workspace workspace() const { return {Array(static_cast<Eigen::Index>(stride_))}; }

  void refresh() {
    for (std::size_t i = 0; i < n_; ++i) value_[i] = evaluate(this->row(i), exps(i), rest_[i], y_[i]);
  }

  template <bool WithCurvature>
  void gradient(const Column& col, Scalar* G_out, Scalar* H_out) {
    gradient<WithCurvature>(col, G_out, H_out, own_);
  }

  template <bool WithCurvature>
  void gradient(const Column& col, Scalar* G_out, Scalar* H_out, Workspace& work) const {
    Array& G_y = work.G_y;
    auto G = this->row_map(G_out);
    G.setZero();
    G_y.setZero();
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
      for (const ClassIndex k : y) G_y[k] += target;  // c q, subtracted at the end
      if constexpr (WithCurvature) this->row_map(H_out) += (c * x * inv_z) * e * (Scalar(1) - inv_z * e);
    }
    G -= G_y;
  }

  kernels::Trial trial(const Column& col, const Scalar* delta, Scalar alpha) {
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

  Workspace own_;                   ///< gradient()'s buffer
  Array em1_;                       ///< expm1(u) of one sample's trial move
  Array E_;                         ///< exp(s − max s), n rows of `stride_` (0 in the padding)
  std::vector<Scalar> rest_;        ///< Z' per sample
  Array trial_S_;                   ///< trial scores, per position in the column
  Array trial_E_;                   ///< trial exponentials, per position in the column
  std::vector<Scalar> trial_rest_;  ///< trial Z', per position in the column
};

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
class Logistic::CoordinateKernel : public kernels::CoordinateCache<Scalar, Index> {
  using Base = kernels::CoordinateCache<Scalar, Index>;
  using Base::cost_, Base::K_, Base::n_, Base::y_;

 public:
  using Column = typename Base::Column;
  static constexpr bool mirror_symmetric = false;
  static constexpr bool constant_bound = true;

  /// sup p(1 − p) = ¼.
  [[nodiscard]] static constexpr double kappa() noexcept { return 0.25; }

  CoordinateKernel(const Logistic&, const TrainingProblem auto& problem, std::size_t max_column, bool) {
    Base::allocate_base(problem);
    detail::assign_advised(S_, n_ * K_, Scalar(0));
    detail::assign_advised(E_, n_ * K_, Scalar(1));
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

  void set_scores(const auto& X, const ClassMatrix<Scalar>* W, const ClassVector<Scalar>* b) {
    for (std::size_t r = 0; r < K_; ++r) this->class_scores(X, W, b, static_cast<ClassIndex>(r), S_.data() + r * n_);
    refresh();
  }

  template <kernels::CoordinateNeed Need>
  kernels::CoordinatePartial partial(const Column& col, ClassIndex r) const {
    const Scalar* e = E_.data() + static_cast<std::size_t>(r) * n_;
    kernels::Sum4 g, h;
    kernels::unroll4(col.size(), [&](std::size_t p, auto lane) {
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
      if constexpr (Need == kernels::CoordinateNeed::curvature) h.lane[lane] += c * x * x * prob * complement;
    });
    return {g.total(), h.total(), 0.0};
  }

  double subgradient(const Column& col, ClassIndex r) const {
    return partial<kernels::CoordinateNeed::gradient>(col, r).gradient;
  }

  template <bool Track>
  kernels::LossChange step(const Column& col, ClassIndex r, Scalar z, double g = 0.0, double h = 0.0) {
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
    if constexpr (Track) return kernels::excess_over_model(delta, magnitude, g, h, static_cast<double>(z));
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

}  // namespace sparsemc
