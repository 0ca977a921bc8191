// PD-Sparse (FCBCFW) on an extreme multiclass problem: many classes, few samples per class,
// a model whose size grows with its nonzeros rather than with d·K.
//
//   example_pdsparse_extreme                      generated data: n = 4000, d = 20000, K = 2000
//   example_pdsparse_extreme TRAIN [TEST] [C] [λ']  a LIBSVM file (PD-Sparse's -c and -l)
//
// Objective (1) with the Crammer–Singer loss and the elastic net; PD-Sparse's C and λ' map to
// μ = 1/(Cn), λ = λ'/(Cn). `solve` keeps W and the dual α sparse end to end. With generated
// data, a second fit stops early on a held-out set (PD-Sparse's -h) and returns its best epoch.
#include <sparsemc/core/rng.hpp>
#include <sparsemc/data/dataset.hpp>
#include <sparsemc/io/libsvm.hpp>
#include <sparsemc/loss/crammer_singer.hpp>
#include <sparsemc/model/early_stopping.hpp>
#include <sparsemc/penalty/l1.hpp>
#include <sparsemc/solver/fcbcfw/fcbcfw.hpp>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

namespace {

// Each class owns 8 signature features (drawn from `classes_seed`); a sample draws 15 of its 20
// features from its class's (the samples from `samples_seed`).
sparsemc::Dataset<double> generate(std::int32_t n, std::int32_t d, sparsemc::ClassIndex K, std::uint64_t classes_seed,
                                   std::uint64_t samples_seed) {
  sparsemc::Rng classes(classes_seed);
  std::vector<std::int32_t> signature(static_cast<std::size_t>(K) * 8);
  for (auto& j : signature) j = static_cast<std::int32_t>(sparsemc::uniform_index(classes, static_cast<std::uint64_t>(d)));
  sparsemc::Rng rng(samples_seed);
  std::vector<Eigen::Triplet<double>> triplets;
  std::vector<sparsemc::ClassIndex> y(static_cast<std::size_t>(n));
  for (std::int32_t i = 0; i < n; ++i) {
    const auto k = static_cast<sparsemc::ClassIndex>(sparsemc::uniform_index(rng, static_cast<std::uint64_t>(K)));
    y[static_cast<std::size_t>(i)] = k;
    for (int f = 0; f < 20; ++f) {
      const std::int32_t j = f < 15 ? signature[static_cast<std::size_t>(k) * 8 + sparsemc::uniform_index(rng, 8)]
                                    : static_cast<std::int32_t>(sparsemc::uniform_index(rng, static_cast<std::uint64_t>(d)));
      triplets.emplace_back(i, j, 0.2);  // repeated features add up
    }
  }
  sparsemc::CsrMatrix<double> X(n, d);
  X.setFromTriplets(triplets.begin(), triplets.end());
  std::vector<sparsemc::Label> labels(static_cast<std::size_t>(K));
  for (std::size_t k = 0; k < labels.size(); ++k) labels[k] = static_cast<sparsemc::Label>(k);
  return {std::move(X), sparsemc::LabelSets::multiclass(y, K), sparsemc::LabelEncoder(labels)};
}

}  // namespace

int main(int argc, char** argv) {
  const auto train = argc > 1 ? sparsemc::io::read_libsvm<double>(argv[1]) : generate(4000, 20000, 2000, 1, 2);
  const double C = argc > 3 ? std::atof(argv[3]) : 1.0, lambda_pd = argc > 4 ? std::atof(argv[4]) : 0.1;
  const double n = train.n_samples();

  // The bi-stochastic search (§3.2) is on by default for K >= 1000.
  const sparsemc::FCBCFW<sparsemc::CrammerSinger, sparsemc::L1> solver(
      {}, {.lambda = lambda_pd / (C * n), .mu = 1.0 / (C * n)}, {.tol = 1e-2, .max_epochs = 200});
  const auto solution = solver.solve(train.problem<Eigen::RowMajor>());
  const auto& info = solution.info;
  std::printf("n = %lld, d = %lld, K = %d, C = %g, lambda' = %g\n", static_cast<long long>(train.n_samples()),
              static_cast<long long>(train.n_features()), train.n_classes(), C, lambda_pd);
  std::printf("status %s after %lld epochs, %.2f s: objective %.6g, relative duality gap %.3g\n",
              std::string(sparsemc::to_string(info.status)).c_str(), static_cast<long long>(info.epochs),
              info.seconds, info.objective, info.relative_gap);
  std::printf("nonzero weights %zu of d*K = %.3g (%.4f%%), nonzero dual variables %zu of n*K = %.3g\n",
              solution.weight.size(), static_cast<double>(train.n_features()) * train.n_classes(),
              100.0 * static_cast<double>(solution.weight.size()) /
                  (static_cast<double>(train.n_features()) * train.n_classes()),
              solution.dual.size(), n * train.n_classes());

  if (argc > 2) {  // accuracy on a test set (the model's labels are class indices)
    const auto test = sparsemc::io::read_libsvm<double>(
        argv[2], {.n_features = train.n_features(), .labels = train.encoder()});
    const auto model = solution.model();
    const auto predicted = model.predict_classes(test.csr());
    double hits = 0;
    for (std::size_t i = 0; i < predicted.size(); ++i) hits += predicted[i] == test.labels().view().single(i);
    std::printf("test accuracy %.4f\n", hits / static_cast<double>(predicted.size()));
  } else if (argc == 1) {
    // PD-Sparse's -h: score every epoch on held-out samples of the same classes, stop after 3
    // epochs without improvement, return the best epoch's model (status stopped_by_callback).
    const auto heldout = generate(1000, 20000, 2000, 1, 3);
    sparsemc::HeldoutEarlyStop<double> early(heldout.csr(), heldout.labels().view(), 3);
    const sparsemc::FCBCFW<sparsemc::CrammerSinger, sparsemc::L1> long_run(
        {}, {.lambda = lambda_pd / (C * n), .mu = 1.0 / (C * n)}, {.tol = 1e-6, .max_epochs = 200});
    const auto best = long_run.fit(train.problem<Eigen::RowMajor>(), early);
    std::printf("held-out early stop: %s after %lld epochs, held-out accuracy %.4f (epoch %lld), %lld nonzero weights\n",
                std::string(sparsemc::to_string(best.info.status)).c_str(), static_cast<long long>(best.info.epochs),
                early.best_score(), static_cast<long long>(early.best_report().epoch),
                static_cast<long long>(best.model.nnz()));
  }
  return info.status == sparsemc::Status::converged ? 0 : info.status == sparsemc::Status::numerical_issue ? 3 : 1;
}
