// SCD (solver/scd/) benchmarks.
//  - Kernels on dna: one coordinate's derivative pass and tracked step per loss, in time per
//    nonzero of the column (items = nonzeros visited); ten epochs of each variant.
//  - scd-ls against LIBLINEAR -s 5 in the same process, solver against solver (no file reading,
//    no process start-up, which dominate on small sets): BM_liblinear_s5/<set> times LIBLINEAR's
//    train() at -e 0.001 (libliblinear loaded with dlopen, as Debian's liblinear4 ships no
//    header), BM_scd_ls_to_liblinear/<set> times scd-ls from W = 0 until its objective (1) is at
//    or below that of LIBLINEAR's model (λ = 1/(Cn), C = 1; a binary model w is the pair of
//    one-vs-rest columns [w, −w]), or until it stops by itself (counter reached = 0 then), with
//    tol 1e-5 — its analogue of LIBLINEAR's per-class -e 0.001, letting easy classes stop
//    early — and 1e-8 on sector, whose V(0) is far above LIBLINEAR's first-pass normalisation.
//    Compare the CPU columns of the two lines of a set. Sets:
//    heart (heart_scale of liblinear-tools' examples), news20-12 (classes 1 and 2 of news20.t),
//    dna, sector (minutes: --benchmark_filter=sector to run it alone, or a filter without it).
//  - scd-rda against fbpd on Crammer–Singer + L1 (dna, λ = 1e-2): BM_trace_rda_vs_fbpd runs both
//    once with a History and writes the objective-versus-time traces to scd_rda_vs_fbpd.csv (or
//    $SPARSEMC_SCD_TRACE), which bench/scd_compare.py --trace plots against the LP optimum.
//  Whole processes (reading included): bench/scd_compare.py.
//  The smoke form (--benchmark_min_time below 0.1 s, as CI runs it) keeps the kernels, the ten
//  epochs and heart, skips the other sets, and runs the trace for 3 epochs without writing it.
#include <benchmark/benchmark.h>

#include <sparsemc/io/liblinear_model.hpp>
#include <sparsemc/io/libsvm.hpp>
#include <sparsemc/loss/losses.hpp>
#include <sparsemc/penalty/l1.hpp>
#include <sparsemc/solver/objective.hpp>
#include <sparsemc/solver/fbpd/fbpd.hpp>
#include <sparsemc/solver/scd/scd.hpp>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <cstdlib>

#include <dlfcn.h>
#include <unistd.h>

#include "data_dirs.hpp"

namespace {

using namespace sparsemc;

/// Set by main() for a smoke run (--benchmark_min_time < 0.1 s): seconds, not minutes.
bool smoke_run = false;

/// In a smoke run every whole solve but heart's is skipped (true: the caller returns).
bool skipped_in_smoke(benchmark::State& state, const std::string& name) {
  if (!smoke_run || name == "heart") return false;
  state.SkipWithError("skipped in the smoke run (--benchmark_min_time < 0.1)");
  return true;
}

const Dataset<double>& dna() {
  static const Dataset<double> data = io::read_libsvm_plain<double>(sparsemc_test::repo_data() / "dna.scale");
  return data;
}

/// One coordinate visit of Algorithm 2 without its effect: derivative and curvature pass, a
/// tracked step, undo. Cycles over the coordinates; the scores are those of a fit to tol 1e-3.
template <class Loss>
void BM_coordinate_visit(benchmark::State& state) {
  const auto problem = dna().problem<Eigen::ColMajor>();
  SCD<Loss, L1, Adaptive> solver({}, {.lambda = 1e-3}, {.tol = 1e-3});
  const auto fit = solver.fit(problem);
  ClassMatrix<double> W = ClassMatrix<double>::Zero(problem.n_features(), problem.n_classes());
  fit.model.copy_to(W);
  std::size_t max_column = 0;
  for (Eigen::Index j = 0; j < problem.n_features(); ++j) max_column = std::max(max_column, problem.X.outer(j).size());
  kernels::CoordinateKernelFor<Loss, double, std::int32_t> kernel(Loss{}, problem, max_column, false);
  kernel.set_scores(problem.X, &W, nullptr);
  const auto d = static_cast<std::int32_t>(problem.n_features());
  const ClassIndex K = problem.n_classes();
  std::int64_t items = 0;
  std::int32_t j = 0;
  ClassIndex r = 0;
  for (auto _ : state) {
    const auto col = problem.X.outer(j);
    const auto part = kernel.template partial<kernels::CoordinateNeed::curvature>(col, r);
    const auto change = kernel.template step<true>(col, r, 1e-3, part.gradient, part.curvature);
    benchmark::DoNotOptimize(change);
    kernel.undo(col, r);
    items += static_cast<std::int64_t>(col.size());
    if (++r == K) r = 0, j = (j + 1) % d;
  }
  state.SetItemsProcessed(items);
}
BENCHMARK_TEMPLATE(BM_coordinate_visit, OvrSquaredHinge);
BENCHMARK_TEMPLATE(BM_coordinate_visit, SquaredHinge);
BENCHMARK_TEMPLATE(BM_coordinate_visit, Logistic);
BENCHMARK_TEMPLATE(BM_coordinate_visit, LeastSquares);

/// The RDA visit's subgradient pass and untracked step on Crammer–Singer (a step and its reverse).
void BM_coordinate_visit_crammer_singer(benchmark::State& state) {
  const auto problem = dna().problem<Eigen::ColMajor>();
  std::size_t max_column = 0;
  for (Eigen::Index j = 0; j < problem.n_features(); ++j) max_column = std::max(max_column, problem.X.outer(j).size());
  kernels::CoordinateKernelFor<CrammerSinger, double, std::int32_t> kernel(CrammerSinger{}, problem, max_column, false);
  kernel.set_scores(problem.X, nullptr, nullptr);
  const auto d = static_cast<std::int32_t>(problem.n_features());
  std::int64_t items = 0;
  std::int32_t j = 0;
  ClassIndex r = 0;
  double z = 0.01;
  for (auto _ : state) {
    const auto col = problem.X.outer(j);
    benchmark::DoNotOptimize(kernel.subgradient(col, r));
    kernel.template step<false>(col, r, z);
    items += static_cast<std::int64_t>(col.size());
    if (++r == problem.n_classes()) r = 0, j = (j + 1) % d, z = -z;
  }
  state.SetItemsProcessed(items);
}
BENCHMARK(BM_coordinate_visit_crammer_singer);

/// Ten epochs of a fit from W = 0 (one-vs-rest + L1 at LIBLINEAR's C = 1; RDA: Crammer–Singer).
template <class Loss, class Variant>
void BM_ten_epochs(benchmark::State& state) {
  const auto problem = dna().problem<Eigen::ColMajor>();
  SCD<Loss, L1, Variant> solver({}, {.lambda = 1.0 / 2000}, {.tol = 1e-12, .max_epochs = 10});
  for (auto _ : state) benchmark::DoNotOptimize(solver.fit(problem).info.objective);
}
BENCHMARK_TEMPLATE(BM_ten_epochs, OvrSquaredHinge, Smooth)->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_ten_epochs, OvrSquaredHinge, Adaptive)->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_ten_epochs, CrammerSinger, NonsmoothRDA)->Unit(benchmark::kMillisecond);

// ------------------------------------------------------------------------------------------------
// scd-ls versus LIBLINEAR -s 5, in process.
// ------------------------------------------------------------------------------------------------

namespace ll {

// LIBLINEAR 2.x's C interface (linear.h). `parameter` is declared up to init_sol (2.11+) and
// padded with zeros, which covers the fields later versions append: every field the library
// reads is defined (0, NULL = its default). The model is only passed back to the library.
struct feature_node {
  int index;
  double value;
};
struct problem {
  int l, n;
  double* y;
  feature_node** x;
  double bias;
};
struct parameter {
  int solver_type;
  double eps, C;
  int nr_weight;
  int* weight_label;
  double* weight;
  double p;
  double* init_sol;
  double reserved[8];
};
struct model;

struct Api {
  model* (*train)(const problem*, const parameter*) = nullptr;
  void (*free_and_destroy_model)(model**) = nullptr;
  int (*save_model)(const char*, const model*) = nullptr;
  void (*set_print_string_function)(void (*)(const char*)) = nullptr;
  [[nodiscard]] bool ok() const { return train && free_and_destroy_model && save_model && set_print_string_function; }

  static const Api& get() {
    static const Api api = [] {
      Api a;
      void* handle = dlopen("liblinear.so.4", RTLD_NOW);
      if (handle == nullptr) return a;
      a.train = reinterpret_cast<decltype(a.train)>(dlsym(handle, "train"));
      a.free_and_destroy_model = reinterpret_cast<decltype(a.free_and_destroy_model)>(dlsym(handle, "free_and_destroy_model"));
      a.save_model = reinterpret_cast<decltype(a.save_model)>(dlsym(handle, "save_model"));
      a.set_print_string_function =
          reinterpret_cast<decltype(a.set_print_string_function)>(dlsym(handle, "set_print_string_function"));
      if (a.set_print_string_function) a.set_print_string_function([](const char*) {});
      return a;
    }();
    return api;
  }
};

/// A Dataset in LIBLINEAR's layout (1-based indices, −1 terminated rows, labels as read).
struct Problem {
  std::vector<feature_node> nodes;
  std::vector<feature_node*> rows;
  std::vector<double> y;
  problem prob{};

  explicit Problem(const Dataset<double>& data) {
    const auto X = data.csr();
    nodes.reserve(static_cast<std::size_t>(data.nnz() + data.n_samples()));
    std::vector<std::size_t> starts;
    for (std::int32_t i = 0; i < data.n_samples(); ++i) {
      starts.push_back(nodes.size());
      for (auto [j, v] : X.outer(i)) nodes.push_back({static_cast<int>(j) + 1, v});
      nodes.push_back({-1, 0.0});
      y.push_back(static_cast<double>(data.encoder().labels()[static_cast<std::size_t>(data.labels().view().single(
          static_cast<std::size_t>(i)))]));
    }
    for (const std::size_t s : starts) rows.push_back(nodes.data() + s);
    prob = {static_cast<int>(data.n_samples()), static_cast<int>(data.n_features()), y.data(), rows.data(), -1.0};
  }
};

parameter s5(double C) {
  parameter p{};
  p.solver_type = 5;  // L1R_L2LOSS_SVC
  p.eps = 0.001;
  p.C = C;
  return p;
}

}  // namespace ll

/// The benchmark sets, read once.
const Dataset<double>* dataset(const std::string& name) {
  static std::map<std::string, std::unique_ptr<Dataset<double>>> cache;
  if (auto it = cache.find(name); it != cache.end()) return it->second.get();
  const std::filesystem::path shared = sparsemc_test::shared_data();
  std::unique_ptr<Dataset<double>> data;
  if (name == "heart") {
    const std::filesystem::path path = "/usr/share/doc/liblinear-tools/examples/heart_scale";
    if (std::filesystem::exists(path)) data = std::make_unique<Dataset<double>>(io::read_libsvm<double>(path));
  } else if (name == "news20-12") {
    const auto path = shared / "multiclass" / "news20.t";
    if (std::filesystem::exists(path)) {
      const auto subset = std::filesystem::temp_directory_path() / ("news20-12." + std::to_string(::getpid()));
      std::ifstream in(path);
      std::ofstream out(subset);
      for (std::string line; std::getline(in, line);)
        if (line.rfind("1 ", 0) == 0 || line.rfind("2 ", 0) == 0) out << line << '\n';
      out.close();
      data = std::make_unique<Dataset<double>>(io::read_libsvm<double>(subset));
      std::filesystem::remove(subset);
    }
  } else if (name == "dna") {
    data = std::make_unique<Dataset<double>>(dna());
  } else if (name == "sector") {
    const auto path = shared / "multiclass" / "sector.scale.bz2";
    if (std::filesystem::exists(path)) data = std::make_unique<Dataset<double>>(io::read_libsvm<double>(path));
  }
  return (cache[name] = std::move(data)).get();
}

/// F of (1) at LIBLINEAR's -s 5 model of a set (the target), computed once.
double liblinear_target(const std::string& name, const Dataset<double>& data, const L1& penalty) {
  static std::map<std::string, double> cache;
  if (auto it = cache.find(name); it != cache.end()) return it->second;
  const auto& api = ll::Api::get();
  ll::Problem prob(data);
  const ll::parameter param = ll::s5(1.0);
  ll::model* model = api.train(&prob.prob, &param);
  const auto file = std::filesystem::temp_directory_path() / ("scd_bench_ll." + std::to_string(::getpid()));
  api.save_model(file.c_str(), model);
  api.free_and_destroy_model(&model);
  const auto imported = io::load_liblinear_model<double>(file);
  std::filesystem::remove(file);
  const auto K = static_cast<Eigen::Index>(data.n_classes());
  ClassMatrix<double> dense = ClassMatrix<double>::Zero(data.n_features(), imported.n_classes());
  for (std::size_t s = 0; s < imported.support().size(); ++s)
    if (imported.support()[s] < data.n_features())
      for (auto [k, w] : imported.row(s)) dense(imported.support()[s], k) = w;
  if (K == 2 && dense.col(0).isZero(0)) dense.col(0) = -dense.col(1);  // binary: the pair [w, −w]
  ClassMatrix<double> W(data.n_features(), K), S;
  for (Eigen::Index k = 0; k < K; ++k)
    W.col(k) = dense.col(imported.class_of(data.encoder().labels()[static_cast<std::size_t>(k)]));
  const double F = objective(OvrSquaredHinge{}, penalty, data.problem<Eigen::ColMajor>(), W, ClassVector<double>(), S).total();
  return cache[name] = F;
}

void BM_liblinear_s5(benchmark::State& state, const std::string& name) {
  if (skipped_in_smoke(state, name)) return;
  const auto& api = ll::Api::get();
  const Dataset<double>* data = dataset(name);
  if (!api.ok() || data == nullptr) {
    state.SkipWithError(!api.ok() ? "liblinear.so.4 not found (Debian package liblinear4)" : "data not found");
    return;
  }
  ll::Problem prob(*data);
  const ll::parameter param = ll::s5(1.0);
  for (auto _ : state) {
    ll::model* model = api.train(&prob.prob, &param);
    api.free_and_destroy_model(&model);
  }
}

void BM_scd_ls_to_liblinear(benchmark::State& state, const std::string& name, double tol, CoordinateOrder order) {
  if (skipped_in_smoke(state, name)) return;
  const auto& api = ll::Api::get();
  const Dataset<double>* data = dataset(name);
  if (!api.ok() || data == nullptr) {
    state.SkipWithError(!api.ok() ? "liblinear.so.4 not found (Debian package liblinear4)" : "data not found");
    return;
  }
  const L1 penalty{.lambda = 1.0 / static_cast<double>(data->n_samples()), .mu = 0};
  const double target = liblinear_target(name, *data, penalty);
  const auto problem = data->problem<Eigen::ColMajor>();  // converted before the timing
  struct Stop {
    double target;
    bool end_epoch(const EpochReport& r) const { return r.objective <= target; }
  };
  SCD<OvrSquaredHinge, L1, Adaptive> solver({}, penalty, {.tol = tol, .max_epochs = 1000000, .order = order});
  Result<double> result;
  for (auto _ : state) result = solver.fit(problem, Stop{target});
  state.counters["epochs"] = static_cast<double>(result.info.epochs);
  state.counters["reached"] = result.info.objective <= target ? 1 : 0;
  state.counters["F_over_F_liblinear"] = result.info.objective / target;
}

BENCHMARK_CAPTURE(BM_liblinear_s5, heart, std::string("heart"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_scd_ls_to_liblinear, heart, std::string("heart"), 1e-5, CoordinateOrder::uniform)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_scd_ls_to_liblinear, heart_cyclic, std::string("heart"), 1e-5, CoordinateOrder::permuted_cyclic)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_liblinear_s5, news20_12, std::string("news20-12"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_scd_ls_to_liblinear, news20_12, std::string("news20-12"), 1e-5, CoordinateOrder::uniform)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_scd_ls_to_liblinear, news20_12_cyclic, std::string("news20-12"), 1e-5, CoordinateOrder::permuted_cyclic)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_liblinear_s5, dna, std::string("dna"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_scd_ls_to_liblinear, dna, std::string("dna"), 1e-5, CoordinateOrder::uniform)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_scd_ls_to_liblinear, dna_cyclic, std::string("dna"), 1e-5, CoordinateOrder::permuted_cyclic)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_liblinear_s5, sector, std::string("sector"))->Unit(benchmark::kSecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_scd_ls_to_liblinear, sector, std::string("sector"), 1e-8, CoordinateOrder::uniform)->Unit(benchmark::kSecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_scd_ls_to_liblinear, sector_cyclic, std::string("sector"), 1e-8, CoordinateOrder::permuted_cyclic)->Unit(benchmark::kSecond)->Iterations(1);

// ------------------------------------------------------------------------------------------------
// scd-rda versus fbpd: objective-versus-time traces.
// ------------------------------------------------------------------------------------------------

void BM_trace_rda_vs_fbpd(benchmark::State& state) {
  const L1 penalty{.lambda = 1e-2, .mu = 0};
  const char* path = std::getenv("SPARSEMC_SCD_TRACE");
  std::ofstream file;
  std::ostringstream discarded;  // a smoke run writes no trace
  if (!smoke_run) file.open(path != nullptr ? path : "scd_rda_vs_fbpd.csv");
  std::ostream& out = smoke_run ? static_cast<std::ostream&>(discarded) : file;
  out << "solver,epoch,seconds,objective\n";
  out.precision(17);
  const std::int64_t rda_epochs = smoke_run ? 3 : 2000, fbpd_epochs = smoke_run ? 3 : 20000;
  for (auto _ : state) {
    History rda_history;
    SCD<CrammerSinger, L1, NonsmoothRDA> rda({}, penalty, {.tol = 1e-12, .max_epochs = rda_epochs});
    const auto rda_result = rda.fit(dna().problem<Eigen::ColMajor>(), rda_history);
    for (const auto& e : rda_history.epochs) out << "scd-rda," << e.epoch << ',' << e.seconds << ',' << e.objective << '\n';
    state.counters["scd_rda_F"] = rda_result.info.objective;
    History fbpd_history;
    FBPD<CrammerSinger, L1> fbpd({}, penalty, {.tol = 1e-9, .max_epochs = fbpd_epochs});
    const auto fbpd_result = fbpd.fit(dna().problem<Eigen::RowMajor>(), fbpd_history);
    for (const auto& e : fbpd_history.epochs) out << "fbpd," << e.epoch << ',' << e.seconds << ',' << e.objective << '\n';
    state.counters["fbpd_F"] = fbpd_result.info.objective;
  }
}
BENCHMARK(BM_trace_rda_vs_fbpd)->Unit(benchmark::kSecond)->Iterations(1);

}  // namespace

int main(int argc, char** argv) {
  constexpr std::string_view flag = "--benchmark_min_time=";
  for (int a = 1; a < argc; ++a)
    if (const std::string_view arg = argv[a]; arg.starts_with(flag))
      smoke_run = std::strtod(std::string(arg.substr(flag.size())).c_str(), nullptr) < 0.1;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
