// Generalized least squares (solver/gls/): Algorithm 1 against FISTA on the same objective (1)
// (logistic + ridge), the identity link against the closed-form ridge solution, monotonicity,
// acceleration, warm start, intercept and sample weights, sparse and dense designs, float and
// double; calibrated least squares (Algorithm 2) and stagewise regression (Algorithm 3).

#include <catch2/catch.hpp>

#include <sparsemc/core/rng.hpp>
#include <sparsemc/data/dense_problem.hpp>
#include <sparsemc/io/libsvm_reader.hpp>
#include <sparsemc/loss/losses.hpp>
#include <sparsemc/penalty/penalties.hpp>
#include <sparsemc/solver/duality_gap.hpp>
#include <sparsemc/solver/fista/prox_gradient.hpp>
#include <sparsemc/solver/gls/calibrated_ls.hpp>
#include <sparsemc/solver/gls/gls.hpp>
#include <sparsemc/solver/gls/stagewise.hpp>
#include <sparsemc/io/staged_model_io.hpp>
#include <sparsemc/io/parse_error.hpp>
#include <sparsemc/solver/objective.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "skip.hpp"
#include "test_scalars.hpp"

using namespace sparsemc;

namespace {

using sparsemc_test::sanitizer_run;

/// An owning random problem with correlated (ill-conditioned) features: X = U·M with M mixing
/// columns, labels from a planted linear model, every class present; both a sparse CSR copy
/// and a dense row-major copy of the same X.
template <class Scalar>
struct PlantedProblem {
  using RowMatrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  RowMatrix dense;
  Eigen::SparseMatrix<Scalar, Eigen::RowMajor, std::int32_t> sparse;
  LabelSets labels;
  std::vector<Scalar> weights;

  PlantedProblem(Eigen::Index n, Eigen::Index d, ClassIndex K, double density, std::uint64_t seed, bool weighted) {
    Rng rng(seed);
    dense = RowMatrix::Zero(n, d);
    for (Eigen::Index i = 0; i < n; ++i)
      for (Eigen::Index j = 0; j < d; ++j)
        if (uniform_real(rng) < density) dense(i, j) = static_cast<Scalar>(2 * uniform_real(rng) - 1) * static_cast<Scalar>(1 + j % 3);
    // Correlate neighbouring features a little (worse conditioning than i.i.d. columns).
    for (Eigen::Index j = d - 1; j > 0; --j) dense.col(j) += Scalar(0.5) * dense.col(j - 1);
    sparse = dense.sparseView();
    sparse.makeCompressed();
    RowMatrix planted(d, K);
    for (Eigen::Index j = 0; j < d; ++j)
      for (Eigen::Index k = 0; k < K; ++k) planted(j, k) = static_cast<Scalar>(2 * uniform_real(rng) - 1);
    const RowMatrix S = dense * planted;
    std::vector<ClassIndex> y(static_cast<std::size_t>(n));
    for (Eigen::Index i = 0; i < n; ++i) {
      Eigen::Index k = 0;
      S.row(i).maxCoeff(&k);
      if (uniform_real(rng) < 0.2) k = static_cast<Eigen::Index>(uniform_index(rng, static_cast<std::uint64_t>(K)));
      y[static_cast<std::size_t>(i)] = static_cast<ClassIndex>(i < K ? i : k);
    }
    labels = LabelSets::multiclass(y, K);
    if (weighted)
      for (Eigen::Index i = 0; i < n; ++i) weights.push_back(static_cast<Scalar>(0.5 + 1.5 * uniform_real(rng)));
  }
  [[nodiscard]] CsrProblem<Scalar> csr() const { return {CsrView<Scalar>(sparse), labels.view(), weights}; }
  [[nodiscard]] DenseProblem<Scalar> dense_problem() const {
    return {{dense.data(), dense.rows(), dense.cols()}, labels.view(), weights};
  }
};

double rel(double a, double b) { return std::abs(a - b) / std::max({std::abs(a), std::abs(b), 1e-300}); }

template <class Scalar>
constexpr double objective_tol() {
  return std::is_same_v<Scalar, float> ? 2e-4 : 1e-9;
}

/// F of (1) with ridge μ at a model, by the textbook formulas in double on the dense copy of X
/// (independent of objective.hpp and of the solvers).
template <class Loss, class Scalar>
double brute_objective(const PlantedProblem<Scalar>& data, double mu, const LinearModel<Scalar>& model) {
  const Eigen::MatrixXd X = data.dense.template cast<double>();
  const Eigen::MatrixXd W = model.dense().template cast<double>();
  Eigen::MatrixXd S = X * W;
  if (model.has_intercept()) S.rowwise() += model.intercept().template cast<double>().transpose();
  double loss = 0;
  for (Eigen::Index i = 0; i < X.rows(); ++i) {
    const auto y = static_cast<Eigen::Index>(data.labels.view().single(static_cast<std::size_t>(i)));
    const double c = data.weights.empty() ? 1.0 : static_cast<double>(data.weights[static_cast<std::size_t>(i)]);
    const Eigen::VectorXd s = S.row(i).transpose();
    if constexpr (std::is_same_v<Loss, Logistic>) {
      const double m = s.maxCoeff();
      loss += c * (m + std::log((s.array() - m).exp().sum()) - s[y]);
    } else {
      Eigen::VectorXd e = Eigen::VectorXd::Zero(s.size());
      e[y] = 1;
      loss += c * 0.5 * (s - e).squaredNorm();
    }
  }
  return loss / static_cast<double>(X.rows()) + 0.5 * mu * W.squaredNorm();
}

/// The FISTA reference value of (1) (tight tolerance).
template <class Loss, class Prob>
double reference_objective(const Prob& problem, double mu, bool intercept) {
  using Scalar = typename Prob::scalar_type;
  const ProxGradient fista(Loss{}, NoPenalty{.lambda = 0, .mu = mu},
                           ProxGradientOptions{.tol = std::is_same_v<Scalar, float> ? 1e-5 : 1e-11,
                                               .max_epochs = 200000, .fit_intercept = intercept});
  const auto reference = fista.fit(problem);
  REQUIRE(reference.info.status == Status::converged);  // certified, or it proves nothing
  return reference.info.objective;
}

}  // namespace

TEMPLATE_TEST_CASE("GLS softmax reaches FISTA's optimum of logistic + ridge", "[gls]", SPARSEMC_TEST_SCALARS) {
  using Scalar = TestType;
  const PlantedProblem<Scalar> data(sanitizer_run() ? 80 : 300, 25, 4, 0.4, 7, false);
  for (const bool intercept : {false, true}) {
    for (const double mu : {1e-2, 1e-4}) {
      CAPTURE(intercept, mu);
      const double F_ref = reference_objective<Logistic>(data.csr(), mu, intercept);
      // Algorithm 1, its Nesterov variant, and the quasi-Newton steps (memory > 0).
      for (const int scheme : {0, 1, 2}) {
        CAPTURE(scheme);
        const GLS gls(Logistic{}, NoPenalty{.mu = mu},
                      GLSOptions{.tol = std::is_same_v<Scalar, float> ? 1e-4 : 1e-9, .max_epochs = 100000,
                                 .fit_intercept = intercept, .accelerated = scheme == 1, .memory = scheme == 2 ? 10 : 0});
        const auto sparse = gls.fit(data.csr());
        const auto dense = gls.fit(data.dense_problem());
        CHECK(sparse.info.status == Status::converged);
        CHECK(dense.info.status == Status::converged);
        CHECK(rel(sparse.info.objective, F_ref) <= objective_tol<Scalar>());
        CHECK(rel(dense.info.objective, F_ref) <= objective_tol<Scalar>());
        // The reported objective is (1) at the returned model (recomputed independently).
        CHECK(rel(brute_objective<Logistic>(data, mu, sparse.model), sparse.info.objective) <=
              (std::is_same_v<Scalar, float> ? 1e-5 : 1e-12));
        CHECK(sparse.info.relative_gap <= (std::is_same_v<Scalar, float> ? 1e-4 : 1e-9));
        CHECK(sparse.model.provenance().solver == "gls");
        CHECK(sparse.model.provenance().loss == "logistic");
        CHECK(sparse.model.has_intercept() == intercept);
      }
    }
  }
}

TEMPLATE_TEST_CASE("GLS with sample weights and CSC data", "[gls]", SPARSEMC_TEST_SCALARS) {
  using Scalar = TestType;
  const PlantedProblem<Scalar> data(sanitizer_run() ? 60 : 200, 15, 3, 0.5, 11, true);
  const double mu = 1e-3;
  const double F_ref = reference_objective<Logistic>(data.csr(), mu, true);
  const Eigen::SparseMatrix<Scalar, Eigen::ColMajor, std::int32_t> csc = data.sparse;
  const CscProblem<Scalar> problem{CscView<Scalar>(csc), data.labels.view(), data.weights};
  const GLS gls(Logistic{}, NoPenalty{.mu = mu},
                GLSOptions{.tol = std::is_same_v<Scalar, float> ? 1e-4 : 1e-9, .max_epochs = 100000, .fit_intercept = true});
  const auto a = gls.fit(problem);
  const auto b = gls.fit(data.dense_problem());
  CHECK(rel(a.info.objective, F_ref) <= objective_tol<Scalar>());
  CHECK(rel(b.info.objective, F_ref) <= objective_tol<Scalar>());
}

TEMPLATE_TEST_CASE("GLS quasi-Newton: the one-pass dense step follows the two-pass sparse path", "[gls]",
                   SPARSEMC_TEST_SCALARS) {
  // Dense X takes the full step's products XΔ and XᵀD in one pass over row chunks (fused_trial);
  // sparse X in two. More rows than one chunk (512 here), weights and an intercept.
  using Scalar = TestType;
  const PlantedProblem<Scalar> data(sanitizer_run() ? 600 : 1500, 15, 3, 0.5, 19, true);
  const GLS gls(Logistic{}, NoPenalty{.mu = 1e-4},
                GLSOptions{.tol = std::is_same_v<Scalar, float> ? 1e-4 : 1e-8, .max_epochs = 400, .fit_intercept = true,
                           .memory = 5, .single_precision_gram = false, .curvature_refresh = 0});
  History dense_history, sparse_history;
  const auto dense = gls.fit(data.dense_problem(), dense_history);
  const auto sparse = gls.fit(data.csr(), sparse_history);
  CHECK(dense.info.status == Status::converged);
  CHECK(sparse.info.status == Status::converged);
  // Same iterates up to rounding (the chunked sums round differently), epoch by epoch.
  const double tol = std::is_same_v<Scalar, float> ? 1e-4 : 1e-10;
  const std::size_t common = std::min(dense_history.epochs.size(), sparse_history.epochs.size());
  REQUIRE(common >= 5);
  for (std::size_t e = 0; e < common; ++e) {
    CAPTURE(e);
    CHECK(rel(dense_history.epochs[e].objective, sparse_history.epochs[e].objective) <= tol);
  }
  CHECK(rel(brute_objective<Logistic>(data, 1e-4, dense.model), dense.info.objective) <=
        (std::is_same_v<Scalar, float> ? 1e-5 : 1e-12));
}

TEMPLATE_TEST_CASE("GLS set-up: tiled and single-precision second moments", "[gls][gram]", SPARSEMC_TEST_SCALARS) {
  // lower_gram_tiled (the OpenMP path: tiles of 256 columns over the threads) equals one rank
  // update up to rounding, on sizes with a partial last tile; lower_gram_single (float chunks
  // accumulated in double) is within float rounding of it; second_moment scales by 1/n and
  // fills both triangles either way.
  using Scalar = TestType;
  using RowMatrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using Square = detail::gls::SquareMatrix<Scalar>;
  const Eigen::Index n = sanitizer_run() ? 300 : 1300, p = sanitizer_run() ? 270 : 600;
  const PlantedProblem<Scalar> data(n, p, 3, 0.7, 23, false);
  const RowMatrix& X = data.dense;
  Square serial = Square::Zero(p, p), tiled = Square::Constant(p, p, Scalar(7)), single = Square::Zero(p, p);
  serial.template selfadjointView<Eigen::Lower>().rankUpdate(X.transpose());
  detail::gls::lower_gram_tiled(X, tiled);
  detail::gls::lower_gram_single(X, single);
  const Square lower_serial = serial.template triangularView<Eigen::Lower>();
  const Square lower_tiled = tiled.template triangularView<Eigen::Lower>();
  const Square lower_single = single.template triangularView<Eigen::Lower>();
  const double scale = static_cast<double>(lower_serial.cwiseAbs().maxCoeff());
  const double eps = static_cast<double>(std::numeric_limits<Scalar>::epsilon());
  CHECK(static_cast<double>((lower_tiled - lower_serial).cwiseAbs().maxCoeff()) <= 64 * eps * scale);
  CHECK(tiled(0, p - 1) == Scalar(7));  // the strict upper triangle is left alone
  CHECK(static_cast<double>((lower_single - lower_serial).cwiseAbs().maxCoeff()) <=
        64 * static_cast<double>(std::numeric_limits<float>::epsilon()) * scale);
  const DenseProblem<Scalar> problem = data.dense_problem();
  const Square sigma = detail::gls::second_moment(problem, false, true);
  const Square expected = Square(serial.template selfadjointView<Eigen::Lower>()) / static_cast<Scalar>(n);
  CHECK(static_cast<double>((sigma - expected).cwiseAbs().maxCoeff()) <=
        64 * static_cast<double>(std::numeric_limits<float>::epsilon()) * scale / static_cast<double>(n));
  CHECK(sigma.isApprox(sigma.transpose(), Scalar(0)));
}

TEMPLATE_TEST_CASE("GLS with a single-precision second moment reaches the same optimum", "[gls][gram]",
                   SPARSEMC_TEST_SCALARS) {
  // Σ̂ only preconditions: formed in float, the quasi-Newton and plain iterations still converge
  // to the minimiser of (1), and the identity link to the closed-form ridge solution.
  using Scalar = TestType;
  const PlantedProblem<Scalar> data(sanitizer_run() ? 200 : 1200, 30, 4, 0.5, 29, true);
  const double tol = std::is_same_v<Scalar, float> ? 1e-4 : 1e-9;
  for (const int memory : {0, 10}) {
    CAPTURE(memory);
    const GLSOptions exact{.tol = tol, .max_epochs = 100000, .fit_intercept = true, .memory = memory,
                           .single_precision_gram = false};
    GLSOptions single = exact;
    single.single_precision_gram = true;
    const auto a = GLS(Logistic{}, NoPenalty{.mu = 1e-4}, exact).fit(data.dense_problem());
    const auto b = GLS(Logistic{}, NoPenalty{.mu = 1e-4}, single).fit(data.dense_problem());
    CHECK(b.info.status == Status::converged);
    CHECK(rel(a.info.objective, b.info.objective) <= objective_tol<Scalar>());
  }
  GLSOptions single{.tol = tol, .max_epochs = 100, .fit_intercept = true};
  single.single_precision_gram = true;
  const auto exact = GLS(LeastSquares{}, NoPenalty{.mu = 1e-3},
                         GLSOptions{.tol = tol, .fit_intercept = true, .single_precision_gram = false})
                         .fit(data.dense_problem());
  const auto approx = GLS(LeastSquares{}, NoPenalty{.mu = 1e-3}, single).fit(data.dense_problem());
  CHECK(approx.info.status == Status::converged);
  CHECK(rel(exact.info.objective, approx.info.objective) <= objective_tol<Scalar>());
}

TEMPLATE_TEST_CASE("GLS quasi-Newton with curvature refreshes reaches the same optimum", "[gls][gram]",
                   SPARSEMC_TEST_SCALARS) {
  // Rebuilding the preconditioner from the current per-sample curvatures (curvature_refresh)
  // changes the metric, not the minimiser: dense (double and single-precision Σ̂) and sparse X,
  // weights and an intercept, against FISTA's objective.
  using Scalar = TestType;
  const PlantedProblem<Scalar> data(sanitizer_run() ? 150 : 600, 25, 4, 0.5, 31, true);
  const double mu = 1e-4;
  const double F_ref = reference_objective<Logistic>(data.csr(), mu, true);
  for (const bool single : {false, true}) {
    CAPTURE(single);
    GLSOptions options{.tol = std::is_same_v<Scalar, float> ? 1e-4 : 1e-9, .max_epochs = 100000,
                       .fit_intercept = true, .memory = 10};
    options.single_precision_gram = single;
    options.curvature_refresh = 4;
    const GLS gls(Logistic{}, NoPenalty{.mu = mu}, options);
    const auto dense = gls.fit(data.dense_problem());
    const auto sparse = gls.fit(data.csr());
    CHECK(dense.info.status == Status::converged);
    CHECK(sparse.info.status == Status::converged);
    CHECK(dense.info.epochs > 4);  // at least one refresh happened
    CHECK(rel(dense.info.objective, F_ref) <= objective_tol<Scalar>());
    CHECK(rel(sparse.info.objective, F_ref) <= objective_tol<Scalar>());
  }
  CHECK_THROWS_AS(GLSOptions{.curvature_refresh = -1}.validate(), std::invalid_argument);
}

TEMPLATE_TEST_CASE("GLS Algorithm 1 is monotone, stops on the gap and reports the gradient norm", "[gls]",
                   SPARSEMC_TEST_SCALARS) {
  using Scalar = TestType;
  const PlantedProblem<Scalar> data(150, 20, 5, 0.5, 3, false);
  const double tol = std::is_same_v<Scalar, float> ? 1e-4 : 1e-8;
  const GLS gls(Logistic{}, NoPenalty{.mu = 1e-3}, GLSOptions{.tol = tol, .max_epochs = 100000, .memory = 0});
  History history;
  const auto result = gls.fit(data.dense_problem(), history);
  REQUIRE(result.info.status == Status::converged);
  REQUIRE(history.epochs.size() == static_cast<std::size_t>(result.info.epochs));
  const double slack = std::is_same_v<Scalar, float> ? 1e-6 : 1e-14;
  for (std::size_t e = 1; e < history.epochs.size(); ++e)
    CHECK(history.epochs[e].objective <= history.epochs[e - 1].objective * (1 + slack));
  CHECK(result.info.relative_gap <= tol);
  CHECK(result.info.measure_name == "gradient_norm");
  // Without an intercept the gap at the gradient candidate is ‖∇F‖²/(2μ) (Fenchel–Young).
  // The measure is ‖∇F(W)‖ / ‖∇F(0)‖: recompute it with objective.hpp.
  const auto problem = data.csr();
  const auto W = result.model.dense();
  ClassMatrix<Scalar> S, D, G;
  compute_scores(problem, W, ClassVector<Scalar>(), S);
  loss_score_gradient(Logistic{}, problem, S, D);
  weight_gradient(problem, D, G);
  G += Scalar(1e-3) * W;
  ClassMatrix<Scalar> S0 = ClassMatrix<Scalar>::Zero(S.rows(), S.cols()), D0, G0;
  loss_score_gradient(Logistic{}, problem, S0, D0);
  weight_gradient(problem, D0, G0);
  CHECK(rel(static_cast<double>(G.norm() / G0.norm()), result.info.measure) <= (std::is_same_v<Scalar, float> ? 1e-2 : 1e-6));
  const double gap = static_cast<double>(G.squaredNorm()) / (2 * 1e-3);
  CHECK(std::abs(gap - result.info.duality_gap) <= (std::is_same_v<Scalar, float> ? 1e-5 : 1e-12) + 1e-2 * gap);
  // Acceleration takes fewer iterations to the same tolerance on this problem.
  const GLS fast(Logistic{}, NoPenalty{.mu = 1e-3},
                 GLSOptions{.tol = tol, .max_epochs = 100000, .accelerated = true, .memory = 0});
  const auto accelerated = fast.fit(data.dense_problem());
  CHECK(accelerated.info.status == Status::converged);
  CHECK(accelerated.info.epochs <= result.info.epochs);
}

TEMPLATE_TEST_CASE("GLS identity link is the closed-form ridge solution", "[gls]", SPARSEMC_TEST_SCALARS) {
  using Scalar = TestType;
  const PlantedProblem<Scalar> data(120, 18, 4, 0.6, 5, true);
  for (const bool intercept : {false, true}) {
    CAPTURE(intercept);
    const double mu = 1e-2;
    const GLS gls(LeastSquares{}, NoPenalty{.mu = mu},
                  GLSOptions{.tol = std::is_same_v<Scalar, float> ? 1e-4 : 1e-9, .fit_intercept = intercept});
    const auto result = gls.fit(data.csr());
    CHECK(result.info.status == Status::converged);
    CHECK(result.info.epochs == 1);
    // Closed form in double: [W; b] = (X̃ᵀCX̃/n + diag(μ,…,μ,0))⁻¹ X̃ᵀCY/n.
    const Eigen::Index n = data.dense.rows(), d = data.dense.cols(), K = 4, p = d + (intercept ? 1 : 0);
    Eigen::MatrixXd X(n, p), Y = Eigen::MatrixXd::Zero(n, K);
    X.leftCols(d) = data.dense.template cast<double>();
    if (intercept) X.col(d).setOnes();
    for (Eigen::Index i = 0; i < n; ++i) Y(i, data.labels.view().single(static_cast<std::size_t>(i))) = 1;
    Eigen::VectorXd c(n);
    for (Eigen::Index i = 0; i < n; ++i) c[i] = static_cast<double>(data.weights[static_cast<std::size_t>(i)]);
    Eigen::MatrixXd A = X.transpose() * c.asDiagonal() * X / static_cast<double>(n);
    A.diagonal().head(d).array() += mu;
    const Eigen::MatrixXd expected = A.ldlt().solve(X.transpose() * c.asDiagonal() * Y / static_cast<double>(n));
    Eigen::MatrixXd got(p, K);
    got.topRows(d) = result.model.dense().template cast<double>();
    if (intercept) got.row(d) = result.model.intercept().template cast<double>().transpose();
    CHECK((got - expected).norm() <= (std::is_same_v<Scalar, float> ? 1e-3 : 1e-8) * expected.norm());
  }
}

TEMPLATE_TEST_CASE("GLS warm start, callbacks, time limit and options", "[gls]", SPARSEMC_TEST_SCALARS) {
  using Scalar = TestType;
  const PlantedProblem<Scalar> data(100, 12, 3, 0.5, 9, false);
  const GLSOptions options{.tol = std::is_same_v<Scalar, float> ? 1e-4 : 1e-8, .fit_intercept = true};
  const GLS gls(Logistic{}, NoPenalty{.mu = 1e-2}, options);
  const auto cold = gls.fit(data.csr());
  REQUIRE(cold.info.status == Status::converged);
  const auto warm = gls.fit(data.csr(), cold.model);
  CHECK(warm.info.status == Status::converged);
  CHECK(warm.info.epochs == 0);

  struct StopAfterTwo {
    int seen = 0;
    bool end_epoch(const EpochReport&, const LinearModel<Scalar>& model) {
      CHECK(model.n_classes() == 3);
      return ++seen == 2;
    }
  } stop;
  const auto stopped = gls.fit(data.csr(), stop);
  CHECK(stopped.info.status == Status::stopped_by_callback);
  CHECK(stopped.info.epochs == 2);

  CHECK_THROWS_AS(GLS(Logistic{}, NoPenalty{.mu = 1e-2}, GLSOptions{.tol = 0}), std::invalid_argument);
  CHECK_THROWS_AS(GLS(Logistic{}, NoPenalty{.mu = -1}), std::invalid_argument);
  CHECK_THROWS_AS(GLS(Logistic{}, NoPenalty{.mu = 0}, GLSOptions{.lipschitz = -1}), std::invalid_argument);
  // A singular Σ̂ (d > n, μ = 0) still factorises thanks to the documented small ridge.
  const PlantedProblem<Scalar> wide(10, 30, 3, 0.8, 2, false);
  const auto result = GLS(LeastSquares{}, NoPenalty{.mu = 0}, GLSOptions{.max_epochs = 5}).fit(wide.csr());
  CHECK(std::isfinite(result.info.objective));
}

/// At default options (only the intercept set): converged, relative gap ≤ 10⁻³, the reported gap
/// ≥ F − F* and (F − F*)/|F*| ≤ 10⁻³ against FISTA's F* (tol 10⁻¹⁰, double, same values), F
/// recomputed independently; sparse and dense X.
template <class Loss, class Scalar>
void check_default_gls(const PlantedProblem<Scalar>& data, const PlantedProblem<double>& twin, double mu, bool intercept) {
  const auto tight = ProxGradient(Loss{}, NoPenalty{.mu = mu},
                                  ProxGradientOptions{.tol = 1e-10, .max_epochs = 200000, .fit_intercept = intercept})
                         .fit(twin.csr());
  REQUIRE(tight.info.status == Status::converged);
  const double F_star = brute_objective<Loss>(twin, mu, tight.model);
  const GLS gls(Loss{}, NoPenalty{.mu = mu}, GLSOptions{.fit_intercept = intercept});
  for (const bool dense : {false, true}) {
    const auto fit = dense ? gls.fit(data.dense_problem()) : gls.fit(data.csr());
    const LinearModel<double> as_double(fit.model.dense().template cast<double>(),
                                        intercept ? ClassVector<double>(fit.model.intercept().template cast<double>())
                                                  : ClassVector<double>(),
                                        fit.model.labels());
    const double F = brute_objective<Loss>(twin, mu, as_double);
    INFO(Loss::name << " μ " << mu << " intercept " << intercept << " dense " << dense << " n " << data.dense.rows()
                    << " d " << data.dense.cols() << " epochs " << fit.info.epochs << " gap " << fit.info.duality_gap
                    << " relative " << fit.info.relative_gap << " F " << F << " F* " << F_star);
    REQUIRE(fit.info.status == Status::converged);
    CHECK(fit.info.relative_gap <= 1e-3);
    const double slack = (std::is_same_v<Scalar, float> ? 1e-6 : 1e-10) * std::abs(F_star);
    CHECK(fit.info.duality_gap + slack >= F - F_star);
    CHECK((F - F_star) / std::abs(F_star) <= 1e-3);
    CHECK(F - F_star >= -slack);
  }
}

TEMPLATE_TEST_CASE("GLS at default options is certified within 1e-3 of FISTA's optimum", "[gls][defaults]",
                   SPARSEMC_TEST_SCALARS) {
  using Scalar = TestType;
  const auto run = [](Eigen::Index n, Eigen::Index d, std::uint64_t seed) {
    const PlantedProblem<Scalar> data(n, d, 3, 0.4, seed, true);
    PlantedProblem<double> twin(1, 1, 1, 0.0, 0, false);
    twin.dense = data.dense.template cast<double>();
    twin.sparse = twin.dense.sparseView();
    twin.sparse.makeCompressed();
    twin.labels = data.labels;
    twin.weights.assign(data.weights.begin(), data.weights.end());
    for (const bool intercept : {false, true})
      for (const double mu : {1e-2, 1e-4}) {
        check_default_gls<Logistic>(data, twin, mu, intercept);
        check_default_gls<LeastSquares>(data, twin, mu, intercept);
      }
  };
  SECTION("wide (d >> n)") { run(40, 200, 41); }
  SECTION("tall (n >> d)") { run(sanitizer_run() ? 300 : 1500, 20, 42); }
}

TEMPLATE_TEST_CASE("GLS's gap on dense X equals the shared certificate on the sparse copy", "[gls][gap]",
                   SPARSEMC_TEST_SCALARS) {
  using Scalar = TestType;
  const PlantedProblem<Scalar> data(60, 15, 4, 0.5, 43, true);
  Rng rng(44);
  for (const bool intercept : {false, true})
    for (const double mu : {0.0, 1e-3}) {
      CAPTURE(intercept, mu);
      ClassMatrix<Scalar> W(15 + (intercept ? 1 : 0), 4);
      for (Eigen::Index j = 0; j < W.rows(); ++j)
        for (Eigen::Index k = 0; k < 4; ++k) W(j, k) = static_cast<Scalar>(uniform_real(rng) - 0.5);
      const auto sparse = data.csr();
      const auto dense = data.dense_problem();
      ClassMatrix<Scalar> S_sparse, S_dense;
      S_sparse.resize(60, 4);
      S_dense.resize(60, 4);
      detail::gls::scores(sparse, W, ClassMatrix<Scalar>(), S_sparse);
      detail::gls::scores(dense, W, ClassMatrix<Scalar>(), S_dense);
      GapWorkspace<Scalar> a, b;
      const auto g_sparse = detail::gls::duality_gap(Logistic{}, sparse, mu, W, S_sparse, intercept, a);
      const auto g_dense = detail::gls::duality_gap(Logistic{}, dense, mu, W, S_dense, intercept, b);
      // And the shared certificate at the model itself.
      const LinearModel<Scalar> model(W.topRows(15),
                                      intercept ? ClassVector<Scalar>(W.row(15).transpose()) : ClassVector<Scalar>(),
                                      std::vector<Label>{0, 1, 2, 3});
      GapWorkspace<Scalar> c;
      const auto g_model = duality_gap(Logistic{}, NoPenalty{.mu = mu}, sparse, model, c);
      const double eps = std::is_same_v<Scalar, float> ? 1e-5 : 1e-12;
      CHECK(rel(g_sparse.primal, g_dense.primal) <= eps);
      CHECK(rel(g_sparse.dual, g_dense.dual) <= eps);
      CHECK(rel(g_model.dual, g_dense.dual) <= eps);
      CHECK(g_dense.gap() > 0);
    }
}

TEST_CASE("GLS on dna matches FISTA", "[gls][data]") {
  const std::filesystem::path path = sparsemc_test::repo_data() / "dna.scale";
  REQUIRE(std::filesystem::exists(path));
  const auto data = io::read_libsvm_plain<double>(path.string());
  const auto problem = data.problem<Eigen::RowMajor>();
  const double mu = 1e-3;
  const double F_ref = reference_objective<Logistic>(problem, mu, false);
  const auto result = GLS(Logistic{}, NoPenalty{.mu = mu}, GLSOptions{.tol = 1e-9, .max_epochs = 100000}).fit(problem);
  CHECK(result.info.status == Status::converged);
  CHECK(rel(result.info.objective, F_ref) <= 1e-9);
}

TEMPLATE_TEST_CASE("CalibratedLS: the training square loss never increases", "[gls][calibrated]",
                   SPARSEMC_TEST_SCALARS) {
  using Scalar = TestType;
  const PlantedProblem<Scalar> data(sanitizer_run() ? 100 : 400, 20, 4, 0.5, 21, true);
  for (const bool intercept : {false, true}) {
    CAPTURE(intercept);
    const CalibratedLS solver(LeastSquares{}, NoPenalty{.mu = 1e-4},
                              CalibratedLSOptions{.tol = 1e-12, .max_epochs = 12, .fit_intercept = intercept});
    History history;
    const auto result = solver.fit(data.csr(), history);
    REQUIRE(history.epochs.size() == static_cast<std::size_t>(result.info.epochs));
    REQUIRE(!history.epochs.empty());
    // Algorithm 2 does not minimise (1): no certificate of (1) is claimed.
    CHECK(std::isnan(result.info.duality_gap));
    CHECK(std::isnan(result.info.relative_gap));
    for (std::size_t e = 1; e < history.epochs.size(); ++e)
      CHECK(history.epochs[e].objective <= history.epochs[e - 1].objective);
    // The first stage already beats plain least squares (the calibration can only help).
    const auto ls = GLS(LeastSquares{}, NoPenalty{.mu = 1e-4}, GLSOptions{.fit_intercept = intercept}).fit(data.csr());
    CHECK(history.epochs.front().objective <= ls.info.objective * (1 + 1e-5));
    // The model reproduces the training predictions: its square loss is the reported one.
    const auto Yhat = result.model.decision_function(data.csr().X);
    double E = 0;
    for (Eigen::Index i = 0; i < Yhat.rows(); ++i) {
      Eigen::Matrix<Scalar, 1, Eigen::Dynamic> r = Yhat.row(i);
      r[data.labels.view().single(static_cast<std::size_t>(i))] -= 1;
      E += 0.5 * static_cast<double>(data.weights[static_cast<std::size_t>(i)]) * static_cast<double>(r.squaredNorm());
      CHECK(std::abs(static_cast<double>(Yhat.row(i).sum()) - 1.0) <= 1e-4);  // on the simplex
      CHECK(Yhat.row(i).minCoeff() >= Scalar(0));
    }
    E /= static_cast<double>(Yhat.rows());
    CHECK(rel(E, result.info.objective) <= (std::is_same_v<Scalar, float> ? 1e-3 : 1e-9));
    // Dense and sparse designs give the same chain.
    const auto dense = solver.fit(data.dense_problem());
    CHECK(rel(dense.info.objective, history.epochs[static_cast<std::size_t>(dense.info.epochs) - 1].objective) <=
          (std::is_same_v<Scalar, float> ? 1e-3 : 1e-8));
    // A warm start continues the chain.
    const CalibratedLS more(LeastSquares{}, NoPenalty{.mu = 1e-4},
                            CalibratedLSOptions{.tol = 1e-12, .max_epochs = 2, .fit_intercept = intercept});
    const auto continued = more.fit(data.csr(), result.model);
    CHECK(continued.model.stages().size() == result.model.stages().size() + 2);
    CHECK(continued.info.objective <= result.info.objective * (1 + 1e-6));
  }
  CHECK_THROWS_AS(CalibratedLS(LeastSquares{}, NoPenalty{}, CalibratedLSOptions{.calibration_degree = 0}),
                  std::invalid_argument);
}

TEMPLATE_TEST_CASE("Stagewise: monotone training loss, save/load reproduces predictions", "[gls][stagewise]",
                   SPARSEMC_TEST_SCALARS) {
  using Scalar = TestType;
  const PlantedProblem<Scalar> data(sanitizer_run() ? 80 : 300, 30, 4, 0.5, 31, false);
  const auto check_monotone = [](const History& h) {
    for (std::size_t e = 1; e < h.epochs.size(); ++e)
      CHECK(h.epochs[e].objective <= h.epochs[e - 1].objective * (1 + 1e-6));
  };
  const auto check_roundtrip = [&](const StagedModel<Scalar>& model) {
    const std::string text = io::format_staged_model(model);
    const auto loaded = io::parse_staged_model<Scalar>(text, "memory");
    CHECK(io::format_staged_model(loaded) == text);
    const auto a = model.decision_function(data.csr().X);
    const auto b = loaded.decision_function(data.csr().X);
    CHECK(a == b);  // bit for bit: the random features are regenerated from their seed
    CHECK(model.predict(data.csr().X) == loaded.predict(data.csr().X));
    const auto dense = loaded.decision_function(DenseRowView<Scalar>(data.dense.data(), data.dense.rows(), data.dense.cols()));
    CHECK((dense - a).norm() <= (std::is_same_v<Scalar, float> ? 1e-3 : 1e-9) * std::max<double>(1.0, a.norm()));
    // Relabelling names the classes in every stage and leaves the scores alone.
    auto named = loaded;
    std::vector<Label> labels(static_cast<std::size_t>(model.n_classes()));
    for (std::size_t k = 0; k < labels.size(); ++k) labels[k] = 10 * static_cast<Label>(k) + 7;
    named.set_labels(labels);
    CHECK(named.labels() == labels);
    for (const auto& stage : named.stages()) CHECK(stage.linear.labels() == labels);
    CHECK(named.decision_function(data.csr().X) == a);
    CHECK_THROWS_AS(named.set_labels(std::vector<Label>(labels.size(), 1)), std::invalid_argument);
    CHECK_THROWS_AS(named.set_labels({1}), std::invalid_argument);
    CHECK(named.labels() == labels);
  };
  for (const auto features : {StagewiseFeatures::rff, StagewiseFeatures::sample_without_replacement,
                              StagewiseFeatures::sample_with_replacement, StagewiseFeatures::most_frequent_first}) {
    CAPTURE(static_cast<int>(features));
    const StagewiseOptions options{.max_epochs = 4, .seed = 5, .fit_intercept = true, .block_size = 12, .features = features};
    History h1, h2, h3;
    const auto linear = Stagewise(LeastSquares{}, NoPenalty{.mu = 1e-4}, options).fit(data.csr(), h1);
    auto calibrated_options = options;
    calibrated_options.calibrate = true;
    const auto calibrated = Stagewise(LeastSquares{}, NoPenalty{.mu = 1e-4}, calibrated_options).fit(data.csr(), h2);
    auto logistic_options = options;
    logistic_options.inner_epochs = 10;
    const auto logistic = Stagewise(Logistic{}, NoPenalty{.mu = 1e-4}, logistic_options).fit(data.dense_problem(), h3);
    // Stagewise fits its own staged model, not (1) over X: no certificate of (1) is claimed.
    CHECK(std::isnan(logistic.info.relative_gap));
    CHECK(std::isnan(linear.info.duality_gap));
    for (const auto* h : {&h1, &h2, &h3}) {
      REQUIRE(h->epochs.size() == 4);
      check_monotone(*h);
    }
    CHECK(linear.model.stages().size() == 4);
    CHECK(linear.model.provenance().solver == "stagewise");
    check_roundtrip(linear.model);
    check_roundtrip(calibrated.model);
    check_roundtrip(logistic.model);
    // The model's predictions are the training predictions: same square loss as reported.
    const auto Yhat = linear.model.decision_function(data.csr().X);
    double E = 0;
    for (Eigen::Index i = 0; i < Yhat.rows(); ++i) {
      Eigen::Matrix<Scalar, 1, Eigen::Dynamic> r = Yhat.row(i);
      r[data.labels.view().single(static_cast<std::size_t>(i))] -= 1;
      E += 0.5 * static_cast<double>(r.squaredNorm());
    }
    CHECK(rel(E / static_cast<double>(Yhat.rows()), linear.info.objective) <= (std::is_same_v<Scalar, float> ? 1e-3 : 1e-9));
  }
  // One block holding every feature is the ridge regression of GLS's identity link.
  const StagewiseOptions all{.max_epochs = 1, .block_size = 30, .features = StagewiseFeatures::sample_without_replacement};
  const auto one = Stagewise(LeastSquares{}, NoPenalty{.mu = 1e-3}, all).fit(data.csr());
  const auto ridge = GLS(LeastSquares{}, NoPenalty{.mu = 1e-3}).fit(data.csr());
  // Stagewise reports the loss part; GLS reports (1), the ridge term included.
  const double ridge_term = 0.5e-3 * static_cast<double>(one.model.stages()[0].linear.weights().squaredNorm());
  CHECK(rel(one.info.objective + ridge_term, ridge.info.objective) <= (std::is_same_v<Scalar, float> ? 1e-4 : 1e-10));
  CHECK((one.model.stages()[0].linear.dense() - ridge.model.dense()).norm() <=
        (std::is_same_v<Scalar, float> ? 1e-3 : 1e-9) * ridge.model.dense().norm());
  // Calibrated LS models round-trip too; a damaged file is reported with its position.
  const auto cal = CalibratedLS(LeastSquares{}, NoPenalty{.mu = 1e-4}, CalibratedLSOptions{.max_epochs = 3}).fit(data.csr());
  check_roundtrip(cal.model);
  std::string text = io::format_staged_model(cal.model);
  text.replace(text.find("calibration 13"), 14, "calibration 12");
  CHECK_THROWS_AS(io::parse_staged_model<Scalar>(text, "bad"), io::ParseError);
  CHECK_THROWS_AS(Stagewise(Logistic{}, NoPenalty{}, StagewiseOptions{.calibrate = true}), std::invalid_argument);
  CHECK_THROWS_AS(Stagewise(LeastSquares{}, NoPenalty{}, StagewiseOptions{.block_size = 0}), std::invalid_argument);
}
