// Block coordinate descent (Blondel, Seki & Uehara 2013) on the bundled dna data:
//   1. one fit of the multiclass squared hinge + ℓ1/ℓ2 (row sparsity) with bcd-ls, the
//      Tseng–Yun line-search rule;
//   2. a warm-started regularisation path from λ_max down to λ_max/100, one line per λ with the
//      held-out accuracy: each solve starts from the previous solution, so the whole path costs
//      little more than its last point.
// Run: example_bcd_path [train.svm [test.svm]]
#include <sparsemc/io/libsvm_reader.hpp>
#include <sparsemc/loss/squared_hinge.hpp>
#include <sparsemc/model/metrics.hpp>
#include <sparsemc/penalty/l1l2.hpp>
#include <sparsemc/solver/bcd/block_cd.hpp>
#include <sparsemc/solver/path.hpp>

#include <cstdio>
#include <string>

#include "data_dir.hpp"

int main(int argc, char** argv) {
  using namespace sparsemc;
  const std::string train_file = argc > 1 ? argv[1] : sparsemc_examples::data_dir() + "/dna.scale";
  const std::string test_file = argc > 2 ? argv[2] : sparsemc_examples::data_dir() + "/dna.scale.t";
  const auto train = io::read_libsvm_plain<double>(train_file);
  const auto test = io::read_libsvm_plain<double>(test_file, {.n_features = train.n_features(), .labels = train.encoder()});
  const auto problem = train.problem<Eigen::ColMajor>();  // BlockCD walks the columns of X

  // 1. One fit, certified: stop when the relative duality gap of (1) is ≤ 1e-4.
  using Solver = BlockCD<SquaredHinge, L1L2, TsengYun>;
  const Solver solver({}, {.lambda = 1e-3}, {.tol = 1e-4});
  const Result<double> fit = solver.fit(problem);
  std::printf("bcd-ls : F = %.8f, %s after %lld epochs (relative gap %.1e), %lld of %lld rows nonzero, %.3f s, "
              "test accuracy %.4f\n",
              fit.info.objective, std::string(to_string(fit.info.status)).c_str(),
              static_cast<long long>(fit.info.epochs), fit.info.relative_gap, static_cast<long long>(fit.info.nnz_rows),
              static_cast<long long>(train.n_features()), fit.info.seconds,
              metrics::accuracy(fit.model.predict_classes(test.csr()), test.labels().view()));

  // 2. The path: 10 log-spaced λ from λ_max to λ_max/100, each warm-started.
  auto make = [](double lambda) { return Solver({}, {.lambda = lambda}, {.tol = 1e-4}); };
  const auto path = regularization_path(problem, make, PathOptions{.n_lambdas = 10, .ratio = 1e-2},
                                        HeldOutAccuracy<double>{test.csr(), test.labels().view()});
  std::printf("%12s %12s %9s %7s %9s %9s\n", "lambda", "objective", "nnz_rows", "epochs", "seconds", "accuracy");
  for (const PathPoint& p : path.points)
    std::printf("%12.4e %12.6f %9lld %7lld %9.4f %9.4f\n", p.lambda, p.objective, static_cast<long long>(p.nnz_rows),
                static_cast<long long>(p.epochs), p.seconds, p.accuracy);
  // Every fit here is one the solver certifies: anything else is a failure of this example.
  bool certified = fit.info.status == Status::converged;
  for (const PathPoint& p : path.points) certified = certified && p.status == Status::converged;
  return certified ? 0 : 1;
}
