// BlockCD (Blondel, Seki & Uehara 2013): the per-sample caches against a fresh evaluation of
// objective (1), the block Lipschitz constants of the constant-step rule on sampled pairs,
// solver properties (monotone line search, shrinking on = off, warm start, seeds, intercept,
// sample weights = duplicated samples, int32 = int64, allocation-free epochs, options) and the
// regularisation path. Cross-solver agreement lives in test_bcd_agreement.cpp.

// Epochs must not allocate (the probe: alloc_probe.hpp, first, before any Eigen include).
#include "alloc_probe.hpp"
#include "dense_columns_check.hpp"
#include "random_problem.hpp"
#include "skip.hpp"
#include "test_scalars.hpp"

#include <catch2/catch.hpp>

#include <sparsemc/core/callbacks.hpp>
#include <sparsemc/core/rng.hpp>
#include <sparsemc/io/libsvm_reader.hpp>
#include <sparsemc/loss/losses.hpp>
#include <sparsemc/penalty/penalties.hpp>
#include <sparsemc/solver/bcd/block_cd.hpp>
#include <sparsemc/solver/bcd/detail/parallel_step.hpp>
#include <sparsemc/solver/objective.hpp>
#include <sparsemc/solver/path.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <new>
#include <numeric>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

using namespace sparsemc;

namespace {

using sparsemc_test::sanitizer_run;

using sparsemc_test::RandomLabels;
using sparsemc_test::RandomProblem;

double rel(double a, double b) { return std::abs(a - b) / std::max({std::abs(a), std::abs(b), 1e-300}); }

/// A random row-sparse W (every third row zero) and intercept.
template <class Scalar>
std::pair<ClassMatrix<Scalar>, ClassVector<Scalar>> random_point(Eigen::Index d, Eigen::Index K, std::uint64_t seed,
                                                                 double scale) {
  Rng rng(seed);
  ClassMatrix<Scalar> W = ClassMatrix<Scalar>::Zero(d, K);
  for (Eigen::Index j = 0; j < d; ++j)
    if (j % 3 != 1)
      for (Eigen::Index k = 0; k < K; ++k) W(j, k) = static_cast<Scalar>(scale * (2 * uniform_real(rng) - 1));
  ClassVector<Scalar> b(K);
  for (Eigen::Index k = 0; k < K; ++k) b[k] = static_cast<Scalar>(scale * (2 * uniform_real(rng) - 1));
  return {W, b};
}

template <class Scalar>
std::vector<Label> iota_labels(ClassIndex K) {
  std::vector<Label> labels(static_cast<std::size_t>(K));
  for (ClassIndex k = 0; k < K; ++k) labels[static_cast<std::size_t>(k)] = k;
  return labels;
}

/// F at every epoch of `solver`'s fit is at most the previous epoch's (within `slack`,
/// relative), and the last epoch's is the reported one.
template <class Solver, class Problem>
void check_monotone(const Solver& solver, const Problem& problem, double slack) {
  History history;
  const auto result = solver.fit(problem, history);
  REQUIRE(history.epochs.size() >= 3);
  for (std::size_t e = 1; e < history.epochs.size(); ++e)
    CHECK(history.epochs[e].objective <= history.epochs[e - 1].objective * (1 + slack));
  CHECK(rel(history.epochs.back().objective, result.info.objective) <= 10 * slack);
}

/// dna (LIBSVM, n = 2000, d = 180, K = 3), or nothing if the file is absent.
std::optional<Dataset<double>> read_dna() {
  const std::filesystem::path path = sparsemc_test::repo_data() / "dna.scale";
  if (!std::filesystem::exists(path)) return std::nullopt;
  return io::read_libsvm_plain<double>(path);
}

}  // namespace

// ------------------------------------------------------------------------------------------------
// The losses' block kernels (loss/kernels/block_kernel.hpp) against objective.hpp.
// ------------------------------------------------------------------------------------------------

/// For one loss: block gradients and curvatures from the cache equal XᵀD and Σ c x² h from a
/// fresh evaluation; a trial's objective difference equals the difference of (1) evaluated
/// afresh; commit and apply leave a cache equal to a fresh one.
template <class Loss, class Scalar>
void check_kernel(bool multilabel, const Loss& loss = Loss{}) {
  const ClassIndex K = 5;
  const std::int32_t n = 60, d = 12;
  RandomProblem<Scalar> rp(n, d, K, 0.35, 3, true, multilabel ? RandomLabels::up_to_three : RandomLabels::multiclass);
  const auto problem = rp.problem();
  auto [W, b] = random_point<Scalar>(d, K, 9, 0.6);
  const double tol = std::is_same_v<Scalar, float> ? 2e-5 : 1e-12;

  kernels::BlockKernelFor<Loss, Scalar, std::int32_t> kernel(loss, problem, static_cast<std::size_t>(n));
  kernel.set_scores(problem.X, W.data(), b.data());
  kernel.refresh();
  const auto stride = static_cast<Eigen::Index>(kernel.stride());
  REQUIRE(stride >= K);

  ClassMatrix<Scalar> S, D, G;
  compute_scores(problem, W, b, S);
  const double L = loss_score_gradient(loss, problem, S, D);
  weight_gradient(problem, D, G);
  CHECK(rel(kernel.loss_part(), L) <= 10 * tol);

  ClassVector<Scalar> g = ClassVector<Scalar>::Zero(stride), h = ClassVector<Scalar>::Zero(stride);
  ClassVector<Scalar> delta = ClassVector<Scalar>::Zero(stride), h_one(K);
  const double scale = std::max(1.0, static_cast<double>(G.cwiseAbs().maxCoeff()));
  for (std::int32_t j = 0; j < d; ++j) {
    const auto col = problem.X.outer(j);
    kernel.template gradient<true>(col, g.data(), h.data());
    CHECK((g.head(K) - G.row(j).transpose()).cwiseAbs().maxCoeff() <= 10 * tol * scale);
    CHECK(g.tail(stride - K).isZero());
    // Σ_i c_i x_ij² h_i / n by the loss's own curvature.
    ClassVector<double> expected = ClassVector<double>::Zero(K);
    for (auto [i, x] : col) {
      loss.curvature(std::span<const Scalar>(S.row(i).data(), K), problem.y[static_cast<std::size_t>(i)],
                     std::span<Scalar>(h_one.data(), K));
      expected += double(problem.weight(i)) * double(x) * double(x) / n * h_one.template cast<double>();
    }
    CHECK((h.head(K).template cast<double>() - expected).cwiseAbs().maxCoeff() <= 10 * tol * scale);
  }

  // A trial step on block j: the objective difference over supp(x_j) equals L(W') − L(W).
  const std::int32_t j = 4;
  Rng rng(17);
  for (Eigen::Index k = 0; k < K; ++k) delta[k] = static_cast<Scalar>(2 * uniform_real(rng) - 1);
  const Scalar alpha = Scalar(0.5);
  ClassMatrix<Scalar> W_next = W;
  W_next.row(j) += alpha * delta.head(K).transpose();
  ClassMatrix<Scalar> S_next;
  compute_scores(problem, W_next, b, S_next);
  const double L_next = loss_value(loss, problem, S_next);
  const kernels::Trial trial = kernel.trial(problem.X.outer(j), delta.data(), alpha);
  CHECK(std::abs(trial.difference - (L_next - L)) <= 10 * tol * std::max(1.0, L));
  CHECK(trial.noise >= 0);
  CHECK(rel(kernel.loss_part(), L) <= 10 * tol);  // a trial changes nothing
  kernel.commit(problem.X.outer(j), delta.data(), alpha);
  CHECK(rel(kernel.loss_part(), L_next) <= 10 * tol);
  kernel.template gradient<false>(problem.X.outer(2), g.data(), h.data());
  ClassMatrix<Scalar> D_next, G_next;
  loss_score_gradient(loss, problem, S_next, D_next);
  weight_gradient(problem, D_next, G_next);
  CHECK((g.head(K) - G_next.row(2).transpose()).cwiseAbs().maxCoeff() <= 10 * tol * scale);

  // The fused kernels compute each sample's change without cancellation: a tiny step's change
  // matches its first-order prediction α Gᵀδ far below the rounding level of L itself.
  if constexpr (!std::is_same_v<Loss, LeastSquares>) {
    const Scalar tiny = std::is_same_v<Scalar, float> ? Scalar(1e-4) : Scalar(1e-8);
    const double predicted = static_cast<double>(tiny) * static_cast<double>(G_next.row(2).dot(delta.head(K).transpose()));
    const double change = kernel.trial(problem.X.outer(2), delta.data(), tiny).difference;
    CHECK(std::abs(change - predicted) <= (std::is_same_v<Scalar, float> ? 1e-2 : 1e-6) * std::abs(predicted));
  }

  // apply = trial + commit (here: the step back).
  kernel.apply(problem.X.outer(j), delta.data(), -alpha);
  CHECK(rel(kernel.loss_part(), L) <= 100 * tol);

  // The parallel step's interface: a gradient with a workspace of its own is the kernel's (the
  // same bits), and apply() on a column cut in two is apply() on the whole.
  {
    auto work = kernel.workspace();
    ClassVector<Scalar> g_own = ClassVector<Scalar>::Zero(stride), h_own = ClassVector<Scalar>::Zero(stride);
    const auto col = problem.X.outer(2);
    kernel.template gradient<true>(col, g.data(), h.data());
    std::as_const(kernel).template gradient<true>(col, g_own.data(), h_own.data(), work);
    CHECK((g_own.array() == g.array()).all());
    CHECK((h_own.array() == h.array()).all());
    auto whole = kernel, halves = kernel;
    whole.apply(col, delta.data(), alpha);
    halves.apply(detail::part_of(col, detail::part_between(col, 0, n / 2, n)), delta.data(), alpha);
    halves.apply(detail::part_of(col, detail::part_between(col, n / 2, n, n)), delta.data(), alpha);
    CHECK((halves.scores_matrix().array() == whole.scores_matrix().array()).all());
    CHECK(halves.loss_part() == whole.loss_part());
  }

  // One-vs-rest: the gradient on a row's listed classes, and a trial and commit of a step
  // that moves a few classes, agree with the whole-row kernels.
  if constexpr (std::is_same_v<Loss, OvrSquaredHinge>) {
    const std::vector<ClassIndex> listed{0, 2};
    std::vector<char> is_listed(static_cast<std::size_t>(K), 0);
    for (const ClassIndex k : listed) is_listed[static_cast<std::size_t>(k)] = 1;
    ClassVector<Scalar> g_whole = ClassVector<Scalar>::Zero(stride), h_whole = ClassVector<Scalar>::Zero(stride);
    const auto col = problem.X.outer(j);
    kernel.template gradient<true>(col, g_whole.data(), h_whole.data());
    g.setZero();
    h.setZero();
    kernel.template gradient<true>(col, g.data(), h.data(), std::span<const ClassIndex>(listed), is_listed.data());
    for (Eigen::Index k = 0; k < K; ++k) {
      const bool in = is_listed[static_cast<std::size_t>(k)] != 0;
      CHECK(std::abs(double(g[k]) - (in ? double(g_whole[k]) : 0.0)) <= 10 * tol * scale);
      CHECK(std::abs(double(h[k]) - (in ? double(h_whole[k]) : 0.0)) <= 10 * tol * scale);
    }
    ClassVector<Scalar> few = ClassVector<Scalar>::Zero(stride);
    for (const ClassIndex k : listed) few[k] = delta[k];
    const double whole = kernel.trial(col, few.data(), alpha).difference;
    const double by_class = kernel.trial(col, few.data(), alpha, std::span<const ClassIndex>(listed)).difference;
    CHECK(std::abs(by_class - whole) <= 10 * tol * std::max(1.0, std::abs(whole)));
    kernel.commit(col, few.data(), alpha, std::span<const ClassIndex>(listed));
    W_next = W;
    W_next.row(j) += alpha * few.head(K).transpose();
    compute_scores(problem, W_next, b, S_next);
    CHECK(rel(kernel.loss_part(), loss_value(loss, problem, S_next)) <= 100 * tol);
    CHECK((kernel.scores_matrix() - S_next).cwiseAbs().maxCoeff() <= 10 * tol * scale);
  }
}

TEMPLATE_TEST_CASE("BlockCD caches give the exact block gradient, curvature and objective difference", "[bcd]",
                   SPARSEMC_TEST_SCALARS) {
  SECTION("squared hinge") { check_kernel<SquaredHinge, TestType>(false); }
  SECTION("Huberised hinge") {
    check_kernel<HuberHinge, TestType>(false);
    check_kernel<HuberHinge, TestType>(false, HuberHinge(0.25));
  }
  SECTION("one-vs-rest squared hinge") { check_kernel<OvrSquaredHinge, TestType>(false); }
  SECTION("one-vs-rest squared hinge, multilabel") { check_kernel<OvrSquaredHinge, TestType>(true); }
  SECTION("logistic") { check_kernel<Logistic, TestType>(false); }
  SECTION("logistic, multilabel") { check_kernel<Logistic, TestType>(true); }
  SECTION("least squares (the generic kernel)") { check_kernel<LeastSquares, TestType>(false); }
}

// ------------------------------------------------------------------------------------------------
// Richtárik–Takáč block Lipschitz constants K_j = curvature_bound(K) (1/n) Σ c_i x_ij².
// ------------------------------------------------------------------------------------------------

/// ‖G_j(W + e_jΔᵀ) − G_j(W)‖ ≤ K_j ‖Δ‖ on sampled points, blocks and directions at several
/// scales; returns the largest ratio seen (≤ 1), to show the bound is not vacuous.
template <class Loss>
double lipschitz_ratio() {
  const ClassIndex K = 6;
  const std::int32_t n = 80, d = 10;
  RandomProblem<double> rp(n, d, K, 0.4, 21, true);
  const auto problem = rp.problem();
  const Loss loss;
  Rng rng(4);
  double worst = 0.0;
  for (int trial = 0; trial < 60; ++trial) {
    const double scale = std::pow(10.0, static_cast<double>(trial % 4) - 2.0);
    auto [W, b] = random_point<double>(d, K, 100 + trial, 1.0);
    const auto j = static_cast<std::int32_t>(uniform_index(rng, d));
    ClassVector<double> step(K);
    for (Eigen::Index k = 0; k < K; ++k) step[k] = scale * (2 * uniform_real(rng) - 1);
    double column_sq = 0;
    for (auto [i, x] : problem.X.outer(j)) column_sq += problem.weight(i) * x * x;
    const double K_j = loss.template curvature_bound<double>(K) * column_sq / n;
    ClassMatrix<double> S, D, G1, G2;
    compute_scores(problem, W, b, S);
    loss_score_gradient(loss, problem, S, D);
    weight_gradient(problem, D, G1);
    W.row(j) += step.transpose();
    compute_scores(problem, W, b, S);
    loss_score_gradient(loss, problem, S, D);
    weight_gradient(problem, D, G2);
    const double ratio = (G2.row(j) - G1.row(j)).norm() / (K_j * step.norm());
    CHECK(ratio <= 1.0 + 1e-9);
    worst = std::max(worst, ratio);
  }
  return worst;
}

TEST_CASE("BlockCD's constant-step Lipschitz constants bound the block gradient's variation", "[bcd]") {
  // 2K (squared hinge; tighter than the paper's 4(K−1) for K ≥ 3), 2 (one-vs-rest), ½ (logistic).
  CHECK(SquaredHinge::curvature_bound<double>(6) < 4.0 * (6 - 1));
  CHECK(lipschitz_ratio<SquaredHinge>() > 0.05);
  CHECK(lipschitz_ratio<OvrSquaredHinge>() > 0.3);
  CHECK(lipschitz_ratio<Logistic>() > 0.05);
}

/// The ESO of the τ-nice sampling (solver/bcd/richtarik_takac.hpp): for every τ-subset S of
/// the m = d blocks, enumerated, E_S f(W + H_S) ≤ f(W) + (τ/m)(⟨∇f(W), H⟩ + ½ Σ_j v_j ‖H_j‖²) with
/// v_j = κ(A_j + B_j(τ − 1)/max(1, m − 1)), f the loss part of (1), at random W and steps H.
/// Returns the largest ratio of the expected increase's second-order part to the bound's (≤ 1).
template <class Loss>
double eso_ratio() {
  const ClassIndex K = 4;
  const std::int32_t n = 40, d = 7;
  RandomProblem<double> rp(n, d, K, 0.45, 31, true);
  const auto problem = rp.problem();
  const Loss loss;
  const double kappa = loss.template curvature_bound<double>(K);
  std::vector<double> A(d, 0.0);
  for (std::int32_t j = 0; j < d; ++j)
    for (auto [i, x] : problem.X.outer(j)) A[static_cast<std::size_t>(j)] += problem.weight(i) * x * x / n;
  detail::EsoSpread<double> spread;
  spread.reserve(n, d);
  std::vector<std::size_t> blocks(d);
  std::iota(blocks.begin(), blocks.end(), std::size_t{0});
  spread.measure(problem, problem.X, std::span<const std::size_t>(blocks), A, 0.0);
  const ClassVector<double> no_intercept;
  double worst = 0.0;
  for (int trial = 0; trial < 12; ++trial) {
    auto [W, b] = random_point<double>(d, K, 300 + trial, 1.0);
    const auto [H, ignored] = random_point<double>(d, K, 400 + trial, trial % 2 == 0 ? 0.1 : 1.0);
    ClassMatrix<double> S, D, G;
    compute_scores(problem, W, no_intercept, S);
    const double f = loss_score_gradient(loss, problem, S, D);
    weight_gradient(problem, D, G);
    for (std::int32_t tau = 1; tau <= d; ++tau) {
      const double share = double(tau - 1) / double(d - 1);
      double expected = 0.0, subsets = 0.0;
      for (unsigned mask = 0; mask < (1u << d); ++mask) {
        if (std::popcount(mask) != tau) continue;
        ClassMatrix<double> moved = W;
        for (std::int32_t j = 0; j < d; ++j)
          if (mask >> j & 1u) moved.row(j) += H.row(j);
        compute_scores(problem, moved, no_intercept, S);
        expected += loss_value(loss, problem, S);
        subsets += 1.0;
      }
      expected /= subsets;
      double second = 0.0;
      for (std::int32_t j = 0; j < d; ++j) {
        const auto k = static_cast<std::size_t>(j);
        second += 0.5 * kappa * (A[k] + spread.column[k] * share) * H.row(j).squaredNorm();
      }
      const double first = (G.array() * H.array()).sum();
      const double p = double(tau) / d;
      const double increase = expected - f - p * first;
      CHECK(increase <= p * second * (1 + 1e-9) + 1e-12);
      if (increase > 0.0) worst = std::max(worst, increase / (p * second));
    }
  }
  return worst;
}

TEST_CASE("BlockCD's parallel step: tau follows the data's degree, the work and the team", "[bcd]") {
  // sector's shape: d = 55 197 blocks, ω̄ − 1 = 162, 19 samples a column, K = 105.
  const detail::RoundSize two(0, 2, 55197, 106, 8), one(0, 1, 55197, 106, 8), asked(7, 1, 55197, 106, 8);
  CHECK(two.parallel());
  CHECK(!one.parallel());
  CHECK(asked.parallel());
  const std::size_t tau = two.tau(55197, 162.0, 18.9, 105);
  CHECK(tau >= 16);
  CHECK(162.0 * double(tau - 1) / 55196.0 <= detail::RoundSize::max_lengthening);
  CHECK(tau <= two.capacity);
  CHECK(one.tau(55197, 162.0, 18.9, 105) == 1);
  CHECK(asked.tau(55197, 162.0, 18.9, 105) == 7);
  CHECK(asked.tau(5, 162.0, 18.9, 105) == 5);
  // A shrunk set of the same degree takes fewer blocks a round, then none.
  CHECK(two.tau(5000, 162.0, 18.9, 105) < tau);
  CHECK(two.tau(500, 162.0, 18.9, 105) == 1);
  // A round is shared by the threads that get 2^12 of its touched entries each.
  CHECK(two.threads(1e6) == 2);
  CHECK(two.threads(6000.0) == 1);
  CHECK(detail::RoundSize(0, 32, 55197, 106, 8).threads(86 * 18.9 * 105) == 32);
  CHECK(detail::RoundSize(0, 32, 55197, 106, 8).tau(55197, 162.0, 18.9, 105) > 1);
  // dna's shape (d = 180, ω̄ − 1 = 45, K = 3): every round would share most samples.
  CHECK(detail::RoundSize(0, 8, 180, 4, 8).tau(180, 45.0, 518.0, 3) == 1);
  // Many threads and classes: the partial gradients' memory bounds τ.
  const detail::RoundSize wide(0, 64, 1000000, 1000, 8);
  CHECK(double(wide.capacity) * 64 * 1000 * 8 <= detail::RoundSize::partial_bytes);
  CHECK(wide.capacity >= 64);
}

TEST_CASE("BlockCD's parallel step: the ESO of the tau-nice sampling holds, enumerated", "[bcd]") {
  CHECK(eso_ratio<LeastSquares>() > 0.2);
  CHECK(eso_ratio<SquaredHinge>() > 0.01);
  CHECK(eso_ratio<Logistic>() > 0.01);
  CHECK(eso_ratio<OvrSquaredHinge>() > 0.01);
}

// ------------------------------------------------------------------------------------------------
// Solver properties.
// ------------------------------------------------------------------------------------------------

TEMPLATE_TEST_CASE("BlockCD with the line search decreases the objective at every epoch", "[bcd]",
                   SPARSEMC_TEST_SCALARS) {
  RandomProblem<TestType> rp(300, 40, 4, 0.25, 5);
  const auto problem = rp.problem();
  const double slack = std::is_same_v<TestType, float> ? 1e-6 : 1e-13;
  check_monotone(BlockCD<SquaredHinge, L1L2, TsengYun>({}, {.lambda = 2e-3}, {.tol = 1e-6}), problem, slack);
  check_monotone(BlockCD<OvrSquaredHinge, L1, TsengYun>({}, {.lambda = 2e-3, .mu = 1e-3}, {.tol = 1e-6}), problem,
                 slack);
  check_monotone(BlockCD<Logistic, L1Linf, TsengYun>({}, {.lambda = 1e-3}, {.tol = 1e-6, .fit_intercept = true}),
                 problem, slack);
}

TEMPLATE_TEST_CASE("BlockCD's parallel step with every block at once decreases the objective at every epoch", "[bcd]",
                   SPARSEMC_TEST_SCALARS) {
  // τ ≥ the blocks: each round updates every active block, a sampling with one outcome, so the
  // ESO (richtarik_takac.hpp) bounds F itself, not only its expectation: F never rises.
  RandomProblem<TestType> rp(300, 40, 4, 0.25, 5);
  const auto problem = rp.problem();
  const double slack = std::is_same_v<TestType, float> ? 1e-6 : 1e-12;
  const RichtarikTakac jacobi{.tau = 64};
  check_monotone(BlockCD<SquaredHinge, L1L2, RichtarikTakac>({}, {.lambda = 2e-3},
                                                             {.max_epochs = 200, .threads = 2, .step_rule = jacobi}),
                 problem, slack);
  check_monotone(BlockCD<Logistic, L1, RichtarikTakac>(
                     {}, {.lambda = 1e-3}, {.max_epochs = 200, .fit_intercept = true, .threads = 2, .step_rule = jacobi}),
                 problem, slack);
  check_monotone(BlockCD<OvrSquaredHinge, L1Linf, RichtarikTakac>(
                     {}, {.lambda = 1e-3, .mu = 1e-3}, {.max_epochs = 200, .threads = 1, .step_rule = jacobi}),
                 problem, slack);
}

TEST_CASE("BlockCD with and without shrinking reaches the same optimum", "[bcd]") {
  RandomProblem<double> rp(400, 120, 5, 0.1, 8);
  const auto problem = rp.problem();
  const L1L2 penalty{.lambda = 0.3 * lambda_max(SquaredHinge{}, L1L2{}, problem, false)};
  auto check = [&](auto rule) {
    using Rule = decltype(rule);
    const auto on = BlockCD<SquaredHinge, L1L2, Rule>({}, penalty, {.tol = 1e-8, .max_epochs = 20000}).fit(problem);
    const auto off =
        BlockCD<SquaredHinge, L1L2, Rule>({}, penalty, {.tol = 1e-8, .max_epochs = 20000, .shrinking = false}).fit(problem);
    REQUIRE(on.info.status == Status::converged);
    REQUIRE(off.info.status == Status::converged);
    CHECK(rel(on.info.objective, off.info.objective) <= 1e-9);
    CHECK(on.model.support() == off.model.support());
    CHECK(on.model.nnz_rows() < 120);  // a problem where shrinking has zero rows to drop
  };
  check(TsengYun{});
  check(RichtarikTakac{});
  check(RichtarikTakac{.tau = 8});
}

TEST_CASE("BlockCD's per-entry working sets (one-vs-rest, l1) reach the optimum without shrinking's help", "[bcd]") {
  // With shrinking, a one-vs-rest row in a shrunk epoch is visited on the classes listed at its
  // last whole-row visit (and a step moving few classes is tried class by class); without, every
  // entry every epoch. K = 12 so that rows have lists of at most K/2 classes.
  RandomProblem<double> rp(300, 80, 12, 0.1, 21);
  const auto problem = rp.problem();
  const L1 penalty{.lambda = 0.5 * lambda_max(OvrSquaredHinge{}, L1{}, problem, false)};
  const auto fit = [&](bool shrinking) {
    const auto r = BlockCD<OvrSquaredHinge, L1, TsengYun>({}, penalty,
                                                          {.tol = 1e-9, .max_epochs = 20000, .shrinking = shrinking})
                       .fit(problem);
    REQUIRE(r.info.status == Status::converged);
    return r;
  };
  const auto on = fit(true), off = fit(false);
  CHECK(rel(on.info.objective, off.info.objective) <= 1e-8);
  CHECK(on.model.support() == off.model.support());
  const ClassMatrix<double> W_on = on.model.dense(), W_off = off.model.dense();
  const auto nonzero = (W_on.array() != 0.0).count();
  CHECK(nonzero == (W_off.array() != 0.0).count());
  CHECK(nonzero < W_on.size() / 4);  // sparse within rows: the lists are short
}

TEST_CASE("BlockCD's focus sweeps change the route to the optimum, not the optimum", "[bcd]") {
  // The extra sweeps over an epoch's most violating rows (TsengYun::focus_sweeps) run only in
  // shrunk epochs: with and without them, and with every row revisited, the same certified F.
  RandomProblem<double> rp(400, 120, 5, 0.1, 8);
  const auto problem = rp.problem();
  const L1L2 penalty{.lambda = 0.3 * lambda_max(SquaredHinge{}, L1L2{}, problem, false)};
  const auto fit = [&](TsengYun rule) {
    const auto r = BlockCD<SquaredHinge, L1L2, TsengYun>({}, penalty, {.tol = 1e-8, .max_epochs = 20000, .step_rule = rule})
                       .fit(problem);
    REQUIRE(r.info.status == Status::converged);
    return r;
  };
  const auto focused = fit({});
  const auto plain = fit({.focus_sweeps = 0});
  const auto every_row = fit({.focus_sweeps = 5, .focus_share = 1.0});
  CHECK(rel(focused.info.objective, plain.info.objective) <= 1e-7);
  CHECK(rel(every_row.info.objective, plain.info.objective) <= 1e-7);
  CHECK(focused.model.support() == plain.model.support());
  CHECK_THROWS_WITH((BlockCD<SquaredHinge, L1L2, TsengYun>({}, {}, {.step_rule = {.focus_sweeps = -1}})),
                    Catch::Contains("step_rule.focus_sweeps"));
  CHECK_THROWS_WITH((BlockCD<SquaredHinge, L1L2, TsengYun>({}, {}, {.step_rule = {.focus_share = 0.0}})),
                    Catch::Contains("step_rule.focus_share"));
  CHECK_THROWS_WITH((BlockCD<SquaredHinge, L1L2, RichtarikTakac>({}, {}, {.step_rule = {.tau = -1}})),
                    Catch::Contains("step_rule.tau"));
}

TEST_CASE("BlockCD shrinking is re-checked: a problem needing rows back still converges", "[bcd]") {
  // dna at a small λ: many rows are zero early (and shrunk) but nonzero at the optimum.
  const auto data = read_dna();
  REQUIRE(data);  // data/dna.scale ships with the repository
  const auto problem = data->problem<Eigen::ColMajor>();
  const L1L2 penalty{.lambda = 1e-2};
  const double tol = sanitizer_run() ? 1e-4 : 1e-6;
  const auto on = BlockCD<SquaredHinge, L1L2, TsengYun>({}, penalty, {.tol = tol, .max_epochs = 20000}).fit(problem);
  const auto off =
      BlockCD<SquaredHinge, L1L2, TsengYun>({}, penalty, {.tol = tol, .max_epochs = 20000, .shrinking = false}).fit(problem);
  REQUIRE(on.info.status == Status::converged);
  REQUIRE(off.info.status == Status::converged);
  CHECK(rel(on.info.objective, off.info.objective) <= (sanitizer_run() ? 1e-3 : 1e-6));
  const auto kkt = optimality_violation(SquaredHinge{}, penalty, problem, on.model.dense(), ClassVector<double>(), false);
  const auto kkt0 = optimality_violation(SquaredHinge{}, penalty, problem, ClassMatrix<double>::Zero(180, 3),
                                         ClassVector<double>(), false);
  CHECK(kkt.max_row <= (sanitizer_run() ? 1e-2 : 1e-4) * kkt0.max_row);
}

TEMPLATE_TEST_CASE("BlockCD warm-started at its optimum stops after one epoch", "[bcd]", SPARSEMC_TEST_SCALARS) {
  RandomProblem<TestType> rp(250, 30, 4, 0.3, 12);
  const auto problem = rp.problem();
  const double tol = std::is_same_v<TestType, float> ? 1e-4 : 1e-6;
  auto check = [&](const auto& solver) {
    const auto cold = solver.fit(problem);
    REQUIRE(cold.info.status == Status::converged);
    REQUIRE(cold.info.epochs > 1);
    const auto warm = solver.fit(problem, cold.model);
    CHECK(warm.info.status == Status::converged);
    CHECK(warm.info.epochs == 1);
    CHECK(warm.info.objective <= cold.info.objective * (1 + 1e-6));
  };
  check(BlockCD<SquaredHinge, L1L2, TsengYun>({}, {.lambda = 1e-3}, {.tol = tol}));
  check(BlockCD<Logistic, L1, RichtarikTakac>({}, {.lambda = 1e-3}, {.tol = tol, .fit_intercept = true}));
}

TEST_CASE("BlockCD reproduces a seeded solve bit for bit", "[bcd]") {
  RandomProblem<double> rp(200, 30, 4, 0.3, 2);
  const auto problem = rp.problem();
  auto check = [&](auto rule) {
    using Solver = BlockCD<Logistic, L1L2, decltype(rule)>;
    const typename Solver::Options a{.tol = 1e-5, .seed = 42, .fit_intercept = true, .step_rule = rule};
    auto b = a;
    b.seed = 43;
    const auto first = Solver({}, {.lambda = 1e-3}, a).fit(problem);
    const auto second = Solver({}, {.lambda = 1e-3}, a).fit(problem);
    const auto other = Solver({}, {.lambda = 1e-3}, b).fit(problem);
    CHECK(first.model.support() == second.model.support());
    CHECK(first.model.dense() == second.model.dense());
    CHECK(first.model.intercept() == second.model.intercept());
    CHECK(first.info.objective == second.info.objective);
    CHECK(first.info.epochs == second.info.epochs);
    CHECK(first.info.measure == second.info.measure);
    CHECK(!(first.model.dense() == other.model.dense() && first.model.intercept() == other.model.intercept()));
  };
  check(TsengYun{});
  check(RichtarikTakac{});
  check(RichtarikTakac{.tau = 5});
}

TEMPLATE_TEST_CASE("BlockCD fits an unpenalised intercept", "[bcd]", SPARSEMC_TEST_SCALARS) {
  RandomProblem<TestType> rp(300, 25, 4, 0.3, 6);
  // Shift the classes apart so that the intercept matters: class k gets 3 extra samples' worth
  // of weight by duplication of its first rows... simpler: a constant feature makes b identifiable.
  const auto problem = rp.problem();
  const double tol = std::is_same_v<TestType, float> ? 1e-5 : 1e-8;
  auto check = [&](auto loss, auto rule) {
    using Loss = decltype(loss);
    const L1L2 penalty{.lambda = 2e-3};
    const auto result = BlockCD<Loss, L1L2, decltype(rule)>({}, penalty, {.tol = tol, .max_epochs = 50000, .fit_intercept = true})
                            .fit(problem);
    REQUIRE(result.info.status == Status::converged);
    REQUIRE(result.model.has_intercept());
    CHECK(result.model.intercept().cwiseAbs().maxCoeff() > 0);
    const auto kkt = optimality_violation(loss, penalty, problem, result.model.dense(), result.model.intercept(), true);
    const auto kkt0 = optimality_violation(loss, penalty, problem, ClassMatrix<TestType>::Zero(25, 4),
                                           ClassVector<TestType>::Zero(4), true);
    const double factor = std::is_same_v<TestType, float> ? 3e-3 : 1e-5;
    CHECK(kkt.intercept <= factor * kkt0.total());
    CHECK(kkt.total() <= factor * kkt0.total());
    // Without an intercept the optimum is worse.
    const auto plain = BlockCD<Loss, L1L2, decltype(rule)>({}, penalty, {.tol = tol, .max_epochs = 50000}).fit(problem);
    CHECK(!plain.model.has_intercept());
    CHECK(result.info.objective < plain.info.objective);
  };
  check(SquaredHinge{}, TsengYun{});
  check(OvrSquaredHinge{}, RichtarikTakac{});
  check(Logistic{}, TsengYun{});
}

TEMPLATE_TEST_CASE("BlockCD: a sample of weight 2 is a duplicated sample", "[bcd]", SPARSEMC_TEST_SCALARS) {
  using Scalar = TestType;
  RandomProblem<Scalar> rp(120, 20, 3, 0.3, 31);
  const std::int32_t n = 120, twice = 7;
  // The duplicated problem: sample `twice` appears again as row n.
  CscMatrix<Scalar> dup(n + 1, 20);
  {
    const CsrMatrix<Scalar> rows = rp.A;
    std::vector<Eigen::Triplet<Scalar>> t;
    for (std::int32_t i = 0; i < n; ++i)
      for (typename CsrMatrix<Scalar>::InnerIterator it(rows, i); it; ++it) {
        t.emplace_back(i, static_cast<std::int32_t>(it.col()), it.value());
        if (i == twice) t.emplace_back(n, static_cast<std::int32_t>(it.col()), it.value());
      }
    dup.setFromTriplets(t.begin(), t.end());
    dup.makeCompressed();
  }
  LabelSets dup_labels(3);
  const auto y = rp.labels.view();
  for (std::size_t i = 0; i < y.size(); ++i) dup_labels.push_back(y[i]);
  dup_labels.push_back(y[static_cast<std::size_t>(twice)]);
  const CscProblem<Scalar> duplicated{CscView<Scalar>(dup), dup_labels.view(), {}};
  // (1/(n+1)) Σ ℓ over the duplicated set = (1/n) Σ c_i ℓ_i with c = n/(n+1) · (1, …, 2, …, 1).
  std::vector<Scalar> weights(static_cast<std::size_t>(n), static_cast<Scalar>(double(n) / (n + 1)));
  weights[static_cast<std::size_t>(twice)] *= 2;
  const CscProblem<Scalar> weighted{CscView<Scalar>(rp.A), rp.labels.view(), weights};

  const double tol = std::is_same_v<Scalar, float> ? 1e-5 : 1e-9;
  const BlockCD<SquaredHinge, L1L2, TsengYun> solver({}, {.lambda = 3e-3}, {.tol = tol, .max_epochs = 50000});
  const auto a = solver.fit(duplicated);
  const auto b = solver.fit(weighted);
  REQUIRE(a.info.status == Status::converged);
  REQUIRE(b.info.status == Status::converged);
  const double agree = std::is_same_v<Scalar, float> ? 1e-4 : 1e-8;
  CHECK(rel(a.info.objective, b.info.objective) <= agree);
  CHECK((a.model.dense() - b.model.dense()).cwiseAbs().maxCoeff() <= 100 * agree);
}

TEST_CASE("BlockCD gives the same result with int32 and int64 indices", "[bcd]") {
  RandomProblem<double, std::int32_t> small(150, 20, 3, 0.3, 14);
  RandomProblem<double, std::int64_t> wide(150, 20, 3, 0.3, 14);
  const BlockCD<OvrSquaredHinge, L1, RichtarikTakac> solver({}, {.lambda = 1e-3}, {.tol = 1e-6, .seed = 3});
  const auto a = solver.fit(small.problem());
  const auto b = solver.fit(wide.problem());
  CHECK(a.model.dense() == b.model.dense());
  CHECK(a.info.objective == b.info.objective);
  CHECK(a.info.epochs == b.info.epochs);
}

/// Opens the allocation window after the first epoch (warm-up: e.g. a penalty's per-thread
/// scratch) and closes it at the end of the solve; the counts are read at the end of each
/// epoch, so the returned model and its objective (built after the last epoch) are not counted.
/// Allocations in epochs that evaluated the duality gap are counted apart (and must be 0 too:
/// the solver sizes the gap's work space in its setup).
struct AllocationWindow {
  long new_calls = 0;
  long eigen_mallocs = 0;
  long gap_new_calls = 0;
  long gap_eigen_mallocs = 0;
  bool end_epoch(const EpochReport& report) {
    if (report.epoch == 1) alloc_probe::open_window();
    const long n = alloc_probe::new_calls.load(), e = alloc_probe::eigen_mallocs.load();
    if (report.epoch > 1 && !std::isnan(report.relative_gap)) {
      gap_new_calls += n - seen_new;
      gap_eigen_mallocs += e - seen_eigen;
    }
    seen_new = n;
    seen_eigen = e;
    new_calls = n - gap_new_calls;
    eigen_mallocs = e - gap_eigen_mallocs;
    return false;
  }
  long seen_new = 0, seen_eigen = 0;
  void end(const SolverInfo&) { alloc_probe::close_window(); }
};

TEST_CASE("BlockCD epochs do not allocate", "[bcd]") {
  RandomProblem<double> rp(200, 30, 4, 0.3, 19);
  const auto problem = rp.problem();
  auto check = [&](const auto& solver) {
    AllocationWindow window;
    const auto result = solver.fit(problem, window);
    CHECK(result.info.epochs > 2);
    CHECK(window.new_calls == 0);
    CHECK(window.eigen_mallocs == 0);
    CHECK(window.gap_new_calls == 0);
    CHECK(window.gap_eigen_mallocs == 0);
  };
  check(BlockCD<SquaredHinge, L1L2, TsengYun>({}, {.lambda = 1e-3}, {.tol = 1e-6, .fit_intercept = true}));
  check(BlockCD<Logistic, L1Linf, TsengYun>({}, {.lambda = 1e-3}, {.tol = 1e-6, .fit_intercept = true}));
  check(BlockCD<OvrSquaredHinge, L1, RichtarikTakac>({}, {.lambda = 1e-3}, {.tol = 1e-6}));
  check(BlockCD<LeastSquares, L1L2, RichtarikTakac>({}, {.lambda = 1e-3}, {.tol = 1e-6}));
  check(BlockCD<SquaredHinge, L1L2, RichtarikTakac>(
      {}, {.lambda = 1e-3}, {.tol = 1e-6, .fit_intercept = true, .threads = 2, .step_rule = {.tau = 6}}));
}

TEST_CASE("BlockCD on the used columns only is the fit on all of them, renumbered", "[bcd]") {
  // 20 of 4000 columns occur (hashed features); Dataset::compact_features gives the solver
  // those 20 and expand_features puts the rows back. Both fits reach the same optimum of (1).
  RandomProblem<double> rp(80, 20, 3, 0.3, 41);
  const CsrMatrix<double> narrow = to_csr(rp.problem().X);
  CsrMatrix<double> X(narrow.rows(), 4000);
  X.reserve(narrow.nonZeros());
  for (std::int32_t i = 0; i < narrow.rows(); ++i) {
    X.startVec(i);
    for (CsrMatrix<double>::InnerIterator it(narrow, i); it; ++it) X.insertBack(i, 7 + 197 * it.col()) = it.value();
  }
  X.finalize();
  Dataset<double> wide(X, rp.labels, LabelEncoder({0, 1, 2}));
  Dataset<double> compact = wide;
  const FeatureMap map = compact.compact_features();
  REQUIRE(compact.n_features() == 20);

  const BlockCD<SquaredHinge, L1L2, TsengYun> solver({}, {.lambda = 1e-3}, {.tol = 1e-9, .max_epochs = 100000});
  const auto on_all = solver.fit(wide.problem<Eigen::ColMajor>());
  auto on_used = solver.fit(compact.problem<Eigen::ColMajor>());
  REQUIRE(on_all.info.status == Status::converged);
  REQUIRE(on_used.info.status == Status::converged);
  on_used.model = expand_features(on_used.model, map);
  CHECK(on_used.model.n_features() == 4000);
  CHECK(rel(on_used.info.objective, on_all.info.objective) <= 1e-8);
  GapWorkspace<double> work;
  const DualityGap gap = duality_gap(SquaredHinge{}, L1L2{.lambda = 1e-3}, wide.problem<Eigen::RowMajor>(), on_used.model, work);
  CHECK(gap.relative() <= 1e-9);
}

TEST_CASE("BlockCD handles inert columns, W = 0 optima, budgets and bad options", "[bcd]") {
  RandomProblem<double> rp(100, 12, 3, 0.3, 23);
  // Column 5 emptied: no sample depends on W_5, whose optimum is 0 whatever the warm start.
  for (auto p = rp.A.outerIndexPtr()[5]; p < rp.A.outerIndexPtr()[6]; ++p) rp.A.valuePtr()[p] = 0;
  const auto problem = rp.problem();
  const double lmax = lambda_max(SquaredHinge{}, L1L2{}, problem, false);
  using Solver = BlockCD<SquaredHinge, L1L2, TsengYun>;

  ClassMatrix<double> W0 = ClassMatrix<double>::Constant(12, 3, 0.1);
  const LinearModel<double> start(W0, {}, iota_labels<double>(3));
  // (From this start the squared hinge's flat valley makes the descent slow: ~1500 epochs.)
  const auto fit = Solver({}, {.lambda = 1e-3}, {.tol = 1e-6, .max_epochs = 20000}).fit(problem, start);
  CHECK(fit.info.status == Status::converged);
  CHECK(fit.model.row_of_feature(5) == -1);

  // λ ≥ λ_max: W = 0 at once from a cold start; from a warm start, back to 0.
  const auto zero = Solver({}, {.lambda = 1.01 * lmax}, {.tol = 1e-6}).fit(problem);
  CHECK(zero.info.status == Status::converged);
  CHECK(zero.info.epochs == 0);
  CHECK(zero.model.nnz_rows() == 0);
  // The 0-epoch shortcut is taken only when the gap at the returned W = 0 certifies it.
  GapWorkspace<double> work;
  CHECK(duality_gap(SquaredHinge{}, L1L2{.lambda = 1.01 * lmax}, problem, zero.model, work).relative() <= 1e-6);
  CHECK(zero.info.relative_gap <= 1e-6);
  const auto back = Solver({}, {.lambda = 1.01 * lmax}, {.tol = 1e-6}).fit(problem, start);
  CHECK(back.info.status == Status::converged);
  CHECK(back.model.nnz_rows() == 0);
  // λ = λ_max exactly: the violation at W = 0 is 0 up to rounding, which must not be chased.
  for (const double tol : {1e-3, 1e-6, 1e-10}) {
    const auto at_max = Solver({}, {.lambda = lmax}, {.tol = tol}).fit(problem);
    CHECK(at_max.info.status == Status::converged);
    CHECK(at_max.info.epochs <= 1);
    CHECK(at_max.model.nnz_rows() == 0);
    CHECK(at_max.info.relative_gap <= tol);
    CHECK(duality_gap(SquaredHinge{}, L1L2{.lambda = lmax}, problem, at_max.model, work).relative() <= tol);
    const auto cst = BlockCD<SquaredHinge, L1L2, RichtarikTakac>({}, {.lambda = lmax}, {.tol = tol}).fit(problem);
    CHECK(cst.info.status == Status::converged);
    CHECK(cst.info.epochs <= 1);
    CHECK(cst.model.nnz_rows() == 0);
  }

  // Ridge only (NoPenalty, μ > 0): W = 0 is not optimal and must not be returned as such
  // (the infinite dual norm once made the stopping test vacuous: 0 epochs, W = 0).
  for (const bool intercept : {false, true}) {
    const auto ridge = BlockCD<Logistic, NoPenalty, TsengYun>({}, {.mu = 1e-3}, {.fit_intercept = intercept}).fit(problem);
    CHECK(ridge.info.status == Status::converged);
    CHECK(ridge.info.epochs > 0);
    CHECK(ridge.model.nnz_rows() > 0);
    CHECK(ridge.info.relative_gap <= 1e-3);
    CHECK(duality_gap(Logistic{}, NoPenalty{.mu = 1e-3}, problem, ridge.model, work).relative() <= 1e-3);
  }

  // Budgets and a stopping callback; a budget's stop still reports its gap.
  {
    const auto capped = Solver({}, {.lambda = 1e-4}, {.tol = 1e-12, .max_epochs = 3}).fit(problem);
    CHECK(capped.info.relative_gap > 0);
    CHECK(std::isfinite(capped.info.duality_gap));
  }
  CHECK(Solver({}, {.lambda = 1e-4}, {.tol = 1e-12, .max_epochs = 3}).fit(problem).info.status == Status::max_iter);
  struct StopAtTwo {
    bool end_epoch(const EpochReport& r) { return r.epoch == 2; }
  } stop;
  const auto stopped = Solver({}, {.lambda = 1e-4}, {.tol = 1e-12}).fit(problem, stop);
  CHECK(stopped.info.status == Status::stopped_by_callback);
  CHECK(stopped.info.epochs == 2);
  CHECK(stopped.model.provenance().solver == "bcd-ls");
  CHECK(stopped.model.provenance().status == "stopped_by_callback");

  // Options name the bad field; a warm start of the wrong shape is a bad argument.
  CHECK_THROWS_WITH(Solver({}, {}, {.tol = -1}), Catch::Contains("tol"));
  CHECK_THROWS_WITH(Solver({}, {}, {.max_epochs = 0}), Catch::Contains("max_epochs"));
  CHECK_THROWS_WITH(Solver({}, {}, {.step_rule = {.sigma = 1.5}}), Catch::Contains("step_rule.sigma"));
  CHECK_THROWS_WITH(Solver({}, {}, {.step_rule = {.beta = 0}}), Catch::Contains("step_rule.beta"));
  const LinearModel<double> wrong(ClassMatrix<double>::Zero(9, 3), {}, iota_labels<double>(3));
  CHECK_THROWS_AS(Solver({}, {}).fit(problem, wrong), std::invalid_argument);

  // A multiclass loss refuses multilabel data.
  RandomProblem<double> ml(50, 8, 3, 0.4, 2, false, RandomLabels::up_to_three);
  CHECK_THROWS_AS(Solver({}, {.lambda = 1e-3}).fit(ml.problem()), std::invalid_argument);

  // Non-finite data is a numerical issue, not a crash or a hang.
  auto A = rp.A;
  A.valuePtr()[0] = std::numeric_limits<double>::infinity();
  const CscProblem<double> bad{CscView<double>(A), rp.labels.view(), {}};
  CHECK(Solver({}, {.lambda = 1e-3}).fit(bad).info.status == Status::numerical_issue);
}

// ------------------------------------------------------------------------------------------------
// Regularisation path.
// ------------------------------------------------------------------------------------------------

TEST_CASE("regularization_path: a warm-started grid from lambda_max", "[bcd][path]") {
  const auto grid = lambda_grid(2.0, 5, 1e-2);
  REQUIRE(grid.size() == 5);
  CHECK(grid.front() == 2.0);
  CHECK(std::abs(grid.back() - 2e-2) <= 1e-15);
  CHECK(std::abs(grid[2] - 0.2) <= 1e-15);  // log-uniform
  CHECK(lambda_grid(2.0, 1, 0.5) == std::vector<double>{1.0});
  CHECK_THROWS_WITH(regularization_path(RandomProblem<double>(20, 4, 2, 0.5, 1).problem(),
                                        [](double l) { return BlockCD<Logistic, L1, TsengYun>({}, {.lambda = l}); },
                                        PathOptions{.ratio = 2}),
                    Catch::Contains("ratio"));

  const auto data = read_dna();
  REQUIRE(data);  // data/dna.scale ships with the repository
  const auto test = io::read_libsvm_plain<double>(sparsemc_test::repo_data() / "dna.scale.t",
                                                 {.n_features = data->n_features(), .labels = data->encoder()});
  const auto problem = data->problem<Eigen::ColMajor>();
  const double tol = 1e-5;
  auto make = [tol](double lambda) {
    return BlockCD<SquaredHinge, L1L2, TsengYun>({}, {.lambda = lambda}, {.tol = tol, .fit_intercept = true});
  };
  const std::int32_t N = sanitizer_run() ? 4 : 10;
  const auto path = regularization_path(problem, make, PathOptions{.n_lambdas = N, .ratio = 1e-2},
                                        HeldOutAccuracy<double>{test.csr(), test.labels().view()});
  CHECK(path.lambda_max == lambda_max(SquaredHinge{}, L1L2{}, problem, true));
  REQUIRE(path.points.size() == static_cast<std::size_t>(N));
  REQUIRE(path.models.size() == static_cast<std::size_t>(N));
  // λ_max: W = 0 (with the best intercept), to the tolerance: the row defining λ_max sits on
  // the boundary ‖G_j‖ = λ at the optimum, so the tiniest intercept error can leave it nonzero.
  CHECK(path.models.front().weights().norm() <= 1e-5);
  for (std::size_t k = 0; k < path.points.size(); ++k) {
    const auto& p = path.points[k];
    CHECK(p.status == Status::converged);
    // The point's accuracy is its own model's on the test set (not a neighbour's, not stale).
    CHECK(p.accuracy == metrics::accuracy(path.models[k].predict_classes(test.csr()), test.labels().view()));
    if (k > 0) {
      CHECK(p.lambda < path.points[k - 1].lambda);
      CHECK(p.objective < path.points[k - 1].objective);  // F*(λ) increases with λ
    }
    // Each point is a solution of its own λ.
    const L1L2 penalty{.lambda = p.lambda};
    const auto kkt = optimality_violation(SquaredHinge{}, penalty, problem, path.models[k].dense(),
                                          path.models[k].intercept(), true);
    const auto kkt0 = optimality_violation(SquaredHinge{}, penalty, problem, ClassMatrix<double>::Zero(180, 3),
                                           ClassVector<double>::Zero(3), true);
    CHECK(kkt.total() <= 1e-2 * kkt0.total());  // O(√gap) at a relative gap of 1e-5, hence 1e-2
    // The certificate, recomputed from the returned model: relative gap of (1) <= tol.
    GapWorkspace<double> work;
    CHECK(duality_gap(SquaredHinge{}, penalty, problem, path.models[k], work).relative() <= tol);
  }
  CHECK(path.points.back().nnz_rows > 50);
  CHECK(path.points.back().accuracy > 0.9);
  CHECK(path.seconds() > 0);
}

/// A path with strong-rule screening and extrapolated starts (fit_path, Options::screening and
/// extrapolate_path) against the same path without either and against cold solves at each λ:
/// the same objective, and at every point every row meets the optimality conditions (the
/// screened-out rows included).
template <class Loss, class Penalty, class Scalar, class Index>
void check_screened_path(const CscProblem<Scalar, Index>& problem, bool intercept, std::int32_t N, double tol,
                         double agree) {
  auto make = [=](bool screening, bool extrapolate = true) {
    return [=](double lambda) {
      Penalty penalty{};
      penalty.lambda = lambda;
      penalty.mu = 0;
      return BlockCD<Loss, Penalty, TsengYun>({}, penalty,
                                              {.tol = tol,
                                               .max_epochs = 100000,
                                               .fit_intercept = intercept,
                                               .screening = screening,
                                               .extrapolate_path = extrapolate});
    };
  };
  const PathOptions options{.n_lambdas = N, .ratio = 0.05};
  const auto screened = regularization_path(problem, make(true), options);
  const auto plain = regularization_path(problem, make(false, false), options);
  REQUIRE(screened.points.size() == static_cast<std::size_t>(N));
  REQUIRE(plain.points.size() == static_cast<std::size_t>(N));
  const auto d = problem.n_features();
  const auto K = problem.n_classes();
  for (std::size_t k = 0; k < screened.points.size(); ++k) {
    const auto& p = screened.points[k];
    INFO("point " << k << " lambda " << p.lambda);
    CHECK(p.status == Status::converged);
    CHECK(plain.points[k].status == Status::converged);
    CHECK(rel(p.objective, plain.points[k].objective) <= agree);
    const auto cold = make(true)(p.lambda).fit(problem);
    CHECK(rel(p.objective, cold.info.objective) <= agree);
    Penalty penalty{};
    penalty.lambda = p.lambda;
    const auto model = screened.models[k];
    const auto kkt = optimality_violation(Loss{}, penalty, problem, model.dense(),
                                          intercept ? model.intercept() : ClassVector<Scalar>(), intercept);
    const auto kkt0 = optimality_violation(Loss{}, penalty, problem, ClassMatrix<Scalar>::Zero(d, K),
                                           ClassVector<Scalar>::Zero(intercept ? K : 0), intercept);
    // Every row: its exact violation is within the tolerance of the stopping test, tol times
    // v_0 = Σ_j v_j(0) + ‖∇_b L(0)‖ ≤ √(d + 1)·‖v(0)‖₂ (the violations at W = 0, b = 0).
    // (plus rounding: v_0 vanishes at λ_max when the best intercept is near 0).
    const double v0 = std::sqrt(static_cast<double>(d + 1)) * kkt0.total();
    const double floor = std::is_same_v<Scalar, float> ? 1e-5 : 1e-8;
    CHECK(kkt.max_row <= 10 * tol * v0 + floor);
    CHECK(kkt.intercept <= 10 * tol * v0 + floor);
  }
}

TEST_CASE("fit_path: strong-rule screening gives the unscreened path, KKT on every row", "[bcd][path]") {
  const bool small = sanitizer_run();
  SECTION("random, squared hinge + l1/l2, l1, l1/linf") {
    const RandomProblem<double> data(small ? 80 : 200, small ? 60 : 150, 4, 0.08, 7);
    const auto problem = data.problem();
    check_screened_path<SquaredHinge, L1L2>(problem, false, small ? 5 : 12, 1e-8, 1e-7);
    check_screened_path<SquaredHinge, L1>(problem, true, small ? 5 : 12, 1e-8, 1e-7);
    check_screened_path<SquaredHinge, L1Linf>(problem, false, small ? 5 : 12, 1e-8, 1e-7);
  }
  SECTION("random, one-vs-rest (multilabel) and logistic, weighted, float") {
    const RandomProblem<double> multilabel(small ? 80 : 200, small ? 50 : 120, 5, 0.08, 11, true, RandomLabels::up_to_three);
    check_screened_path<OvrSquaredHinge, L1>(multilabel.problem(), false, small ? 4 : 10, 1e-8, 1e-7);
    const RandomProblem<double> weighted(small ? 80 : 200, small ? 50 : 120, 3, 0.08, 13, true);
    check_screened_path<Logistic, L1L2>(weighted.problem(), true, small ? 4 : 10, 1e-8, 1e-7);
    const RandomProblem<float> single(small ? 80 : 200, small ? 50 : 120, 3, 0.08, 17);
    check_screened_path<SquaredHinge, L1L2>(single.problem(), false, small ? 4 : 8, 1e-5, 1e-4);
  }
  SECTION("dna, squared hinge + l1/l2 with intercept") {
    const auto data = read_dna();
    REQUIRE(data);
    check_screened_path<SquaredHinge, L1L2>(data->problem<Eigen::ColMajor>(), true, small ? 3 : 8, 1e-7, 1e-6);
  }
}

TEST_CASE("fit_path: one result per lambda, lambda >= lambda_max gives W = 0", "[bcd][path]") {
  const RandomProblem<double> data(80, 50, 3, 0.1, 3);
  const auto problem = data.problem();
  const double top = lambda_max(SquaredHinge{}, L1L2{}, problem, false);
  const BlockCD<SquaredHinge, L1L2, TsengYun> solver({}, {.lambda = 1.0}, {.tol = 1e-8});
  const std::vector<double> lambdas{2 * top, top, 0.3 * top, 0.29 * top, 0.05 * top};
  const auto results = solver.fit_path(problem, std::span<const double>(lambdas));
  REQUIRE(results.size() == lambdas.size());
  CHECK(results[0].model.nnz_rows() == 0);
  CHECK(results[0].info.epochs == 0);
  for (std::size_t k = 0; k < lambdas.size(); ++k) {
    CHECK(results[k].model.provenance().lambda == lambdas[k]);
    CHECK(results[k].info.status == Status::converged);
    const auto cold = BlockCD<SquaredHinge, L1L2, TsengYun>({}, {.lambda = lambdas[k]}, {.tol = 1e-8}).fit(problem);
    CHECK(rel(results[k].info.objective, cold.info.objective) <= 1e-7);
  }
  CHECK(results.back().model.nnz_rows() > 0);
  CHECK_THROWS_WITH(solver.fit_path(problem, std::span<const double>(std::vector<double>{-1.0})), Catch::Contains("lambda"));
}

TEMPLATE_TEST_CASE("BlockCD on a column-major dense X: the fit of its stored CSC bit for bit, the CSC optimum",
                   "[bcd][dense]", SPARSEMC_TEST_SCALARS) {
  const RandomProblem<TestType> rp(160, 24, 4, 0.4, 23, true);
  const double tol = std::is_same_v<TestType, float> ? 1e-4 : 1e-8;
  SECTION("bcd-ls, squared hinge + l1l2, intercept") {
    check_dense_columns_fit(rp, BlockCD<SquaredHinge, L1L2, TsengYun>({}, {.lambda = 1e-2}, {.tol = tol, .fit_intercept = true}), tol);
  }
  SECTION("bcd-ls, logistic + l1") {
    check_dense_columns_fit(rp, BlockCD<Logistic, L1, TsengYun>({}, {.lambda = 1e-2, .mu = 1e-3}, {.tol = tol}), tol);
  }
  SECTION("bcd-cst, parallel rounds on two threads") {
    check_dense_columns_fit(
        rp, BlockCD<SquaredHinge, L1L2, RichtarikTakac>({}, {.lambda = 1e-2}, {.tol = tol, .seed = 4, .threads = 2}), tol);
  }
  SECTION("bcd-ls, one-vs-rest class ranges on two threads") {
    check_dense_columns_fit(rp, BlockCD<OvrSquaredHinge, L1, TsengYun>({}, {.lambda = 1e-2}, {.tol = tol, .threads = 2}), tol);
  }
}
