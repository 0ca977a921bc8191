#pragma once
/// \file regulariser.hpp
/// The regulariser g of FBPD (implementation detail): the penalty policy applied to the rows of
/// W, or to user-given blocks of feature rows, with its prox, value, conjugate and dual norm.
///
/// A group is a set of features J. With the default layout every feature is its own group and
/// the penalty acts on the row W_j: ∈ R^K, as everywhere in sparsemc. With feature blocks:
///   - joint (`per_class = false`): the |J|·K entries W_{J,:} form one vector, so L1L2 becomes
///     λ‖W_{J,:}‖_F (the whole block of rows is selected or dropped together) and L1Linf
///     λ max_{j∈J,k} |w_jk|;
///   - per class (`per_class = true`): for every class k the |J| entries W_{J,k} form a vector,
///     which is Chierchia et al.'s ℓ_{1,p} norm Σ_k Σ_b ‖x^{(k,b)}‖_p (§2, blocks of 5 genes for
///     the leukemia data, 81 scattering coefficients for MNIST).
/// Every penalty policy works on any vector (a std::span), so a group is gathered into a buffer,
/// handed to the policy and scattered back. The ridge term (μ/2)‖·‖² is separable, so its
/// grouping does not matter.
///
/// What FBPD needs from g (all policies are even functions, g(−W) = g(W)):
///   prox         W_J ← prox_{t_J·P}(W_J), group by group (the policy's `prox`)            (R1)
///   value        g(W) = Σ_groups P(W_J)                                                    (R2)
///   conjugate    g*(V) = Σ_groups sup_w ⟨v, w⟩ − P(w), attained at                         (R3)
///                w* = prox_{(λ/μ)R}(v/μ) when μ > 0 (finite everywhere)
///   dual norm    max_groups R°(V_J): with μ = 0, g* = ι{R°(V_J) ≤ λ for every group}       (R4)
///   violation    (Σ_groups dist(−G_J, ∂P(W_J))²)^½, 0 iff −G ∈ ∂g(W)                        (R5)

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "../../../core/traits.hpp"
#include "../../objective.hpp"

namespace sparsemc::detail {

template <class Penalty, RealScalar Scalar>
class Regulariser {
 public:
  /// `group_of_feature` empty: one group per feature (rows). Otherwise d group ids ≥ 0.
  Regulariser(const Penalty& penalty, std::span<const std::int64_t> group_of_feature, bool per_class,
              Eigen::Index n_features, Eigen::Index n_classes)
      : penalty_(penalty), per_class_(per_class), K_(n_classes), copy_(static_cast<std::size_t>(n_classes)) {
    if (group_of_feature.empty()) return;
    if (static_cast<Eigen::Index>(group_of_feature.size()) != n_features)
      throw std::invalid_argument("FBPD: feature_groups has " + std::to_string(group_of_feature.size()) +
                                  " entries but the problem has " + std::to_string(n_features) + " features");
    std::int64_t largest = -1;
    for (const auto g : group_of_feature) {
      if (g < 0) throw std::invalid_argument("FBPD: feature_groups must hold group ids >= 0");
      largest = std::max(largest, g);
    }
    // Counting sort of the features by group: group r is members_[ptr_[r] .. ptr_[r+1]).
    std::vector<std::int64_t> count(static_cast<std::size_t>(largest) + 2, 0);
    for (const auto g : group_of_feature) ++count[static_cast<std::size_t>(g) + 1];
    for (std::size_t r = 1; r < count.size(); ++r) count[r] += count[r - 1];
    members_.resize(group_of_feature.size());
    std::vector<std::int64_t> next(count.begin(), count.end() - 1);
    for (std::size_t j = 0; j < group_of_feature.size(); ++j)
      members_[static_cast<std::size_t>(next[static_cast<std::size_t>(group_of_feature[j])]++)] = static_cast<Eigen::Index>(j);
    for (std::size_t r = 0; r + 1 < count.size(); ++r)
      if (count[r + 1] > count[r]) ptr_.push_back(count[r]);  // empty ids are skipped
    ptr_.push_back(count.back());
    std::int64_t widest = 0;
    for (std::size_t r = 0; r + 1 < ptr_.size(); ++r) widest = std::max(widest, ptr_[r + 1] - ptr_[r]);
    buffer_.resize(static_cast<std::size_t>(widest * (per_class_ ? 1 : K_)));
    copy_.resize(buffer_.size());
    gathered_.reserve(static_cast<std::size_t>(n_features * n_classes));
  }

  [[nodiscard]] const Penalty& penalty() const noexcept { return penalty_; }

  /// (R1) with a step per feature row: W_J ← prox_{t_J·P}(W_J), t_J = row_steps[j] for j ∈ J
  /// (constant over a group: see `equalise`).
  void prox(ClassMatrix<Scalar>& W, std::span<const Scalar> row_steps) {
    for_each_group(W, [&](std::span<Scalar> v, Eigen::Index first) { penalty_.prox(v, row_steps[static_cast<std::size_t>(first)]); }, true);
  }

  /// Replaces per-feature values by their minimum over each group, so that a diagonal
  /// preconditioner is constant on every group (the prox in its metric is then (R1)).
  void equalise(std::vector<double>& per_feature) const {
    for (std::size_t r = 0; r + 1 < ptr_.size(); ++r) {
      double smallest = std::numeric_limits<double>::infinity();
      for (auto m = ptr_[r]; m < ptr_[r + 1]; ++m)
        smallest = std::min(smallest, per_feature[static_cast<std::size_t>(members_[static_cast<std::size_t>(m)])]);
      for (auto m = ptr_[r]; m < ptr_[r + 1]; ++m) per_feature[static_cast<std::size_t>(members_[static_cast<std::size_t>(m)])] = smallest;
    }
  }

  /// (R2): g(W), accumulated in double.
  double value(ClassMatrix<Scalar>& W) {
    double sum = 0.0;
    for_each_group(W, [&](std::span<Scalar> v, Eigen::Index) { sum += static_cast<double>(penalty_.value(v)); }, false);
    return sum;
  }

  /// (R3): g*(V) for μ > 0 (V is not modified).
  double conjugate(ClassMatrix<Scalar>& V) {
    Penalty inner = penalty_;  // prox_{(λ/μ)R}: the same norm, no ridge
    inner.lambda = penalty_.lambda / penalty_.mu;
    inner.mu = 0.0;
    const auto inv_mu = static_cast<Scalar>(1.0 / penalty_.mu);
    double sum = 0.0;
    for_each_group(V, [&](std::span<Scalar> v, Eigen::Index) {
      if (copy_.size() < v.size()) copy_.resize(v.size());
      const std::span<Scalar> w(copy_.data(), v.size());
      for (std::size_t k = 0; k < v.size(); ++k) w[k] = v[k] * inv_mu;
      inner.prox(w, Scalar(1));
      double inner_product = 0.0;
      for (std::size_t k = 0; k < v.size(); ++k) inner_product += static_cast<double>(v[k]) * static_cast<double>(w[k]);
      sum += inner_product - static_cast<double>(penalty_.value(std::span<const Scalar>(w)));
    }, false);
    return sum;
  }

  /// (R5): the exact stationarity violation (Σ_groups dist(−G_J, ∂P(W_J))²)^½ through the
  /// policy's `violation` (neither matrix is modified).
  double violation(ClassMatrix<Scalar>& W, ClassMatrix<Scalar>& G) {
    double sum = 0.0;
    if (ptr_.empty()) {
      for (Eigen::Index j = 0; j < W.rows(); ++j) {
        const double v = static_cast<double>(penalty_.violation(const_row_span(W, j), const_row_span(G, j)));
        sum += v * v;
      }
      return std::sqrt(sum);
    }
    // Gather the groups of G first (into gathered_), then pair them with those of W.
    gathered_.clear();
    for_each_group(G, [&](std::span<Scalar> g, Eigen::Index) { gathered_.insert(gathered_.end(), g.begin(), g.end()); }, false);
    std::size_t offset = 0;
    for_each_group(W, [&](std::span<Scalar> w, Eigen::Index) {
      const double v = static_cast<double>(penalty_.violation(std::span<const Scalar>(w), std::span<const Scalar>(gathered_.data() + offset, w.size())));
      offset += w.size();
      sum += v * v;
    }, false);
    return std::sqrt(sum);
  }

  /// (R4): max over groups of R°(V_J) (V is not modified).
  double max_dual_norm(ClassMatrix<Scalar>& V) {
    double largest = 0.0;
    for_each_group(V, [&](std::span<Scalar> v, Eigen::Index) {
      largest = std::max(largest, static_cast<double>(penalty_.dual_norm(std::span<const Scalar>(v))));
    }, false);
    return largest;
  }

 private:
  /// Calls f(vector, first feature) on every group; with `write_back` the (modified) buffer is
  /// scattered back.
  template <class F>
  void for_each_group(ClassMatrix<Scalar>& W, F&& f, bool write_back) {
    if (ptr_.empty()) {  // rows
      for (Eigen::Index j = 0; j < W.rows(); ++j) f(row_span(W, j), j);
      return;
    }
    for (std::size_t r = 0; r + 1 < ptr_.size(); ++r) {
      const auto begin = static_cast<std::size_t>(ptr_[r]), end = static_cast<std::size_t>(ptr_[r + 1]);
      const std::size_t size = end - begin;
      if (!per_class_) {
        std::size_t p = 0;
        for (std::size_t m = begin; m < end; ++m)
          for (Eigen::Index k = 0; k < K_; ++k) buffer_[p++] = W(members_[m], k);
        f(std::span<Scalar>(buffer_.data(), size * static_cast<std::size_t>(K_)), members_[begin]);
        if (!write_back) continue;
        p = 0;
        for (std::size_t m = begin; m < end; ++m)
          for (Eigen::Index k = 0; k < K_; ++k) W(members_[m], k) = buffer_[p++];
      } else {
        for (Eigen::Index k = 0; k < K_; ++k) {
          for (std::size_t m = begin; m < end; ++m) buffer_[m - begin] = W(members_[m], k);
          f(std::span<Scalar>(buffer_.data(), size), members_[begin]);
          if (!write_back) continue;
          for (std::size_t m = begin; m < end; ++m) W(members_[m], k) = buffer_[m - begin];
        }
      }
    }
  }

  Penalty penalty_;
  bool per_class_;
  Eigen::Index K_;
  std::vector<std::int64_t> ptr_;       // group r: members_[ptr_[r] .. ptr_[r+1]); empty = rows
  std::vector<Eigen::Index> members_;   // features sorted by group
  std::vector<Scalar> buffer_, copy_;   // one gathered group; its prox image in conjugate()
  std::vector<Scalar> gathered_;        // all groups of a gradient, in group order (violation)
};

}  // namespace sparsemc::detail
