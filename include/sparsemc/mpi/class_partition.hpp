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
/// The model is not the serial fit's bit for bit (each rank's solver sees only its classes,
/// as BlockCD's class ranges do); both are certified within tol of the same optimum.
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
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "../core/status.hpp"
#include "../data/dataset.hpp"
#include "../model/linear_model.hpp"
#include "../solver/duality_gap.hpp"
#include "communicator.hpp"

namespace sparsemc::mpi {

/// Rank r's classes [first, first + size): [⌈Kr/P⌉, ⌈K(r+1)/P⌉), contiguous, sizes ⌊K/P⌋ or
/// one more, rank 0's never empty (K ≥ 1).
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

namespace detail {

/// The status of the whole from the ranks': converged when every rank is, else the gravest
/// (a numerical issue, then a callback's stop, the time limit, the epoch budget).
[[nodiscard]] inline Status combined_status(const Communicator& comm, Status mine) {
  const auto gravity = [](Status s) {
    switch (s) {
      case Status::converged: return 0;
      case Status::max_iter: return 1;
      case Status::time_limit: return 2;
      case Status::stopped_by_callback: return 3;
      case Status::numerical_issue: return 4;
    }
    return 4;
  };
  constexpr Status by_gravity[] = {Status::converged, Status::max_iter, Status::time_limit, Status::stopped_by_callback,
                                   Status::numerical_issue};
  return by_gravity[comm.max(gravity(mine))];
}

/// The ranks' models (rank r: the columns of its share) as one model on rank 0: the nonzero
/// weights gathered, merged row by row (a counting sort by feature keeps each row's classes
/// increasing, as the shares are). Other ranks get an empty model.
template <RealScalar Scalar>
[[nodiscard]] LinearModel<Scalar> gather_model(const Communicator& comm, const LinearModel<Scalar>& part,
                                               ClassShare share, std::int64_t n_features, std::vector<Label> labels) {
  std::vector<std::int64_t> features;
  std::vector<ClassIndex> classes;
  std::vector<Scalar> weights;
  for (std::size_t r = 0; r < part.support().size(); ++r)
    for (const auto [k, w] : part.row(r)) {
      features.push_back(part.support()[r]);
      classes.push_back(share.first + k);
      weights.push_back(w);
    }
  const std::vector<std::int64_t> all_features = comm.gather(std::span<const std::int64_t>(features), 0);
  const std::vector<ClassIndex> all_classes = comm.gather(std::span<const ClassIndex>(classes), 0);
  const std::vector<Scalar> all_weights = comm.gather(std::span<const Scalar>(weights), 0);
  const auto& b = part.intercept();
  const std::vector<Scalar> intercept = comm.gather(std::span<const Scalar>(b.data(), static_cast<std::size_t>(b.size())), 0);
  if (!comm.root()) return {};

  // Counting sort of the entries by feature, stable: rank order, then each rank's own order.
  std::vector<std::int64_t> row_size(static_cast<std::size_t>(n_features) + 1, 0);
  for (const std::int64_t j : all_features) ++row_size[static_cast<std::size_t>(j) + 1];
  std::vector<std::int64_t> support, row_start{0};
  for (std::int64_t j = 0; j < n_features; ++j)
    if (row_size[static_cast<std::size_t>(j) + 1] > 0) {
      support.push_back(j);
      row_start.push_back(row_start.back() + row_size[static_cast<std::size_t>(j) + 1]);
    }
  std::partial_sum(row_size.begin(), row_size.end(), row_size.begin());  // now the row offsets
  std::vector<ClassIndex> sorted_classes(all_classes.size());
  std::vector<Scalar> sorted_weights(all_weights.size());
  for (std::size_t p = 0; p < all_features.size(); ++p) {
    const auto at = static_cast<std::size_t>(row_size[static_cast<std::size_t>(all_features[p])]++);
    sorted_classes[at] = all_classes[p];
    sorted_weights[at] = all_weights[p];
  }
  typename LinearModel<Scalar>::Vector b_whole =
      Eigen::Map<const typename LinearModel<Scalar>::Vector>(intercept.data(), static_cast<Eigen::Index>(intercept.size()));
  return LinearModel<Scalar>(n_features, std::move(support), std::move(row_start), std::move(sorted_classes),
                             std::move(sorted_weights), std::move(b_whole), std::move(labels));
}

}  // namespace detail

/// Fits (1) over the ranks by classes (see the file comment): `fit(mine)` fits this rank's
/// one-vs-rest problem `mine` (restrict_to_classes) with any solver and returns its
/// Result; a rank with no class (P > K) does not call it. Returns, on rank 0, the whole
/// model (with rank 0's provenance and the whole fit's status) and on every rank the
/// information block of the whole: F = Σ F_r, the gap Σ (F_r − D_r) and its relative value,
/// the gravest status, the most epochs, the nonzero weights and rows of W, the slowest rank's
/// time. Collective; an exception on any rank is a `RankError` on every rank.
template <RealScalar Scalar, StorageIndex Index, class Fit>
[[nodiscard]] Result<Scalar> fit_by_classes(const Communicator& comm, const Dataset<Scalar, Index>& data, Fit&& fit) {
  const ClassShare share = class_share(data.n_classes(), comm.rank(), comm.size());
  Result<Scalar> part;
  part.info.status = Status::converged;
  part.info.objective = part.info.duality_gap = 0.0;  // an empty share: F_r = D_r = 0
  collectively(comm, [&] {
    if (share.size > 0) part = fit(restrict_to_classes(data, share));
  });

  SolverInfo whole = part.info;
  whole.status = detail::combined_status(comm, part.info.status);
  comm.sum(whole.objective);
  comm.sum(whole.duality_gap);
  whole.relative_gap = relative_gap(whole.objective, whole.objective - whole.duality_gap);
  whole.epochs = comm.max(part.info.epochs);
  comm.sum(whole.nnz);
  whole.measure = comm.max(std::isnan(part.info.measure) ? -std::numeric_limits<double>::infinity() : part.info.measure);
  whole.seconds = comm.max(part.info.seconds);
  comm.sum(whole.gap_evaluations);
  whole.gap_seconds = comm.max(part.info.gap_seconds);

  Result<Scalar> result{detail::gather_model(comm, part.model, share, data.n_features(), data.encoder().labels()), whole};
  if (comm.root()) {
    ModelProvenance provenance = part.model.provenance();
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
