#pragma once
/// \file labels.hpp
/// Labels as read (any integers, gaps allowed) and the class indices 0..K−1 solvers use.
///
/// Every sample carries a set of class indices stored CSR-style: sample i's classes are
/// `classes[offsets[i] .. offsets[i+1])`. A multiclass problem has exactly one class per
/// sample; a multilabel problem any number, including none.
///
/// \code
///   sparsemc::LabelEncoder enc;                  // labels 1,2,3,5,6,7 (glass) -> 0..5
///   enc.fit(std::vector<sparsemc::Label>{5, 1, 7, 1});   // classes {1,5,7}
///   auto k = enc.index_of(7);                    // 2
///   auto y = sparsemc::LabelSets::multiclass(std::vector<sparsemc::ClassIndex>{1, 0, 2, 0}, 3);
///   for (auto c : y.view()[0]) { ... }           // {1}
/// \endcode

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "../core/traits.hpp"

namespace sparsemc {

/// Non-owning per-sample class sets (see the file comment). Cheap to copy.
class LabelView {
 public:
  LabelView() = default;
  LabelView(std::span<const std::int64_t> offsets, std::span<const ClassIndex> classes,
            ClassIndex n_classes)
      : offsets_(offsets), classes_(classes), n_classes_(n_classes) {}

  /// Number of samples.
  [[nodiscard]] std::size_t size() const noexcept { return offsets_.empty() ? 0 : offsets_.size() - 1; }
  /// K, the number of classes (columns of W).
  [[nodiscard]] ClassIndex n_classes() const noexcept { return n_classes_; }
  /// The classes of sample i, sorted increasing.
  [[nodiscard]] std::span<const ClassIndex> operator[](std::size_t i) const noexcept {
    return classes_.subspan(static_cast<std::size_t>(offsets_[i]),
                            static_cast<std::size_t>(offsets_[i + 1] - offsets_[i]));
  }
  /// The single class of sample i of a multiclass problem.
  [[nodiscard]] ClassIndex single(std::size_t i) const noexcept {
    return classes_[static_cast<std::size_t>(offsets_[i])];
  }
  /// True unless every sample has exactly one class.
  [[nodiscard]] bool multilabel() const noexcept {
    return classes_.size() != size() ||
           std::adjacent_find(offsets_.begin(), offsets_.end(),
                              [](auto a, auto b) { return b - a != 1; }) != offsets_.end();
  }
  [[nodiscard]] std::span<const std::int64_t> offsets() const noexcept { return offsets_; }
  [[nodiscard]] std::span<const ClassIndex> classes() const noexcept { return classes_; }

 private:
  std::span<const std::int64_t> offsets_;
  std::span<const ClassIndex> classes_;
  ClassIndex n_classes_ = 0;
};

/// Owning per-sample class sets.
class LabelSets {
 public:
  LabelSets() = default;
  explicit LabelSets(ClassIndex n_classes) : n_classes_(n_classes) {}

  /// One class per sample (a multiclass problem with K classes).
  static LabelSets multiclass(std::span<const ClassIndex> y, ClassIndex n_classes) {
    LabelSets sets(n_classes);
    sets.classes_.assign(y.begin(), y.end());
    std::vector<std::int64_t> offsets(y.size() + 1);  // sample i owns classes [i, i + 1)
    std::iota(offsets.begin(), offsets.end(), std::int64_t{0});
    sets.offsets_ = std::move(offsets);
    for (std::size_t i = 0; i < y.size(); ++i) sets.check_class(y[i], i);
    return sets;
  }

  /// Appends one sample's classes (any order, duplicates removed).
  void push_back(std::span<const ClassIndex> classes) {
    const auto start = classes_.size();
    for (ClassIndex c : classes) check_class(c, size());
    classes_.insert(classes_.end(), classes.begin(), classes.end());
    const auto first = classes_.begin() + static_cast<std::ptrdiff_t>(start);
    std::sort(first, classes_.end());
    classes_.erase(std::unique(first, classes_.end()), classes_.end());
    offsets_.push_back(static_cast<std::int64_t>(classes_.size()));
  }

  [[nodiscard]] LabelView view() const noexcept { return {offsets_, classes_, n_classes_}; }
  [[nodiscard]] std::size_t size() const noexcept { return offsets_.size() - 1; }
  [[nodiscard]] ClassIndex n_classes() const noexcept { return n_classes_; }
  /// Raises K, e.g. so that train and test agree on the label table.
  void set_n_classes(ClassIndex k) {
    if (!classes_.empty() && *std::max_element(classes_.begin(), classes_.end()) >= k)
      throw std::invalid_argument("LabelSets::set_n_classes: a sample has a class >= " + std::to_string(k));
    n_classes_ = k;
  }

 private:
  void check_class(ClassIndex c, std::size_t sample) const {
    if (c < 0 || c >= n_classes_)
      throw std::invalid_argument("LabelSets: sample " + std::to_string(sample) + " has class " +
                                  std::to_string(c) + ", outside [0, " + std::to_string(n_classes_) + ")");
  }

  std::vector<std::int64_t> offsets_{0};
  std::vector<ClassIndex> classes_;
  ClassIndex n_classes_ = 0;
};

/// The class sets of the one-vs-rest problems of classes [first, first + size): every sample's
/// classes in the range, shifted to start at 0 (a sample of a class outside the range has none:
/// a negative of every class of the range). The solvers that split K over threads use it.
[[nodiscard]] inline LabelSets class_range(const LabelView& y, ClassIndex first, ClassIndex size) {
  LabelSets sets(size);
  std::vector<ClassIndex> inside;
  for (std::size_t i = 0; i < y.size(); ++i) {
    inside.clear();
    for (const ClassIndex k : y[i])
      if (k >= first && k < first + size) inside.push_back(k - first);
    sets.push_back(inside);
  }
  return sets;
}

/// The table between labels as read and class indices: class k is the k-th smallest label.
class LabelEncoder {
 public:
  LabelEncoder() = default;
  explicit LabelEncoder(std::vector<Label> labels) : labels_(std::move(labels)) { normalise(); }

  /// Adds every label of `seen` to the table (keeps it sorted and unique).
  void fit(std::span<const Label> seen) {
    labels_.insert(labels_.end(), seen.begin(), seen.end());
    normalise();
  }

  [[nodiscard]] ClassIndex size() const noexcept { return static_cast<ClassIndex>(labels_.size()); }
  [[nodiscard]] bool contains(Label label) const {
    return std::binary_search(labels_.begin(), labels_.end(), label);
  }
  /// Class index of a label in the table; throws `std::out_of_range` for an unknown label.
  [[nodiscard]] ClassIndex index_of(Label label) const {
    const auto it = std::lower_bound(labels_.begin(), labels_.end(), label);
    if (it == labels_.end() || *it != label)
      throw std::out_of_range("label " + std::to_string(label) + " is not in the label table");
    return static_cast<ClassIndex>(it - labels_.begin());
  }
  [[nodiscard]] Label label_of(ClassIndex k) const { return labels_.at(static_cast<std::size_t>(k)); }
  [[nodiscard]] const std::vector<Label>& labels() const noexcept { return labels_; }

 private:
  void normalise() {
    std::sort(labels_.begin(), labels_.end());
    labels_.erase(std::unique(labels_.begin(), labels_.end()), labels_.end());
  }
  std::vector<Label> labels_;
};

}  // namespace sparsemc
