#pragma once
/// \file sample_partition.hpp
/// Objective (1) split by samples over the ranks: each rank holds the rows of X of its part
/// (read_libsvm_part) and the whole W, and a data-parallel solver runs on every rank with the
/// same options. Its sums over the samples — the loss part L = (1/n) Σ_i c_i ℓ(s_i), the
/// gradient ∇_W L = Σ_r X_rᵀD_r and ∇_b L, the test of its step, and the gap's sums (the
/// conjugates, XᵀD̃ of the dual candidate, the intercept's class sums) — are completed by
/// `SampleSums`, a reduction over the ranks; everything over W is done alike on every rank.
/// The iterates are the serial solver's up to the order of the sums, and every rank ends with
/// the same model, certified by the duality gap of the whole problem.
///
/// Per FISTA iteration each rank sends its d × K gradient and K intercept entries once (a
/// reduction to rank 0 and a broadcast of d·K + K + 1 numbers), plus one number per
/// backtracking trial; a gap evaluation sends d × K more. GLS sends the same per iteration and
/// its p × p second moment Σ̂ once per factorisation; FBPD its pass's Tᵀy and a few sums per
/// pass, its dual blocks staying on their rank. Each rank's memory is its share of X, its
/// n_r × K scores (FBPD: and dual blocks) and a few d × K iterates (GLS: and Σ̂).
///
/// \code
///   sparsemc::mpi::Communicator world;
///   auto part = sparsemc::mpi::read_libsvm_part<double>(world, "train.svm");
///   sparsemc::ProxGradient<sparsemc::Logistic, sparsemc::L1L2> solver({}, {.lambda = 1e-4});
///   auto result = sparsemc::mpi::fit_by_samples(world, solver, part.problem<Eigen::RowMajor>());
///   if (world.root()) save(result.model);      // every rank holds the same model
/// \endcode

#include <cstdint>
#include <cstdio>
#include <exception>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "../data/problem.hpp"
#include "../model/linear_model.hpp"
#include "../solver/sample_sums.hpp"
#include "communicator.hpp"

namespace sparsemc::mpi {

/// The SampleSums policy over the ranks of a Communicator: sums, `any` and `max` reduced on
/// rank 0 and broadcast, the same bits on every rank.
class SampleSums {
 public:
  explicit SampleSums(const Communicator& comm) : comm_(&comm) {}
  template <class T>
  void operator()(std::span<T> values) const {
    comm_->sum(values);
  }
  template <class T>
  void operator()(T& value) const {
    comm_->sum(value);
  }
  [[nodiscard]] bool any(bool flag) const { return comm_->max(static_cast<std::int32_t>(flag)) != 0; }
  [[nodiscard]] double max(double value) const { return comm_->max(value); }

 private:
  const Communicator* comm_;
};

/// Fits (1) over the ranks by samples: `solver` (one with `fit_part`: ProxGradient, GLS or FBPD)
/// on every rank with its part `part` of the problem (its rows of X, their class sets and
/// costs; every rank the same d and K), warm-started from `initial` when not null. Returns,
/// on every rank, the same Result: the model and the information block of the whole.
/// Collective. Every rank needs at least one sample. An exception inside the solve on one
/// rank cannot be agreed on (the others wait in a reduction): it is printed and the job is
/// aborted (MPI_Abort).
template <class Solver, RealScalar Scalar, StorageIndex Index, int Order, class... Callbacks>
[[nodiscard]] Result<Scalar> fit_by_samples(const Communicator& comm, const Solver& solver,
                                            Problem<Scalar, Index, Order> part,
                                            std::type_identity_t<const LinearModel<Scalar>*> initial = nullptr,
                                            Callbacks&&... callbacks) {
  std::int64_t n = part.n_samples();
  comm.sum(n);
  if (comm.min(static_cast<std::int64_t>(part.n_samples())) == 0)
    throw std::invalid_argument("mpi::fit_by_samples: a rank has no samples (" + std::to_string(n) + " samples over " +
                                std::to_string(comm.size()) + " ranks); use fewer ranks");
  part.n_total = n;
  try {
    return solver.fit_part(part, SampleSums(comm), initial, callbacks...);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sparsemc::mpi::fit_by_samples: rank %d: %s; aborting the job\n", comm.rank(), e.what());
    MPI_Abort(comm.get(), 3);
    throw;
  }
}

}  // namespace sparsemc::mpi
