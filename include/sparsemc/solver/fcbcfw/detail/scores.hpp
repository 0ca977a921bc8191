#pragma once
/// \file scores.hpp
/// Sparse scores z = Wᵀx_i of one sample for the greedy search (20), its bi-stochastic
/// approximations (24)–(25) and the exact primal objective: z is accumulated from the nonzero
/// weights of the rows j ∈ x_i only (§4.1, z_i = Σ_{j: x_ij≠0} x_ij w^j), into a dense K-vector
/// whose touched entries are remembered, so that resetting it costs O(touched), not O(K).
/// A class that no row touches has z_k = 0 exactly. With the dense layout of FeatureRows every
/// class counts as touched and z += x_ij w_j is a contiguous K-vector update.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <span>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "../../../core/rng.hpp"
#include "../../../data/sparse_view.hpp"
#include "feature_rows.hpp"

namespace sparsemc::detail::fcbcfw {

/// A class and its (exact or estimated) score.
struct ScoredClass {
  ClassIndex cls = -1;  ///< −1: no negative class in the searched set
  double score = 0.0;
};

class ScoreBuffer {
 public:
  /// Sizes the buffer for K classes split into ν partitions (sizes of the partitions of `rows`).
  template <RealScalar Scalar>
  void reset(ClassIndex n_classes, const FeatureRows<Scalar>& rows) {
    const auto K = static_cast<std::size_t>(n_classes);
    z_.assign(K, 0.0);
    stamp_.assign(K, 0);
    positive_stamp_.assign(K, 0);
    touched_.assign(K, 0);
    n_touched_ = 0;
    part_size_.assign(rows.n_parts(), 0);
    for (std::size_t k = 0; k < K; ++k) ++part_size_[rows.part_of(static_cast<ClassIndex>(k))];
    positives_in_part_.assign(rows.n_parts(), 0);
    round_ = 0;
  }

  /// Starts a new sample whose positive classes are `positives`: all scores read 0 again.
  template <RealScalar Scalar>
  void begin(std::span<const ClassIndex> positives, const FeatureRows<Scalar>& rows) {
    if (++round_ == 0) {  // the 32-bit round counter wrapped: clear the stamps once
      std::fill(stamp_.begin(), stamp_.end(), 0);
      std::fill(positive_stamp_.begin(), positive_stamp_.end(), 0);
      round_ = 1;
    }
    n_touched_ = 0;
    n_positives_ = positives.size();
    std::fill(positives_in_part_.begin(), positives_in_part_.end(), 0);
    for (ClassIndex k : positives) {
      positive_stamp_[static_cast<std::size_t>(k)] = round_;
      ++positives_in_part_[rows.part_of(k)];
    }
  }

  /// z += scale · Σ_{j ∈ row} x_ij w_j restricted to partition `part` (all partitions if
  /// part == npos): the exact search (20) and (24).
  template <RealScalar Scalar, StorageIndex Index>
  void accumulate(SparseSlice<Scalar, Index> row, const FeatureRows<Scalar>& rows, std::size_t part) {
    if (rows.dense()) {
      accumulate_dense(row, rows);
      return;
    }
    const std::size_t q_begin = part == npos ? 0 : part;
    const std::size_t q_end = part == npos ? rows.n_parts() : part + 1;
    const std::size_t size = row.size();
    for (std::size_t p = 0; p < size; ++p) {  // the rows are scattered in memory: prefetch ahead
      if (p + 16 < size) rows.prefetch_headers(static_cast<std::size_t>(row.indices[p + 16]));
      if (p + 8 < size) rows.prefetch_weights(static_cast<std::size_t>(row.indices[p + 8]), q_begin);
      const auto j = row.indices[p];
      const double x = static_cast<double>(row.values[p]);
      for (std::size_t q = q_begin; q < q_end; ++q) {
        const auto list = rows.weights(static_cast<std::size_t>(j), q);
        scanned_ += list.size();
        for (const auto& e : list) add(e.cls, x * static_cast<double>(e.w));
      }
    }
  }

  /// z += Σ_{j ∈ row} x_ij w_j over all K classes, from the dense rows of W.
  template <RealScalar Scalar, StorageIndex Index>
  void accumulate_dense(SparseSlice<Scalar, Index> row, const FeatureRows<Scalar>& rows) {
    const std::size_t K = z_.size();
    if (n_touched_ != K) {  // every class takes part: z = 0, all touched
      std::fill(z_.begin(), z_.end(), 0.0);
      std::fill(stamp_.begin(), stamp_.end(), round_);
      std::iota(touched_.begin(), touched_.end(), ClassIndex{0});
      n_touched_ = K;
    }
    Eigen::Map<Eigen::VectorXd> z(z_.data(), static_cast<Eigen::Index>(K));
    const std::size_t size = row.size();
    for (std::size_t p = 0; p < size; ++p) {
      if (p + 4 < size) rows.prefetch_weights(static_cast<std::size_t>(row.indices[p + 4]), 0);
      rows.add_dense_row(static_cast<std::size_t>(row.indices[p]), static_cast<double>(row.values[p]), z);
    }
    scanned_ += size * K;
  }

  /// The importance-sampled estimate (25) of z on partition `part`: `draws` features drawn
  /// with replacement with probability |x_ij|/‖x_i‖₁ (by inverse CDF over `cumulative`, the
  /// running sums of |x_ij|), z̄_k = (‖x_i‖₁/d̃) Σ_{draws} sign(x_ij) w_jk.
  template <RealScalar Scalar, StorageIndex Index>
  void accumulate_sampled(SparseSlice<Scalar, Index> row, std::span<const double> cumulative, std::size_t draws,
                          const FeatureRows<Scalar>& rows, std::size_t part, Rng& rng) {
    const double total = cumulative.back();
    const double scale = total / static_cast<double>(draws);
    for (std::size_t d = 0; d < draws; ++d) {
      const double u = uniform_real(rng) * total;
      const auto it = std::upper_bound(cumulative.begin(), cumulative.end(), u);
      const auto p = std::min<std::size_t>(static_cast<std::size_t>(it - cumulative.begin()), row.size() - 1);
      const double signed_scale = row.values[p] < Scalar(0) ? -scale : scale;
      const auto list = rows.weights(static_cast<std::size_t>(row.indices[p]), part);
      scanned_ += list.size();
      for (const auto& e : list) add(e.cls, signed_scale * static_cast<double>(e.w));
    }
  }

  /// z_k (0 if untouched).
  [[nodiscard]] double score(ClassIndex k) const noexcept {
    const auto kk = static_cast<std::size_t>(k);
    return stamp_[kk] == round_ ? z_[kk] : 0.0;
  }
  [[nodiscard]] bool is_positive(ClassIndex k) const noexcept {
    return positive_stamp_[static_cast<std::size_t>(k)] == round_;
  }

  /// The negative class of largest score within partition `part` (all if npos), as in (20) /
  /// (24): the best touched one, or — when some negative class of the partition is untouched
  /// and every touched one scores below 0 — an untouched one (score 0), found by scanning from a
  /// random start so that ties at 0 are broken uniformly, not towards class 0.
  template <RealScalar Scalar>
  [[nodiscard]] ScoredClass best_negative(const FeatureRows<Scalar>& rows, std::size_t part, Rng& rng) const {
    ScoredClass best;
    best.score = -std::numeric_limits<double>::infinity();
    std::size_t touched_negatives = 0;
    for (ClassIndex k : touched()) {
      if (is_positive(k)) continue;
      ++touched_negatives;
      const double s = z_[static_cast<std::size_t>(k)];
      if (s > best.score) best = {k, s};
    }
    const std::size_t negatives = part == npos ? z_.size() - n_positives_ : part_size_[part] - positives_in_part_[part];
    if (touched_negatives < negatives && best.score < 0.0) {
      const std::size_t K = z_.size();
      std::size_t k = static_cast<std::size_t>(uniform_index(rng, K));
      for (;; k = k + 1 == K ? 0 : k + 1) {
        const auto c = static_cast<ClassIndex>(k);
        if (stamp_[k] != round_ && !is_positive(c) && (part == npos || rows.part_of(c) == part)) break;
      }
      best = {static_cast<ClassIndex>(k), 0.0};
    }
    return best;
  }

  /// The `count` negative classes of largest score within partition `part` (all if npos), best
  /// first, into `out`: best_negative() followed by the next best touched negatives (§4.4
  /// returns "the coordinates with largest scores" when one per search is not enough).
  template <RealScalar Scalar>
  void top_negatives(const FeatureRows<Scalar>& rows, std::size_t part, std::size_t count, Rng& rng,
                     std::vector<ClassIndex>& out) {
    out.clear();
    const ScoredClass best = best_negative(rows, part, rng);
    if (best.cls < 0) return;
    out.push_back(best.cls);
    if (count <= 1) return;
    candidates_.clear();
    for (ClassIndex k : touched())
      if (k != best.cls && !is_positive(k)) candidates_.push_back({k, z_[static_cast<std::size_t>(k)]});
    const auto more = std::min(count - 1, candidates_.size());
    const auto by_score = [](const ScoredClass& a, const ScoredClass& b) {
      return a.score > b.score || (a.score == b.score && a.cls < b.cls);
    };
    std::partial_sort(candidates_.begin(), candidates_.begin() + static_cast<std::ptrdiff_t>(more), candidates_.end(),
                      by_score);
    for (std::size_t r = 0; r < more; ++r) out.push_back(candidates_[r].cls);
  }

  /// max over negative classes of z_k (−∞ if there is none): the exact value the loss needs.
  [[nodiscard]] double max_negative() const noexcept {
    double best = -std::numeric_limits<double>::infinity();
    std::size_t touched_negatives = 0;
    for (ClassIndex k : touched()) {
      if (is_positive(k)) continue;
      ++touched_negatives;
      best = std::max(best, z_[static_cast<std::size_t>(k)]);
    }
    if (touched_negatives < z_.size() - n_positives_) best = std::max(best, 0.0);
    return best;
  }

  /// The classes touched since begin(), in order of first touch.
  [[nodiscard]] std::span<const ClassIndex> touched() const noexcept { return {touched_.data(), n_touched_}; }

  /// Weight entries read by accumulate / accumulate_sampled since the last call (a
  /// deterministic measure of work, see Engine::run).
  std::uint64_t take_scanned() noexcept { return std::exchange(scanned_, 0); }

  static constexpr std::size_t npos = static_cast<std::size_t>(-1);

 private:
  void add(ClassIndex k, double value) {
    const auto kk = static_cast<std::size_t>(k);
    if (stamp_[kk] != round_) {  // first touch this round
      stamp_[kk] = round_;
      z_[kk] = value;
      touched_[n_touched_++] = k;
    } else {
      z_[kk] += value;
    }
  }

  std::vector<double> z_;
  std::vector<std::uint32_t> stamp_;           ///< stamp_[k] == round_: z_k touched this round
  std::vector<std::uint32_t> positive_stamp_;  ///< == round_: k is a positive class of the sample
  std::vector<ClassIndex> touched_;            ///< K entries; the first n_touched_ are in use
  std::size_t n_touched_ = 0;
  std::vector<ScoredClass> candidates_;
  std::vector<std::size_t> part_size_;         ///< |𝒴^(q)|
  std::vector<std::size_t> positives_in_part_; ///< |P_i ∩ 𝒴^(q)|
  std::size_t n_positives_ = 0;
  std::uint32_t round_ = 0;
  std::uint64_t scanned_ = 0;
};

}  // namespace sparsemc::detail::fcbcfw
