// SCD (Tao, Kong, Chu & Wu; solver/scd/), part 1: the coordinate kernels against brute force
// (objective.hpp and the losses' own members), RDA on Crammer–Singer + ℓ1 against an LP optimum and
// its O(1/√t) rate, callbacks, reproducibility, options. Part 2 (test_scd_solvers.cpp): the smooth
// variants against FISTA, BlockCD and LIBLINEAR -s 5, the binary mirror reduction, warm starts.
#include "scd_test_support.hpp"
#include "test_scalars.hpp"

using namespace sparsemc;
using namespace sparsemc::scd_test;

// ------------------------------------------------------------------------------------------------
// The losses' coordinate kernels (loss/kernels/coordinate_kernel.hpp) against brute force.
// ------------------------------------------------------------------------------------------------

/// For a smooth loss: a'(0), a''(0) and L_jr of every coordinate (and of the intercepts), the
/// excess of tracked steps over the quadratic model, undo, and the cache after many steps.
template <class Loss, class Scalar>
void check_smooth_kernel(bool multilabel) {
  using Index = std::int32_t;
  using Kernel = kernels::CoordinateKernelFor<Loss, Scalar, Index>;
  using Need = kernels::CoordinateNeed;
  const ClassIndex K = 4;
  const Index n = 37, d = 11;
  RandomProblem<Scalar> rp(n, d, K, 0.35, 3, true, multilabel ? RandomLabels::each_class : RandomLabels::multiclass);
  const auto problem = rp.problem();
  // References, not a structured binding: the lambda below captures them (clang 14 cannot
  // capture bindings).
  auto point = random_point<Scalar>(d, K, 17);
  auto& W = point.first;
  auto& b = point.second;
  std::vector<Index> rows(static_cast<std::size_t>(n));
  std::iota(rows.begin(), rows.end(), Index(0));
  const std::vector<Scalar> ones(static_cast<std::size_t>(n), Scalar(1));
  Kernel kernel(Loss{}, problem, static_cast<std::size_t>(n), false);
  kernel.set_scores(problem.X, &W, &b);
  const double tol = std::is_same_v<Scalar, float> ? 2e-5 : 1e-11;
  INFO(Loss::name << (multilabel ? " multilabel" : "") << (std::is_same_v<Scalar, float> ? " float" : " double"));

  auto check_all = [&](const char* when) {
    INFO(when);
    const auto [G, gb] = gradient_at<Loss>(problem, W, b);
    CHECK(rel(kernel.loss_part(), loss_at<Loss>(problem, W, b)) <= tol);
    for (std::size_t j = 0; j <= static_cast<std::size_t>(d); ++j) {
      const auto col = column_or_ones(problem, j, rows, ones);
      for (ClassIndex r = 0; r < K; ++r) {
        const auto part = kernel.template partial<Need::curvature>(col, r);
        const double g = j < static_cast<std::size_t>(d) ? static_cast<double>(G(static_cast<Eigen::Index>(j), r))
                                                          : static_cast<double>(gb[r]);
        const double scale = std::max(1.0, std::abs(g));
        CHECK(std::abs(part.gradient - g) <= tol * scale);
        CHECK(std::abs(part.curvature - curvature_at<Loss>(problem, W, b, j, r)) <= tol * std::max(1.0, part.curvature));
        CHECK(std::abs(kernel.template partial<Need::gradient>(col, r).gradient - part.gradient) <= tol * scale);
      }
    }
  };
  check_all("at the start point");

  // L_jr bounds every second difference along the coordinate (the coordinate Lipschitz constant).
  Rng rng(99);
  for (int trial = 0; trial < 20; ++trial) {
    const auto j = static_cast<std::size_t>(uniform_index(rng, static_cast<std::uint64_t>(d)));
    const auto r = static_cast<ClassIndex>(uniform_index(rng, K));
    const auto col = problem.X.outer(static_cast<Index>(j));
    auto part = kernel.template partial<Need::bound>(col, r);
    double sq = 0.0;
    for (auto [i, x] : col) sq += static_cast<double>(problem.weight(i)) * double(x) * double(x) / n;
    if constexpr (Kernel::constant_bound) part.bound = kernel.kappa() * sq;
    const double L0 = loss_at<Loss>(problem, W, b);
    for (const double z : {-2.0, -0.3, 0.05, 0.7, 3.0}) {
      ClassMatrix<Scalar> Wz = W;
      Wz(static_cast<Eigen::Index>(j), r) += static_cast<Scalar>(z);
      const double second = 2.0 * (loss_at<Loss>(problem, Wz, b) - L0 - part.gradient * z) / (z * z);
      CHECK(second <= part.bound * (1 + 1e-6) + 1e3 * tol);
    }
  }

  // Tracked steps: the excess over the model g z + (h/2) z², then undo restores everything.
  for (int trial = 0; trial < 30; ++trial) {
    const auto j = static_cast<std::size_t>(uniform_index(rng, static_cast<std::uint64_t>(d + 1)));
    const auto r = static_cast<ClassIndex>(uniform_index(rng, K));
    const auto col = column_or_ones(problem, j, rows, ones);
    const auto z = static_cast<Scalar>(trial % 2 == 0 ? 0.05 * (uniform_real(rng) - 0.5) : 3 * (uniform_real(rng) - 0.5));
    const auto part = kernel.template partial<Need::curvature>(col, r);
    const double before = loss_at<Loss>(problem, W, b);
    const auto change = kernel.template step<true>(col, r, z, part.gradient, part.curvature);
    ClassMatrix<Scalar> Wz = W;
    ClassVector<Scalar> bz = b;
    if (j < static_cast<std::size_t>(d)) Wz(static_cast<Eigen::Index>(j), r) += z;
    else bz[r] += z;
    const double after = loss_at<Loss>(problem, Wz, bz);
    const double dz = static_cast<double>(z);
    const double excess = (after - before) - (part.gradient * dz + 0.5 * part.curvature * dz * dz);
    CHECK(std::abs(change.excess - excess) <= 10 * tol * std::max(1.0, std::abs(before)));
    CHECK(change.magnitude >= 0.0);
    kernel.undo(col, r);
    const auto again = kernel.template partial<Need::curvature>(col, r);
    CHECK(again.gradient == part.gradient);
    CHECK(again.curvature == part.curvature);
  }
  check_all("after tracked steps and undo");

  // Many untracked steps: the incrementally kept cache stays exact.
  for (int trial = 0; trial < 200; ++trial) {
    const auto j = static_cast<std::size_t>(uniform_index(rng, static_cast<std::uint64_t>(d + 1)));
    const auto r = static_cast<ClassIndex>(uniform_index(rng, K));
    const auto z = static_cast<Scalar>(uniform_real(rng) - 0.5);
    kernel.template step<false>(column_or_ones(problem, j, rows, ones), r, z);
    if (j < static_cast<std::size_t>(d)) W(static_cast<Eigen::Index>(j), r) += z;
    else b[r] += z;
  }
  check_all("after 200 untracked steps");
}

TEMPLATE_TEST_CASE("scd kernels: coordinate derivatives, curvature, bounds, steps and undo match brute force",
                   "[scd][kernel]", SPARSEMC_TEST_SCALARS) {
  check_smooth_kernel<OvrSquaredHinge, TestType>(false);
  check_smooth_kernel<OvrSquaredHinge, TestType>(true);
  check_smooth_kernel<SquaredHinge, TestType>(false);
  check_smooth_kernel<HuberHinge, TestType>(false);
  check_smooth_kernel<Logistic, TestType>(false);
  check_smooth_kernel<Logistic, TestType>(true);
  check_smooth_kernel<LeastSquares, TestType>(true);  // the generic kernel
}

TEMPLATE_TEST_CASE("scd kernels: the Crammer-Singer subgradient component matches the loss's subgradient",
                   "[scd][kernel]", SPARSEMC_TEST_SCALARS) {
  using Scalar = TestType;
  using Index = std::int32_t;
  for (const bool multilabel : {false, true}) {
    INFO((multilabel ? "multilabel" : "multiclass"));
    const ClassIndex K = 5;
    const Index n = 41, d = 9;
    RandomProblem<Scalar> rp(n, d, K, 0.4, 8, true, multilabel ? RandomLabels::each_class : RandomLabels::multiclass);
    const auto problem = rp.problem();
    auto [W, b] = random_point<Scalar>(d, K, 4);
    b.setZero();
    kernels::CoordinateKernelFor<CrammerSinger, Scalar, Index> kernel(CrammerSinger{}, problem, static_cast<std::size_t>(n), false);
    kernel.set_scores(problem.X, &W, nullptr);
    Rng rng(5);
    for (int round = 0; round < 4; ++round) {
      ClassMatrix<Scalar> S;
      compute_scores(problem, W, b, S);
      CHECK(rel(kernel.loss_part(), loss_value(CrammerSinger{}, problem, S)) <= 10 * eps_of<Scalar>());
      std::vector<Scalar> g(static_cast<std::size_t>(K));
      for (Index j = 0; j < d; ++j) {
        std::vector<double> expected(static_cast<std::size_t>(K), 0.0);
        for (auto [i, x] : problem.X.outer(j)) {
          CrammerSinger{}.subgradient(std::span<const Scalar>(S.row(i).data(), g.size()), problem.y[static_cast<std::size_t>(i)],
                                      std::span<Scalar>(g));
          for (std::size_t r = 0; r < g.size(); ++r)
            expected[r] += double(problem.weight(i)) * double(x) * double(g[r]) / double(n);
        }
        for (ClassIndex r = 0; r < K; ++r)
          CHECK(std::abs(kernel.subgradient(problem.X.outer(j), r) - expected[static_cast<std::size_t>(r)]) <= 1e-5);
      }
      for (int step = 0; step < 60; ++step) {  // move the scores, exercising the rescans
        const auto j = static_cast<Index>(uniform_index(rng, static_cast<std::uint64_t>(d)));
        const auto r = static_cast<ClassIndex>(uniform_index(rng, K));
        const auto z = static_cast<Scalar>(uniform_real(rng) - 0.5);
        kernel.template step<false>(problem.X.outer(j), r, z);
        W(j, r) += z;
      }
    }
  }
}

TEST_CASE("scd kernels: the one-vs-rest mirror kernel is the binary problem of class 1", "[scd][kernel]") {
  using Index = std::int32_t;
  RandomProblem<double> rp(50, 8, 2, 0.5, 12, true);
  const auto problem = rp.problem();
  auto [W, b] = random_point<double>(8, 2, 6);
  W.col(0) = -W.col(1);
  b[0] = -b[1];
  kernels::CoordinateKernelFor<OvrSquaredHinge, double, Index> full(OvrSquaredHinge{}, problem, 50, false);
  kernels::CoordinateKernelFor<OvrSquaredHinge, double, Index> mirror(OvrSquaredHinge{}, problem, 50, true);
  full.set_scores(problem.X, &W, &b);
  mirror.set_scores(problem.X, &W, &b);
  CHECK(rel(mirror.loss_part(), full.loss_part()) <= 1e-14);
  for (Index j = 0; j < 8; ++j) {
    const auto a = full.partial<kernels::CoordinateNeed::curvature>(problem.X.outer(j), 1);
    const auto m = mirror.partial<kernels::CoordinateNeed::curvature>(problem.X.outer(j), 1);
    const auto a0 = full.partial<kernels::CoordinateNeed::curvature>(problem.X.outer(j), 0);
    CHECK(a.gradient == m.gradient);
    CHECK(a.curvature == m.curvature);
    CHECK(std::abs(a0.gradient + a.gradient) <= 1e-15);  // the mirror class has the opposite derivative
    CHECK(std::abs(a0.curvature - a.curvature) <= 1e-15);
  }
}

// ------------------------------------------------------------------------------------------------
// Callbacks, reproducibility, options.
// ------------------------------------------------------------------------------------------------

TEST_CASE("scd: callbacks see every epoch, can stop the solve, and get the current (mirrored) model", "[scd][callbacks]") {
  RandomProblem<double> rp(60, 10, 2, 0.4, 15, true);
  const auto problem = rp.problem();
  struct Probe {
    int begins = 0, ends = 0;
    std::vector<EpochReport> reports;
    bool symmetric = true;
    void begin() { ++begins; }
    bool end_epoch(const EpochReport& r, const LinearModel<double>& m) {
      reports.push_back(r);
      symmetric = symmetric && m.dense().col(0) == -m.dense().col(1);
      return r.epoch == 3;
    }
    void end(const SolverInfo&) { ++ends; }
  } probe;
  History history;
  SCD<OvrSquaredHinge, L1, Adaptive> solver({}, {.lambda = 0.01, .mu = 0}, {.tol = 1e-12, .max_epochs = 1000});
  const auto result = solver.fit(problem, probe, history);
  CHECK(result.info.status == Status::stopped_by_callback);
  CHECK(result.info.epochs == 3);
  CHECK(probe.begins == 1);
  CHECK(probe.ends == 1);
  CHECK(probe.symmetric);
  REQUIRE(history.epochs.size() == 3);
  for (std::size_t e = 0; e < 3; ++e) {
    CHECK(history.epochs[e].epoch == static_cast<std::int64_t>(e + 1));
    CHECK(std::isfinite(history.epochs[e].objective));
    if (e > 0) CHECK(history.epochs[e].objective <= history.epochs[e - 1].objective);  // monotone
  }
  // The objective reported per epoch is F of (1) at that epoch's point: the last one is the result's.
  CHECK(rel(history.epochs.back().objective, result.info.objective) <= 1e-12);

  SCD<OvrSquaredHinge, L1, Adaptive> timed({}, {.lambda = 0.01, .mu = 0}, {.tol = 1e-15, .max_epochs = 1000000, .time_limit = 1e-9});
  CHECK(timed.fit(problem).info.status == Status::time_limit);
  SCD<OvrSquaredHinge, L1, Adaptive> short_run({}, {.lambda = 0.01, .mu = 0}, {.tol = 1e-15, .max_epochs = 2});
  const auto two = short_run.fit(problem);
  CHECK(two.info.status == Status::max_iter);
  CHECK(two.info.epochs == 2);
  CHECK(two.info.measure > 0);
}

TEMPLATE_TEST_CASE("scd: a seed reproduces the result bit for bit", "[scd][reproducible]", SPARSEMC_TEST_SCALARS) {
  using Scalar = TestType;
  RandomProblem<Scalar> rp(50, 12, 3, 0.4, 21, true);
  const auto problem = rp.problem();
  auto same = [](const Result<Scalar>& a, const Result<Scalar>& b) {
    return a.model.support() == b.model.support() && a.model.dense() == b.model.dense() && a.info.epochs == b.info.epochs &&
           a.info.objective == b.info.objective;
  };
  for (const auto order : {CoordinateOrder::uniform, CoordinateOrder::permuted_cyclic}) {
    SCD<SquaredHinge, L1, Adaptive> a({}, {.lambda = 0.01, .mu = 0}, {.tol = 1e-5, .seed = 7, .order = order});
    SCD<SquaredHinge, L1, Adaptive> b({}, {.lambda = 0.01, .mu = 0}, {.tol = 1e-5, .seed = 8, .order = order});
    const auto first = a.fit(problem), again = a.fit(problem), other = b.fit(problem);
    CHECK(same(first, again));
    CHECK_FALSE(same(first, other));
    SCD<CrammerSinger, L1, NonsmoothRDA> r({}, {.lambda = 0.01, .mu = 0}, {.max_epochs = 20, .seed = 7, .order = order});
    CHECK(same(r.fit(problem), r.fit(problem)));
  }
}

TEST_CASE("scd: options are validated with the field's name; wrong problems are rejected", "[scd][options]") {
  auto message = [](auto&& make) {
    try {
      make();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  using Solver = SCD<OvrSquaredHinge, L1, Adaptive>;
  using Rda = SCD<CrammerSinger, L1, NonsmoothRDA>;
  CHECK(message([] { Solver({}, {}, {.tol = 0}); }).find("tol") == 0);
  CHECK(message([] { Solver({}, {}, {.max_epochs = 0}); }).find("max_epochs") == 0);
  CHECK(message([] { Solver({}, {}, {.time_limit = -1}); }).find("time_limit") == 0);
  CHECK(message([] { Solver({}, {}, {.variant = {.beta = 1.0}}); }).find("variant.beta") == 0);
  CHECK(message([] { Solver({}, {}, {.variant = {.epsilon = 0}}); }).find("variant.epsilon") == 0);
  CHECK(message([] { Solver({}, {}, {.variant = {.epsilon = 2}}); }).find("variant.epsilon") == 0);
  CHECK(message([] { Rda({}, {}, {.variant = {.gamma = 0}}); }).find("variant.gamma") == 0);
  CHECK(Solver::name == "scd-ls");
  CHECK(SCD<OvrSquaredHinge, L1, Smooth>::name == "scd");
  CHECK(Rda::name == "scd-rda");
  // SquaredHinge is multiclass: a multilabel problem is an error.
  RandomProblem<double> ml(20, 5, 3, 0.5, 1, false, RandomLabels::each_class);
  SCD<SquaredHinge, L1, Adaptive> sh({}, {.lambda = 0.1});
  CHECK_THROWS_AS(sh.fit(ml.problem()), std::invalid_argument);
  // W = 0 optimal (λ ≥ λ_max): a cold start returns it at once.
  RandomProblem<double> rp(30, 6, 3, 0.5, 2, false);
  const double lmax = lambda_max(OvrSquaredHinge{}, L1{}, rp.problem(), false);
  Solver big({}, {.lambda = 1.01 * lmax});
  const auto zero = big.fit(rp.problem());
  CHECK(zero.info.status == Status::converged);
  CHECK(zero.info.epochs == 0);
  CHECK(zero.model.nnz() == 0);
}

// ------------------------------------------------------------------------------------------------
// RDA (Algorithm 4) on the nonsmooth Crammer–Singer hinge.
// ------------------------------------------------------------------------------------------------

namespace {

/// Runs a command and returns its standard output ("" if it failed).
std::string capture(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  char buffer[256];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) out += buffer;
  return ::pclose(pipe) == 0 ? out : std::string();
}

}  // namespace

TEST_CASE("scd-rda: Crammer-Singer + L1 on dna approaches the LP optimum at a rate O(1/sqrt(t))", "[scd][rda][dna][external]") {
  if (sanitizer_run()) SPARSEMC_SKIP("500 epochs of dna are too long for the sanitizer run");
  const std::filesystem::path file = sparsemc_test::repo_data() / "dna.scale";
  const std::filesystem::path lp = sparsemc_test::repo_data() / ".." / "bench" / "cs_l1_lp.py";
  const double lambda = 1e-2;
  // The exact optimum of this LP (HiGHS, tolerance 1e-10): 0.33727123512277; recomputed when
  // python3 with scipy is there, so that a change of data or of the LP is noticed.
  double optimum = 0.33727123512277;
  if (std::system("/usr/bin/python3 -c 'import scipy, sklearn' > /dev/null 2>&1") == 0) {
    const std::string out = capture("/usr/bin/python3 " + lp.string() + " " + file.string() + " 0.01");
    REQUIRE_FALSE(out.empty());
    optimum = std::stod(out);
    CHECK(rel(optimum, 0.33727123512277) <= 1e-8);
  } else {
    WARN("python3 with scipy is not available: using the stored LP optimum");
  }
  const auto data = io::read_libsvm_plain<double>(file);
  History history;
  SCD<CrammerSinger, L1, NonsmoothRDA> solver({}, {.lambda = lambda, .mu = 0}, {.tol = 1e-12, .max_epochs = 500});
  const auto result = solver.fit(data.problem<Eigen::ColMajor>(), history);
  CHECK(result.info.status == Status::max_iter);
  CHECK(result.info.measure_name == "relative_change");
  REQUIRE(history.epochs.size() == 500);
  auto gap = [&](std::size_t epoch) { return (history.epochs[epoch - 1].objective - optimum) / optimum; };
  // Recorded (seed 0): 10: 0.381, 30: 0.121, 100: 0.0319, 300: 0.0105, 500: 0.0066.
  std::ostringstream trace;
  for (const std::size_t t : {10, 30, 100, 300, 500}) trace << " t=" << t << ": " << gap(t);
  INFO("relative gap of the averaged iterate:" << trace.str());
  for (std::size_t t = 1; t <= 500; ++t) CHECK(gap(t) >= -1e-12);  // never below the LP optimum
  CHECK(gap(500) <= 1e-2);
  // O(1/√t): √t · gap(t) does not grow from t = 10 on (it falls: the average does better).
  for (const std::size_t t : {30, 100, 300, 500}) CHECK(std::sqrt(double(t)) * gap(t) <= std::sqrt(10.0) * gap(10));
  CHECK(rel(result.info.objective, history.epochs.back().objective) <= 1e-12);
}

TEST_CASE("scd-rda: the strongly convex schedule (mu > 0) and the last iterate; smooth losses through their gradient",
          "[scd][rda]") {
  RandomProblem<double> rp(80, 10, 3, 0.5, 40, true);
  const auto problem = rp.problem();
  // Logistic + L1 + ridge: RDA with the ln t schedule approaches FISTA's optimum.
  const L1 penalty{.lambda = 0.01, .mu = 0.05};
  const double optimum = fista_optimum<Logistic>(rp, penalty, false);
  SCD<Logistic, L1, NonsmoothRDA> averaged({}, penalty, {.tol = 1e-12, .max_epochs = 2000});
  const auto a = averaged.fit(problem);
  CHECK(rel(a.info.objective, optimum) <= 1e-3);
  SCD<Logistic, L1, NonsmoothRDA> last({}, penalty, {.tol = 1e-12, .max_epochs = 2000, .variant = {.average = false}});
  const auto l = last.fit(problem);
  CHECK(rel(l.info.objective, optimum) <= 1e-3);
}

namespace {

/// Writes a multilabel problem as LIBSVM text with its class indices as labels (an empty label
/// field for a sample without classes), as bench/cs_l1_lp.py --multilabel reads it.
void write_multilabel(const RandomProblem<double>& rp, const std::filesystem::path& file) {
  const Eigen::SparseMatrix<double, Eigen::RowMajor> rows = rp.A;
  std::ofstream out(file);
  out.precision(17);
  for (Eigen::Index i = 0; i < rows.rows(); ++i) {
    const auto classes = rp.labels.view()[static_cast<std::size_t>(i)];
    for (std::size_t c = 0; c < classes.size(); ++c) out << (c > 0 ? "," : "") << classes[c];
    for (Eigen::SparseMatrix<double, Eigen::RowMajor>::InnerIterator it(rows, i); it; ++it)
      out << ' ' << it.col() + 1 << ':' << it.value();
    out << '\n';
  }
}

}  // namespace

TEST_CASE("scd-rda: Crammer-Singer multilabel + L1 approaches the LP optimum at a rate O(1/sqrt(t))",
          "[scd][rda][multilabel]") {
  // No solver of the separation ranking loss at mu = 0 certifies it (FBPD is multiclass only,
  // FCBCFW needs mu > 0): its optimum is the LP's (bench/cs_l1_lp.py --multilabel, HiGHS).
  RandomProblem<double> ml(60, 10, 4, 0.5, 41, false, RandomLabels::each_class);
  const double lambda = 2e-3;
  History history;
  SCD<CrammerSinger, L1, NonsmoothRDA> rda({}, {.lambda = lambda, .mu = 0}, {.tol = 1e-12, .max_epochs = 2000});
  const auto result = rda.fit(ml.problem(), history);
  REQUIRE(history.epochs.size() == 2000);
  CHECK(result.model.nnz() > 0);
  if (std::system("/usr/bin/python3 -c 'import scipy, sklearn' > /dev/null 2>&1") != 0) {
    SPARSEMC_SKIP_PART("python3 with scipy is not available: the LP optimum is not computed");
    return;
  }
  const auto file = std::filesystem::temp_directory_path() /
                    ("sparsemc_cs_multilabel_" + std::to_string(::getpid()) + ".svm");
  write_multilabel(ml, file);
  const auto lp = sparsemc_test::repo_data() / ".." / "bench" / "cs_l1_lp.py";
  const std::string out = capture("/usr/bin/python3 " + lp.string() + " " + file.string() + " " +
                                  std::to_string(lambda) + " --multilabel");
  std::filesystem::remove(file);
  REQUIRE_FALSE(out.empty());
  const double optimum = std::stod(out);
  auto gap = [&](std::size_t epoch) { return (history.epochs[epoch - 1].objective - optimum) / optimum; };
  std::ostringstream trace;
  for (const std::size_t t : {10, 100, 1000, 2000}) trace << " t=" << t << ": " << gap(t);
  // Recorded (seed 0): optimum 0.845162; 10: 0.0694, 100: 0.0125, 1000: 0.00298, 2000: 0.00197.
  INFO("LP optimum " << optimum << "; relative gap of the averaged iterate:" << trace.str());
  for (std::size_t t = 1; t <= 2000; ++t) CHECK(gap(t) >= -1e-9);  // never below the LP optimum
  CHECK(gap(2000) <= 5e-3);
  for (const std::size_t t : {100, 1000, 2000}) CHECK(std::sqrt(double(t)) * gap(t) <= std::sqrt(10.0) * gap(10));
}
