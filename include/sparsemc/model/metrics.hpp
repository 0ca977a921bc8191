#pragma once
/// \file metrics.hpp
/// Evaluation metrics for multiclass and multilabel predictions, as pure functions over
/// spans, `ClassRanking`s (LinearModel::top_k) and `LabelView`s (per-sample class sets).
///
/// Everything works in class indices 0..K−1 except the label overload of accuracy().
/// Truth is a `LabelView`: a multiclass problem has one class per sample, a multilabel one
/// any number (possibly none). A prediction counts as correct when it is *in* the sample's
/// true set, so for multiclass truth this is plain equality.
///
/// Multilabel predictions are label sets; make them from scores either by thresholding
/// (`sets_above(S, 0)`: every class with a positive score — the decision rule of one-vs-rest
/// losses) or by ranking (`sets_top_k(model.top_k(X, k))`: the k best classes).
///
/// \code
///   namespace m = sparsemc::metrics;
///   const auto truth = test.labels().view();                        // LabelView
///   double acc  = m::accuracy(model.predict_classes(X), truth);
///   const sparsemc::ClassRanking top = model.top_k(X, 5);
///   double acc5 = m::top_k_accuracy(top, truth);                    // any of the 5 is right
///   double p3   = m::precision_at_k(top, truth, 3);                 // PD-Sparse's P@3
///   const auto predicted = m::sets_above(model.decision_function(X));   // s_ik > 0
///   double f1   = m::micro_f1(predicted.view(), truth);
///   double mf1  = m::macro_f1(predicted.view(), truth);
/// \endcode
///
/// Every function throws `std::invalid_argument` when the inputs disagree in length or have
/// no samples (a metric of nothing is not a number).

#include <Eigen/Core>

#include <algorithm>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "../core/traits.hpp"
#include "../data/labels.hpp"
#include "linear_model.hpp"

namespace sparsemc::metrics {

namespace detail {
inline void require_samples(const char* metric, std::size_t predicted, std::size_t truth) {
  if (predicted != truth)
    throw std::invalid_argument(std::string(metric) + ": " + std::to_string(predicted) + " predictions for " +
                                std::to_string(truth) + " samples");
  if (truth == 0) throw std::invalid_argument(std::string(metric) + ": no samples");
}
inline bool contains(std::span<const ClassIndex> sorted_set, ClassIndex c) {
  return std::binary_search(sorted_set.begin(), sorted_set.end(), c);
}
}  // namespace detail

/// Fraction of samples whose predicted class is in their true set:
/// (1/n) Σ_i [ŷ_i ∈ Y_i]. For multiclass truth this is the usual accuracy; for multilabel
/// truth it is precision@1 of the single prediction.
inline double accuracy(std::span<const ClassIndex> predicted, const LabelView& truth) {
  detail::require_samples("accuracy", predicted.size(), truth.size());
  std::int64_t correct = 0;
  for (std::size_t i = 0; i < predicted.size(); ++i) correct += detail::contains(truth[i], predicted[i]) ? 1 : 0;
  return static_cast<double>(correct) / static_cast<double>(predicted.size());
}

/// Accuracy over labels as read (what LinearModel::predict returns against the labels of a
/// data file): (1/n) Σ_i [ŷ_i = y_i].
inline double accuracy(std::span<const Label> predicted, std::span<const Label> truth) {
  detail::require_samples("accuracy", predicted.size(), truth.size());
  std::int64_t correct = 0;
  for (std::size_t i = 0; i < predicted.size(); ++i) correct += predicted[i] == truth[i] ? 1 : 0;
  return static_cast<double>(correct) / static_cast<double>(predicted.size());
}

/// Top-k accuracy: fraction of samples with at least one true class among the first k
/// classes of their ranking, (1/n) Σ_i [top_k(i) ∩ Y_i ≠ ∅]. k = 0 (the default) uses every
/// column of the ranking; k must not exceed ranking.cols().
inline double top_k_accuracy(const ClassRanking& ranking, const LabelView& truth, ClassIndex k = 0) {
  detail::require_samples("top_k_accuracy", static_cast<std::size_t>(ranking.rows()), truth.size());
  if (k == 0) k = static_cast<ClassIndex>(ranking.cols());
  if (k < 1 || k > ranking.cols())
    throw std::invalid_argument("top_k_accuracy: k must be in [1, " + std::to_string(ranking.cols()) + "], got " +
                                std::to_string(k));
  std::int64_t hits = 0;
  for (Eigen::Index i = 0; i < ranking.rows(); ++i) {
    const auto Y = truth[static_cast<std::size_t>(i)];
    for (ClassIndex r = 0; r < k; ++r) {
      if (detail::contains(Y, ranking(i, r))) {
        ++hits;
        break;
      }
    }
  }
  return static_cast<double>(hits) / static_cast<double>(ranking.rows());
}

/// Precision at k, the extreme-classification measure (PD-Sparse, Yen et al.):
/// P@k = (1/n) Σ_i |top_k(i) ∩ Y_i| / k. The divisor is k even when a sample has fewer than k
/// true classes (the usual convention). Requires 1 ≤ k ≤ ranking.cols().
inline double precision_at_k(const ClassRanking& ranking, const LabelView& truth, ClassIndex k) {
  detail::require_samples("precision_at_k", static_cast<std::size_t>(ranking.rows()), truth.size());
  if (k < 1 || k > ranking.cols())
    throw std::invalid_argument("precision_at_k: k must be in [1, " + std::to_string(ranking.cols()) + "], got " +
                                std::to_string(k));
  std::int64_t hits = 0;
  for (Eigen::Index i = 0; i < ranking.rows(); ++i) {
    const auto Y = truth[static_cast<std::size_t>(i)];
    for (ClassIndex r = 0; r < k; ++r) hits += detail::contains(Y, ranking(i, r)) ? 1 : 0;
  }
  return static_cast<double>(hits) / (static_cast<double>(k) * static_cast<double>(ranking.rows()));
}

/// Per-class counts of a set prediction against the truth: for class k, TP_k = #{i : k ∈ Ŷ_i
/// ∩ Y_i}, FP_k = #{i : k ∈ Ŷ_i \ Y_i}, FN_k = #{i : k ∈ Y_i \ Ŷ_i}. Vectors have
/// max(K_predicted, K_truth) entries.
struct ClassCounts {
  std::vector<std::int64_t> true_positives;
  std::vector<std::int64_t> false_positives;
  std::vector<std::int64_t> false_negatives;
};

/// Counts TP/FP/FN per class; O(Σ_i |Ŷ_i| + |Y_i|) (both sets are sorted: a merge).
inline ClassCounts class_counts(const LabelView& predicted, const LabelView& truth) {
  detail::require_samples("class_counts", predicted.size(), truth.size());
  const auto K = static_cast<std::size_t>(std::max(predicted.n_classes(), truth.n_classes()));
  ClassCounts c{std::vector<std::int64_t>(K, 0), std::vector<std::int64_t>(K, 0), std::vector<std::int64_t>(K, 0)};
  for (std::size_t i = 0; i < truth.size(); ++i) {
    const auto P = predicted[i];
    const auto Y = truth[i];
    std::size_t a = 0, b = 0;
    while (a < P.size() || b < Y.size()) {
      if (b == Y.size() || (a < P.size() && P[a] < Y[b])) {
        ++c.false_positives[static_cast<std::size_t>(P[a++])];
      } else if (a == P.size() || Y[b] < P[a]) {
        ++c.false_negatives[static_cast<std::size_t>(Y[b++])];
      } else {
        ++c.true_positives[static_cast<std::size_t>(P[a])];
        ++a;
        ++b;
      }
    }
  }
  return c;
}

/// Micro-averaged F1 = 2 ΣTP / (2 ΣTP + ΣFP + ΣFN), pooled over all classes. When nothing
/// is true nor predicted anywhere (the denominator is 0) every empty set was predicted
/// exactly and the result is 1.
inline double micro_f1(const ClassCounts& c) {
  std::int64_t tp = 0, fp = 0, fn = 0;
  for (std::size_t k = 0; k < c.true_positives.size(); ++k) {
    tp += c.true_positives[k];
    fp += c.false_positives[k];
    fn += c.false_negatives[k];
  }
  const std::int64_t denominator = 2 * tp + fp + fn;
  return denominator == 0 ? 1.0 : 2.0 * static_cast<double>(tp) / static_cast<double>(denominator);
}

/// Macro-averaged F1: the mean of F1_k = 2TP_k / (2TP_k + FP_k + FN_k) over the classes that
/// occur (in the truth or in the prediction; for the others F1_k is 0/0 and they are left
/// out — scikit-learn's f1_score(average="macro", labels=<classes present>)). 1 when no class
/// occurs at all.
inline double macro_f1(const ClassCounts& c) {
  double sum = 0.0;
  std::int64_t present = 0;
  for (std::size_t k = 0; k < c.true_positives.size(); ++k) {
    const std::int64_t denominator = 2 * c.true_positives[k] + c.false_positives[k] + c.false_negatives[k];
    if (denominator == 0) continue;
    sum += 2.0 * static_cast<double>(c.true_positives[k]) / static_cast<double>(denominator);
    ++present;
  }
  return present == 0 ? 1.0 : sum / static_cast<double>(present);
}

/// Micro F1 of predicted label sets against the truth (see micro_f1(const ClassCounts&)).
inline double micro_f1(const LabelView& predicted, const LabelView& truth) {
  return micro_f1(class_counts(predicted, truth));
}

/// Macro F1 of predicted label sets against the truth (see macro_f1(const ClassCounts&)).
inline double macro_f1(const LabelView& predicted, const LabelView& truth) {
  return macro_f1(class_counts(predicted, truth));
}

/// Multiclass confusion matrix C (K × K): C(t, p) = number of samples of true class t
/// predicted as p; K = truth.n_classes() (a predicted class outside it throws). Truth must
/// have exactly one class per sample.
inline Eigen::Matrix<std::int64_t, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> confusion_matrix(
    std::span<const ClassIndex> predicted, const LabelView& truth) {
  detail::require_samples("confusion_matrix", predicted.size(), truth.size());
  const ClassIndex K = truth.n_classes();
  Eigen::Matrix<std::int64_t, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> C =
      Eigen::Matrix<std::int64_t, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>::Zero(K, K);
  for (std::size_t i = 0; i < predicted.size(); ++i) {
    if (truth[i].size() != 1)
      throw std::invalid_argument("confusion_matrix: sample " + std::to_string(i) + " has " +
                                  std::to_string(truth[i].size()) + " true classes (multiclass truth needs one)");
    if (predicted[i] < 0 || predicted[i] >= K)
      throw std::invalid_argument("confusion_matrix: predicted class " + std::to_string(predicted[i]) +
                                  " of sample " + std::to_string(i) + " is outside [0, " + std::to_string(K) + ")");
    ++C(truth.single(i), predicted[i]);
  }
  return C;
}

/// Predicted label sets by thresholding scores: Ŷ_i = {k : S_ik > threshold} (n × K scores,
/// e.g. LinearModel::decision_function; threshold 0 is the one-vs-rest decision rule).
template <class Derived>
LabelSets sets_above(const Eigen::MatrixBase<Derived>& scores, typename Derived::Scalar threshold = 0) {
  LabelSets sets(static_cast<ClassIndex>(scores.cols()));
  std::vector<ClassIndex> chosen;
  chosen.reserve(static_cast<std::size_t>(scores.cols()));
  for (Eigen::Index i = 0; i < scores.rows(); ++i) {
    chosen.clear();
    for (Eigen::Index k = 0; k < scores.cols(); ++k)
      if (scores(i, k) > threshold) chosen.push_back(static_cast<ClassIndex>(k));
    sets.push_back(chosen);
  }
  return sets;
}

/// Predicted label sets from a ranking: Ŷ_i = the first k classes of row i (k = 0: all
/// columns). `n_classes` is K of the model (the sets' class range).
inline LabelSets sets_top_k(const ClassRanking& ranking, ClassIndex n_classes, ClassIndex k = 0) {
  if (k == 0) k = static_cast<ClassIndex>(ranking.cols());
  if (k < 1 || k > ranking.cols())
    throw std::invalid_argument("sets_top_k: k must be in [1, " + std::to_string(ranking.cols()) + "], got " +
                                std::to_string(k));
  LabelSets sets(n_classes);
  for (Eigen::Index i = 0; i < ranking.rows(); ++i)
    sets.push_back(std::span<const ClassIndex>(ranking.row(i).data(), static_cast<std::size_t>(k)));
  return sets;
}

}  // namespace sparsemc::metrics
