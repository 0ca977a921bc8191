// Objective (1) pieces (solver/objective.hpp) against brute-force dense computation and finite
// differences; λ_max; ProxGradient (FISTA) optimality, warm start, intercept, reproducibility,
// float/double, CSC/CSR, allocation-free iterations, options; real data (dna).

// Iterations must not allocate (the probe: alloc_probe.hpp, first, before any Eigen include).
#include "alloc_probe.hpp"
#include "random_problem.hpp"
#include "skip.hpp"
#include "test_scalars.hpp"

#include <catch2/catch.hpp>

#include <Eigen/Eigenvalues>

#include <sparsemc/core/rng.hpp>
#include <sparsemc/data/dataset.hpp>
#include <sparsemc/data/dense_problem.hpp>
#include <sparsemc/io/libsvm_reader.hpp>
#include <sparsemc/loss/losses.hpp>
#include <sparsemc/penalty/penalties.hpp>
#include <sparsemc/solver/duality_gap.hpp>
#include <sparsemc/solver/fista/prox_gradient.hpp>
#include <sparsemc/solver/objective.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <limits>
#include <new>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

using namespace sparsemc;

// ------------------------------------------------------------------------------------------------
// Random problems and brute-force references.
// ------------------------------------------------------------------------------------------------
namespace {

template <class Scalar>
using Dense = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>;

using sparsemc_test::RandomProblem;

/// X of a random problem as a dense double matrix (the textbook formulas' input).
template <class Scalar, class Index, int Order>
Dense<double> dense_of(const RandomProblem<Scalar, Index, Order>& rp) {
  return Dense<double>(rp.A.template cast<double>());
}

/// ℓ(s, y) by the textbook formula, in double, for each loss (independent of loss/).
template <class Loss>
double brute_loss(const Eigen::VectorXd& s, ClassIndex y) {
  const auto K = s.size();
  double out = 0;
  if constexpr (std::is_same_v<Loss, SquaredHinge>) {
    for (Eigen::Index r = 0; r < K; ++r)
      if (r != y) out += std::pow(std::max(0.0, 1 - s[y] + s[r]), 2);
  } else if constexpr (std::is_same_v<Loss, HuberHinge>) {  // the default width δ = 1
    for (Eigen::Index r = 0; r < K; ++r) {
      const double z = 1 - s[y] + s[r];
      if (r != y) out += z <= 0 ? 0.0 : z <= 1 ? 0.5 * z * z : z - 0.5;
    }
  } else if constexpr (std::is_same_v<Loss, OvrSquaredHinge>) {
    for (Eigen::Index r = 0; r < K; ++r) out += std::pow(std::max(0.0, 1 - (r == y ? 1.0 : -1.0) * s[r]), 2);
  } else if constexpr (std::is_same_v<Loss, Logistic>) {
    out = std::log(s.array().exp().sum()) - s[y];
  } else if constexpr (std::is_same_v<Loss, LeastSquares>) {
    Eigen::VectorXd e = Eigen::VectorXd::Zero(K);
    e[y] = 1;
    out = 0.5 * (s - e).squaredNorm();
  } else if constexpr (std::is_same_v<Loss, CrammerSinger>) {
    double m = -std::numeric_limits<double>::infinity();
    for (Eigen::Index r = 0; r < K; ++r)
      if (r != y) m = std::max(m, s[r]);
    out = std::max(0.0, 1 + m - s[y]);
  } else {
    static_assert(sizeof(Loss) == 0, "brute_loss: no textbook formula for this loss");
  }
  return out;
}

/// λR(W) + μ/2‖W‖² by the textbook formula, in double.
template <class Penalty>
double brute_penalty(const Penalty& p, const Dense<double>& W) {
  double r = 0;
  if constexpr (Penalty::name == "l1") r = W.cwiseAbs().sum();
  else if constexpr (Penalty::name == "l1l2") r = W.rowwise().norm().sum();
  else if constexpr (Penalty::name == "l1linf") r = W.cwiseAbs().rowwise().maxCoeff().sum();
  return p.lambda * r + 0.5 * p.mu * W.squaredNorm();
}

/// F of (1) at a model by the textbook formulas in double (independent of objective.hpp).
template <class Loss, class Penalty, class Scalar, class Index, int Order>
double brute_objective(const RandomProblem<Scalar, Index, Order>& rp, const Penalty& penalty,
                       const LinearModel<Scalar>& model) {
  const auto problem = rp.problem();
  const Dense<double> X = dense_of(rp);
  const Dense<double> W = model.dense().template cast<double>();
  Dense<double> S = X * W;
  if (model.has_intercept()) S.rowwise() += model.intercept().template cast<double>().transpose();
  double loss = 0;
  for (Eigen::Index i = 0; i < X.rows(); ++i)
    loss += double(problem.weight(static_cast<Index>(i))) *
            brute_loss<Loss>(S.row(i).transpose(), problem.y.single(static_cast<std::size_t>(i)));
  return loss / double(X.rows()) + brute_penalty(penalty, W);
}

template <class Scalar>
double rel(double a, double b) {
  return std::abs(a - b) / std::max({std::abs(a), std::abs(b), 1e-300});
}

template <class Scalar>
constexpr double eps_of() {
  return std::is_same_v<Scalar, float> ? 1e-5 : 1e-12;
}

}  // namespace

using Layouts = sparsemc_test::SolverTestTypes<
    std::tuple<std::tuple<float, std::int32_t, std::integral_constant<int, Eigen::ColMajor>>,
               std::tuple<float, std::int64_t, std::integral_constant<int, Eigen::RowMajor>>,
               std::tuple<double, std::int32_t, std::integral_constant<int, Eigen::RowMajor>>,
               std::tuple<double, std::int64_t, std::integral_constant<int, Eigen::ColMajor>>>>;

// ------------------------------------------------------------------------------------------------
// Objective pieces.
// ------------------------------------------------------------------------------------------------

/// F, scores and parts against dense Eigen for one loss and every penalty.
template <class Loss, class Scalar, class Index, int Order>
void check_objective_against_dense() {
  const ClassIndex K = 4;
  RandomProblem<Scalar, Index, Order> rp(37, 15, K, 0.3, 11, true);
  const auto problem = rp.problem();
  const Dense<double> X = dense_of(rp);
  Rng rng(5);
  ClassMatrix<Scalar> W(15, K);
  for (Eigen::Index j = 0; j < W.rows(); ++j)
    for (Eigen::Index k = 0; k < K; ++k) W(j, k) = (j % 3 == 1) ? Scalar(0) : static_cast<Scalar>(uniform_real(rng) - 0.5);
  ClassVector<Scalar> b(K);
  for (Eigen::Index k = 0; k < K; ++k) b[k] = static_cast<Scalar>(uniform_real(rng) - 0.5);

  // Scores, dense and through the LinearModel.
  const Dense<double> Wd = W.template cast<double>();
  const Dense<double> Sd = (X * Wd).rowwise() + b.template cast<double>().transpose();
  ClassMatrix<Scalar> S, S_model;
  compute_scores(problem, W, b, S);
  const LinearModel<Scalar> model(W, b, std::vector<Label>{1, 2, 3, 4});
  compute_scores(problem, model, S_model);
  REQUIRE(model.nnz_rows() == 10);
  CHECK((S.template cast<double>() - Sd).cwiseAbs().maxCoeff() <= 100 * eps_of<Scalar>());
  CHECK((S_model.template cast<double>() - Sd).cwiseAbs().maxCoeff() <= 100 * eps_of<Scalar>());

  // The loss part.
  double L_dense = 0;
  for (Eigen::Index i = 0; i < X.rows(); ++i)
    L_dense += double(problem.weight(static_cast<Index>(i))) * brute_loss<Loss>(Sd.row(i).transpose(), problem.y.single(static_cast<std::size_t>(i)));
  L_dense /= double(X.rows());
  CHECK(rel<Scalar>(loss_value(Loss{}, problem, S), L_dense) <= 10 * eps_of<Scalar>());

  // Penalties and F, for the dense W overload and the LinearModel overload.
  auto one = [&](const auto& penalty) {
    const double expected_penalty = brute_penalty(penalty, Wd);
    const auto value = objective(Loss{}, penalty, problem, W, b, S);
    const auto value_model = objective(Loss{}, penalty, problem, model);
    INFO(Loss::name << " × " << penalty.name);
    CHECK(rel<Scalar>(value.penalty, expected_penalty) <= 10 * eps_of<Scalar>());
    CHECK(rel<Scalar>(value.total(), L_dense + expected_penalty) <= 10 * eps_of<Scalar>());
    CHECK(rel<Scalar>(value_model.total(), L_dense + expected_penalty) <= 10 * eps_of<Scalar>());
  };
  one(NoPenalty{.lambda = 0, .mu = 0.3});
  one(L1{.lambda = 0.05, .mu = 0.1});
  one(L1L2{.lambda = 0.07, .mu = 0.0});
  one(L1Linf{.lambda = 0.04, .mu = 0.2});
}

TEMPLATE_LIST_TEST_CASE("objective (1): scores, loss and penalty parts match a dense computation", "[objective]", Layouts) {
  using Scalar = std::tuple_element_t<0, TestType>;
  using Index = std::tuple_element_t<1, TestType>;
  constexpr int Order = std::tuple_element_t<2, TestType>::value;
  check_objective_against_dense<SquaredHinge, Scalar, Index, Order>();
  check_objective_against_dense<OvrSquaredHinge, Scalar, Index, Order>();
  check_objective_against_dense<Logistic, Scalar, Index, Order>();
  check_objective_against_dense<LeastSquares, Scalar, Index, Order>();
  check_objective_against_dense<CrammerSinger, Scalar, Index, Order>();
}

/// ∇_W L and ∇_b L against central finite differences of the loss part (double).
template <class Loss, int Order>
void check_gradient_fd() {
  const ClassIndex K = 3;
  RandomProblem<double, std::int32_t, Order> rp(29, 9, K, 0.4, 21, true);
  const auto problem = rp.problem();
  Rng rng(8);
  ClassMatrix<double> W(9, K);
  for (auto& v : W.reshaped()) v = uniform_real(rng) - 0.5;
  ClassVector<double> b(K);
  for (auto& v : b) v = uniform_real(rng) - 0.5;
  ClassMatrix<double> S, D, G;
  ClassVector<double> gb;
  compute_scores(problem, W, b, S);
  const double L = loss_score_gradient(Loss{}, problem, S, D);
  CHECK(rel<double>(L, loss_value(Loss{}, problem, S)) <= 1e-14);
  weight_gradient(problem, D, G);
  intercept_gradient(D, gb);
  const double h = 1e-6;
  auto loss_at = [&](const ClassMatrix<double>& W_, const ClassVector<double>& b_) {
    ClassMatrix<double> S_;
    compute_scores(problem, W_, b_, S_);
    return loss_value(Loss{}, problem, S_);
  };
  double worst = 0;
  for (Eigen::Index j = 0; j < W.rows(); ++j)
    for (Eigen::Index k = 0; k < K; ++k) {
      ClassMatrix<double> Wp = W, Wm = W;
      Wp(j, k) += h;
      Wm(j, k) -= h;
      const double fd = (loss_at(Wp, b) - loss_at(Wm, b)) / (2 * h);
      worst = std::max(worst, std::abs(fd - G(j, k)));
    }
  for (Eigen::Index k = 0; k < K; ++k) {
    ClassVector<double> bp = b, bm = b;
    bp[k] += h;
    bm[k] -= h;
    const double fd = (loss_at(W, bp) - loss_at(W, bm)) / (2 * h);
    worst = std::max(worst, std::abs(fd - gb[k]));
  }
  INFO(Loss::name);
  CHECK(worst <= 1e-7 * std::max(1.0, G.cwiseAbs().maxCoeff()));
}

TEST_CASE("the gradient of the loss part matches finite differences", "[objective]") {
  check_gradient_fd<SquaredHinge, Eigen::ColMajor>();
  check_gradient_fd<OvrSquaredHinge, Eigen::RowMajor>();
  check_gradient_fd<Logistic, Eigen::ColMajor>();
  check_gradient_fd<Logistic, Eigen::RowMajor>();
  check_gradient_fd<LeastSquares, Eigen::RowMajor>();
}

TEST_CASE("zero-weight samples are skipped and the Lipschitz estimate bounds the curvature", "[objective]") {
  RandomProblem<double, std::int32_t, Eigen::RowMajor> rp(50, 12, 3, 0.3, 4, true);
  rp.weights[3] = 0;
  const auto problem = rp.problem();
  // ‖X̃ᵀCX̃/n‖₂ against Eigen's dense eigen-solver.
  Dense<double> X = dense_of(rp);
  Dense<double> Xt(X.rows(), X.cols() + 1);
  Xt << X, Eigen::VectorXd::Ones(X.rows());
  Eigen::VectorXd c(X.rows());
  for (Eigen::Index i = 0; i < c.size(); ++i) c[i] = rp.weights[static_cast<std::size_t>(i)];
  for (bool with_intercept : {false, true}) {
    const Dense<double> A = with_intercept ? Xt : X;
    const Dense<double> gram = A.transpose() * c.asDiagonal() * A / double(X.rows());
    const double exact = Eigen::SelfAdjointEigenSolver<Dense<double>>(gram).eigenvalues().maxCoeff();
    const double estimate = weighted_gram_norm(problem, with_intercept, 0, 1000);
    CHECK(estimate <= exact * (1 + 1e-12));
    CHECK(estimate >= exact * (1 - 1e-3));
  }
}

// ------------------------------------------------------------------------------------------------
// λ_max and the intercept-only model.
// ------------------------------------------------------------------------------------------------

template <class Loss, class Penalty>
void check_lambda_max(bool fit_intercept) {
  RandomProblem<double, std::int32_t, Eigen::ColMajor> rp(80, 20, 4, 0.3, 31, true);
  const auto problem = rp.problem();
  const Loss loss;
  const double lmax = lambda_max(loss, Penalty{.lambda = 1, .mu = 0}, problem, fit_intercept);
  REQUIRE(lmax > 0);
  const ClassMatrix<double> zero = ClassMatrix<double>::Zero(20, 4);
  const ClassVector<double> b = fit_intercept ? optimal_intercept(loss, problem) : ClassVector<double>();
  const auto at = [&](double lambda) {
    return optimality_violation(loss, Penalty{.lambda = lambda, .mu = 0.01}, problem, zero, b, fit_intercept);
  };
  INFO(Loss::name << " × " << Penalty::name << " intercept " << fit_intercept);
  const auto optimal = at(lmax);
  CHECK(optimal.total() <= 1e-10 * lmax);
  const auto not_optimal = at(0.9 * lmax);
  CHECK(not_optimal.max_row >= 0.04 * lmax);  // ≥ 0.1 λ_max / √K for every penalty (K = 4)
  // And the solver agrees: at λ_max it stays at W = 0.
  // The certificate bounds F − F*, not the support: with an intercept, b moves from 0 to b* and
  // W picks up rows on the way, which the prox removes again as b settles (the margin is only
  // 10⁻⁶λ); at a relative gap of 10⁻¹³ what is left is below 10⁻⁶.
  const ProxGradient solver(loss, Penalty{.lambda = lmax * (1 + 1e-6), .mu = 0.01},
                            ProxGradientOptions{.tol = 1e-13, .fit_intercept = fit_intercept});
  const auto result = solver.fit(problem);
  CHECK(result.model.dense().cwiseAbs().maxCoeff() <= 1e-6);
  if (!fit_intercept) CHECK(result.model.nnz_rows() == 0);
  CHECK(result.info.status == Status::converged);
}

TEST_CASE("lambda_max: W = 0 is optimal at lambda_max and not at 0.9 lambda_max", "[objective][lambda_max]") {
  for (bool intercept : {false, true}) {
    check_lambda_max<Logistic, L1>(intercept);
    check_lambda_max<Logistic, L1L2>(intercept);
    check_lambda_max<SquaredHinge, L1L2>(intercept);
    check_lambda_max<OvrSquaredHinge, L1>(intercept);
    check_lambda_max<LeastSquares, L1L2>(intercept);
    check_lambda_max<Logistic, L1Linf>(intercept);
    check_lambda_max<SquaredHinge, L1Linf>(intercept);
  }
}

TEST_CASE("optimal_intercept zeroes the intercept gradient of the intercept-only model", "[objective]") {
  RandomProblem<double, std::int32_t, Eigen::RowMajor> rp(300, 5, 5, 0.3, 41, true);
  const auto problem = rp.problem();
  auto check = [&](const auto& loss) {
    const ClassVector<double> b = optimal_intercept(loss, problem);
    ClassMatrix<double> S(problem.n_samples(), 5), D;
    S.rowwise() = b.transpose();
    loss_score_gradient(loss, problem, S, D);
    ClassVector<double> g;
    intercept_gradient(D, g);
    S.setZero();
    loss_score_gradient(loss, problem, S, D);
    ClassVector<double> g0;
    intercept_gradient(D, g0);
    INFO(loss.name);
    CHECK(g.norm() <= 1e-10 * g0.norm());
  };
  check(Logistic{});
  check(SquaredHinge{});
  check(OvrSquaredHinge{});
  check(LeastSquares{});
  // Logistic: softmax(b*) is the weighted class frequency.
  const ClassVector<double> b = optimal_intercept(Logistic{}, problem);
  Eigen::VectorXd freq = Eigen::VectorXd::Zero(5);
  for (std::size_t i = 0; i < problem.y.size(); ++i) freq[problem.y.single(i)] += rp.weights[i];
  freq /= freq.sum();
  const Eigen::VectorXd p = b.array().exp() / b.array().exp().sum();
  CHECK((p - freq).cwiseAbs().maxCoeff() <= 1e-12);
}

// ------------------------------------------------------------------------------------------------
// ProxGradient.
// ------------------------------------------------------------------------------------------------

/// Fits and checks: KKT violation relative to W = 0's, objective against the report, the
/// intercept gradient, a warm start from the optimum, and that F never rose above F(0).
template <class Loss, class Penalty, class Scalar, class Index, int Order>
void check_fista(const Penalty& penalty, bool fit_intercept, double tol, double kkt_tol) {
  const ClassIndex K = 5;
  RandomProblem<Scalar, Index, Order> rp(150, 40, K, 0.2, 51, true);
  const auto problem = rp.problem();
  const Loss loss;
  const ProxGradient solver(loss, penalty, ProxGradientOptions{.tol = tol, .max_epochs = 20000, .fit_intercept = fit_intercept});
  History history;
  const auto result = solver.fit(problem, history);
  INFO(Loss::name << " × " << Penalty::name << " intercept " << fit_intercept << " epochs " << result.info.epochs
                  << " relative gap " << result.info.relative_gap << " measure " << result.info.measure);
  REQUIRE(result.info.status == Status::converged);
  CHECK(result.info.relative_gap <= tol);
  CHECK(result.info.duality_gap >= 0);
  CHECK(result.info.measure_name == "gradient_mapping");
  CHECK(result.info.measure >= 0);
  CHECK(result.model.provenance().solver == "fista");
  CHECK(result.model.has_intercept() == fit_intercept);

  const ClassMatrix<Scalar> W = result.model.dense();
  const ClassVector<Scalar> b = fit_intercept ? result.model.intercept() : ClassVector<Scalar>();
  const auto kkt = optimality_violation(loss, penalty, problem, W, b, fit_intercept);
  const ClassMatrix<Scalar> zero = ClassMatrix<Scalar>::Zero(W.rows(), K);
  const ClassVector<Scalar> zero_b = ClassVector<Scalar>::Zero(fit_intercept ? K : 0);
  const auto kkt0 = optimality_violation(loss, penalty, problem, zero, zero_b, fit_intercept);
  CHECK(kkt.total() <= kkt_tol * kkt0.total());
  if (fit_intercept) CHECK(kkt.intercept <= kkt_tol * kkt0.total());

  // The reported objective is (1) at the returned model (recomputed by the textbook formulas).
  const double F = brute_objective<Loss>(rp, penalty, result.model);
  CHECK(rel<Scalar>(F, result.info.objective) <= 10 * eps_of<Scalar>());
  CHECK(result.info.nnz_rows == result.model.nnz_rows());

  // Monotone-ish: never above F(0), and uphill steps (each followed by a restart) are rare.
  ClassMatrix<Scalar> scores;
  const double F0 = objective(loss, penalty, problem, zero, zero_b, scores).total();
  std::int64_t uphill = 0;
  for (std::size_t k = 0; k < history.epochs.size(); ++k) {
    CHECK(history.epochs[k].objective <= F0 * (1 + 1e-6));
    const double noise = 100 * std::numeric_limits<Scalar>::epsilon() * std::abs(history.epochs[k].objective);
    if (k > 0 && history.epochs[k].objective > history.epochs[k - 1].objective + noise) ++uphill;
  }
  CHECK(uphill <= static_cast<std::int64_t>(history.epochs.size()) / 5 + 1);

  // A warm start from the optimum is certified before the first iteration.
  const auto warm = solver.fit(problem, result.model);
  CHECK(warm.info.status == Status::converged);
  CHECK(warm.info.epochs == 0);
  CHECK(rel<Scalar>(warm.info.objective, result.info.objective) <= 10 * eps_of<Scalar>());
}

TEMPLATE_LIST_TEST_CASE("ProxGradient reaches a KKT point for every smooth loss and penalty", "[fista]", Layouts) {
  using Scalar = std::tuple_element_t<0, TestType>;
  using Index = std::tuple_element_t<1, TestType>;
  constexpr int Order = std::tuple_element_t<2, TestType>::value;
  const bool is_float = std::is_same_v<Scalar, float>;
  // tol bounds the relative duality gap; the KKT residual scales like its square root
  // (‖∇‖ ≈ √(2σ·gap)): measured ≤ 2·10⁻⁶ relative at gaps of 10⁻¹¹–10⁻¹² here in double, and
  // ≤ 6·10⁻³ at 3·10⁻⁵ in float.
  const double tol = is_float ? 1e-5 : 1e-12;
  const double kkt = is_float ? 1e-2 : 5e-6;
  for (bool intercept : {false, true}) {
    check_fista<Logistic, L1L2, Scalar, Index, Order>({.lambda = 2e-2, .mu = 1e-3}, intercept, tol, kkt);
    check_fista<Logistic, L1, Scalar, Index, Order>({.lambda = 5e-3, .mu = 0}, intercept, tol, kkt);
    check_fista<Logistic, NoPenalty, Scalar, Index, Order>({.lambda = 0, .mu = 1e-2}, intercept, tol, kkt);
    check_fista<SquaredHinge, L1L2, Scalar, Index, Order>({.lambda = 5e-2, .mu = 0}, intercept, tol, kkt);
    check_fista<OvrSquaredHinge, L1, Scalar, Index, Order>({.lambda = 2e-2, .mu = 1e-3}, intercept, tol, kkt);
    check_fista<LeastSquares, L1L2, Scalar, Index, Order>({.lambda = 1e-2, .mu = 0}, intercept, tol, kkt);
    check_fista<Logistic, L1Linf, Scalar, Index, Order>({.lambda = 1e-2, .mu = 1e-3}, intercept, tol, kkt);
    check_fista<SquaredHinge, L1Linf, Scalar, Index, Order>({.lambda = 3e-2, .mu = 0}, intercept, tol, kkt);
    check_fista<OvrSquaredHinge, NoPenalty, Scalar, Index, Order>({.lambda = 0, .mu = 1e-2}, intercept, tol, kkt);
  }
}

TEST_CASE("ProxGradient: CSC and CSR, float and double, reruns and restart schemes agree", "[fista]") {
  RandomProblem<double, std::int32_t, Eigen::RowMajor> csr(200, 60, 4, 0.15, 61, false);
  const auto A_csc = to_csc(CsrView<double>(csr.A));
  const CscProblem<double> csc{CscView<double>(A_csc), csr.labels.view(), {}};
  const L1L2 penalty{.lambda = 1e-2, .mu = 1e-4};
  const ProxGradient solver(Logistic{}, penalty, ProxGradientOptions{.tol = 1e-10, .fit_intercept = true});
  const auto a = solver.fit(csr.problem());
  const auto b = solver.fit(csc);
  REQUIRE(a.info.status == Status::converged);
  REQUIRE(b.info.status == Status::converged);
  CHECK(rel<double>(a.info.objective, b.info.objective) <= 1e-12);
  CHECK((a.model.dense() - b.model.dense()).cwiseAbs().maxCoeff() <= 1e-6);

  // Bit-for-bit reproducible.
  const auto again = solver.fit(csr.problem());
  CHECK(again.model.dense() == a.model.dense());
  CHECK(again.model.intercept() == a.model.intercept());
  CHECK(again.info.epochs == a.info.epochs);

  // Every restart scheme and step rule reaches the same optimum, within the two certificates.
  for (auto scheme : {RestartScheme::none, RestartScheme::function, RestartScheme::gradient})
    for (double decrease : {1.0, 0.9, 0.5}) {
      const ProxGradient other(Logistic{}, penalty,
                               ProxGradientOptions{.tol = 1e-10, .fit_intercept = true, .restart = scheme, .step_decrease = decrease});
      const auto c = other.fit(csr.problem());
      INFO("scheme " << int(scheme) << " decrease " << decrease);
      CHECK(c.info.status == Status::converged);
      CHECK(std::abs(c.info.objective - a.info.objective) <= std::max(c.info.duality_gap, a.info.duality_gap));
    }

  // Float: the same optimum to float accuracy.
  const Eigen::SparseMatrix<float, Eigen::RowMajor, std::int32_t> Af = csr.A.cast<float>();
  const CsrProblem<float> fproblem{CsrView<float>(Af), csr.labels.view(), {}};
  const ProxGradient fsolver(Logistic{}, penalty, ProxGradientOptions{.tol = 1e-4, .fit_intercept = true});
  const auto f = fsolver.fit(fproblem);
  CHECK(f.info.status == Status::converged);
  CHECK(rel<double>(f.info.objective, a.info.objective) <= 1e-5);
}

TEST_CASE("ProxGradient on a dense X: the sparse fit's optimum and certificate, at any thread count", "[fista][dense]") {
  // A dense design with exact zeros, so the per-sample rescaling (G3) of the certificate walks
  // both kinds of entries; the same matrix as CSR is the reference.
  RandomProblem<double, std::int32_t, Eigen::RowMajor> csr(240, 50, 5, 0.3, 67, false);
  const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> X = Eigen::MatrixXd(csr.A);
  const DenseProblem<double> dense{{X.data(), X.rows(), X.cols()}, csr.labels.view(), {}};
  for (const auto& [name, fit] : std::vector<std::pair<std::string, std::function<void(int, double&, double&)>>>{
           {"logistic + l1l2", [&](int threads, double& sparse_F, double& dense_F) {
              const ProxGradient solver(Logistic{}, L1L2{.lambda = 1e-2, .mu = 1e-4},
                                        ProxGradientOptions{.tol = 1e-10, .fit_intercept = true, .threads = threads});
              const auto a = solver.fit(csr.problem());
              const auto b = solver.fit(dense);
              REQUIRE(b.info.status == Status::converged);
              CHECK(b.info.relative_gap <= 1e-10);
              CHECK((a.model.dense() - b.model.dense()).cwiseAbs().maxCoeff() <= 1e-6);
              sparse_F = a.info.objective, dense_F = b.info.objective;
            }},
           {"squared hinge + l1 (mu = 0)", [&](int threads, double& sparse_F, double& dense_F) {
              const ProxGradient solver(SquaredHinge{}, L1{.lambda = 2e-2},
                                        ProxGradientOptions{.tol = 1e-9, .threads = threads});
              const auto a = solver.fit(csr.problem());
              const auto b = solver.fit(dense);
              REQUIRE(b.info.status == Status::converged);
              CHECK(b.info.relative_gap <= 1e-9);
              sparse_F = a.info.objective, dense_F = b.info.objective;
            }}}) {
    INFO(name);
    double sparse_one = 0, dense_one = 0, sparse_two = 0, dense_two = 0;
    fit(1, sparse_one, dense_one);
    fit(2, sparse_two, dense_two);
    CHECK(rel<double>(dense_one, sparse_one) <= 1e-9);
    CHECK(rel<double>(dense_two, dense_one) <= 1e-12);
  }

  // The shared certificate on the dense problem equals the sparse one at the same W.
  const L1L2 penalty{.lambda = 1e-2, .mu = 0.0};
  const ClassMatrix<double> W = ClassMatrix<double>::Constant(50, 5, 0.01);
  const ClassVector<double> b = ClassVector<double>::Zero(5);
  GapWorkspace<double> work;
  const DualityGap sparse_gap = duality_gap(Logistic{}, penalty, csr.problem(), W, b, true, work);
  const DualityGap dense_gap = duality_gap(Logistic{}, penalty, dense, W, b, true, work);
  CHECK(rel<double>(dense_gap.primal, sparse_gap.primal) <= 1e-12);
  CHECK(rel<double>(dense_gap.dual, sparse_gap.dual) <= 1e-12);

  // Float: the dense float fit reaches the double optimum to float accuracy.
  const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> Xf = X.cast<float>();
  const DenseProblem<float> dense_float{{Xf.data(), Xf.rows(), Xf.cols()}, csr.labels.view(), {}};
  const ProxGradient solver(Logistic{}, L1L2{.lambda = 1e-2, .mu = 1e-4}, ProxGradientOptions{.tol = 1e-4, .fit_intercept = true});
  const auto f = solver.fit(dense_float);
  const auto reference = solver.fit(csr.problem());
  CHECK(f.info.status == Status::converged);
  CHECK(rel<double>(f.info.objective, reference.info.objective) <= 1e-4);
}

TEST_CASE("ProxGradient iterations allocate nothing", "[fista]") {
  RandomProblem<double, std::int64_t, Eigen::ColMajor> rp(120, 30, 4, 0.2, 71, true);
  const auto problem = rp.problem();
  // One window per iteration, the first included: neither the iteration nor the duality gap it
  // may evaluate allocates (the engine sizes the gap's work space in its setup).
  struct Probe {
    long new_calls = 0, eigen_mallocs = 0, windows = 0, gaps = 0;
    void begin() { alloc_probe::open_window(); }
    bool end_epoch(const EpochReport& r) {
      if (alloc_probe::window_open) {
        alloc_probe::close_window();
        new_calls += alloc_probe::new_calls.load();
        eigen_mallocs += alloc_probe::eigen_mallocs.load();
        ++windows;
        if (!std::isnan(r.relative_gap)) ++gaps;
      }
      if (r.epoch == 30) return true;
      alloc_probe::open_window();
      return false;
    }
  };
  auto check = [&](const auto& solver) {
    Probe probe;
    const auto result = solver.fit(problem, probe);
    INFO(solver.loss().name << " × " << solver.penalty().name);
    CHECK(result.info.status == Status::stopped_by_callback);
    CHECK(result.info.epochs == 30);
    CHECK(probe.windows == 30);
    CHECK(probe.gaps >= 3);  // GapSchedule's fallbacks at least: epochs 4, 12 and 28
    CHECK(probe.new_calls == 0);
    CHECK(probe.eigen_mallocs == 0);
  };
  const ProxGradientOptions options{.tol = 1e-14, .fit_intercept = true};
  check(ProxGradient(Logistic{}, L1L2{.lambda = 1e-3, .mu = 1e-3}, options));
  check(ProxGradient(SquaredHinge{}, L1Linf{.lambda = 1e-3, .mu = 0}, options));
  check(ProxGradient(OvrSquaredHinge{}, L1{.lambda = 1e-3, .mu = 1e-4}, options));
}

TEST_CASE("ProxGradient options, budgets and bad input", "[fista]") {
  RandomProblem<double, std::int32_t, Eigen::RowMajor> rp(60, 10, 3, 0.3, 81, false);
  const auto problem = rp.problem();
  using Solver = ProxGradient<Logistic, L1L2>;
  const L1L2 penalty{.lambda = 1e-3, .mu = 1e-3};
  auto message = [&](ProxGradientOptions o) {
    try {
      Solver(Logistic{}, penalty, o);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no exception");
  };
  CHECK_THAT(message({.tol = -1}), Catch::Contains("tol"));
  CHECK_THAT(message({.max_epochs = 0}), Catch::Contains("max_epochs"));
  CHECK_THAT(message({.time_limit = -1}), Catch::Contains("time_limit"));
  CHECK_THAT(message({.step_increase = 1}), Catch::Contains("step_increase"));
  CHECK_THAT(message({.step_decrease = 0}), Catch::Contains("step_decrease"));
  CHECK_THAT(message({.lipschitz_scale = 0}), Catch::Contains("lipschitz_scale"));
  CHECK_THAT(message({.power_iterations = 0}), Catch::Contains("power_iterations"));

  const auto capped = Solver(Logistic{}, penalty, {.tol = 1e-14, .max_epochs = 3}).fit(problem);
  CHECK(capped.info.status == Status::max_iter);
  CHECK(capped.info.epochs == 3);
  CHECK(capped.info.measure > 0);
  CHECK(capped.model.provenance().status == "max_iter");
  // How far from certified a capped run is: the gap at the returned model, for every status.
  CHECK(capped.info.relative_gap > 1e-14);
  CHECK(std::isfinite(capped.info.duality_gap));
  GapWorkspace<double> work;
  const auto at_capped = duality_gap(Logistic{}, penalty, problem, capped.model, work);
  CHECK(rel<double>(at_capped.gap(), capped.info.duality_gap) <= 1e-12);

  struct StopAtTwo {
    bool end_epoch(const EpochReport& r) { return r.epoch == 2; }
  };
  const auto stopped = Solver(Logistic{}, penalty, {.tol = 1e-14}).fit(problem, StopAtTwo{});
  CHECK(stopped.info.status == Status::stopped_by_callback);
  CHECK(stopped.info.epochs == 2);
  CHECK(std::isfinite(stopped.info.relative_gap));

  // Without a penalty and μ = 0 there is no finite certificate: never "converged".
  const auto unregularised = ProxGradient(Logistic{}, NoPenalty{}, {.max_epochs = 50}).fit(problem);
  CHECK(unregularised.info.status == Status::max_iter);
  CHECK(unregularised.info.relative_gap > 0.5);

  // A warm start of the wrong shape is a bad argument.
  const LinearModel<double> wrong(ClassMatrix<double>::Zero(9, 3), {}, {0, 1, 2});
  CHECK_THROWS_AS(Solver(Logistic{}, penalty).fit(problem, wrong), std::invalid_argument);

  // Non-finite data is a numerical issue, not a crash or a hang.
  auto A = rp.A;
  A.valuePtr()[0] = std::numeric_limits<double>::infinity();
  const CsrProblem<double> bad{CsrView<double>(A), rp.labels.view(), {}};
  CHECK(Solver(Logistic{}, penalty).fit(bad).info.status == Status::numerical_issue);
}

// ------------------------------------------------------------------------------------------------
// Default options: every smooth loss × penalty, certified within 10⁻³ of F* (issue 15).
// ------------------------------------------------------------------------------------------------

/// Fits at default options (only the intercept set) and checks against F* of a tight double
/// solve on the same values: converged, relative gap ≤ 10⁻³, the reported gap ≥ F − F*, and
/// (F − F*)/|F*| ≤ 10⁻³, F recomputed by the textbook formulas.
template <class Loss, class Penalty, class Scalar>
void check_default_fista(const RandomProblem<Scalar, std::int32_t, Eigen::RowMajor>& rp,
                         const RandomProblem<double, std::int32_t, Eigen::RowMajor>& rp_double, Penalty penalty,
                         bool intercept) {
  if constexpr (!std::is_same_v<Penalty, NoPenalty>)
    penalty.lambda = 0.1 * lambda_max(Loss{}, penalty, rp_double.problem(), intercept);
  const auto tight = ProxGradient(Loss{}, penalty, ProxGradientOptions{.tol = 1e-10, .max_epochs = 200000,
                                                                        .fit_intercept = intercept})
                         .fit(rp_double.problem());
  const auto fit = ProxGradient(Loss{}, penalty, ProxGradientOptions{.fit_intercept = intercept}).fit(rp.problem());
  const double F_star = brute_objective<Loss>(rp_double, penalty, tight.model);
  const LinearModel<double> as_double(fit.model.dense().template cast<double>(),
                                      intercept ? ClassVector<double>(fit.model.intercept().template cast<double>())
                                                : ClassVector<double>(),
                                      fit.model.labels());
  const double F = brute_objective<Loss>(rp_double, penalty, as_double);
  INFO(Loss::name << " × " << Penalty::name << " μ " << penalty.mu << " intercept " << intercept << " n "
                  << rp.A.rows() << " d " << rp.A.cols() << " epochs " << fit.info.epochs << " gap "
                  << fit.info.duality_gap << " relative " << fit.info.relative_gap << " F " << F << " F* " << F_star);
  REQUIRE(tight.info.status == Status::converged);  // the reference is certified to 1e-10
  REQUIRE(fit.info.status == Status::converged);
  CHECK(fit.info.relative_gap <= 1e-3);
  // The gap bounds F − F*; float data and model carry rounding of ~10⁻⁶ relative.
  const double slack = std::is_same_v<Scalar, float> ? 1e-6 * std::abs(F_star) : 1e-10 * std::abs(F_star);
  CHECK(fit.info.duality_gap + slack >= F - F_star);
  CHECK((F - F_star) / std::abs(F_star) <= 1e-3);
  CHECK(F - F_star >= -slack);
}

template <class Scalar>
void check_default_fista_all(std::int32_t n, std::int32_t d, std::uint64_t seed) {
  const RandomProblem<Scalar, std::int32_t, Eigen::RowMajor> rp(n, d, 3, 0.3, seed, true);
  // The same values in double (float data cast exactly).
  RandomProblem<double, std::int32_t, Eigen::RowMajor> rp_double(1, 1, 1, 0.0, 0, false);
  rp_double.A = rp.A.template cast<double>();
  rp_double.labels = rp.labels;
  rp_double.weights.assign(rp.weights.begin(), rp.weights.end());
  auto each_penalty = [&]<class Loss>(Loss, bool intercept) {
    check_default_fista<Loss>(rp, rp_double, L1{.mu = 0}, intercept);
    check_default_fista<Loss>(rp, rp_double, L1L2{.mu = 0}, intercept);
    check_default_fista<Loss>(rp, rp_double, L1Linf{.mu = 0}, intercept);
    check_default_fista<Loss>(rp, rp_double, NoPenalty{.mu = 1e-2}, intercept);
    check_default_fista<Loss>(rp, rp_double, L1{.mu = 1e-2}, intercept);
  };
  for (const bool intercept : {false, true}) {
    each_penalty(SquaredHinge{}, intercept);
    each_penalty(HuberHinge{}, intercept);
    each_penalty(OvrSquaredHinge{}, intercept);
    each_penalty(Logistic{}, intercept);
    each_penalty(LeastSquares{}, intercept);
  }
}

TEMPLATE_TEST_CASE("ProxGradient at default options is certified within 1e-3 of F* on wide and tall problems",
                   "[fista][defaults]", SPARSEMC_TEST_SCALARS) {
  SECTION("wide (d >> n)") { check_default_fista_all<TestType>(30, 150, 91); }
  SECTION("tall (n >> d)") { check_default_fista_all<TestType>(200, 12, 92); }
}

// ------------------------------------------------------------------------------------------------
// Real data: dna (LIBSVM; n = 2000, d = 180, K = 3).
// ------------------------------------------------------------------------------------------------

TEST_CASE("ProxGradient on dna: a KKT point of logistic + group lasso, CSC and CSR", "[fista][data]") {
  const std::filesystem::path path = sparsemc_test::repo_data() / "dna.scale";
  REQUIRE(std::filesystem::exists(path));  // data/dna.scale ships with the repository
  const auto data = io::read_libsvm_plain<double>(path);
  REQUIRE(data.n_samples() == 2000);
  REQUIRE(data.n_classes() == 3);
  const auto csr = data.problem<Eigen::RowMajor>();
  const auto csc = data.problem<Eigen::ColMajor>();
  const Logistic loss;
  const double lmax = lambda_max(loss, L1L2{}, csr, true);
  const L1L2 penalty{.lambda = 0.05 * lmax, .mu = 1e-4};
  const ProxGradient solver(loss, penalty, ProxGradientOptions{.tol = 1e-8, .fit_intercept = true});
  const auto a = solver.fit(csr);
  const auto b = solver.fit(csc);
  REQUIRE(a.info.status == Status::converged);
  REQUIRE(b.info.status == Status::converged);
  CHECK(rel<double>(a.info.objective, b.info.objective) <= 1e-9);
  CHECK(a.model.nnz_rows() > 0);
  CHECK(a.model.nnz_rows() < 180);
  const auto kkt = optimality_violation(loss, penalty, csr, a.model.dense(), a.model.intercept(), true);
  const auto kkt0 = optimality_violation(loss, penalty, csr, ClassMatrix<double>::Zero(180, 3),
                                         ClassVector<double>::Zero(3), true);
  CHECK(kkt.total() <= 1e-5 * kkt0.total());
}
