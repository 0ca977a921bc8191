// BlockCD (solver/bcd/) epoch throughput: nonzeros × classes processed per second, float and
// double, for the line-search (bcd-ls) and constant-step (bcd-cst) rules.
//  - Each benchmark iteration runs `epochs` full epochs of a fit from W = 0 (tol tiny, shrinking
//    off, so every epoch visits every block: one gradient pass, the line-search trials and the
//    update per block); items = nnz(X) · K · epochs, so items_per_second is the nnz×K rate of
//    the issue. Setup (the cache, v_0 at W = 0) is included: with 5 epochs it is a sixth of the
//    work, a deliberately conservative rate.
//  - Sets: dna (data/, n = 2000, d = 180, K = 3) and sector (../shared/data/multiclass,
//    n = 6412, d = 55197, K = 105; skipped when absent and in the smoke run, as its read takes
//    seconds).
//  The smoke form (--benchmark_min_time below 0.1 s, as CI runs it) keeps dna only.
//
// Whole-solve drivers on sector (plain programs behind a first argument; they print "SKIPPED"
// and exit 0 when ../shared/data is absent). Times are process CPU seconds (std::clock), so a
// shared machine inflates them less than wall time:
//   bench_bcd --path [TOL]          a 20-point squared hinge + L1/L2 path (λ_max to λ_max/100)
//                                   with strong rules and extrapolated starts (the defaults),
//                                   with warm starts instead, without strong rules, and one cold
//                                   solve at the smallest λ: prints the path / cold ratios (≤ 3)
//   bench_bcd --liblinear MODEL [C] [TOL]  OvR squared hinge + L1 (λ = 1/(Cn)) from W = 0 with
//                                   time to reach the objective of a liblinear-train -s 5 model
//   bench_bcd --reach F [TOL]       squared hinge + L1/L2 at λ = 1e-4: time to reach F (0.4461)
//   add "float" as the last argument for single precision; BCD_VERBOSE=1 prints the path's epochs.
#include <benchmark/benchmark.h>

#include <sparsemc/io/libsvm.hpp>
#include <sparsemc/loss/logistic.hpp>
#include <sparsemc/loss/ovr_squared_hinge.hpp>
#include <sparsemc/loss/squared_hinge.hpp>
#include <sparsemc/penalty/l1.hpp>
#include <sparsemc/penalty/l1l2.hpp>
#include <sparsemc/io/liblinear_model.hpp>
#include <sparsemc/solver/bcd/block_cd.hpp>
#include <sparsemc/solver/objective.hpp>
#include <sparsemc/solver/path.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "data_dirs.hpp"

namespace {

using namespace sparsemc;

/// Set by main() for a smoke run (--benchmark_min_time below 0.1 s).
bool smoke_run = false;

/// A data set read once per Scalar and kept for every benchmark (nullptr when absent).
template <class Scalar>
const Dataset<Scalar>* dataset(const std::string& name) {
  static std::map<std::string, std::unique_ptr<Dataset<Scalar>>> cache;
  auto it = cache.find(name);
  if (it != cache.end()) return it->second.get();
  std::filesystem::path path = name == "dna" ? sparsemc_test::repo_data() / "dna.scale"
                                             : sparsemc_test::shared_data() / "multiclass" / "sector.scale.bz2";
  std::unique_ptr<Dataset<Scalar>> data;
  if (std::filesystem::exists(path)) data = std::make_unique<Dataset<Scalar>>(io::read_libsvm<Scalar>(path));
  return cache.emplace(name, std::move(data)).first->second.get();
}

/// `epochs` epochs of BlockCD<Loss, Penalty, Rule> from W = 0 per iteration, at λ = λ_max · 0.1
/// (many rows move, as in the middle of a path).
template <class Scalar, class Loss, class Penalty, class Rule>
void BM_bcd_epochs(benchmark::State& state, const std::string& set) {
  if (set != "dna" && smoke_run) {
    state.SkipWithError("skipped in the smoke run");
    return;
  }
  const Dataset<Scalar>* data = dataset<Scalar>(set);
  if (data == nullptr) {
    state.SkipWithError(("SKIPPED: " + set + " not found").c_str());
    return;
  }
  const auto problem = data->template problem<Eigen::ColMajor>();
  const std::int64_t epochs = 5;
  Penalty penalty{};
  penalty.lambda = 0.1 * lambda_max(Loss{}, penalty, problem, false);
  const BlockCD<Loss, Penalty, Rule> solver({}, penalty, {.tol = 1e-12, .max_epochs = epochs, .shrinking = false});
  std::int64_t done = 0;
  for (auto _ : state) {
    const auto result = solver.fit(problem);
    benchmark::DoNotOptimize(result.info.objective);
    done += result.info.epochs;
  }
  const auto nnz = static_cast<double>(data->nnz());
  state.SetItemsProcessed(static_cast<std::int64_t>(nnz * static_cast<double>(problem.n_classes()) * static_cast<double>(done)));
  state.counters["nnzK_per_epoch"] = nnz * static_cast<double>(problem.n_classes());
}

/// Registers one benchmark under `name` (a template cannot go through BENCHMARK_CAPTURE).
template <class Scalar, class Loss, class Penalty, class Rule>
void add(const std::string& name, const std::string& set) {
  benchmark::RegisterBenchmark(name.c_str(), [set](benchmark::State& state) {
    BM_bcd_epochs<Scalar, Loss, Penalty, Rule>(state, set);
  })->Unit(benchmark::kMillisecond);
}


// ------------------------------------------------------------------------------------------------
// Whole-solve drivers on sector.
// ------------------------------------------------------------------------------------------------

/// Process CPU seconds since construction.
struct CpuClock {
  std::clock_t start = std::clock();
  [[nodiscard]] double seconds() const { return static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC; }
};

/// Callback: prints each epoch and remembers the CPU time at which F first reached `target`.
struct Reach {
  double target;
  CpuClock cpu{};
  double reached = -1.0;
  std::int64_t epoch = -1;
  bool end_epoch(const EpochReport& r) {
    const double t = cpu.seconds();
    std::printf("  epoch %lld F %.10f measure %.3g nnz_rows %lld cpu %.3f\n", static_cast<long long>(r.epoch),
                r.objective, r.measure, static_cast<long long>(r.nnz_rows), t);
    if (reached < 0 && r.objective <= target) {
      reached = t;
      epoch = r.epoch;
    }
    return false;
  }
};

template <class Scalar>
void print_result(const char* what, const Result<Scalar>& r, double cpu) {
  std::printf("%s: F %.10f status %s epochs %lld nnz_rows %lld cpu %.3f s\n", what, r.info.objective,
              std::string(to_string(r.info.status)).c_str(), static_cast<long long>(r.info.epochs),
              static_cast<long long>(r.info.nnz_rows), cpu);
}

template <class Scalar>
int drive(const std::string& mode, const std::vector<std::string>& args) {
  const Dataset<Scalar>* data = dataset<Scalar>("sector");
  if (data == nullptr) {
    std::printf("SKIPPED: sector not found under %s\n", sparsemc_test::shared_data().c_str());
    return 0;
  }
  const auto problem = data->template problem<Eigen::ColMajor>();
  auto arg = [&](std::size_t k, double fallback) { return k < args.size() ? std::atof(args[k].c_str()) : fallback; };
  if (mode == "--path") {
    const double tol = arg(0, 1e-3);
    auto make = [tol](bool screening, bool extrapolate = true) {
      return [tol, screening, extrapolate](double l) {
        return BlockCD<SquaredHinge, L1L2, TsengYun>(
            {}, {.lambda = l}, {.tol = tol, .screening = screening, .extrapolate_path = extrapolate});
      };
    };
    const PathOptions options{.n_lambdas = 20, .ratio = 1e-2};
    // One path: its CPU seconds and epochs, each point printed.
    auto run_path = [&](const char* name, bool screening, bool extrapolate) {
      CpuClock clock;
      const auto path = regularization_path(problem, make(screening, extrapolate), options);
      const double cpu = clock.seconds();
      std::int64_t epochs = 0;
      std::printf("path (%s):\n", name);
      for (const auto& q : path.points) {
        std::printf("  lambda %.4e F %.10f nnz_rows %lld epochs %lld wall %.3f s\n", q.lambda, q.objective,
                    static_cast<long long>(q.nnz_rows), static_cast<long long>(q.epochs), q.seconds);
        epochs += q.epochs;
      }
      std::printf("  F_min %.10f, %lld epochs, cpu %.3f s\n", path.points.back().objective,
                  static_cast<long long>(epochs), cpu);
      return std::pair(cpu, path.points.back().lambda);
    };
    const auto [path_cpu, lambda_min] = run_path("strong rules, extrapolated starts", true, true);
    const double warm_cpu = run_path("strong rules, warm starts", true, false).first;
    const double plain_cpu = run_path("no screening, extrapolated starts", false, true).first;
    CpuClock c3;
    const auto cold = make(true)(lambda_min).fit(problem);
    const double cold_cpu = c3.seconds();
    print_result("cold at the smallest lambda", cold, cold_cpu);
    std::printf("ratio path / cold: %.2f (strong rules, extrapolated), %.2f (strong rules, warm starts), "
                "%.2f (no screening)\n",
                path_cpu / cold_cpu, warm_cpu / cold_cpu, plain_cpu / cold_cpu);
  } else if (mode == "--liblinear") {
    if (args.empty()) throw std::invalid_argument("--liblinear MODEL [C] [TOL]");
    const double C = arg(1, 1.0);
    const L1 penalty{.lambda = 1.0 / (C * static_cast<double>(problem.n_samples()))};
    // LIBLINEAR's W in our class order (its classes are in the order of first appearance).
    const auto imported = io::load_liblinear_model<Scalar>(args[0]);
    ClassMatrix<Scalar> W = ClassMatrix<Scalar>::Zero(data->n_features(), data->n_classes());
    std::vector<Eigen::Index> column(static_cast<std::size_t>(W.cols()));  // imported class → our class
    for (Eigen::Index k = 0; k < W.cols(); ++k)
      column[static_cast<std::size_t>(imported.class_of(data->encoder().labels()[static_cast<std::size_t>(k)]))] = k;
    for (std::size_t r = 0; r < imported.support().size(); ++r) {
      if (imported.support()[r] >= data->n_features()) continue;
      for (auto [k, w] : imported.row(r)) W(imported.support()[r], column[static_cast<std::size_t>(k)]) = w;
    }
    ClassMatrix<Scalar> S;
    const double F_lib = objective(OvrSquaredHinge{}, penalty, problem, W, ClassVector<Scalar>(), S).total();
    std::printf("liblinear -s 5 objective %.10f\n", F_lib);
    Reach reach{F_lib};
    const auto r = BlockCD<OvrSquaredHinge, L1, TsengYun>({}, penalty, {.tol = arg(2, 1e-5), .max_epochs = 100000})
                       .fit(problem, reach);
    print_result("bcd-ls", r, reach.cpu.seconds());
    std::printf("bcd-ls reached liblinear's objective at cpu %.3f s (epoch %lld)\n", reach.reached,
                static_cast<long long>(reach.epoch));
  } else if (mode == "--reach") {
    Reach reach{arg(0, 0.4461)};
    const auto r = BlockCD<SquaredHinge, L1L2, TsengYun>({}, {.lambda = 1e-4}, {.tol = arg(1, 1e-3)}).fit(problem, reach);
    print_result("bcd-ls squared hinge + l1l2, lambda 1e-4", r, reach.cpu.seconds());
    std::printf("reached %.6g at cpu %.3f s (epoch %lld)\n", reach.target, reach.reached, static_cast<long long>(reach.epoch));
  } else {
    throw std::invalid_argument("unknown mode " + mode);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]).rfind("--benchmark", 0) != 0) {
    std::vector<std::string> args(argv + 2, argv + argc);
    const bool single = !args.empty() && args.back() == "float";
    if (single) args.pop_back();
    return single ? drive<float>(argv[1], args) : drive<double>(argv[1], args);
  }
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const std::string flag = "--benchmark_min_time=";
    if (arg.rfind(flag, 0) == 0) smoke_run = std::atof(arg.c_str() + flag.size()) < 0.1;
  }
  for (const std::string set : {"dna", "sector"}) {
    add<double, SquaredHinge, L1L2, TsengYun>("bcd_ls/squared_hinge_l1l2/double/" + set, set);
    add<float, SquaredHinge, L1L2, TsengYun>("bcd_ls/squared_hinge_l1l2/float/" + set, set);
    add<double, OvrSquaredHinge, L1, TsengYun>("bcd_ls/ovr_squared_hinge_l1/double/" + set, set);
    add<float, OvrSquaredHinge, L1, TsengYun>("bcd_ls/ovr_squared_hinge_l1/float/" + set, set);
    add<double, Logistic, L1L2, TsengYun>("bcd_ls/logistic_l1l2/double/" + set, set);
    add<float, Logistic, L1L2, TsengYun>("bcd_ls/logistic_l1l2/float/" + set, set);
    add<double, SquaredHinge, L1L2, RichtarikTakac>("bcd_cst/squared_hinge_l1l2/double/" + set, set);
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
