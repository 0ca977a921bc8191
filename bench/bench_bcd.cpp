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
#include <benchmark/benchmark.h>

#include <sparsemc/io/libsvm.hpp>
#include <sparsemc/loss/logistic.hpp>
#include <sparsemc/loss/ovr_squared_hinge.hpp>
#include <sparsemc/loss/squared_hinge.hpp>
#include <sparsemc/penalty/l1.hpp>
#include <sparsemc/penalty/l1l2.hpp>
#include <sparsemc/solver/bcd/block_cd.hpp>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

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
  std::filesystem::path path = name == "dna" ? std::filesystem::path(SPARSEMC_REPO_DATA) / "dna.scale"
                                             : std::filesystem::path(SPARSEMC_SHARED_DATA) / "multiclass" / "sector.scale.bz2";
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

}  // namespace

int main(int argc, char** argv) {
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
