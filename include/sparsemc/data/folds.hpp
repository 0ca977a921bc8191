#pragma once
/// \file folds.hpp
/// Stratified k-fold cross-validation splits: which fold each sample belongs to, so that every
/// fold holds about 1/k of the samples and about 1/k of each class.
///
/// \code
///   const std::vector<int> fold = sparsemc::stratified_folds(data.labels().view(), 5, seed);
///   for (int f = 0; f < 5; ++f) {
///     const auto [train, test] = sparsemc::fold_samples(fold, f);   // sample indices
///     auto result = solver.fit(data.subset(train).problem<Eigen::ColMajor>());
///     ... score result.model on data.subset(test) ...
///   }
/// \endcode

#include <cstdint>
#include <map>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "../core/rng.hpp"
#include "labels.hpp"

namespace sparsemc {

/// The fold in [0, k) of every sample. Samples are grouped by their first class (a multilabel
/// sample by the smallest of its classes; samples without a class form a group of their own);
/// each group is shuffled (seeded Fisher–Yates, the same split on every platform) and dealt
/// round-robin to the folds, each group continuing where the previous one stopped. Every fold
/// then has ⌊n/k⌋ or ⌈n/k⌉ samples, and every class is split as evenly as its size allows.
/// Throws std::invalid_argument unless 2 <= k <= n.
[[nodiscard]] inline std::vector<int> stratified_folds(const LabelView& y, int k, std::uint64_t seed) {
  const std::size_t n = y.size();
  if (k < 2 || static_cast<std::size_t>(k) > n)
    throw std::invalid_argument("stratified_folds: k must be from 2 to the " + std::to_string(n) +
                                " samples, got " + std::to_string(k));
  std::map<ClassIndex, std::vector<std::int64_t>> groups;  // first class (−1: none) → samples
  for (std::size_t i = 0; i < n; ++i) {
    const auto classes = y[i];
    groups[classes.empty() ? ClassIndex(-1) : classes.front()].push_back(static_cast<std::int64_t>(i));
  }
  Rng rng(seed);
  std::vector<int> fold(n);
  int next = 0;
  for (auto& [cls, samples] : groups) {
    shuffle(std::span<std::int64_t>(samples), rng);
    for (const std::int64_t i : samples) {
      fold[static_cast<std::size_t>(i)] = next;
      next = (next + 1) % k;
    }
  }
  return fold;
}

/// The samples outside fold f (to train on) and inside it (to score), each increasing.
[[nodiscard]] inline std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>> fold_samples(
    std::span<const int> fold, int f) {
  std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>> out;
  for (std::size_t i = 0; i < fold.size(); ++i)
    (fold[i] == f ? out.second : out.first).push_back(static_cast<std::int64_t>(i));
  return out;
}

}  // namespace sparsemc
