// The README's example: read the bundled dna data, fit multinomial logistic + group lasso
// with the reference solver, and report status, objective, sparsity and test accuracy.
#include <sparsemc/sparsemc.hpp>

#include <cstdio>
#include <string>

#include "data_dir.hpp"

int main() {
  const std::string dir = sparsemc_examples::data_dir();
  auto train = sparsemc::io::read_libsvm<double>(dir + "/dna.scale");
  auto test = sparsemc::io::read_libsvm<double>(
      dir + "/dna.scale.t", {.n_features = train.n_features(), .labels = train.encoder()});

  // Multinomial logistic loss + group lasso over feature rows, accelerated proximal gradient.
  sparsemc::ProxGradient<sparsemc::Logistic, sparsemc::L1L2> solver({}, {.lambda = 1e-3});
  auto result = solver.fit(train.problem<Eigen::RowMajor>());
  result.model.set_labels(train.encoder().labels());  // class indices -> labels as read

  const auto predicted = result.model.predict(test.csr());
  std::size_t correct = 0;
  for (std::size_t i = 0; i < predicted.size(); ++i)
    correct += predicted[i] == test.encoder().label_of(test.labels().view().single(i)) ? 1 : 0;
  std::printf("%s after %lld iterations: F = %.6f, %lld of %lld feature rows nonzero, test accuracy %.4f\n",
              sparsemc::to_string(result.info.status).data(), static_cast<long long>(result.info.epochs),
              result.info.objective, static_cast<long long>(result.info.nnz_rows),
              static_cast<long long>(train.n_features()), double(correct) / double(predicted.size()));
  return result.info.status == sparsemc::Status::converged ? 0 : 1;
}
