#pragma once
/// \file early_stopping.hpp
/// Early stopping on a held-out set, as PD-Sparse's `-h heldout -e` (Yen et al. 2016, §5: "our
/// program stops if test accuracy does not increase in three continuous iterations").

#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "../core/callbacks.hpp"
#include "../data/labels.hpp"
#include "../data/sparse_view.hpp"
#include "linear_model.hpp"

namespace sparsemc {

/// A per-epoch callback (core/callbacks.hpp) that scores the current model on a held-out set —
/// the fraction of samples whose top-scoring class is one of theirs: accuracy for multiclass
/// data, precision@1 for multilabel data — keeps a copy of the best model, and stops the solve
/// once the score has not improved for `patience` consecutive epochs.
///
/// Solvers that honour `best_model()` / `best_report()` (FCBCFW does) then return the best model
/// with its epoch's objective and stopping measure, and the status stopped_by_callback; the
/// callback can be read afterwards in any case. Scoring costs O(nnz(X_heldout)·K) per epoch.
///
/// \code
///   sparsemc::HeldoutEarlyStop<double> early(heldout.csr(), heldout.labels().view(), 3);
///   auto result = solver.fit(train.problem<Eigen::RowMajor>(), early);
///   // result.model is the epoch with the best held-out accuracy, early.best_score() its accuracy
/// \endcode
template <RealScalar Scalar, StorageIndex Index = std::int32_t>
class HeldoutEarlyStop {
 public:
  HeldoutEarlyStop(CsrView<Scalar, Index> X, LabelView y, int patience = 3)
      : X_(X), y_(y), patience_(patience) {}

  bool end_epoch(const EpochReport& report, const LinearModel<Scalar>& model) {
    const double score = held_out_score(model);
    scores_.push_back(score);
    if (!best_ || score > best_score_) {
      best_score_ = score;
      best_report_ = report;
      best_ = model;
      since_best_ = 0;
      return false;
    }
    return ++since_best_ >= patience_;
  }

  /// The model of the best epoch so far (nullptr before the first epoch).
  [[nodiscard]] const LinearModel<Scalar>* best_model() const noexcept { return best_ ? &*best_ : nullptr; }
  /// The solver's report of that epoch (objective of (1), stopping measure, …).
  [[nodiscard]] const EpochReport& best_report() const noexcept { return best_report_; }
  [[nodiscard]] double best_score() const noexcept { return best_score_; }
  /// The held-out score of every epoch so far.
  [[nodiscard]] const std::vector<double>& scores() const noexcept { return scores_; }

  /// Fraction of held-out samples whose first top-scoring class belongs to their class set.
  [[nodiscard]] double held_out_score(const LinearModel<Scalar>& model) const {
    const std::vector<ClassIndex> top = model.predict_classes(X_);
    std::int64_t hits = 0;
    for (std::size_t i = 0; i < top.size(); ++i)
      for (ClassIndex k : y_[i]) hits += (k == top[i]) ? 1 : 0;
    return top.empty() ? 0.0 : static_cast<double>(hits) / static_cast<double>(top.size());
  }

 private:
  CsrView<Scalar, Index> X_;
  LabelView y_;
  int patience_;
  std::optional<LinearModel<Scalar>> best_;
  EpochReport best_report_;
  double best_score_ = -std::numeric_limits<double>::infinity();
  int since_best_ = 0;
  std::vector<double> scores_;
};

}  // namespace sparsemc
