// The ridge-only Crammer–Singer SVM (LIBLINEAR's -s 4) with the sequential dual method: read the
// bundled dna data, fit at LIBLINEAR's C = 1 (μ = 1/(Cn), λ = 0), and report the certificate,
// then a tighter solve of the same problem and the test accuracy.
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
  const bool certified = result.info.status == sparsemc::Status::converged &&
                         refined.info.status == sparsemc::Status::converged &&
                         refined.info.objective <= result.info.objective;
  return certified ? 0 : 1;
}
