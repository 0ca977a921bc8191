// The exact sparse multiclass SVM of Chierchia et al. (2015) with FBPD: the Crammer–Singer hinge
// itself (not a smooth surrogate) with a group-sparse penalty, in the regularised form
// (Algorithm 1) and in the constrained form (Algorithm 2), which reaches the same model when its
// bound η is the loss of Algorithm 1's solution.
//
//   ./example_fbpd_exact_svm [train.svm]          (default: the repository's data/dna.scale)
#include <sparsemc/io/libsvm.hpp>
#include <sparsemc/loss/crammer_singer.hpp>
#include <sparsemc/penalty/l1l2.hpp>
#include <sparsemc/solver/fbpd/fbpd.hpp>

#include <cstdio>
#include <string>

#include "data_dir.hpp"

int main(int argc, char** argv) {
  using namespace sparsemc;
  const std::string path = argc > 1 ? argv[1] : sparsemc_examples::data_dir() + "/dna.scale";
  const auto data = io::read_libsvm<double>(path);
  const auto problem = data.problem<Eigen::RowMajor>();

  // Algorithm 1: min (1/n) Σ ℓ_CS(Wᵀx_i + b, y_i) + λ Σ_j ‖W_j:‖₂ + (μ/2)‖W‖², b unpenalised.
  const L1L2 penalty{.lambda = 5e-3, .mu = 1e-2};
  const FBPD<CrammerSinger, L1L2> regularised({}, penalty, {.tol = 1e-5, .fit_intercept = true});
  const Result<double> r1 = regularised.fit(problem);
  const double loss = r1.info.objective - penalty_value(penalty, r1.model);
  std::printf("Algorithm 1: F = %.8f (mean hinge %.6f), %lld of %lld features, %s after %lld epochs (%s %.1e), %.2f s\n",
              r1.info.objective, loss, static_cast<long long>(r1.info.nnz_rows), static_cast<long long>(data.n_features()),
              std::string(to_string(r1.info.status)).c_str(), static_cast<long long>(r1.info.epochs),
              r1.info.measure_name.c_str(), r1.info.measure, r1.info.seconds);

  // Algorithm 2: min λ Σ_j ‖W_j:‖₂ + (μ/2)‖W‖² subject to (1/n) Σ ℓ_CS ≤ η, with η = that loss.
  const FBPD<CrammerSinger, L1L2, Constrained> constrained({}, penalty, {.tol = 1e-5, .fit_intercept = true, .eta = loss});
  const Result<double> r2 = constrained.fit(problem);
  const double distance = (r2.model.dense() - r1.model.dense()).norm() / r1.model.dense().norm();
  std::printf("Algorithm 2: F = %.8f, %lld features, %s after %lld epochs, ‖W₂ − W₁‖/‖W₁‖ = %.1e, %.2f s\n",
              r2.info.objective, static_cast<long long>(r2.info.nnz_rows), std::string(to_string(r2.info.status)).c_str(),
              static_cast<long long>(r2.info.epochs), distance, r2.info.seconds);

  const auto predicted = r1.model.predict_classes(data.csr());  // class indices (the model's labels are 0..K−1)
  std::size_t correct = 0;
  for (std::size_t i = 0; i < predicted.size(); ++i) correct += predicted[i] == data.labels().view().single(i) ? 1 : 0;
  std::printf("training accuracy %.4f\n", static_cast<double>(correct) / static_cast<double>(predicted.size()));
  return r1.info.status == Status::converged && r2.info.status == Status::converged ? 0 : 1;
}
