#pragma once
/// \file class_partition.hpp
/// Objective (1) split by classes over the ranks (DiSMEC's design, Babbar & Schölkopf 2017).
///
/// With a loss that is one term per class (ClassSeparableLoss: one-vs-rest squared hinge,
/// least squares) and an entrywise penalty (L1, none), (1) is the sum of K one-vs-rest
/// problems, one per column w_k of W and entry b_k of b (Blondel et al. 2013, eq. 11), and
/// so is its dual:
///
///     F(W, b) = Σ_r F_r(W_r, b_r),   D(A) = Σ_r D_r(A_r),   F − D = Σ_r (F_r − D_r),
///
/// where rank r holds the classes [⌈Kr/P⌉, ⌈K(r+1)/P⌉) and W_r their columns. Each rank fits
/// its problem with any solver of (1) — the whole X, the class sets cut to its classes, the
/// costs c_i of the whole problem — and stops on its own certificate F_r − D_r ≤ tol·F_r;
/// summed, Σ_r (F_r − D_r) ≤ tol·Σ_r F_r certifies the whole at the same tol. No
/// communication while the ranks fit; one reduction of the information blocks and one
/// gather of the nonzero weights to rank 0 at the end.
///
/// Every rank holds the whole X (`gather_dataset`): a one-vs-rest problem needs every sample.
/// A rank fits its classes in batches of `classes_per_fit` (all at once by default), so that
/// its solver's per-class state (a dense column of W and n scores per class) stays within
/// memory at extreme K; the batches' nonzero weights are kept as they come. The model is not
/// the serial fit's bit for bit (each fit sees only its classes, as BlockCD's class ranges
/// do); both are certified within tol of the same optimum.
///
/// \code
///   sparsemc::mpi::Communicator world;
///   auto data = sparsemc::mpi::gather_dataset(world, sparsemc::mpi::read_libsvm_part<double>(world, path));
///   sparsemc::BlockCD<sparsemc::OvrSquaredHinge, sparsemc::L1> solver({.lambda = 1e-3});
///   auto result = sparsemc::mpi::fit_by_classes(world, data, [&](const sparsemc::Dataset<double>& mine) {
///     return solver.fit(mine.problem<Eigen::ColMajor>());
///   });
///   if (world.root()) save(result.model);      // the whole W on rank 0; result.info everywhere
/// \endcode

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <limits>
#include <numeric>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "../core/status.hpp"
#include "../data/dataset.hpp"
#include "../model/linear_model.hpp"
#include "../solver/duality_gap.hpp"
#include "communicator.hpp"

namespace sparsemc::mpi {

/// A contiguous range of classes [first, first + size): rank r's share is
/// [⌈Kr/P⌉, ⌈K(r+1)/P⌉), of size ⌊K/P⌋ or one more, rank 0's never empty (K ≥ 1).
struct ClassShare {
  ClassIndex first = 0;
  ClassIndex size = 0;
};

[[nodiscard]] inline ClassShare class_share(ClassIndex n_classes, int rank, int ranks) {
  const auto boundary = [&](int r) {
    return static_cast<ClassIndex>((static_cast<std::int64_t>(n_classes) * r + ranks - 1) / ranks);
  };
  return {boundary(rank), static_cast<ClassIndex>(boundary(rank + 1) - boundary(rank))};
}

/// The one-vs-rest problem of `share`'s classes over all of `data`: X borrowed from `data`
/// (which must outlive the result), the class sets cut to the share (sample i's set holds
/// its classes in the share, renumbered from 0), the labels of the share, and the costs c_i
/// of the whole problem as sample weights.
template <RealScalar Scalar, StorageIndex Index>
[[nodiscard]] Dataset<Scalar, Index> restrict_to_classes(const Dataset<Scalar, Index>& data, ClassShare share) {
  const std::vector<Label>& labels = data.encoder().labels();
  Dataset<Scalar, Index> mine = Dataset<Scalar, Index>::borrowing(
      data.csr(), class_range(data.labels().view(), share.first, share.size),
      LabelEncoder(std::vector<Label>(labels.begin() + share.first, labels.begin() + share.first + share.size)));
  if (!data.costs().empty()) mine.set_sample_weights(std::vector<Scalar>(data.costs().begin(), data.costs().end()));
  return mine;
}

/// The warm start of `share`'s one-vs-rest problem from a model of the whole problem (its
/// classes in the problem's order, as align_initial_model leaves them): the columns of the
/// share's classes, renumbered from 0, with their intercepts and labels.
template <RealScalar Scalar>
[[nodiscard]] LinearModel<Scalar> restrict_model_to_classes(const LinearModel<Scalar>& model, ClassShare share) {
  std::vector<std::int64_t> support, row_start{0};
  std::vector<ClassIndex> classes;
  std::vector<Scalar> weights;
  for (std::size_t r = 0; r < model.support().size(); ++r) {
    for (const auto [k, w] : model.row(r))
      if (k >= share.first && k < share.first + share.size) {
        classes.push_back(k - share.first);
        weights.push_back(w);
      }
    if (static_cast<std::int64_t>(classes.size()) > row_start.back()) {
      support.push_back(model.support()[r]);
      row_start.push_back(static_cast<std::int64_t>(classes.size()));
    }
  }
  typename LinearModel<Scalar>::Vector b;
  if (model.has_intercept()) b = model.intercept().segment(share.first, share.size);
  const auto first_label = model.labels().begin() + share.first;
  return LinearModel<Scalar>(model.n_features(), std::move(support), std::move(row_start), std::move(classes),
                             std::move(weights), std::move(b),
                             std::vector<Label>(first_label, first_label + share.size));
}

namespace detail {

/// The status of the whole from the ranks': converged when every rank is, else the gravest.
/// Status lists the outcomes by gravity: converged, the epoch budget, the time limit, a
/// callback's stop, a numerical issue.
[[nodiscard]] inline Status combined_status(const Communicator& comm, Status mine) {
  return static_cast<Status>(comm.max(static_cast<std::int32_t>(mine)));
}

/// The nonzero weights of this rank's fits, as they come (features, classes in the whole
/// problem, weights), and the intercepts of its classes in order.
template <RealScalar Scalar>
struct RankWeights {
  std::vector<std::int64_t> features;
  std::vector<ClassIndex> classes;
  std::vector<Scalar> weights;
  std::vector<Scalar> intercept;

  /// Appends the model of the classes `fitted`.
  void add(const LinearModel<Scalar>& model, ClassShare fitted) {
    for (std::size_t r = 0; r < model.support().size(); ++r)
      for (const auto [k, w] : model.row(r)) {
        features.push_back(model.support()[r]);
        classes.push_back(fitted.first + k);
        weights.push_back(w);
      }
    intercept.insert(intercept.end(), model.intercept().data(), model.intercept().data() + model.intercept().size());
  }
};

/// The ranks' weights as one model on rank 0: gathered, then merged row by row (a stable
/// counting sort by feature keeps each row's classes increasing, as the ranks' shares and
/// their batches are). Other ranks get an empty model.
template <RealScalar Scalar>
[[nodiscard]] LinearModel<Scalar> gather_model(const Communicator& comm, const RankWeights<Scalar>& mine,
                                               std::int64_t n_features, std::vector<Label> labels) {
  const std::vector<std::int64_t> features = comm.gather(std::span<const std::int64_t>(mine.features), 0);
  const std::vector<ClassIndex> classes = comm.gather(std::span<const ClassIndex>(mine.classes), 0);
  const std::vector<Scalar> weights = comm.gather(std::span<const Scalar>(mine.weights), 0);
  const std::vector<Scalar> intercept = comm.gather(std::span<const Scalar>(mine.intercept), 0);
  if (!comm.root()) return {};

  std::vector<std::int64_t> row_size(static_cast<std::size_t>(n_features) + 1, 0);
  for (const std::int64_t j : features) ++row_size[static_cast<std::size_t>(j) + 1];
  std::vector<std::int64_t> support, row_start{0};
  for (std::int64_t j = 0; j < n_features; ++j)
    if (row_size[static_cast<std::size_t>(j) + 1] > 0) {
      support.push_back(j);
      row_start.push_back(row_start.back() + row_size[static_cast<std::size_t>(j) + 1]);
    }
  std::partial_sum(row_size.begin(), row_size.end(), row_size.begin());  // now the rows' offsets
  std::vector<ClassIndex> sorted_classes(classes.size());
  std::vector<Scalar> sorted_weights(weights.size());
  for (std::size_t p = 0; p < features.size(); ++p) {
    const auto at = static_cast<std::size_t>(row_size[static_cast<std::size_t>(features[p])]++);
    sorted_classes[at] = classes[p];
    sorted_weights[at] = weights[p];
  }
  using Vector = typename LinearModel<Scalar>::Vector;
  Vector b = Eigen::Map<const Vector>(intercept.data(), static_cast<Eigen::Index>(intercept.size()));
  return LinearModel<Scalar>(n_features, std::move(support), std::move(row_start), std::move(sorted_classes),
                             std::move(sorted_weights), std::move(b), std::move(labels));
}

/// Adds the information block of one fit to this rank's: F and the gap summed, the gravest
/// status (combined_status), epochs and measure at most, nonzeros and gap evaluations summed, times summed.
inline void add_info(SolverInfo& into, const SolverInfo& fit) {
  into.status = std::max(into.status, fit.status);  // Status lists the outcomes by gravity
  into.objective += fit.objective;
  into.duality_gap += fit.duality_gap;
  into.epochs = std::max(into.epochs, fit.epochs);
  into.measure_name = fit.measure_name;
  into.measure = std::isnan(into.measure) ? fit.measure : std::max(into.measure, fit.measure);
  into.nnz += fit.nnz;
  into.seconds += fit.seconds;
  into.gap_evaluations += fit.gap_evaluations;
  into.gap_seconds += fit.gap_seconds;
}

}  // namespace detail

/// Fits (1) over the ranks by classes (see the file comment): `fit(mine)` fits one batch of
/// this rank's classes — the one-vs-rest problem `mine` (restrict_to_classes) — with any
/// solver and returns its Result; the rank's share goes in batches of `classes_per_fit`
/// classes (0: all at once); a rank with no class (P > K) does not call it. A `fit` that
/// takes `(mine, start)` gets as `start` the batch's columns of the warm start `initial` (a
/// model of the whole problem, the same on every rank; restrict_model_to_classes), or null. Returns, on rank
/// 0, the whole model (with the first fit's provenance and the whole fit's status) and on
/// every rank the information block of the whole: F = Σ F_r, the gap Σ (F_r − D_r) and its
/// relative value, the gravest status, the most epochs, the nonzero weights and rows of W,
/// the slowest rank's time. Collective; an exception on any rank is a `RankError` on every
/// rank.
template <RealScalar Scalar, StorageIndex Index, class Fit>
[[nodiscard]] Result<Scalar> fit_by_classes(const Communicator& comm, const Dataset<Scalar, Index>& data, Fit&& fit,
                                            ClassIndex classes_per_fit = 0,
                                            const LinearModel<Scalar>* initial = nullptr) {
  constexpr bool takes_start = std::invocable<Fit&, const Dataset<Scalar, Index>&, const LinearModel<Scalar>*>;
  if (classes_per_fit < 0)
    throw std::invalid_argument("mpi::fit_by_classes: classes_per_fit must be >= 0 (0 = all at once), got " +
                                std::to_string(classes_per_fit));
  if (initial != nullptr && !takes_start)
    throw std::invalid_argument("mpi::fit_by_classes: a warm start needs a fit(mine, start)");
  const ClassShare share = class_share(data.n_classes(), comm.rank(), comm.size());
  const ClassIndex batch = classes_per_fit > 0 ? std::min(classes_per_fit, share.size) : share.size;
  detail::RankWeights<Scalar> weights;
  SolverInfo mine;  // an empty share: converged, F_r = D_r = 0
  mine.status = Status::converged;
  mine.objective = mine.duality_gap = 0.0;
  ModelProvenance provenance;
  collectively(comm, [&] {
    // The warm start of this rank's classes, cut from the whole once; a batch takes its columns of it.
    std::optional<LinearModel<Scalar>> share_start, batch_start;
    if (initial != nullptr && share.size > 0) share_start = restrict_model_to_classes(*initial, share);
    for (ClassIndex first = share.first; first < share.first + share.size; first += batch) {
      const ClassShare fitted{first, std::min<ClassIndex>(batch, share.first + share.size - first)};
      const Result<Scalar> part = [&] {
        if constexpr (takes_start) {
          const LinearModel<Scalar>* start = nullptr;
          if (share_start)
            start = fitted.size == share.size ? &*share_start
                                              : &batch_start.emplace(restrict_model_to_classes(
                                                    *share_start, {first - share.first, fitted.size}));
          return fit(restrict_to_classes(data, fitted), start);
        } else {
          return fit(restrict_to_classes(data, fitted));
        }
      }();
      if (first == share.first) provenance = part.model.provenance();
      detail::add_info(mine, part.info);
      weights.add(part.model, fitted);
    }
  });

  SolverInfo whole = mine;
  whole.status = detail::combined_status(comm, mine.status);
  comm.sum(whole.objective);
  comm.sum(whole.duality_gap);
  whole.relative_gap = relative_gap(whole.objective, whole.objective - whole.duality_gap);
  whole.epochs = comm.max(mine.epochs);
  comm.sum(whole.nnz);
  whole.measure = comm.max(std::isnan(mine.measure) ? -std::numeric_limits<double>::infinity() : mine.measure);
  if (std::isinf(whole.measure)) whole.measure = std::numeric_limits<double>::quiet_NaN();
  whole.seconds = comm.max(mine.seconds);
  comm.sum(whole.gap_evaluations);
  whole.gap_seconds = comm.max(mine.gap_seconds);

  Result<Scalar> result{detail::gather_model(comm, weights, data.n_features(), data.encoder().labels()), whole};
  if (comm.root()) {
    provenance.status = std::string(to_string(whole.status));
    result.model.provenance() = provenance;
    result.info.nnz_rows = static_cast<std::int64_t>(result.model.support().size());
  }
  std::vector<std::int64_t> nnz_rows{result.info.nnz_rows};
  comm.broadcast(nnz_rows, 0);
  result.info.nnz_rows = nnz_rows.front();
  return result;
}

}  // namespace sparsemc::mpi
