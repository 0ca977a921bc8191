#pragma once
/// \file feature_rows.hpp
/// Storage of V = Xᵀα and W = prox(V) for the fully-corrective BCFW solver, one row per feature,
/// in one of two layouts chosen at reset().
///
/// Hashed (PD-Sparse §4.1–4.2; nothing is ever D×K). Row j of V is an open-addressing hash
/// table over the classes k with v_jk touched so far (key k, value v_jk in double, and the
/// position of k in the weight list below). Every table hashes with the same function
/// h(k) = π(k) for a random permutation π of [K] (§4.2: the hash is evaluated once per class,
/// not once per table); table j probes linearly from h(k) mod capacity_j. A table never grows
/// past bit_ceil(K) slots, where h is injective and probing never collides.
/// Row j of W is kept as ν short lists of (class, w_jk) with w_jk ≠ 0 — the per-feature list of
/// nonzero classes that makes the greedy search (20) cost O(nnz(x_i)·nnz(w_j)) rather than
/// O(nnz(x_i)·K). List q holds the classes of partition 𝒴^(q) = {k : π(k) mod ν = q}, so the
/// bi-stochastic search (24) walks one list only. Changing v_jk updates w_jk in O(1): a class
/// whose weight becomes 0 is swapped out of its list, one whose weight becomes nonzero is
/// appended (eq. 23: only the changed entries are touched).
///
/// Dense (for small D·K and the exact search only). V as a D×K row-major array of doubles; W is
/// not stored but applied on the fly, w_j = S_τ(v_j) (or v_j on the frozen support of the
/// refit), so an update (23) writes one value. The search reads row j of V as K contiguous
/// values — a streamed, vectorised z += x_ij S_τ(v_j) — where the hashed layout gathers from
/// lists and scatters into z: when W has little primal sparsity (λ small) and D·K fits in
/// memory, this is several times faster (LIBLINEAR's Crammer–Singer solver keeps W dense too).
/// ν = 1 in this layout.

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <span>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "../../../core/huge_pages.hpp"
#include "../../../core/rng.hpp"
#include "../../../core/traits.hpp"

namespace sparsemc::detail::fcbcfw {

/// One nonzero weight w_jk of a feature row.
template <RealScalar Scalar>
struct WeightEntry {
  ClassIndex cls;
  Scalar w;
};

template <RealScalar Scalar>
class FeatureRows {
 public:
  /// How W follows V: the elastic-net prox w = S_τ(v) (eq. 15, 23), or, for the ℓ2 refit of
  /// §4.3, w = v on a frozen support and 0 elsewhere.
  enum class Map { soft_threshold, fixed_support };

  enum class Layout { hashed, dense };

  /// Empties all rows and draws the hash permutation π; `threshold` is τ = λ/μ of (15). The
  /// dense layout needs n_parts = 1.
  void reset(std::size_t n_features, ClassIndex n_classes, int n_parts, double threshold, Rng& rng,
             Layout layout = Layout::hashed) {
    dense_ = layout == Layout::dense;
    n_parts_ = dense_ ? 1 : static_cast<std::size_t>(n_parts);
    n_classes_ = static_cast<std::size_t>(n_classes);
    threshold_ = threshold;
    map_ = Map::soft_threshold;
    tables_.assign(dense_ ? 0 : n_features, Table{});
    lists_.assign(dense_ ? 0 : n_features * n_parts_, {});
    assign_advised(dense_v_, dense_ ? n_features * n_classes_ : 0, 0.0);
    frozen_.clear();
    n_features_ = n_features;
    hash_.resize(static_cast<std::size_t>(n_classes));
    std::iota(hash_.begin(), hash_.end(), std::uint32_t{0});
    shuffle(std::span<std::uint32_t>(hash_), rng);
    part_.resize(hash_.size());
    for (std::size_t k = 0; k < hash_.size(); ++k) part_[k] = static_cast<std::uint32_t>(hash_[k] % n_parts_);
    max_capacity_ = std::bit_ceil(std::max<std::size_t>(hash_.size(), 2));
  }

  [[nodiscard]] std::size_t n_features() const noexcept { return n_features_; }
  [[nodiscard]] bool dense() const noexcept { return dense_; }
  /// z += x·w_j for row j of the dense layout, w_j = prox(v_j) computed on the fly (vectorised).
  [[gnu::always_inline]] void add_dense_row(std::size_t j, double x, Eigen::Map<Eigen::VectorXd>& z) const {
    const Eigen::Map<const Eigen::VectorXd> v(dense_v_.data() + j * n_classes_, z.size());
    if (map_ == Map::fixed_support) {
      const Eigen::Map<const Eigen::VectorXd> mask(frozen_.data() + j * n_classes_, z.size());
      z += x * v.cwiseProduct(mask);
    } else if (threshold_ == 0.0) {  // λ = 0: W = V
      z += x * v;
    } else {  // S_τ(v) = v − clamp(v, −τ, τ)
      z += x * (v - v.cwiseMax(-threshold_).cwiseMin(threshold_));
    }
  }
  [[nodiscard]] std::size_t n_parts() const noexcept { return n_parts_; }
  /// q with k ∈ 𝒴^(q).
  [[nodiscard]] std::size_t part_of(ClassIndex k) const noexcept { return part_[static_cast<std::size_t>(k)]; }

  /// The nonzero weights of row j in partition q.
  [[nodiscard]] std::span<const WeightEntry<Scalar>> weights(std::size_t j, std::size_t q) const noexcept {
    return lists_[j * n_parts_ + q];
  }

  /// v_jk += delta, and w_jk follows (eq. 23).
  void add(std::size_t j, ClassIndex k, double delta) {
    if (dense_) {
      dense_v_[j * n_classes_ + static_cast<std::size_t>(k)] += delta;
      return;
    }
    Slot& slot = find_or_insert(tables_[j], k);
    slot.v += delta;
    auto& list = lists_[j * n_parts_ + part_of(k)];
    if (map_ == Map::fixed_support) {
      if (slot.pos >= 0) list[static_cast<std::size_t>(slot.pos)].w = static_cast<Scalar>(slot.v);
      return;
    }
    const double w = soft_threshold(slot.v);
    if (slot.pos >= 0) {
      if (w != 0.0) {
        list[static_cast<std::size_t>(slot.pos)].w = static_cast<Scalar>(w);
      } else {  // swap the last entry into the hole
        const auto hole = static_cast<std::size_t>(slot.pos);
        slot.pos = -1;
        if (hole + 1 != list.size()) {
          list[hole] = list.back();
          find(tables_[j], list[hole].cls)->pos = static_cast<std::int32_t>(hole);
        }
        list.pop_back();
      }
    } else if (w != 0.0) {
      slot.pos = static_cast<std::int32_t>(list.size());
      list.push_back({k, static_cast<Scalar>(w)});
    }
  }

  /// Hints the cache that table j's header is about to be read (before prefetch(j, k), whose
  /// address depends on it).
  void prefetch_table(std::size_t j) const noexcept {
    if (!dense_) __builtin_prefetch(&tables_[j]);
  }
  /// Hints the cache that v_jk (its home slot) is about to be read or written.
  void prefetch(std::size_t j, ClassIndex k) const noexcept {
    if (dense_) {
      __builtin_prefetch(&dense_v_[j * n_classes_ + static_cast<std::size_t>(k)], 1);
      return;
    }
    const Table& t = tables_[j];
    if (!t.slots.empty()) __builtin_prefetch(&t.slots[hash_[static_cast<std::size_t>(k)] & (t.slots.size() - 1)], 1);
  }
  /// Hints the cache that the weight lists of row j are about to be read (two levels: the list
  /// headers now, their entries once the headers are in).
  void prefetch_headers(std::size_t j) const noexcept {
    if (!dense_) __builtin_prefetch(&lists_[j * n_parts_]);
  }
  void prefetch_weights(std::size_t j, std::size_t q) const noexcept {
    if (dense_) {  // the head of the row; the hardware prefetcher streams the rest
      __builtin_prefetch(dense_v_.data() + j * n_classes_);
      return;
    }
    __builtin_prefetch(lists_[j * n_parts_ + q].data());
  }

  /// S_τ(v) of (15) with the rows' threshold τ.
  [[nodiscard]] double soft_threshold(double v) const noexcept {
    return v > threshold_ ? v - threshold_ : (v < -threshold_ ? v + threshold_ : 0.0);
  }

  /// v_jk, in double (0 if it was never touched).
  [[nodiscard]] double value(std::size_t j, ClassIndex k) const noexcept {
    if (dense_) return dense_v_[j * n_classes_ + static_cast<std::size_t>(k)];
    const Slot* slot = find(tables_[j], k);
    return slot == nullptr ? 0.0 : slot->v;
  }

  /// w_jk = prox(v_jk), in double (0 if v_jk was never touched).
  [[nodiscard]] double weight(std::size_t j, ClassIndex k) const noexcept {
    if (dense_) {
      const std::size_t at = j * n_classes_ + static_cast<std::size_t>(k);
      return map_dense(at, dense_v_[at]);
    }
    const Slot* slot = find(tables_[j], k);
    return slot == nullptr ? 0.0 : map(*slot);
  }

  /// Freezes the current support: from now on w_jk = v_jk where w_jk ≠ 0 now, and 0 elsewhere
  /// (the ℓ2-only refit of §4.3).
  void fix_support() {
    if (dense_) {
      frozen_.resize(dense_v_.size());
      for (std::size_t at = 0; at < dense_v_.size(); ++at) frozen_[at] = soft_threshold(dense_v_[at]) != 0.0 ? 1.0 : 0.0;
    }
    map_ = Map::fixed_support;
    threshold_ = 0.0;
    for (std::size_t j = 0; j < tables_.size(); ++j)
      for (std::size_t q = 0; q < n_parts_; ++q)
        for (auto& e : lists_[j * n_parts_ + q]) e.w = static_cast<Scalar>(find(tables_[j], e.cls)->v);
  }

  /// ½ Σ_jk prox(v_jk)² in double: the quadratic term of the dual (14) at the current α.
  [[nodiscard]] double half_squared_norm_of_prox() const noexcept {
    double sum = 0.0;
    for (std::size_t at = 0; at < dense_v_.size(); ++at) {
      const double w = map_dense(at, dense_v_[at]);
      sum += w * w;
    }
    for (const Table& t : tables_)
      for (const Slot& s : t.slots)
        if (s.cls >= 0) {
          const double w = map(s);
          sum += w * w;
        }
    return 0.5 * sum;
  }

  /// Calls f(j, span of entries) for every nonempty list of every row, rows in increasing j
  /// (in the dense layout, one list per nonzero row, classes increasing).
  template <class F>
  void for_each_list(F&& f) const {
    if (dense_) {
      std::vector<WeightEntry<Scalar>> list;
      list.reserve(n_classes_);
      Eigen::VectorXd w(static_cast<Eigen::Index>(n_classes_));
      Eigen::Map<Eigen::VectorXd> row(w.data(), w.size());
      for (std::size_t j = 0; j < n_features_; ++j) {
        row.setZero();
        add_dense_row(j, 1.0, row);
        list.clear();
        for (Eigen::Index k = 0; k < w.size(); ++k)
          if (static_cast<Scalar>(w[k]) != Scalar(0)) list.push_back({static_cast<ClassIndex>(k), static_cast<Scalar>(w[k])});
        if (!list.empty()) f(j, std::span<const WeightEntry<Scalar>>(list));
      }
      return;
    }
    for (std::size_t j = 0; j < tables_.size(); ++j)
      for (std::size_t q = 0; q < n_parts_; ++q) {
        const auto& list = lists_[j * n_parts_ + q];
        if (!list.empty()) f(j, std::span<const WeightEntry<Scalar>>(list));
      }
  }

  /// Number of (j, k) pairs stored in V (the memory the solver holds for V): D·K when dense.
  [[nodiscard]] std::size_t stored() const noexcept { return dense_ ? dense_v_.size() : stored_; }

  /// Empties V and W, releasing their memory (the hash permutation and partitions stay): the
  /// caller re-adds V = Xᵀα from the nonzero α. Pairs (j, k) whose v_jk returned to 0 (up to
  /// rounding) when α_ik was shrunk away otherwise stay in the tables for good. (The dense
  /// layout has nothing to release: it zeroes V and W.)
  void clear_values() {
    std::fill(dense_v_.begin(), dense_v_.end(), 0.0);
    for (Table& t : tables_) t = Table{};
    for (auto& list : lists_) std::vector<WeightEntry<Scalar>>().swap(list);
    stored_ = 0;
  }

 private:
  struct Slot {
    ClassIndex cls = -1;    ///< −1: empty
    std::int32_t pos = -1;  ///< position in the weight list of part_of(cls), −1 if w = 0
    double v = 0.0;
  };
  struct Table {
    std::vector<Slot> slots;  ///< capacity: a power of two
    std::uint32_t used = 0;
  };

  [[nodiscard]] double map(const Slot& s) const noexcept {
    return map_ == Map::soft_threshold ? soft_threshold(s.v) : (s.pos >= 0 ? s.v : 0.0);
  }
  /// w = prox(v) for the dense entry `at` holding v.
  [[nodiscard]] double map_dense(std::size_t at, double v) const noexcept {
    return map_ == Map::soft_threshold ? soft_threshold(v) : v * frozen_[at];
  }

  [[nodiscard]] const Slot* find(const Table& t, ClassIndex k) const noexcept {
    if (t.slots.empty()) return nullptr;
    const std::size_t mask = t.slots.size() - 1;
    for (std::size_t h = hash_[static_cast<std::size_t>(k)] & mask;; h = (h + 1) & mask) {
      const Slot& s = t.slots[h];
      if (s.cls == k) return &s;
      if (s.cls < 0) return nullptr;
    }
  }
  [[nodiscard]] Slot* find(Table& t, ClassIndex k) noexcept {
    return const_cast<Slot*>(std::as_const(*this).find(std::as_const(t), k));
  }

  Slot& find_or_insert(Table& t, ClassIndex k) {
    if (t.slots.empty()) t.slots.resize(std::min<std::size_t>(4, max_capacity_));
    for (;;) {
      const std::size_t mask = t.slots.size() - 1;
      std::size_t h = hash_[static_cast<std::size_t>(k)] & mask;
      while (t.slots[h].cls >= 0 && t.slots[h].cls != k) h = (h + 1) & mask;
      Slot& s = t.slots[h];
      if (s.cls == k) return s;
      // Load factor at most ½ until the table reaches bit_ceil(K) slots, where h is injective.
      if (2 * (t.used + 1) > t.slots.size() && t.slots.size() < max_capacity_) {
        grow(t);
        continue;
      }
      s.cls = k;
      ++t.used;
      ++stored_;
      return s;
    }
  }

  void grow(Table& t) {
    std::vector<Slot> old(t.slots.size() * 2);
    old.swap(t.slots);
    const std::size_t mask = t.slots.size() - 1;
    for (const Slot& s : old) {
      if (s.cls < 0) continue;
      std::size_t h = hash_[static_cast<std::size_t>(s.cls)] & mask;
      while (t.slots[h].cls >= 0) h = (h + 1) & mask;
      t.slots[h] = s;
    }
  }

  std::vector<Table> tables_;                                ///< V, one table per feature
  std::vector<std::vector<WeightEntry<Scalar>>> lists_;      ///< W, ν lists per feature
  std::vector<double> dense_v_;                              ///< V, D×K row-major (dense layout)
  std::vector<double> frozen_;                               ///< 1 on the support fixed by fix_support (dense)
  std::vector<std::uint32_t> hash_;                          ///< π
  std::vector<std::uint32_t> part_;                          ///< π(k) mod ν
  std::size_t n_parts_ = 1;
  std::size_t n_features_ = 0;
  std::size_t n_classes_ = 0;
  bool dense_ = false;
  std::size_t max_capacity_ = 2;
  std::size_t stored_ = 0;
  double threshold_ = 0.0;
  Map map_ = Map::soft_threshold;
};

}  // namespace sparsemc::detail::fcbcfw
