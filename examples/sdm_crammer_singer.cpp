// The ridge-only Crammer–Singer SVM (LIBLINEAR's -s 4) with the sequential dual method: read the
// bundled dna data, fit at LIBLINEAR's C = 1 (μ = 1/(Cn), λ = 0), and report the certificate,
// then a tighter solve of the same problem and the test accuracy; last, an elastic-net fit
// (λ = 0.1 μ) whose model alone is certified, as a model file would be, by sequential_dual_bound.
#include <sparsemc/sparsemc.hpp>

#include <cstdio>
#include <string>

#include "data_dir.hpp"

int main() {
  const std::string dir = sparsemc_examples::data_dir();
  auto train = sparsemc::io::read_libsvm<double>(dir + "/dna.scale");
  auto test = sparsemc::io::read_libsvm<double>(
      dir + "/dna.scale.t", {.n_features = train.n_features(), .labels = train.encoder()});
  const auto problem = train.problem<Eigen::RowMajor>();
  const double C = 1.0, mu = 1.0 / (C * static_cast<double>(train.n_samples()));

  // Default options: certified within 0.1 % of the optimum (relative duality gap ≤ 1e-3).
  sparsemc::SequentialDual<sparsemc::CrammerSinger, sparsemc::NoPenalty> solver({}, {.mu = mu});
  auto result = solver.fit(problem);
  // More: a relative gap of 1e-6.
  sparsemc::SequentialDual<sparsemc::CrammerSinger, sparsemc::NoPenalty> tight({}, {.mu = mu}, {.tol = 1e-6});
  const auto refined = tight.fit(problem);
  result.model.set_labels(train.encoder().labels());  // class indices -> labels as read

  const auto predicted = result.model.predict(test.csr());
  std::size_t correct = 0;
  for (std::size_t i = 0; i < predicted.size(); ++i)
    correct += predicted[i] == test.encoder().label_of(test.labels().view().single(i)) ? 1 : 0;
  std::printf("%s after %lld epochs: F = %.6f, relative gap %.2e (tol 1e-6: F = %.8f, gap %.2e after %lld epochs), "
              "test accuracy %.4f\n",
              sparsemc::to_string(result.info.status).data(), static_cast<long long>(result.info.epochs),
              result.info.objective, result.info.relative_gap, refined.info.objective, refined.info.relative_gap,
              static_cast<long long>(refined.info.epochs), double(correct) / double(predicted.size()));

  // The elastic net: the model's scores and F are all the bound needs (no dual iterate).
  const sparsemc::L1 elastic{.lambda = 0.1 * mu, .mu = mu};
  const auto sparse = sparsemc::SequentialDual<sparsemc::CrammerSinger, sparsemc::L1>({}, elastic).fit(problem);
  const sparsemc::ClassMatrix<double> S = sparse.model.decision_function(train.csr());  // n × K
  const sparsemc::DualityGap bound = sparsemc::sequential_dual_bound(problem, S, elastic, sparse.info.objective, {});
  std::printf("elastic net: %lld of %lld weights nonzero, relative gap %.2e in training, %.2e from the model alone\n",
              static_cast<long long>(sparse.model.nnz()),
              static_cast<long long>(train.n_features() * train.n_classes()), sparse.info.relative_gap,
              bound.relative());
  const bool certified = result.info.status == sparsemc::Status::converged &&
                         refined.info.status == sparsemc::Status::converged &&
                         refined.info.objective <= result.info.objective &&
                         sparse.info.status == sparsemc::Status::converged && bound.gap() >= 0;
  return certified ? 0 : 1;
}
