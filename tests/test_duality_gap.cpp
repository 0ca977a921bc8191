// The duality gap of (1) (solver/duality_gap.hpp), checked against its definition:
//   - every loss's conjugate ℓ* by the Fenchel–Young equality ℓ(s) + ℓ*(∇ℓ(s)) = ⟨∇ℓ(s), s⟩
//     and the inequality ℓ(s') + ℓ*(a) ≥ ⟨a, s'⟩ at other points s';
//   - weak duality: D(A(W)) ≤ F(W') for random W, W' (the dual value at one point's candidate
//     below the primal value at another), for each loss × penalty × μ = 0 / μ > 0 × intercept
//     on/off × float/double, multiclass and multilabel;
//   - the gap vanishes at an optimum computed by ProxGradient to 1e-11 (smooth losses);
//   - the per-sample rescaling (G3) keeps the bound and tightens it when a rare row violates.
#include <catch2/catch.hpp>

#include "test_scalars.hpp"

#include <sparsemc/core/rng.hpp>
#include <sparsemc/loss/losses.hpp>
#include <sparsemc/penalty/penalties.hpp>
#include <sparsemc/solver/gap_schedule.hpp>
#include <sparsemc/solver/duality_gap.hpp>
#include <sparsemc/solver/fista/prox_gradient.hpp>
#include <sparsemc/solver/objective.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <tuple>
#include <vector>

using namespace sparsemc;

namespace {

/// A small random problem: n × d, density 0.4, K classes; multilabel samples carry 0–3
/// classes; weights c_i ∈ [0.5, 2].
template <class Scalar>
struct GapProblem {
  Eigen::SparseMatrix<Scalar, Eigen::RowMajor, int> X;
  LabelSets labels;
  std::vector<Scalar> weights;

  GapProblem(int n, int d, ClassIndex K, bool multilabel, std::uint64_t seed) : labels(K) {
    Rng rng(seed);
    std::vector<Eigen::Triplet<Scalar, int>> triplets;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < d; ++j)
        if (uniform_real(rng) < 0.4) triplets.emplace_back(i, j, static_cast<Scalar>(2 * uniform_real(rng) - 1));
    X.resize(n, d);
    X.setFromTriplets(triplets.begin(), triplets.end());
    X.makeCompressed();
    for (int i = 0; i < n; ++i) {
      std::vector<ClassIndex> y{static_cast<ClassIndex>(i % K)};  // every class present
      if (multilabel)
        for (int extra = 0; extra < 2; ++extra)
          if (uniform_real(rng) < 0.4) y.push_back(static_cast<ClassIndex>(uniform_index(rng, static_cast<std::uint64_t>(K))));
      labels.push_back(y);
      weights.push_back(static_cast<Scalar>(0.5 + 1.5 * uniform_real(rng)));
    }
  }
  [[nodiscard]] CsrProblem<Scalar, int> problem() const { return {CsrView<Scalar, int>(X), labels.view(), weights}; }
};

template <class Scalar>
ClassMatrix<Scalar> random_rows(Eigen::Index rows, Eigen::Index K, double scale, Rng& rng) {
  ClassMatrix<Scalar> M(rows, K);
  for (Eigen::Index j = 0; j < rows; ++j)
    for (Eigen::Index k = 0; k < K; ++k)
      M(j, k) = (j % 4 == 3) ? Scalar(0) : static_cast<Scalar>(scale * (2 * uniform_real(rng) - 1));
  return M;
}

template <class Scalar>
double eps_of() {
  return static_cast<double>(std::numeric_limits<Scalar>::epsilon());
}

/// a ∈ ∂ℓ(s) for every loss (gradient or subgradient).
template <class Loss, class Scalar>
Scalar candidate(const Loss& loss, std::span<const Scalar> s, ClassSet y, std::span<Scalar> a) {
  if constexpr (SmoothLoss<Loss, Scalar>) return loss.gradient(s, y, a);
  else return loss.subgradient(s, y, a);
}

}  // namespace

TEMPLATE_TEST_CASE("loss conjugates satisfy Fenchel-Young", "[gap][loss]", SquaredHinge, HuberHinge, OvrSquaredHinge,
                   Logistic, LeastSquares, CrammerSinger) {
  using Loss = TestType;
  const Loss loss;
  const ClassIndex K = 5;
  Rng rng(3);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<ClassIndex> y{static_cast<ClassIndex>(trial % K)};
    if (Loss::supports_multilabel && trial % 3 == 1) y.push_back(static_cast<ClassIndex>((trial / 3) % K));
    std::sort(y.begin(), y.end());
    y.erase(std::unique(y.begin(), y.end()), y.end());
    std::vector<double> s(K), s2(K), a(K);
    for (auto& v : s) v = 3 * (2 * uniform_real(rng) - 1);
    for (auto& v : s2) v = 3 * (2 * uniform_real(rng) - 1);
    const double value = candidate(loss, std::span<const double>(s), y, std::span<double>(a));
    const double conj = loss.conjugate(std::span<const double>(a), y);
    double dot = 0, dot2 = 0;
    for (ClassIndex k = 0; k < K; ++k) {
      dot += a[k] * s[k];
      dot2 += a[k] * s2[k];
    }
    INFO("trial " << trial);
    CHECK(value + conj == Approx(dot).margin(1e-12));                                      // equality at s
    CHECK(loss.value(std::span<const double>(s2), y) + conj >= dot2 - 1e-12);                // inequality at s'
  }
}

namespace {

template <class Loss, class Penalty, class Scalar>
void check_weak_duality_and_optimum(bool multilabel, double mu, bool intercept) {
  const ClassIndex K = 4;
  const GapProblem<Scalar> gp(60, 12, K, multilabel, 17);
  const auto problem = gp.problem();
  const Loss loss;
  const Penalty penalty{.lambda = 0.02, .mu = mu};
  Rng rng(5);
  GapWorkspace<Scalar> work;
  const ClassVector<Scalar> no_b;
  // Weak duality: D at the candidate of one random point below F at other random points.
  for (int trial = 0; trial < 10; ++trial) {
    const ClassMatrix<Scalar> W = random_rows<Scalar>(12, K, 0.8, rng);
    const ClassVector<Scalar> b = intercept ? ClassVector<Scalar>(random_rows<Scalar>(1, K, 0.5, rng).transpose()) : no_b;
    const DualityGap at_W = duality_gap(loss, penalty, problem, W, b, intercept, work);
    INFO("trial " << trial << " F " << at_W.primal << " D " << at_W.dual);
    REQUIRE(std::isfinite(at_W.primal));
    CHECK(at_W.primal - at_W.dual >= -1e3 * eps_of<Scalar>() * std::max(1.0, std::abs(at_W.primal)));
    ClassMatrix<Scalar> S;
    for (int other = 0; other < 3; ++other) {
      const ClassMatrix<Scalar> W2 = random_rows<Scalar>(12, K, 0.8, rng);
      const ClassVector<Scalar> b2 =
          intercept ? ClassVector<Scalar>(random_rows<Scalar>(1, K, 2.0, rng).transpose()) : no_b;
      const double F2 = objective(loss, penalty, problem, W2, b2, S).total();
      CHECK(at_W.dual <= F2 + 1e3 * eps_of<Scalar>() * std::max(1.0, std::abs(F2)));
    }
  }
  // At the optimum (smooth losses, double): the gap vanishes. With μ = 0 and no penalty the
  // problem has no finite certificate; skipped (the gap is F there, by design).
  if constexpr (SmoothLoss<Loss, Scalar> && std::is_same_v<Scalar, double>) {
    if (mu == 0.0 && std::is_same_v<Penalty, NoPenalty>) return;
    ProxGradient<Loss, Penalty> solver(loss, penalty,
                                       {.tol = 1e-11, .max_epochs = 200000, .fit_intercept = intercept});
    const auto result = solver.fit(problem);
    REQUIRE(result.info.status == Status::converged);
    const DualityGap at_opt = duality_gap(loss, penalty, problem, result.model, work);
    INFO("F* " << at_opt.primal << " D " << at_opt.dual);
    CHECK(at_opt.relative() <= 1e-7);
    // Any feasible dual point is below F*: the candidate of a random point.
    const ClassMatrix<Scalar> W = random_rows<Scalar>(12, K, 0.8, rng);
    const ClassVector<Scalar> b = intercept ? ClassVector<Scalar>(random_rows<Scalar>(1, K, 0.5, rng).transpose()) : no_b;
    CHECK(duality_gap(loss, penalty, problem, W, b, intercept, work).dual <= at_opt.primal + 1e-12);
  }
}

template <class Loss, class Scalar>
void check_every_penalty(bool multilabel) {
  for (const double mu : {0.0, 0.05})
    for (const bool intercept : {false, true}) {
      INFO("mu " << mu << " intercept " << intercept << " multilabel " << multilabel);
      check_weak_duality_and_optimum<Loss, L1, Scalar>(multilabel, mu, intercept);
      check_weak_duality_and_optimum<Loss, L1L2, Scalar>(multilabel, mu, intercept);
      check_weak_duality_and_optimum<Loss, L1Linf, Scalar>(multilabel, mu, intercept);
      check_weak_duality_and_optimum<Loss, NoPenalty, Scalar>(multilabel, mu, intercept);
    }
}

}  // namespace

TEMPLATE_TEST_CASE("duality gap: weak duality and zero gap at the optimum", "[gap]", SPARSEMC_TEST_SCALARS) {
  using Scalar = TestType;
  SECTION("squared hinge") { check_every_penalty<SquaredHinge, Scalar>(false); }
  SECTION("Huberised hinge") { check_every_penalty<HuberHinge, Scalar>(false); }
  SECTION("one-vs-rest squared hinge") {
    check_every_penalty<OvrSquaredHinge, Scalar>(false);
    check_every_penalty<OvrSquaredHinge, Scalar>(true);
  }
  SECTION("logistic") {
    check_every_penalty<Logistic, Scalar>(false);
    check_every_penalty<Logistic, Scalar>(true);
  }
  SECTION("least squares") {
    check_every_penalty<LeastSquares, Scalar>(false);
    check_every_penalty<LeastSquares, Scalar>(true);
  }
  SECTION("Crammer-Singer (no intercept: multilabel too)") {
    for (const double mu : {0.0, 0.05}) {
      check_weak_duality_and_optimum<CrammerSinger, L1, Scalar>(false, mu, false);
      check_weak_duality_and_optimum<CrammerSinger, L1L2, Scalar>(true, mu, false);
      check_weak_duality_and_optimum<CrammerSinger, NoPenalty, Scalar>(false, mu, true);
    }
  }
}

TEST_CASE("duality gap: no penalty and mu = 0 has no finite certificate, not a vacuous one", "[gap]") {
  const GapProblem<double> gp(30, 8, 3, false, 2);
  GapWorkspace<double> work;
  const ClassMatrix<double> W = ClassMatrix<double>::Zero(8, 3);
  const DualityGap g = duality_gap(Logistic{}, NoPenalty{.lambda = 0, .mu = 0}, gp.problem(), W, ClassVector<double>(),
                                   false, work);
  double mean_weight = 0;
  for (const double c : gp.weights) mean_weight += c / 30.0;
  CHECK(g.primal == Approx(mean_weight * std::log(3.0)));
  CHECK(g.dual == 0.0);           // θ = 0: D(0) = 0
  CHECK(g.relative() == Approx(1.0));  // never ≤ tol: a solver cannot report converged at W = 0
}

TEST_CASE("duality gap: a violating rare row shrinks only its samples (G3)", "[gap]") {
  // 300 samples over 12 common features (|x| ≤ 0.2), plus one rare feature per sample i < 10
  // (x = 1): the shape of text data, where one sample's share of a common row is small and a
  // rare row's violation would shrink every a_i under (G2) alone.
  const int n = 300, common = 12, rare = 10;
  const ClassIndex K = 4;
  const GapProblem<double> gp(n, common, K, false, 23);
  Eigen::SparseMatrix<double, Eigen::RowMajor, int> X(n, common + rare);
  std::vector<Eigen::Triplet<double, int>> triplets;
  for (int i = 0; i < n; ++i)
    for (Eigen::SparseMatrix<double, Eigen::RowMajor, int>::InnerIterator it(gp.X, i); it; ++it)
      triplets.emplace_back(i, it.col(), 0.2 * it.value());
  for (int r = 0; r < rare; ++r) triplets.emplace_back(r, common + r, 1.0);
  X.setFromTriplets(triplets.begin(), triplets.end());
  X.makeCompressed();
  const CsrProblem<double, int> problem{CsrView<double, int>(X), gp.labels.view(), gp.weights};
  const L1L2 penalty{.lambda = 0.005};
  const SquaredHinge loss;
  GapWorkspace<double> work;
  const auto optimum = ProxGradient<SquaredHinge, L1L2>(loss, penalty, {.tol = 1e-12, .max_epochs = 200000}).fit(problem);
  REQUIRE(optimum.info.status == Status::converged);
  const double F_star = optimum.info.objective;
  ClassMatrix<double> W = optimum.model.dense();
  W.conservativeResize(common + rare, K);
  REQUIRE(W.row(common).norm() > 0);  // the rare rows are in the model
  W.row(common) *= 0.9;               // one rare row off its optimum: its gradient violates
  const DualityGap g3 = duality_gap(loss, penalty, problem, W, ClassVector<double>(), false, work);
  // (G2) alone, by hand: every a_i times θ = λ / max_j ‖G_j‖.
  ClassMatrix<double> S, A(n, K), G;
  compute_scores(problem, W, ClassVector<double>(), S);
  for (int i = 0; i < n; ++i)
    loss.gradient(std::span<const double>(S.row(i).data(), K), problem.y[i], std::span<double>(A.row(i).data(), K));
  ClassMatrix<double> D = A;
  for (int i = 0; i < n; ++i) D.row(i) *= gp.weights[i] / n;
  weight_gradient(problem, D, G);
  const double theta = std::min(1.0, penalty.lambda / G.rowwise().norm().maxCoeff());
  REQUIRE(theta < 0.99);
  double conjugates = 0;
  for (int i = 0; i < n; ++i) {
    const ClassVector<double> a = theta * A.row(i).transpose();
    conjugates += gp.weights[i] * loss.conjugate(std::span<const double>(a.data(), K), problem.y[i]);
  }
  const double gap_uniform = g3.primal + conjugates / n;
  INFO("F " << g3.primal << " F* " << F_star << " gap (G3) " << g3.gap() << " gap (G2) " << gap_uniform);
  CHECK(g3.gap() >= g3.primal - F_star - 1e-12);  // still an upper bound on F − F*
  CHECK(g3.gap() <= 0.25 * gap_uniform);          // and a much tighter one
}

TEMPLATE_TEST_CASE("duality gap: a rescaling round updates XᵀD̃ by its moved samples (G3)", "[gap]",
                   SPARSEMC_TEST_SCALARS) {
  using Scalar = TestType;
  // Large enough that the CSC update's work (nnz·(1 + K/3) multiply-adds) keeps two threads busy.
  const int n = 2400, d = 20;
  const ClassIndex K = 4;
  const GapProblem<Scalar> gp(n, d, K, false, 29);
  REQUIRE(detail::team_for_work(2, static_cast<double>(gp.X.nonZeros()) * (1.0 + K / 3.0)) == 2);
  const Eigen::SparseMatrix<Scalar, Eigen::ColMajor, int> X_csc = gp.X;
  const Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> X_dense = gp.X;
  const CscProblem<Scalar, int> csc{CscView<Scalar, int>(X_csc), gp.labels.view(), gp.weights};
  const DenseProblem<Scalar> dense{DenseRowView<Scalar>(X_dense.data(), n, d), gp.labels.view(), gp.weights};
  Rng rng(31);
  const ClassMatrix<Scalar> A = random_rows<Scalar>(n, K, 1.0, rng);
  Eigen::VectorXd phi = Eigen::VectorXd::Ones(n);
  for (int i = 0; i < n; i += 3) phi[i] = 0.2 + 0.7 * uniform_real(rng);  // a third of the samples move
  ClassMatrix<Scalar> scaled = A;
  scaled.array().colwise() *= phi.cast<Scalar>().array();
  const auto check = [&](const auto& problem, int team) {
    GapWorkspace<Scalar> updated, fresh;
    updated.team = fresh.team = team;
    detail::dual_gradient(problem, A, updated);
    updated.sample_scale = phi;
    detail::update_dual_gradient(problem, updated, 1.0 / 3);
    detail::dual_gradient(problem, scaled, fresh);
    const double tol = 100 * eps_of<Scalar>() * (1 + static_cast<double>(fresh.G.cwiseAbs().maxCoeff()));
    CHECK(static_cast<double>((updated.G - fresh.G).cwiseAbs().maxCoeff()) <= tol);
    CHECK(static_cast<double>((updated.weighted - fresh.weighted).cwiseAbs().maxCoeff()) <= tol);
  };
  SECTION("CSR X") { check(gp.problem(), 1); }
  SECTION("CSC X, one and two threads") {
    check(csc, 1);
    check(csc, 2);
  }
  SECTION("dense X") { check(dense, 1); }
}

TEMPLATE_TEST_CASE("duality gap: with mu > 0 a CSC X takes G row by row, the same at every thread count", "[gap]",
                   SPARSEMC_TEST_SCALARS) {
  using Scalar = TestType;
  // Wide (d = 4000: four chunks of features) and dense enough for two threads.
  const int n = 40, d = 4000;
  const ClassIndex K = 4;
  const GapProblem<Scalar> gp(n, d, K, false, 37);
  REQUIRE(detail::team_for_work(2, static_cast<double>(gp.X.nonZeros()) * K) == 2);
  const Eigen::SparseMatrix<Scalar, Eigen::ColMajor, int> X_csc = gp.X;
  const CscProblem<Scalar, int> csc{CscView<Scalar, int>(X_csc), gp.labels.view(), gp.weights};
  Rng rng(41);
  const ClassMatrix<Scalar> S = random_rows<Scalar>(n, K, 2.0, rng);
  const SquaredHinge loss;
  ClassMatrix<Scalar> A;
  detail::gradient_candidate(loss, gp.problem(), S, A);
  const auto check = [&](const auto& penalty) {
    ClassMatrix<Scalar> a = A;
    GapWorkspace<Scalar> stored;
    const double expected = dual_objective(loss, penalty, gp.problem(), a, false, stored);  // CSR: G held whole
    REQUIRE(stored.G.rows() == d);
    std::vector<double> streamed;
    for (const int team : {1, 2, 3}) {
      GapWorkspace<Scalar> work;
      work.team = team;
      work.reserve(penalty, csc, K, false);
      const Scalar* buffer = work.G.data();
      a = A;
      streamed.push_back(dual_objective(loss, penalty, csc, a, false, work));
      CHECK(work.G.rows() <= team);      // a buffer row per thread, never d × K
      CHECK(work.G.data() == buffer);    // sized by reserve
      CHECK(work.weighted.size() == 0);  // nor D̃
    }
    CHECK(streamed[1] == streamed[0]);
    CHECK(streamed[2] == streamed[0]);
    CHECK(std::abs(streamed[0] - expected) <= 1e3 * eps_of<Scalar>() * (1 + std::abs(expected)));
  };
  check(L1L2{.lambda = 0.02, .mu = 0.1});
  check(L1Linf{.lambda = 0.02, .mu = 0.1});
  check(NoPenalty{.mu = 0.1});
}

TEST_CASE("gap schedule: cheap trigger, tightening by the gap's ratio, doubling fallback", "[gap]") {
  detail::GapSchedule schedule(1e-3);
  CHECK_FALSE(schedule.due(detail::GapSchedule::first_interval - 1, 1.0));
  CHECK(schedule.due(detail::GapSchedule::first_interval - 1, 1e-3));  // the cheap measure reached tol
  CHECK(schedule.due(4, 1.0));  // the first fallback
  schedule.evaluated(4, 1.0, /*relative_gap=*/0.5);
  CHECK(schedule.trigger() == 1e-3);  // evaluated above the trigger: the trigger stays
  CHECK_FALSE(schedule.due(11, 0.5));
  CHECK(schedule.due(12, 0.5));  // the doubled interval
  schedule.evaluated(12, 0.5, 0.2);
  CHECK(schedule.due(13, 1e-3));
  schedule.evaluated(13, 1e-3, 0.1);  // refused at 100·tol: halfway (log scale) to a hundredfold fall
  CHECK(schedule.trigger() == Approx(1e-4));
  CHECK_FALSE(schedule.due(14, 2e-4));
  CHECK(schedule.due(14, 1e-4));
  schedule.evaluated(14, 1e-4, 1.5e-3);  // refused just above tol: at least quarter the measure
  CHECK(schedule.trigger() == Approx(2.5e-5));
  CHECK(schedule.due(15, 2e-5));
  schedule.evaluated(15, 2e-5, 8e-4);  // certified: the trigger stays
  CHECK(schedule.trigger() == Approx(2.5e-5));
  CHECK_FALSE(schedule.due(15 + 127, 1.0));
  CHECK(schedule.due(15 + 128, 1.0));  // the fifth evaluation's interval: 4·2⁵ epochs
}

TEST_CASE("certificate schedule: trigger, spacing, fixed fallback", "[gap]") {
  constexpr double tol = 1e-3;
  detail::WorkGapSchedule schedule(1e-3, /*gap_cost=*/10.0);
  schedule.add_work(50.0);
  CHECK_FALSE(schedule.due(1.0));  // measure above the trigger, under 8 evaluations of work
  schedule.add_work(30.0);
  CHECK(schedule.due(1.0));  // the fallback: 8 evaluations' worth of work
  schedule.evaluated(1.0, /*relative_gap=*/5e-3, tol);
  CHECK(schedule.trigger() == 1e-3);  // evaluated above the trigger: the trigger stays
  schedule.add_work(4.0);
  CHECK_FALSE(schedule.due(1e-4));  // the trigger is met, but under half an evaluation of work
  schedule.add_work(1.0);
  CHECK(schedule.due(1e-4));
  schedule.evaluated(1e-4, 1e-2, tol);  // refused at 10·tol (a rise: no trend): the measure must fall tenfold
  CHECK(schedule.trigger() == Approx(1e-5));
  schedule.add_work(5.0);
  CHECK_FALSE(schedule.due(2e-5));
  CHECK(schedule.due(1e-5));
  schedule.evaluated(1e-5, 1.2e-3, tol);  // refused just above tol: at least halve the measure
  CHECK(schedule.trigger() == Approx(5e-6));
  schedule.add_work(4.0);
  CHECK_FALSE(schedule.due(1e-4));  // under half an evaluation of work
  schedule.add_work(1.0);
  CHECK(schedule.due(1e-4));  // the gap's trend (1e-2 to 1.2e-3 in 5 units) puts tol within reach
  schedule.evaluated(4e-6, 8e-4, tol);  // certified: the trigger stays
  CHECK(schedule.trigger() == Approx(5e-6));
  CHECK(schedule.evaluations() == 4);
}

TEST_CASE("certificate schedule: the gap's trend predicts the next evaluation", "[gap]") {
  constexpr double tol = 1e-3;
  detail::WorkGapSchedule schedule(1e-6, /*gap_cost=*/20.0);  // spacing 10, fallback 160
  schedule.add_work(160.0);
  REQUIRE(schedule.due(1.0));
  schedule.evaluated(1.0, /*relative_gap=*/8e-3, tol);  // one refused gap: no trend yet
  schedule.add_work(150.0);
  CHECK_FALSE(schedule.due(1.0));
  schedule.add_work(10.0);
  REQUIRE(schedule.due(1.0));  // the fallback
  schedule.evaluated(1.0, 2e-3, tol);  // quartered in 160 units of work: tol is 80 units away
  schedule.add_work(70.0);
  CHECK_FALSE(schedule.due(1.0));
  schedule.add_work(10.0);
  CHECK(schedule.due(1.0));  // the trend's point, before the fallback
  schedule.evaluated(1.0, 1.1e-3, tol);  // still refused: 80 ln(1.1) / ln(2/1.1) ≈ 12.75 units
  schedule.add_work(12.0);
  CHECK_FALSE(schedule.due(1.0));
  schedule.add_work(1.0);
  CHECK(schedule.due(1.0));
  schedule.evaluated(1.0, 1.2e-3, tol);  // the gap rose: no trend, the measure and the fallback
  schedule.add_work(159.0);
  CHECK_FALSE(schedule.due(1.0));
  schedule.add_work(1.0);
  CHECK(schedule.due(1.0));
  CHECK(schedule.evaluations() == 4);
}
