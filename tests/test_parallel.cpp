// The parallel paths (core/parallel.hpp): each reaches the certified optimum of the serial one
// at 1, 2 and 3 threads (3 oversubscribes this project's two-core machines: still correct),
// and a thread count reproduces its result bit for bit. Built on its own so that a
// ThreadSanitizer build can take this file alone (scripts/tsan.sh). In a build without OpenMP
// every count runs serially and the cases still hold.

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <sparsemc/sparsemc.hpp>

#include "libsvm_text.hpp"
#include "random_problem.hpp"

using namespace sparsemc;
using sparsemc_test::libsvm_text;
using sparsemc_test::RandomLabels;
using sparsemc_test::require_same_data;
using sparsemc_test::RandomProblem;

namespace {

constexpr int thread_counts[] = {1, 2, 3};

/// Keeps the model of the last epoch a solve reported.
struct LastModel {
  std::optional<LinearModel<double>> model;
  bool end_epoch(const EpochReport&, const LinearModel<double>& current) {
    model = current;
    return false;
  }
};

/// The certified fits of one solver at 1, 2 and 3 threads agree within their gaps, each
/// certificate bounds the whole problem's objective at its model, and a repeated fit at the
/// same count is the same model bit for bit.
template <class Solver, class Problem>
void check_thread_counts(Solver make_solver, const Problem& problem, double tol) {
  std::vector<Result<double>> fits;
  for (const int threads : thread_counts) {
    const auto solver = make_solver(threads);
    Result<double> fit = solver.fit(problem);
    INFO("threads " << threads);
    REQUIRE(fit.info.status == Status::converged);
    CHECK(fit.info.relative_gap <= tol);
    // The certificate's time is part of the solve's wall clock, also when ranges run side by side.
    CHECK(fit.info.gap_evaluations > 0);
    CHECK(fit.info.gap_seconds <= fit.info.seconds);
    // The reported F is the objective of the returned model on the whole problem.
    GapWorkspace<double> work;
    const DualityGap whole = duality_gap(solver.loss(), solver.penalty(), problem, fit.model, work);
    CHECK(whole.primal == Approx(fit.info.objective).epsilon(1e-12));
    // The returned model is the last epoch's iterate, though it is built by taking W over (and
    // over class ranges, by merging the ranges' rows) rather than by the copy the callbacks get.
    LastModel last;
    const Result<double> again = solver.fit(problem, last);
    CHECK((again.model.dense().array() == fit.model.dense().array()).all());
    CHECK(again.model.intercept() == fit.model.intercept());
    REQUIRE(last.model.has_value());
    CHECK(last.model->support() == fit.model.support());
    CHECK((last.model->dense().array() == fit.model.dense().array()).all());
    CHECK(last.model->intercept() == fit.model.intercept());
    fits.push_back(std::move(fit));
  }
  for (const Result<double>& fit : fits) {
    const double bound = fits.front().info.duality_gap + fit.info.duality_gap;
    CHECK(std::abs(fit.info.objective - fits.front().info.objective) <= bound * (1 + 1e-9) + 1e-13);
  }
}

/// The certified fits `fit(threads)` at 2 and 3 threads repeat the one-thread fit bit for bit:
/// its epochs, gap evaluations, F, gap and model.
template <class Fit>
void check_same_bits(Fit fit) {
  const Result<double> one = fit(1);
  REQUIRE(one.info.status == Status::converged);
  for (const int threads : {2, 3}) {
    INFO("threads " << threads);
    const Result<double> many = fit(threads);
    CHECK(many.info.epochs == one.info.epochs);
    CHECK(many.info.gap_evaluations == one.info.gap_evaluations);
    CHECK(many.info.objective == one.info.objective);
    CHECK(many.info.relative_gap == one.info.relative_gap);
    CHECK((many.model.dense().array() == one.model.dense().array()).all());
  }
}

/// A byte source that hands out at most `chunk` bytes a read, as a pipe does, so that
/// read_blocks goes through many blocks and carried lines.
struct TrickleSource {
  std::string_view text;
  std::size_t chunk;
  std::optional<std::size_t> size() const { return std::nullopt; }
  std::size_t read(char* dst, std::size_t capacity) {
    const std::size_t got = std::min({capacity, chunk, text.size()});
    std::copy_n(text.data(), got, dst);
    text.remove_prefix(got);
    return got;
  }
};

/// What parsing `text` throws ("" when it does not).
std::string parse_error_of(std::string_view text, io::LibsvmOptions options) {
  try {
    (void)io::parse_libsvm<double>(text, options, "in.svm");
  } catch (const io::ParseError& e) {
    return e.what();
  }
  return "";
}

/// What reading `text` from a file named in.svm throws ("" when it does not): the reader of a
/// file of known size, which frees the text of its last block once that block's pieces parsed.
std::string read_error_of(std::string_view text, io::LibsvmOptions options) {
  const auto dir = std::filesystem::temp_directory_path() / "sparsemc_test_parallel_errors";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "in.svm", std::ios::binary) << text;
  std::string error;
  try {
    (void)io::read_libsvm_plain<double>(dir / "in.svm", options);
  } catch (const io::ParseError& e) {
    error = e.what();
  }
  std::filesystem::remove_all(dir);
  return error;
}

}  // namespace

TEST_CASE("parallel_tasks runs every task once and carries an exception back", "[parallel]") {
  for (const int team : thread_counts) {
    std::vector<std::atomic<int>> runs(37);
    detail::parallel_tasks(team, runs.size(), [&](std::size_t t) { ++runs[t]; });
    for (const auto& r : runs) CHECK(r.load() == 1);
    CHECK_THROWS_AS(detail::parallel_tasks(team, 9,
                                           [](std::size_t t) {
                                             if (t == 4) throw std::runtime_error("task 4");
                                           }),
                    std::runtime_error);
  }
  CHECK(resolve_threads(3) == (has_openmp ? 3 : 1));
  CHECK(resolve_threads(0) == available_threads());
}

TEST_CASE("on_team runs a loop of phases on one team and carries an exception back", "[parallel]") {
  for (const int team : thread_counts) {
    INFO("team " << team);
    std::vector<int> parts(5, 0);
    std::atomic<int> tasks{0};
    int rounds = 0;
    bool more = true;
    detail::on_team(team, [&](detail::TeamRegion& region) {
      while (more) {
        region.parts(parts.size(), [&](std::size_t p) { ++parts[p]; });
        region.barrier();
        region.tasks(7, [&](std::size_t) { ++tasks; });
        region.leader([&] { more = ++rounds < 3; });
        region.barrier();
      }
    });
    CHECK(rounds == 3);
    CHECK(tasks == 21);
    CHECK(std::all_of(parts.begin(), parts.end(), [](int p) { return p == 3; }));
    std::atomic<int> told{0};  // threads that saw failed() after the barrier
    CHECK_THROWS_WITH(detail::on_team(team,
                                      [&](detail::TeamRegion& region) {
                                        region.tasks(9, [](std::size_t t) {
                                          if (t == 4) throw std::runtime_error("task 4");
                                        });
                                        region.barrier();
                                        if (region.failed()) ++told;
                                      }),
                      "task 4");
    CHECK(told >= 1);
  }
}

TEST_CASE("team_for_work wakes one thread per share of the work, 1 to the team", "[parallel]") {
  const double share = detail::min_work_per_thread;
  CHECK(detail::team_for_work(4, 0.0) == 1);
  CHECK(detail::team_for_work(4, 1.9 * share) == 1);
  CHECK(detail::team_for_work(4, 3.0 * share) == 3);
  CHECK(detail::team_for_work(4, 1e12) == 4);
  CHECK(detail::team_for_work(1, 1e12) == 1);
  CHECK(detail::team_for_work(8, 5.0, 2.0) == 2);
}

TEST_CASE("BlockCD over class ranges reaches the serial optimum at 1, 2 and 3 threads", "[parallel][bcd]") {
  const double tol = 1e-9;
  SECTION("one-vs-rest squared hinge + l1, line search, weighted, with an intercept") {
    RandomProblem<double> rp(150, 40, 5, 0.2, 3, /*weighted=*/true);
    check_thread_counts(
        [&](int threads) {
          return BlockCD<OvrSquaredHinge, L1, TsengYun>(
              {}, {.lambda = 2e-3}, {.tol = tol, .max_epochs = 20000, .fit_intercept = true, .threads = threads});
        },
        rp.problem(), tol);
  }
  SECTION("one-vs-rest squared hinge + elastic net, constant steps, multilabel") {
    RandomProblem<double> rp(120, 30, 7, 0.25, 5, false, RandomLabels::up_to_three);
    check_thread_counts(
        [&](int threads) {
          return BlockCD<OvrSquaredHinge, L1, RichtarikTakac>(
              {}, {.lambda = 1e-3, .mu = 1e-3}, {.tol = tol, .max_epochs = 50000, .threads = threads});
        },
        rp.problem(), tol);
  }
  SECTION("least squares + ridge only, with an intercept") {
    RandomProblem<double> rp(100, 25, 4, 0.3, 8);
    check_thread_counts(
        [&](int threads) {
          return BlockCD<LeastSquares, NoPenalty, TsengYun>(
              {}, {.mu = 1e-2}, {.tol = tol, .max_epochs = 20000, .fit_intercept = true, .threads = threads});
        },
        rp.problem(), tol);
  }
}

TEST_CASE("BlockCD over class ranges: warm starts and paths at 2 threads", "[parallel][bcd]") {
  RandomProblem<double> rp(150, 40, 6, 0.2, 12);
  const auto problem = rp.problem();
  using Solver = BlockCD<OvrSquaredHinge, L1, TsengYun>;
  const Solver::Options options{.tol = 1e-8, .max_epochs = 20000, .fit_intercept = true, .threads = 2};
  const Result<double> coarse = Solver({}, {.lambda = 1e-2}, options).fit(problem);
  const Result<double> warm = Solver({}, {.lambda = 2e-3}, options).fit(problem, coarse.model);
  const Result<double> cold = Solver({}, {.lambda = 2e-3}, options).fit(problem);
  REQUIRE(warm.info.status == Status::converged);
  // Started at its own solution, a fit is certified at once: the warm start reached every range.
  const Result<double> restart = Solver({}, {.lambda = 2e-3}, options).fit(problem, cold.model);
  CHECK(restart.info.epochs <= 2);
  CHECK(std::abs(restart.info.objective - cold.info.objective) <= cold.info.duality_gap + 1e-13);
  CHECK(std::abs(warm.info.objective - cold.info.objective) <= warm.info.duality_gap + cold.info.duality_gap + 1e-13);

  const std::vector<double> lambdas{1e-2, 5e-3, 2e-3};
  const std::vector<Result<double>> path = Solver({}, {.lambda = 1e-2}, options).fit_path(problem, lambdas);
  REQUIRE(path.size() == 3);
  for (const Result<double>& point : path) CHECK(point.info.status == Status::converged);
  CHECK(std::abs(path.back().info.objective - cold.info.objective) <=
        path.back().info.duality_gap + cold.info.duality_gap + 1e-13);
}

TEST_CASE("BlockCD's parallel constant step for a given tau reaches the serial optimum at 1, 2 and 3 threads",
          "[parallel][bcd]") {
  // The rounds' draws and steps are the same at every count; the partial gradients over each
  // thread's samples add up in another rounding.
  // Problems whose rounds have the work to be shared (RoundSize::min_shared_work per thread).
  SECTION("squared hinge + l1/l2, weighted, with an intercept, tau = 40") {
    RandomProblem<double> rp(800, 80, 4, 0.08, 41, /*weighted=*/true);
    using Solver = BlockCD<SquaredHinge, L1L2, RichtarikTakac>;
    const auto options = [](int threads, std::int32_t tau) {
      return Solver::Options{.tol = 1e-7, .max_epochs = 50000, .fit_intercept = true, .threads = threads,
                             .step_rule = {.tau = tau}};
    };
    check_thread_counts([&](int threads) { return Solver({}, {.lambda = 2e-3}, options(threads, 40)); }, rp.problem(),
                        1e-7);
    // The same optimum as the serial rule's, within the two certificates.
    const Result<double> parallel = Solver({}, {.lambda = 2e-3}, options(2, 40)).fit(rp.problem());
    const Result<double> serial = Solver({}, {.lambda = 2e-3}, options(1, 1)).fit(rp.problem());
    REQUIRE(serial.info.status == Status::converged);
    CHECK(std::abs(parallel.info.objective - serial.info.objective) <=
          parallel.info.duality_gap + serial.info.duality_gap + 1e-13);
  }
  SECTION("multilabel logistic + l1/linf + ridge, every block at once") {
    RandomProblem<double> rp(400, 30, 5, 0.2, 43, false, RandomLabels::up_to_three);
    check_thread_counts(
        [](int threads) {
          return BlockCD<Logistic, L1Linf, RichtarikTakac>(
              {}, {.lambda = 1e-3, .mu = 1e-3}, {.tol = 1e-8, .max_epochs = 50000, .threads = threads, .step_rule = {.tau = 100}});
        },
        rp.problem(), 1e-8);
  }
  SECTION("a round too small to share runs on one thread, in the team's ranges") {
    RandomProblem<double> rp(150, 60, 4, 0.1, 41, /*weighted=*/true);
    check_thread_counts(
        [](int threads) {
          return BlockCD<SquaredHinge, L1L2, RichtarikTakac>(
              {}, {.lambda = 2e-3}, {.tol = 1e-8, .max_epochs = 50000, .fit_intercept = true, .threads = threads, .step_rule = {.tau = 6}});
        },
        rp.problem(), 1e-8);
  }
}

TEST_CASE("BlockCD's constant step with tau chosen per thread count reaches the serial optimum", "[parallel][bcd]") {
  RandomProblem<double> rp(300, 600, 3, 0.01, 47);
  check_thread_counts(
      [](int threads) {
        return BlockCD<SquaredHinge, L1L2, RichtarikTakac>({}, {.lambda = 1e-3},
                                                           {.tol = 1e-7, .max_epochs = 50000, .threads = threads});
      },
      rp.problem(), 1e-7);
}

TEST_CASE("SCD over class ranges reaches the serial optimum at 1, 2 and 3 threads", "[parallel][scd]") {
  const double tol = 1e-8;
  SECTION("one-vs-rest squared hinge + l1, Algorithm 2, weighted, with an intercept") {
    RandomProblem<double> rp(150, 40, 5, 0.2, 3, /*weighted=*/true);
    check_thread_counts(
        [&](int threads) {
          return SCD<OvrSquaredHinge, L1, Adaptive>(
              {}, {.lambda = 2e-3}, {.tol = tol, .max_epochs = 50000, .fit_intercept = true, .threads = threads});
        },
        rp.problem(), tol);
  }
  SECTION("one-vs-rest squared hinge + elastic net, Algorithm 1, multilabel, permuted sweeps") {
    RandomProblem<double> rp(120, 30, 7, 0.25, 5, false, RandomLabels::up_to_three);
    check_thread_counts(
        [&](int threads) {
          return SCD<OvrSquaredHinge, L1, Smooth>({}, {.lambda = 1e-3, .mu = 1e-3},
                                                  {.tol = tol,
                                                   .max_epochs = 50000,
                                                   .order = CoordinateOrder::permuted_cyclic,
                                                   .threads = threads});
        },
        rp.problem(), tol);
  }
  SECTION("least squares + ridge only") {
    RandomProblem<double> rp(100, 25, 4, 0.3, 8);
    check_thread_counts(
        [&](int threads) {
          return SCD<LeastSquares, NoPenalty, Adaptive>({}, {.mu = 1e-2},
                                                        {.tol = tol, .max_epochs = 50000, .threads = threads});
        },
        rp.problem(), tol);
  }
  SECTION("a warm start reaches every range") {
    RandomProblem<double> rp(150, 40, 6, 0.2, 12);
    using Solver = SCD<OvrSquaredHinge, L1, Adaptive>;
    const Solver::Options options{.tol = tol, .max_epochs = 50000, .fit_intercept = true, .threads = 2};
    const Result<double> cold = Solver({}, {.lambda = 2e-3}, options).fit(rp.problem());
    REQUIRE(cold.info.status == Status::converged);
    const Result<double> restart = Solver({}, {.lambda = 2e-3}, options).fit(rp.problem(), cold.model);
    CHECK(restart.info.status == Status::converged);
    CHECK(restart.info.epochs <= 2);
    CHECK(std::abs(restart.info.objective - cold.info.objective) <= cold.info.duality_gap + 1e-13);
  }
}

TEST_CASE("FBPD's sample passes reach the serial optimum at 1, 2 and 3 threads", "[parallel][fbpd]") {
  // Large enough for three threads to share a pass (detail::team_for_work).
  RandomProblem<double> rp(600, 40, 4, 0.3, 21);
  REQUIRE(sparsemc::detail::team_for_work(3, 2.0 * static_cast<double>(rp.problem().X.nnz()) * 4) == 3);
  const double tol = 1e-5;
  check_thread_counts(
      [&](int threads) {
        return FBPD<SquaredHinge, L1L2>({}, {.lambda = 1e-2}, {.tol = tol, .max_epochs = 200000, .threads = threads});
      },
      rp.problem(), tol);
}

TEST_CASE("FISTA's passes give the same iterates at 1, 2 and 3 threads", "[parallel][fista]") {
  // The products split rows, features or classes, and the loss pass sums fixed chunks of
  // samples (objective.hpp): every count runs the same operations. 2 500 samples: three chunks.
  RandomProblem<double> csc(2500, 60, 5, 0.1, 31, /*weighted=*/true);
  RandomProblem<double, std::int32_t, Eigen::RowMajor> csr(2500, 60, 5, 0.1, 31, /*weighted=*/true);
  const auto fit = [](const auto& problem, int threads, auto&... callbacks) {
    return ProxGradient<Logistic, L1L2>({}, {.lambda = 1e-3}, {.tol = 1e-6, .fit_intercept = true, .threads = threads})
        .fit(problem, callbacks...);
  };
  for (const bool row_major : {false, true}) {
    INFO((row_major ? "CSR" : "CSC"));
    const Result<double> one = row_major ? fit(csr.problem(), 1) : fit(csc.problem(), 1);
    REQUIRE(one.info.status == Status::converged);
    // The returned model takes W over: it is the last epoch's iterate, as the callbacks saw it.
    LastModel last;
    (void)(row_major ? fit(csr.problem(), 2, last) : fit(csc.problem(), 2, last));
    REQUIRE(last.model.has_value());
    CHECK((last.model->dense().array() == one.model.dense().array()).all());
    CHECK(last.model->intercept() == one.model.intercept());
    for (const int threads : {2, 3}) {
      const Result<double> many = row_major ? fit(csr.problem(), threads) : fit(csc.problem(), threads);
      CHECK(many.info.epochs == one.info.epochs);
      CHECK(many.info.objective == one.info.objective);
      CHECK((many.model.dense().array() == one.model.dense().array()).all());
    }
  }
}

TEST_CASE("SequentialDual's certificate gives the same bits at 1, 2 and 3 threads", "[parallel][sdm]") {
  // The gap's sums run over fixed chunks of samples (objective.hpp's chunk_sums); the epochs are
  // sequential. 2 500 samples: three chunks, and enough work for three threads.
  RandomProblem<double, std::int32_t, Eigen::RowMajor> rp(2500, 60, 8, 0.1, 41, /*weighted=*/true);
  REQUIRE(sparsemc::detail::team_for_work(3, static_cast<double>(rp.problem().X.nnz()) * 8) == 3);
  const auto fit = [&](int threads) {
    return SequentialDual<CrammerSinger, NoPenalty>({}, {.mu = 1e-3}, {.tol = 1e-6, .threads = threads})
        .fit(rp.problem());
  };
  check_same_bits(fit);
}

TEST_CASE("FCBCFW's certificate gives the same bits at 1, 2 and 3 threads", "[parallel][fcbcfw]") {
  // The primal pass of the gap runs over fixed chunks of samples, each thread with its own score
  // buffer; the epochs are sequential. 6 000 samples: five chunks, and enough work for three
  // threads. Both layouts of V (dense with the exact search, hashed with the bi-stochastic one).
  RandomProblem<double, std::int32_t, Eigen::RowMajor> rp(6000, 60, 8, 0.2, 43, /*weighted=*/true);
  REQUIRE(sparsemc::detail::team_for_work(3, static_cast<double>(rp.problem().X.nnz())) == 3);
  for (const FCBCFWSearch search : {FCBCFWSearch::exact, FCBCFWSearch::bi_stochastic}) {
    const auto fit = [&](int threads) {
      return FCBCFW<CrammerSinger, L1>({}, {.lambda = 1e-4, .mu = 1e-3},
                                       {.tol = 1e-6, .search = search, .threads = threads})
          .fit(rp.problem());
    };
    check_same_bits(fit);
  }
}

TEST_CASE("prediction over the samples is the same at any thread count", "[parallel][model]") {
  // Enough samples for every thread (detail::team_for_work): 3 000 × 10 entries × 5 classes.
  RandomProblem<double, std::int32_t, Eigen::RowMajor> rp(3000, 50, 5, 0.2, 4);
  const auto fit = BlockCD<SquaredHinge, L1L2, TsengYun>({}, {.lambda = 1e-3}, {.tol = 1e-4})
                       .fit(RandomProblem<double>(300, 50, 5, 0.2, 4).problem());
  const auto X = rp.problem().X;
  const auto serial = [&] {
#ifdef SPARSEMC_USE_OPENMP
    const int before = omp_get_max_threads();
    omp_set_num_threads(1);
    auto S = fit.model.decision_function(X);
    omp_set_num_threads(before);
    return S;
#else
    return fit.model.decision_function(X);
#endif
  }();
  CHECK((fit.model.decision_function(X).array() == serial.array()).all());
}

TEST_CASE("the LIBSVM reader gives the serial result at 1, 2 and 3 threads", "[parallel][io]") {
  for (const bool multilabel : {false, true}) {
    INFO((multilabel ? "multilabel" : "multiclass"));
    // About 2 MB: pieces of every thread in one round, and many rounds through a trickle.
    std::string text = libsvm_text(40000, multilabel, multilabel ? 11 : 7);
    const io::LibsvmOptions serial{.threads = 1};
    const auto expected = io::parse_libsvm<double>(text, serial);
    REQUIRE(expected.multilabel() == multilabel);
    const auto path = std::filesystem::temp_directory_path() / "sparsemc_test_parallel_reader.svm";
    std::ofstream(path, std::ios::binary) << text;
    for (const int threads : thread_counts) {
      INFO("threads " << threads);
      const io::LibsvmOptions options{.threads = threads};
      require_same_data(io::parse_libsvm<double>(text, options), expected);
      require_same_data(io::read_libsvm_plain<double>(path, options), expected);
      TrickleSource trickle{text, 300000};
      require_same_data(io::detail::read_blocks<double, std::int32_t>(trickle, options, "trickle"), expected);
      // A last line without '\n', and a caller's label table that the file extends.
      const auto unterminated = std::string_view(text).substr(0, text.size() - 1);
      require_same_data(io::parse_libsvm<double>(unterminated, options),
                        io::parse_libsvm<double>(unterminated, serial));
      io::LibsvmOptions extend = options;
      extend.labels = LabelEncoder(std::vector<Label>{2, 5, 100});
      extend.unknown_label = io::UnknownLabel::extend;
      io::LibsvmOptions extend_serial = extend;
      extend_serial.threads = 1;
      require_same_data(io::parse_libsvm<double>(text, extend), io::parse_libsvm<double>(text, extend_serial));
    }
    std::filesystem::remove(path);
  }
  CHECK_THROWS_WITH(io::parse_libsvm<double>("1 1:1\n", {.threads = -1}),
                    Catch::Contains("LibsvmOptions::threads must be >= 0"));
}

TEST_CASE("the LIBSVM reader reports an error at the serial position at any thread count", "[parallel][io]") {
  const std::string text = libsvm_text(40000, false, 5);
  // Line starts, to plant errors early, in the middle and near the end.
  std::vector<std::size_t> line_starts{0};
  for (std::size_t p = text.find('\n'); p + 1 < text.size(); p = text.find('\n', p + 1)) line_starts.push_back(p + 1);
  const auto planted = [&](std::size_t line, std::string_view bad) {
    std::string copy = text;
    copy.insert(line_starts[line], bad);
    return copy;
  };
  struct Case {
    std::string text;
    std::string expected;
    std::int64_t n_features = 0;  // the options: a fixed d,
    bool label_table = false;     // and the labels 1..9 as the caller's table
  };
  std::vector<Case> cases;
  for (const std::size_t line : {std::size_t{3}, line_starts.size() / 2, line_starts.size() - 2}) {
    const std::string at = "in.svm:" + std::to_string(line + 1) + ":";
    cases.push_back({planted(line, "4 7:x\n"), at + "5: value 'x' is not a number"});
    cases.push_back({planted(line, "4 9:1 2:1\n"), at + "7: feature indices must be strictly increasing: 2 after 9"});
    // Reported only once the input is exhausted (no comma made the file multilabel).
    cases.push_back({planted(line, " 3:1\n"), at + "2: missing label"});
    cases.push_back({planted(line, "77 1:1\n"), at + "1: label 77 is not in the given label table", 0, true});
    cases.push_back({planted(line, "1 999:1\n"), at + "3: feature index 999 is beyond", 600});
  }
  // Two errors: the first in the file wins, even when a later piece parses first.
  cases.push_back({planted(line_starts.size() - 2, "4 7:y\n"), "in.svm:10:5: value 'z' is not a number"});
  cases.back().text.insert(line_starts[9], "4 1:z\n");
  for (const Case& c : cases) {
    INFO(c.expected);
    for (const int threads : thread_counts) {
      INFO("threads " << threads);
      io::LibsvmOptions options{.n_features = c.n_features, .threads = threads};
      if (c.label_table) options.labels = LabelEncoder(std::vector<Label>{1, 2, 3, 4, 5, 6, 7, 8, 9});
      const std::string error = parse_error_of(c.text, options);
      INFO("got " << error);
      CHECK(error.starts_with(c.expected));
      const std::string file_error = read_error_of(c.text, options);
      INFO("from the file: " << file_error);
      CHECK(file_error.find(c.expected) != std::string::npos);
    }
  }
}
