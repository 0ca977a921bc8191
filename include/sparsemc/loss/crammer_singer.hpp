#pragma once
/// \file crammer_singer.hpp
/// The multiclass hinge of Crammer & Singer and its multilabel form, the separation ranking
/// loss of PD-Sparse (Yen et al. 2016, eq. (2)); nonsmooth, with a subgradient.

#include <Eigen/Core>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string_view>
#include <vector>

#include "concepts.hpp"
#include "detail/class_set.hpp"
#include "kernels/coordinate_kernel.hpp"

namespace sparsemc {

/// Crammer–Singer multiclass hinge and, for multilabel data, the separation ranking loss
/// (Yen et al. 2016, eq. (2); multiclass eq. (3)):
///
///     ℓ(s, y) = max_{n∉y, p∈y} (1 + s_n − s_p)_+ = (1 + max_{n∉y} s_n − min_{p∈y} s_p)_+.
///
/// With one class this is max(0, 1 + max_{r≠y} s_r − s_y), LIBLINEAR's -s 4 loss. Degenerate
/// class sets: an empty y (no positive) or a full y (no negative) leaves no pair to separate, so
/// ℓ ≡ 0 there (the maximum over an empty set of nonnegative terms; it matches PD-Sparse's dual
/// set C_i of eq. (16), which is {0} then). Such samples contribute nothing. K = 1 is the full
/// case.
///
/// - subgradient: e_{n*} − e_{p*} (n* the first argmax over the negatives, p* the first argmin
///   over the positives) when ℓ > 0, else 0 (a valid choice also at the kink ℓ = 0).
/// - the dual side (the duality gap, FBPD, FCBCFW, the sequential dual method): ℓ = σ_D(· + r)
///   is the support function of D = {v : v_n ≥ 0 (n ∉ y), v_p ≤ 0 (p ∈ y), Σ_N v_n = −Σ_P v_p
///   ≤ 1} shifted by r = 1_{∉y} (Chierchia et al. 2015, Prop. 3.1): its dual blocks are simplices
///   (multiclass) or PD-Sparse's bi-simplices (multilabel), which those solvers project onto.
///   FBPD's epigraph projection (Chierchia Prop. 3.3) is taken in the score-difference space of
///   the paper's operator T (prox/epigraph_max.hpp).
///
/// Nonsmooth: models Loss and SubgradientLoss, not SmoothLoss. value/subgradient cost
/// O(K + |y|) and allocate nothing.
///
/// \code
///   const sparsemc::CrammerSinger loss;
///   const std::array<double, 3> s{0.5, 1.0, -2.0};
///   const std::array<sparsemc::ClassIndex, 1> y{1};
///   std::array<double, 3> g{};
///   double l = loss.subgradient<double>(s, y, g);   // 1 + 0.5 − 1 = 0.5, g = {1, -1, 0}
/// \endcode
struct CrammerSinger {
  static constexpr std::string_view name = "crammer-singer";
  static constexpr bool supports_multilabel = true;
  /// Subgradients bounded by 1 entrywise (BoundedSubgradientLoss).
  static constexpr bool bounded_subgradient = true;
  /// The separation ranking structure (SeparationRankingLoss): FBPD's exact steps, FCBCFW and
  /// the sequential dual method solve it through its (bi-)simplex dual blocks.
  static constexpr bool separation_ranking = true;
  /// Multiclass: dom ℓ* = {p − e_y : p in the simplex}. (A multilabel y's domain D above is
  /// not of this shape: solver/duality_gap.hpp refuses the intercept's correction for it.)
  static constexpr DualDomain dual_domain = DualDomain::shifted_simplex;
  /// Its coordinate kernel for SCD (defined below; loss/kernels/coordinate_kernel.hpp).
  template <RealScalar Scalar, StorageIndex Index>
  class CoordinateKernel;

  /// ℓ(s, y) = (1 + max_{n∉y} s_n − min_{p∈y} s_p)_+, 0 for an empty or full y.
  template <RealScalar Scalar>
  [[nodiscard]] Scalar value(std::span<const Scalar> s, ClassSet y) const noexcept {
    const Extremes<Scalar> e = extremes(s, y);
    return e.defined() ? std::max(Scalar(0), e.margin_violation()) : Scalar(0);
  }

  /// ℓ*(a, y) = −Σ_{n∉y} a_n for a in D (above; multiclass a = p − e_y: ℓ* = a_y = p_y − 1),
  /// the negative mass moved from the positives to the negatives; +∞ when a negative's entry is
  /// below 0 or a positive's above 0 (docs/math.md, "Duality gap").
  template <RealScalar Scalar>
  [[nodiscard]] double conjugate(std::span<const Scalar> a, ClassSet y) const noexcept {
    double mass = 0;
    std::size_t next = 0;
    for (std::size_t k = 0; k < a.size(); ++k) {
      const auto v = static_cast<double>(a[k]);
      const bool positive = next < y.size() && static_cast<std::size_t>(y[next]) == k;
      if (positive) ++next;
      if (positive ? v > 0 : v < 0) return std::numeric_limits<double>::infinity();
      if (!positive) mass += v;
    }
    // The mass is at most 1, up to the rounding of a solver's own dual iterate in Scalar.
    const double rounding = 64 * static_cast<double>(std::numeric_limits<Scalar>::epsilon());
    return mass > 1.0 + rounding ? std::numeric_limits<double>::infinity() : -mass;
  }

  /// Writes e_{n*} − e_{p*} (or 0 when ℓ = 0) into g (size K) and returns ℓ.
  template <RealScalar Scalar>
  Scalar subgradient(std::span<const Scalar> s, ClassSet y, std::span<Scalar> g) const noexcept {
    assert(g.size() == s.size());
    const Extremes<Scalar> e = extremes(s, y);
    std::fill(g.begin(), g.end(), Scalar(0));
    if (!e.defined()) return Scalar(0);
    const Scalar loss = e.margin_violation();
    if (loss <= Scalar(0)) return Scalar(0);
    g[e.negative] = Scalar(1);
    g[e.positive] = Scalar(-1);
    return loss;
  }

 private:
  /// The largest negative score and the smallest positive score with their (first) indices.
  template <RealScalar Scalar>
  struct Extremes {
    Scalar highest_negative = -std::numeric_limits<Scalar>::infinity();
    Scalar lowest_positive = std::numeric_limits<Scalar>::infinity();
    std::size_t negative = 0, positive = 0;
    bool has_negative = false, has_positive = false;

    [[nodiscard]] bool defined() const noexcept { return has_negative && has_positive; }
    [[nodiscard]] Scalar margin_violation() const noexcept {
      return Scalar(1) + highest_negative - lowest_positive;
    }
  };

  template <RealScalar Scalar>
  static Extremes<Scalar> extremes(std::span<const Scalar> s, ClassSet y) noexcept {
    assert(detail::valid_class_set(y, s.size()));
    Extremes<Scalar> e;
    e.has_positive = !y.empty();
    e.has_negative = y.size() < s.size();
    detail::for_each_run(
        s.size(), y,
        [&](std::size_t begin, std::size_t end) {
          for (std::size_t r = begin; r < end; ++r)
            if (s[r] > e.highest_negative) {
              e.highest_negative = s[r];
              e.negative = r;
            }
        },
        [&](std::size_t p) {
          if (s[p] < e.lowest_positive) {
            e.lowest_positive = s[p];
            e.positive = p;
          }
        });
    return e;
  }
};

/// CrammerSinger (loss/crammer_singer.hpp): ℓ_i = (1 + hi_i − lo_i)_+ with hi_i the highest
/// score outside y_i and lo_i the lowest score inside (multiclass: lo_i = s_iy). The kernel keeps
/// both extremes and their classes, and the loss's subgradient e_{hi class} − e_{lo class} of
/// each sample as the pair of classes (−1 when ℓ_i = 0), so that its coordinate component is
/// O(1): [r = hi class] − [r = lo class]. A step keeps the extremes up to date in O(1), except
/// when the extreme class itself moves inward (hi decreases, lo increases): an O(K) rescan.
/// Samples with an empty or full class set have ℓ_i ≡ 0.
template <RealScalar Scalar, StorageIndex Index>
class CrammerSinger::CoordinateKernel : public kernels::CoordinateCache<Scalar, Index> {
  using Base = kernels::CoordinateCache<Scalar, Index>;
  using Base::cost_, Base::K_, Base::n_, Base::y_;

 public:
  using Column = typename Base::Column;
  static constexpr bool mirror_symmetric = false;

  CoordinateKernel(const CrammerSinger&, const TrainingProblem auto& problem, std::size_t, bool) {
    Base::allocate_base(problem);
    detail::assign_advised(S_, n_ * K_, Scalar(0));
    hi_.assign(n_, Scalar(0));
    lo_.assign(n_, Scalar(0));
    extreme_.assign(n_, Extreme{});
    subgradient_.assign(n_, Pair{});
    defined_.assign(n_, 0);
    for (std::size_t i = 0; i < n_; ++i) defined_[i] = !y_[i].empty() && y_[i].size() < K_;
    refresh();
  }

  void set_scores(const auto& X, const ClassMatrix<Scalar>* W, const ClassVector<Scalar>* b) {
    for (std::size_t r = 0; r < K_; ++r) this->class_scores(X, W, b, static_cast<ClassIndex>(r), S_.data() + r * n_);
    refresh();
  }

  double subgradient(const Column& col, ClassIndex r) const {
    const Index* index = col.indices.data();
    const Scalar* value = col.values.data();
    kernels::Sum4 g;
    kernels::unroll4(col.size(), [&](std::size_t p, auto lane) {
      const auto i = static_cast<std::size_t>(index[p]);
      const Pair e = subgradient_[i];
      const int coefficient = static_cast<int>(e.negative == r) - static_cast<int>(e.positive == r);
      g.lane[lane] += static_cast<double>(cost_[i] * value[p]) * coefficient;
    });
    return g.total();
  }

  template <bool Track>
  kernels::LossChange step(const Column& col, ClassIndex r, Scalar z, double = 0.0, double = 0.0) {
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

}  // namespace sparsemc
