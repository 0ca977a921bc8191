// FBPD (Chierchia et al. 2015) benchmarks, and the golub3 table of the paper's Table 1.
//
// Google Benchmark part (time to a relative distance 1e-5 from the solution, ‖W_i − W_∞‖/‖W_∞‖,
// W_∞ computed once per problem by a run to a 100× tighter tolerance; counters: epochs):
//   BM_Algorithm/<1|2>/<L>   Algorithm 1 (regularised, λ) vs Algorithm 2 (constrained, η = the
//                            loss at Algorithm 1's W_∞, so both have the same solution) on
//                            mnist10k subsets of L = 3K, 5K, 10K samples (K = 10; the first L/K
//                            digits of each class), ℓ1,∞ rows (L1Linf), λ = 1e-3.
//   BM_HingeVsSquare/<0|1>/… fbpd on the exact hinge (0) vs fista on the squared hinge (1), the
//                            same penalty (L1L2, λ = 1e-3): on dna (set 0) and the mnist10k subset
//                            of 1000 samples (set 1).
//   BM_Iterations            100 iterations of Algorithm 1 on dna (ℓ1,2, λ = 1e-3): the cost of
//                            one pass; the only benchmark of a smoke run.
//   ./bench_fbpd --benchmark_filter=BM_Algorithm --benchmark_repetitions=3
// A smoke run (--benchmark_min_time < 0.1 s) skips the whole solves (minutes each).
//
// Trace mode (not a benchmark): `./bench_fbpd --distance-trace OUT.csv CACHE_DIR [--lambda X]
// [--reference-gap G] [--time-limit S] [--steps adaptive,fixed,plain] [L ...]` writes
// the distance to the solution per iteration of Algorithms 1 and 2 on the mnist10k subsets
// (bench/fbpd_alg2_vs_alg1.py runs it and draws docs/fbpd-alg2-vs-alg1.png).
// Table mode (not a benchmark): `./bench_fbpd --golub-table TRAIN TEST` prints the Markdown table
// of docs/fbpd-golub.md (hinge / square / logit / one-vs-all × ℓ2, ℓ1, ℓ1,2, ℓ1,∞: test errors
// out of 34 and nonzero coefficients per class at the best λ of a grid); bench/fbpd_golub_table.sh
// writes that page.
#include <benchmark/benchmark.h>

#include <sparsemc/io/libsvm.hpp>
#include <sparsemc/loss/losses.hpp>
#include <sparsemc/model/linear_model.hpp>
#include <sparsemc/penalty/penalties.hpp>
#include <sparsemc/solver/fbpd/fbpd.hpp>
#include <sparsemc/solver/fista/prox_gradient.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "data_dirs.hpp"

namespace {

using namespace sparsemc;

const std::string kShared = sparsemc_test::shared_data().string();
const std::string kRepo = sparsemc_test::repo_data().string();

/// Set by main() for a smoke run (--benchmark_min_time < 0.1 s): seconds, not minutes.
bool smoke_run = false;

/// In a smoke run the whole solves are skipped (true: the caller returns).
bool skipped_in_smoke(benchmark::State& state) {
  if (!smoke_run) return false;
  state.SkipWithError("skipped in the smoke run (--benchmark_min_time < 0.1)");
  return true;
}

/// The first `per_class` samples of every class (mnist10k's rows are sorted by digit).
Dataset<double> per_class_subset(const Dataset<double>& data, int per_class) {
  std::vector<int> seen(static_cast<std::size_t>(data.n_classes()), 0);
  std::vector<std::int32_t> rows;
  const auto y = data.labels().view();
  for (std::int32_t i = 0; i < data.n_samples(); ++i) {
    const auto c = static_cast<std::size_t>(y.single(static_cast<std::size_t>(i)));
    if (seen[c] < per_class) {
      ++seen[c];
      rows.push_back(i);
    }
  }
  std::vector<Eigen::Triplet<double>> triplets;
  std::vector<ClassIndex> labels;
  const auto X = data.csr();
  for (std::size_t r = 0; r < rows.size(); ++r) {
    for (auto [j, v] : X.outer(rows[r])) triplets.emplace_back(static_cast<int>(r), j, v);
    labels.push_back(y.single(static_cast<std::size_t>(rows[r])));
  }
  CsrMatrix<double> S(static_cast<int>(rows.size()), data.n_features());
  S.setFromTriplets(triplets.begin(), triplets.end());
  return Dataset<double>(std::move(S), LabelSets::multiclass(labels, data.n_classes()), data.encoder());
}

const Dataset<double>* mnist() {
  static const Dataset<double>* data = [] {
    const std::string path = kShared + "/multiclass/mnist10k_npm.bz2";
    return std::filesystem::exists(path) ? new Dataset<double>(io::read_libsvm<double>(path)) : nullptr;
  }();
  return data;
}

/// A problem with its reference solution W_∞ (cached per key).
struct Reference {
  Dataset<double> data;
  Eigen::MatrixXd W;
  double eta = 0.0;  // the loss part at W_∞ (for Algorithm 2)
};

double relative_distance(const LinearModel<double>& m, const Eigen::MatrixXd& W) {
  return (m.dense() - W).norm() / W.norm();
}

/// Stops a solve once the model is within `target` of W_∞ (relative distance).
struct DistanceStop {
  const Eigen::MatrixXd* W;
  double target;
  double reached = 0.0;
  bool end_epoch(const EpochReport&, const LinearModel<double>& model) {
    reached = relative_distance(model, *W);
    return reached <= target;
  }
};

constexpr double kLambda = 1e-3;
constexpr double kTarget = 1e-5;

const Reference& mnist_reference(int L) {
  static std::map<int, Reference> cache;
  auto it = cache.find(L);
  if (it != cache.end()) return it->second;
  Reference ref{per_class_subset(*mnist(), L / 10), {}, 0.0};
  const L1Linf penalty{.lambda = kLambda};
  const auto r = FBPD<CrammerSinger, L1Linf>({}, penalty, {.tol = 1e-10, .max_epochs = 2000000})
                     .fit(ref.data.problem<Eigen::RowMajor>());
  ref.W = r.model.dense();
  ref.eta = r.info.objective - penalty_value(penalty, r.model);
  return cache.emplace(L, std::move(ref)).first->second;
}

void BM_Algorithm(benchmark::State& state) {
  if (skipped_in_smoke(state)) return;
  if (mnist() == nullptr) {
    state.SkipWithError("mnist10k_npm.bz2 not found in the shared data");
    return;
  }
  const int algorithm = static_cast<int>(state.range(0)), L = static_cast<int>(state.range(1));
  const Reference& ref = mnist_reference(L);
  const auto problem = ref.data.problem<Eigen::RowMajor>();
  const L1Linf penalty{.lambda = kLambda};
  std::int64_t epochs = 0;
  double reached = 0.0;
  for (auto _ : state) {
    DistanceStop stop{&ref.W, kTarget};
    const FBPDOptions options{.tol = 1e-14, .max_epochs = 2000000, .eta = ref.eta};
    const auto r = algorithm == 1 ? FBPD<CrammerSinger, L1Linf>({}, penalty, options).fit(problem, stop)
                                  : FBPD<CrammerSinger, L1Linf, Constrained>({}, penalty, options).fit(problem, stop);
    epochs = r.info.epochs;
    reached = stop.reached;
  }
  state.counters["epochs"] = static_cast<double>(epochs);
  state.counters["distance"] = reached;
}
BENCHMARK(BM_Algorithm)->ArgsProduct({{1, 2}, {30, 50, 100}})->Unit(benchmark::kMillisecond);

/// dna (set 0) or the mnist10k subset of 1000 samples (set 1).
const Dataset<double>& comparison_data(int set) {
  static const Dataset<double> dna = io::read_libsvm<double>(kRepo + "/dna.scale");
  static const Dataset<double> digits = mnist() != nullptr ? per_class_subset(*mnist(), 100) : dna;
  return set == 0 ? dna : digits;
}

template <class Loss, class Solver>
void time_to_solution(benchmark::State& state, const Solver& reference_solver, const Solver& solver) {
  const auto problem = comparison_data(static_cast<int>(state.range(1))).problem<Eigen::RowMajor>();
  const Eigen::MatrixXd W = reference_solver.fit(problem).model.dense();
  std::int64_t epochs = 0;
  for (auto _ : state) {
    DistanceStop stop{&W, kTarget};
    epochs = solver.fit(problem, stop).info.epochs;
  }
  state.counters["epochs"] = static_cast<double>(epochs);
}

void BM_HingeVsSquare(benchmark::State& state) {
  if (skipped_in_smoke(state)) return;
  if (state.range(1) == 1 && mnist() == nullptr) {
    state.SkipWithError("mnist10k_npm.bz2 not found in the shared data");
    return;
  }
  const L1L2 penalty{.lambda = kLambda};
  if (state.range(0) == 0) {
    using S = FBPD<CrammerSinger, L1L2>;
    time_to_solution<CrammerSinger>(state, S({}, penalty, {.tol = 1e-10, .max_epochs = 2000000}),
                                    S({}, penalty, {.tol = 1e-14, .max_epochs = 2000000}));
  } else {
    using S = ProxGradient<SquaredHinge, L1L2>;
    time_to_solution<SquaredHinge>(state, S({}, penalty, {.tol = 1e-12, .max_epochs = 1000000}),
                                   S({}, penalty, {.tol = 1e-15, .max_epochs = 1000000}));
  }
}
BENCHMARK(BM_HingeVsSquare)->ArgsProduct({{0, 1}, {0, 1}})->Unit(benchmark::kMillisecond);

/// 100 iterations of Algorithm 1 (the per-pass cost; no convergence).
void BM_Iterations(benchmark::State& state) {
  const auto problem = comparison_data(0).problem<Eigen::RowMajor>();
  const FBPD<CrammerSinger, L1L2> solver({}, L1L2{.lambda = kLambda}, {.tol = 1e-300, .max_epochs = 100});
  for (auto _ : state) benchmark::DoNotOptimize(solver.fit(problem).info.objective);
  state.counters["iterations/s"] = benchmark::Counter(100.0, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Iterations)->Unit(benchmark::kMillisecond);

// ------------------------------------------------------------------------------------------------
// The golub3 table (Chierchia et al. 2015, Table 1).
// ------------------------------------------------------------------------------------------------

/// Standardises the columns with the training mean and standard deviation (dense: the microarray
/// data are), in place on train and test.
void standardise(Dataset<double>& train, Dataset<double>& test) {
  Eigen::MatrixXd A = Eigen::MatrixXd(train.matrix()), B = Eigen::MatrixXd(test.matrix());
  B.conservativeResize(Eigen::NoChange, A.cols());
  const Eigen::RowVectorXd mean = A.colwise().mean();
  Eigen::RowVectorXd sd = ((A.rowwise() - mean).array().square().colwise().sum() / static_cast<double>(A.rows())).sqrt();
  sd = sd.unaryExpr([](double s) { return s > 0 ? s : 1.0; });
  A = (A.rowwise() - mean).array().rowwise() / sd.array();
  B = (B.rowwise() - mean).array().rowwise() / sd.array();
  train = Dataset<double>(CsrMatrix<double>(A.sparseView()), train.labels(), train.encoder());
  test = Dataset<double>(CsrMatrix<double>(B.sparseView()), test.labels(), test.encoder());
}

struct Cell {
  int errors = -1;
  std::vector<std::int64_t> nonzeros;  // per class
  double lambda = 0.0;
};

template <class Loss, class Penalty>
Cell best_over_grid(const Dataset<double>& train, const Dataset<double>& test, const std::vector<double>& grid,
                    bool ridge_only, bool blocks) {
  Cell best;
  const auto problem = train.problem<Eigen::RowMajor>();
  for (const double value : grid) {
    Penalty penalty{};
    if (ridge_only) penalty.mu = value;
    else penalty.lambda = value;
    FBPDOptions options{.tol = 1e-5, .max_epochs = 4000, .time_limit = 15, .fit_intercept = true};
    if (blocks) {
      options.feature_groups = feature_blocks(train.n_features(), 5);  // blocks of 5 genes
      options.groups_per_class = true;                                // the paper's ℓ1,p
    }
    const auto r = FBPD<Loss, Penalty>({}, penalty, options).fit(problem);
    const auto predicted = r.model.predict_classes(test.csr());
    const auto y = test.labels().view();
    int errors = 0;
    for (std::size_t i = 0; i < predicted.size(); ++i) errors += predicted[i] != y.single(i) ? 1 : 0;
    const Eigen::MatrixXd W = r.model.dense();
    std::vector<std::int64_t> nz;
    for (Eigen::Index k = 0; k < W.cols(); ++k) nz.push_back((W.col(k).array() != 0.0).count());
    std::int64_t total = 0, best_total = 0;
    for (auto v : nz) total += v;
    for (auto v : best.nonzeros) best_total += v;
    if (best.errors < 0 || errors < best.errors || (errors == best.errors && total < best_total)) best = {errors, nz, value};
    std::fprintf(stderr, "  %s %s %s %g: %d errors, %lld nonzeros, %s after %lld epochs, %.1fs\n",
                 std::string(Loss::name).c_str(), std::string(Penalty::name).c_str(), blocks ? "blocks" : "rows", value, errors,
                 static_cast<long long>(total), std::string(to_string(r.info.status)).c_str(),
                 static_cast<long long>(r.info.epochs), r.info.seconds);
  }
  return best;
}

int golub_table(const std::string& train_path, const std::string& test_path) {
  auto train = io::read_libsvm<double>(train_path);
  auto test = io::read_libsvm<double>(test_path, {.n_features = train.n_features(), .labels = train.encoder()});
  standardise(train, test);
  const std::size_t n_test = test.labels().size();
  std::vector<double> lambdas, mus;
  for (int k = 0; k < 6; ++k) lambdas.push_back(0.2 * std::pow(0.5, k));  // 0.2 … 0.00625
  for (int k = 0; k < 4; ++k) mus.push_back(std::pow(0.1, k));             // 1 … 1e-3
  auto cell_text = [&](const Cell& c) {
    std::string nz;
    for (std::size_t k = 0; k < c.nonzeros.size(); ++k) nz += (k ? " + " : "") + std::to_string(c.nonzeros[k]);
    char buffer[128];
    std::snprintf(buffer, sizeof buffer, "%d/%zu | %s", c.errors, n_test, nz.c_str());
    return std::string(buffer);
  };
  auto row = [&]<class Penalty>(const char* label, const std::vector<double>& grid, bool ridge, bool blocks) {
    const Cell cells[] = {best_over_grid<CrammerSinger, Penalty>(train, test, grid, ridge, blocks),
                          best_over_grid<SquaredHinge, Penalty>(train, test, grid, ridge, blocks),
                          best_over_grid<Logistic, Penalty>(train, test, grid, ridge, blocks),
                          best_over_grid<OvrSquaredHinge, Penalty>(train, test, grid, ridge, blocks)};
    std::printf("| %s", label);
    for (const auto& c : cells) std::printf(" | %s", cell_text(c).c_str());
    std::printf(" |\n");
    std::fflush(stdout);
  };
  std::printf("| g(x) | hinge errors | hinge nonzeros | square errors | square nonzeros | logit errors | logit nonzeros "
              "| one-vs-all errors | one-vs-all nonzeros |\n|---|---|---|---|---|---|---|---|---|\n");
  row.template operator()<NoPenalty>("ℓ2", mus, true, false);
  row.template operator()<L1>("ℓ1", lambdas, false, false);
  row.template operator()<L1L2>("ℓ1,2 (blocks of 5 genes)", lambdas, false, true);
  row.template operator()<L1Linf>("ℓ1,∞ (blocks of 5 genes)", lambdas, false, true);
  return 0;
}

// ------------------------------------------------------------------------------------------------
// Algorithm 2 vs Algorithm 1: distance to the solution against time (the paper's Fig. 3 b, d, f).
// ------------------------------------------------------------------------------------------------

/// The reference W* of a problem (ℓ1,∞ rows, λ = `lambda`): read from `cache` when a previous
/// run wrote it at a gap ≤ `gap`, else computed by Algorithm 1 (adaptive steps) to a relative
/// duality gap of `gap` and written there (binary: rows, cols, η, gap reached, epochs, then W
/// row-major; the file name carries λ).
Reference cached_reference(const Dataset<double>& data, const std::string& name, const std::string& cache, double lambda, double gap) {
  Reference ref{data, {}, 0.0};
  char lambda_text[32];
  std::snprintf(lambda_text, sizeof lambda_text, "%g", lambda);
  const std::string path = cache + "/fbpd-" + name + "-lambda" + lambda_text + ".ref";
  if (std::FILE* f = std::fopen(path.c_str(), "rb")) {
    std::int64_t shape[2] = {0, 0};
    double info[3] = {0, 0, 0};
    bool ok = std::fread(shape, sizeof shape, 1, f) == 1 && std::fread(info, sizeof info, 1, f) == 1 &&
              shape[0] == data.n_features() && info[1] <= gap;
    if (ok) {
      Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> W(shape[0], shape[1]);
      ok = std::fread(W.data(), sizeof(double), static_cast<std::size_t>(W.size()), f) == static_cast<std::size_t>(W.size());
      ref.W = W;
      ref.eta = info[0];
      std::fprintf(stderr, "%s: reference read from %s (gap %.2g after %.0f iterations)\n", name.c_str(), path.c_str(), info[1], info[2]);
    }
    std::fclose(f);
    if (ok) return ref;
  }
  const L1Linf penalty{.lambda = lambda};
  const auto r = FBPD<CrammerSinger, L1Linf>({}, penalty, {.tol = gap, .max_epochs = 10000000}).fit(ref.data.problem<Eigen::RowMajor>());
  ref.W = r.model.dense();
  ref.eta = r.info.objective - penalty_value(penalty, r.model);
  std::fprintf(stderr, "%s: reference by Algorithm 1, %s, gap %.2g after %lld iterations, %.1f s\n", name.c_str(),
               std::string(to_string(r.info.status)).c_str(), r.info.measure, static_cast<long long>(r.info.epochs), r.info.seconds);
  if (std::FILE* f = std::fopen(path.c_str(), "wb")) {
    const std::int64_t shape[2] = {ref.W.rows(), ref.W.cols()};
    const double info[3] = {ref.eta, r.info.measure, static_cast<double>(r.info.epochs)};
    const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> W = ref.W;
    std::fwrite(shape, sizeof shape, 1, f);
    std::fwrite(info, sizeof info, 1, f);
    std::fwrite(W.data(), sizeof(double), static_cast<std::size_t>(W.size()), f);
    std::fclose(f);
  }
  return ref;
}

/// Records (seconds, distance) per iteration; stops at the target distance.
struct DistanceTrace {
  const Eigen::MatrixXd* W;
  double target;
  std::vector<std::pair<double, double>> points;
  bool end_epoch(const EpochReport& report, const LinearModel<double>& model) {
    points.emplace_back(report.seconds, relative_distance(model, *W));
    return points.back().second <= target;
  }
};

/// `--distance-trace OUT.csv CACHE_DIR [--lambda X] [--reference-gap G] [--time-limit S]
/// [--steps R,...] [L ...]`:
/// for each mnist10k subset of L samples (default 3000 5000 10000; the first L/10 of each digit,
/// so L = 10000 has 9756: some digits have fewer than 1000; L = dna: the repository's dna), the
/// distance ‖W_t − W*‖/‖W*‖ per iteration of Algorithm 1 (ℓ1,∞ rows, λ = X, default kLambda)
/// and Algorithm 2 (η = the loss at W*) until it is ≤ kTarget, for each step rule R (default
/// adaptive,fixed): "adaptive" = the library's defaults, "fixed" = adaptive_steps = false,
/// "plain" = the paper's iteration as written (scalar steps with τσ‖T‖² = 1, no restarts, no
/// preconditioning, no relaxation); written as CSV (L,
/// algorithm, steps, iteration, seconds, distance). W* is Algorithm 1's solution at a relative
/// duality gap of G (default 1e-9), cached in CACHE_DIR. Each run stops after S seconds
/// (default 300). Returns 0 and prints "SKIPPED" for mnist sizes without the shared data.
int distance_trace(int argc, char** argv) {
  const std::string out_path = argv[2], cache = argv[3];
  double lambda = kLambda, reference_gap = 1e-9, time_limit = 300;
  std::vector<std::string> step_rules = {"adaptive", "fixed"};
  std::vector<std::string> sizes;
  for (int a = 4; a < argc; ++a) {
    const bool has_value = a + 1 < argc;
    if (has_value && std::strcmp(argv[a], "--lambda") == 0) lambda = std::atof(argv[++a]);
    else if (has_value && std::strcmp(argv[a], "--reference-gap") == 0) reference_gap = std::atof(argv[++a]);
    else if (has_value && std::strcmp(argv[a], "--time-limit") == 0) time_limit = std::atof(argv[++a]);
    else if (has_value && std::strcmp(argv[a], "--steps") == 0) {
      step_rules.clear();
      for (std::string list = argv[++a]; !list.empty();) {
        const auto comma = list.find(',');
        step_rules.push_back(list.substr(0, comma));
        list = comma == std::string::npos ? "" : list.substr(comma + 1);
      }
    }
    else sizes.emplace_back(argv[a]);
  }
  if (sizes.empty()) sizes = {"3000", "5000", "10000"};
  std::FILE* out = std::fopen(out_path.c_str(), "w");
  if (out == nullptr) {
    std::fprintf(stderr, "cannot write %s\n", out_path.c_str());
    return 1;
  }
  std::fprintf(out, "L,algorithm,steps,iteration,seconds,distance\n");
  const L1Linf penalty{.lambda = lambda};
  for (const std::string& L : sizes) {
    const bool dna = L == "dna";
    if (!dna && mnist() == nullptr) {
      std::printf("SKIPPED: mnist10k_npm.bz2 not found in %s\n", kShared.c_str());
      continue;
    }
    const Reference ref = cached_reference(dna ? io::read_libsvm<double>(kRepo + "/dna.scale") : per_class_subset(*mnist(), std::atoi(L.c_str()) / 10),
                                           dna ? L : "mnist-L" + L, cache, lambda, reference_gap);
    const auto problem = ref.data.problem<Eigen::RowMajor>();
    for (const std::string& steps : step_rules) {
      for (const int algorithm : {1, 2}) {
        DistanceTrace trace{&ref.W, kTarget, {}};
        FBPDOptions options{.tol = 1e-14, .max_epochs = 10000000, .time_limit = time_limit, .eta = ref.eta};
        options.adaptive_steps = steps == "adaptive";
        if (steps == "plain") {  // the paper's iteration: scalar steps τσ‖T‖² = 1, no restarts, ρ = 1
          options.preconditioning = false;
          options.restarts = false;
          options.relaxation = 1.0;
        }
        const auto r = algorithm == 1 ? FBPD<CrammerSinger, L1Linf>({}, penalty, options).fit(problem, trace)
                                      : FBPD<CrammerSinger, L1Linf, Constrained>({}, penalty, options).fit(problem, trace);
        for (std::size_t t = 0; t < trace.points.size(); ++t)
          std::fprintf(out, "%s,%d,%s,%zu,%.6g,%.6g\n", L.c_str(), algorithm, steps.c_str(), t + 1, trace.points[t].first,
                       trace.points[t].second);
        std::fflush(out);
        std::printf("L = %5s  Algorithm %d  %-8s steps: distance %.2g after %lld iterations, %.2f s (%s)\n", L.c_str(), algorithm,
                    steps.c_str(), trace.points.back().second, static_cast<long long>(r.info.epochs), trace.points.back().first,
                    std::string(to_string(r.info.status)).c_str());
        std::fflush(stdout);
      }
    }
  }
  std::fclose(out);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::strcmp(argv[1], "--golub-table") == 0) return golub_table(argv[2], argv[3]);
  if (argc >= 4 && std::strcmp(argv[1], "--distance-trace") == 0) return distance_trace(argc, argv);
  for (int a = 1; a < argc; ++a)
    if (std::strncmp(argv[a], "--benchmark_min_time=", 21) == 0) smoke_run = std::atof(argv[a] + 21) < 0.1;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
