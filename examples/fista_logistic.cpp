// Sparse multinomial logistic regression with the reference solver: ProxGradient (FISTA)
// on objective (1) with the logistic loss and the row-wise group lasso,
//
//     F(W, b) = (1/n) Σ_i ℓ(Wᵀx_i + b, y_i) + λ Σ_j ‖W_j:‖₂ + (μ/2)‖W‖²,
//
// at λ = λ_max / 20 (λ_max: the smallest λ for which W = 0 is optimal).
//
//   example_fista_logistic [TRAIN [TEST]]     (default: the bundled dna.scale / dna.scale.t)

#include <sparsemc/io/libsvm.hpp>
#include <sparsemc/loss/logistic.hpp>
#include <sparsemc/penalty/l1l2.hpp>
#include <sparsemc/solver/fista/prox_gradient.hpp>
#include <sparsemc/solver/objective.hpp>

#include <cstdio>
#include <exception>
#include <string>

#include "data_dir.hpp"

int main(int argc, char** argv) {
  using namespace sparsemc;
  try {
    const std::string train_path = argc > 1 ? argv[1] : sparsemc_examples::data_dir() + "/dna.scale";
    const std::string test_path = argc > 2 ? argv[2] : (argc > 1 ? std::string() : sparsemc_examples::data_dir() + "/dna.scale.t");
    const auto train = io::read_libsvm<double>(train_path);
    const auto problem = train.problem<Eigen::RowMajor>();  // CSR: the faster layout for FISTA

    // λ from λ_max (with an unpenalised intercept: at the best intercept-only model).
    const double lambda = lambda_max(Logistic{}, L1L2{}, problem, /*fit_intercept=*/true) / 20;
    const ProxGradient solver(Logistic{}, L1L2{.lambda = lambda, .mu = 1e-5},
                              ProxGradientOptions{.tol = 1e-6, .fit_intercept = true});
    const auto result = solver.fit(problem);
    const auto& info = result.info;
    std::printf("%s: n = %lld, d = %lld, K = %d\n", train_path.c_str(), static_cast<long long>(train.n_samples()),
                static_cast<long long>(train.n_features()), train.n_classes());
    std::printf("lambda %.4g  status %s  iterations %lld  objective %.10g\n", lambda,
                std::string(to_string(info.status)).c_str(), static_cast<long long>(info.epochs), info.objective);
    std::printf("relative duality gap %.2e  nonzero feature rows %lld of %lld  time %.3f s\n", info.relative_gap,
                static_cast<long long>(info.nnz_rows), static_cast<long long>(train.n_features()), info.seconds);

    if (!test_path.empty()) {
      const auto test = io::read_libsvm<double>(test_path, {.n_features = train.n_features(), .labels = train.encoder()});
      const auto predicted = result.model.predict_classes(test.csr());
      std::size_t correct = 0;
      for (std::size_t i = 0; i < predicted.size(); ++i) correct += predicted[i] == test.labels().view().single(i);
      std::printf("test accuracy %.4f on %zu samples\n", static_cast<double>(correct) / predicted.size(), predicted.size());
    }
    return info.status == Status::converged ? 0 : info.status == Status::numerical_issue ? 3 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
}
