// Objective (1) over MPI ranks (docs/mpi.md): every rank reads its share of data/dna.scale, then
//   - by classes: each rank fits the one-vs-rest problems of its classes with BlockCD, and the
//     ranks' duality gaps add up to the certificate of the whole;
//   - by samples: FISTA (multinomial logistic) and FBPD (the exact Crammer–Singer hinge, its
//     dual blocks on the rank of their sample) run on every rank over its own samples, their
//     sums reduced over the ranks.
// Run it as `mpirun -np 2 mpi_distributed` (CI does).
#include <sparsemc/mpi/class_partition.hpp>
#include <sparsemc/mpi/read.hpp>
#include <sparsemc/mpi/sample_partition.hpp>
#include <sparsemc/sparsemc.hpp>

#include <cstdio>

#include "../data_dir.hpp"

int main(int argc, char** argv) {
  sparsemc::mpi::Environment mpi(argc, argv);
  const sparsemc::mpi::Communicator world;
  const auto part = sparsemc::mpi::read_libsvm_part<double>(world, sparsemc_examples::data_dir() + "/dna.scale", {.threads = 1});

  // By classes: every rank needs every sample.
  const auto data = sparsemc::mpi::gather_dataset(world, part);
  const sparsemc::BlockCD<sparsemc::OvrSquaredHinge, sparsemc::L1> bcd({}, {.lambda = 1e-3}, {.threads = 1});
  const auto by_classes = sparsemc::mpi::fit_by_classes(
      world, data, [&](const sparsemc::Dataset<double>& mine) { return bcd.fit(mine.problem<Eigen::ColMajor>()); });

  // By samples: every rank keeps its share.
  const sparsemc::ProxGradient<sparsemc::Logistic, sparsemc::L1L2> fista({}, {.lambda = 1e-3}, {.threads = 1});
  const auto by_samples = sparsemc::mpi::fit_by_samples(world, fista, part.problem<Eigen::RowMajor>());
  const sparsemc::FBPD<sparsemc::CrammerSinger, sparsemc::L1> fbpd({}, {.lambda = 1e-3, .mu = 1e-3}, {.threads = 1});
  const auto crammer_singer = sparsemc::mpi::fit_by_samples(world, fbpd, part.problem<Eigen::RowMajor>());

  if (world.root()) {
    std::printf("%d ranks, %lld samples\n", world.size(), static_cast<long long>(data.n_samples()));
    for (const auto* result : {&by_classes, &by_samples, &crammer_singer})
      std::printf("%-4s F = %.6f  relative gap %.2e  %s  nonzero rows %lld\n",
                  result->model.provenance().solver.c_str(), result->info.objective, result->info.relative_gap,
                  std::string(sparsemc::to_string(result->info.status)).c_str(),
                  static_cast<long long>(result->info.nnz_rows));
  }
  const bool certified = by_classes.info.status == sparsemc::Status::converged &&
                         by_samples.info.status == sparsemc::Status::converged &&
                         crammer_singer.info.status == sparsemc::Status::converged;
  return certified ? 0 : 1;
}
