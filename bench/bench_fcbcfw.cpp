// FCBCFW (PD-Sparse) benchmarks: a generator of extreme multiclass data, a whole-fit harness
// that prints CPU times, objectives of (1) and sparsity (driven by bench/fcbcfw_compare.sh, which
// runs LIBLINEAR -s 4 side by side), and Google Benchmark kernels of one epoch.
//
//   bench_fcbcfw gen OUT n d K nnz_per_row seed sample_seed [zipf]
//                                                     write a LIBSVM file (generate()); with
//                                                     zipf = s > 0, class k is drawn with
//                                                     probability ∝ (k + 1)^−s (power-law sizes)
//   bench_fcbcfw fit TRAIN [--C c] [--lambda-pd l] [--tol t] [--max-epochs m]
//                [--search exact|bi|auto] [--target F] [--heldout FILE] [--test FILE]
//                [--labels L] [--sweeps S]  (labels_per_search, active_sweeps)
//                [--storage hashed|dense|auto] [--no-arc]  (storage, arc_search off)
//                [--float]                           fit, print one line of key=value
//   bench_fcbcfw objective DATA MODEL C               F of (1) (λ = 0, μ = 1/(Cn)) of a
//                                                     LIBLINEAR model, and its nonzeros
//   bench_fcbcfw [--benchmark_filter=...]             the kernels
#include <benchmark/benchmark.h>

#include <sparsemc/core/rng.hpp>
#include <sparsemc/io/liblinear_model.hpp>
#include <sparsemc/io/libsvm.hpp>
#include <sparsemc/loss/crammer_singer.hpp>
#include <sparsemc/model/early_stopping.hpp>
#include <sparsemc/penalty/l1.hpp>
#include <sparsemc/solver/fcbcfw/fcbcfw.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

using namespace sparsemc;

namespace {

double cpu_seconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

// Extreme multiclass data: each class owns 10 random "signature" features; a sample of class k
// (uniform) takes 70% of its nnz_per_row distinct features from k's signature (with
// replacement, so fewer when they repeat, then topped up at random) and the rest uniformly at
// random, values in [0.5, 1.5), rows scaled to unit ℓ2 norm (tf-idf like). The number of
// nonzeros per row is the same for every K; only the number of classes changes.
// `seed` draws the signatures (the "concepts"), `sample_seed` the samples: a test set is the same
// seed with another sample_seed.
CsrMatrix<double> generate(std::int64_t n, std::int64_t d, ClassIndex K, int per_row, std::uint64_t seed,
                           std::uint64_t sample_seed, std::vector<ClassIndex>& y, double zipf = 0.0) {
  // Class sizes: uniform, or a power law (the cumulative weights, searched per sample).
  std::vector<double> cumulative(static_cast<std::size_t>(K));
  double total = 0;
  for (ClassIndex k = 0; k < K; ++k) cumulative[static_cast<std::size_t>(k)] = total += std::pow(k + 1.0, -zipf);
  auto draw_class = [&](Rng& rng) {
    if (zipf == 0.0) return static_cast<ClassIndex>(uniform_index(rng, static_cast<std::uint64_t>(K)));
    const double u = uniform_real(rng) * total;
    const auto at = std::upper_bound(cumulative.begin(), cumulative.end(), u) - cumulative.begin();
    return static_cast<ClassIndex>(std::min<std::ptrdiff_t>(at, K - 1));
  };
  Rng signature_rng(seed);
  const int signature = 10;
  std::vector<std::int32_t> features(static_cast<std::size_t>(K) * signature);
  for (auto& j : features) j = static_cast<std::int32_t>(uniform_index(signature_rng, static_cast<std::uint64_t>(d)));
  Rng rng(seed * 1000003 + sample_seed);
  std::vector<Eigen::Triplet<double>> triplets;
  triplets.reserve(static_cast<std::size_t>(n * per_row));
  y.resize(static_cast<std::size_t>(n));
  std::vector<std::int32_t> cols;
  for (std::int64_t i = 0; i < n; ++i) {
    const ClassIndex k = draw_class(rng);
    y[static_cast<std::size_t>(i)] = k;
    cols.clear();
    for (int f = 0; f < per_row; ++f)
      cols.push_back(uniform_real(rng) < 0.7
                         ? features[static_cast<std::size_t>(k) * signature + uniform_index(rng, signature)]
                         : static_cast<std::int32_t>(uniform_index(rng, static_cast<std::uint64_t>(d))));
    for (;;) {
      std::sort(cols.begin(), cols.end());
      cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
      if (static_cast<int>(cols.size()) == per_row) break;
      while (static_cast<int>(cols.size()) < per_row)
        cols.push_back(static_cast<std::int32_t>(uniform_index(rng, static_cast<std::uint64_t>(d))));
    }
    std::vector<double> values(cols.size());
    double norm = 0;
    for (auto& v : values) {
      v = 0.5 + uniform_real(rng);
      norm += v * v;
    }
    for (std::size_t r = 0; r < cols.size(); ++r) triplets.emplace_back(i, cols[r], values[r] / std::sqrt(norm));
  }
  CsrMatrix<double> X(n, d);
  X.setFromTriplets(triplets.begin(), triplets.end());
  X.makeCompressed();
  return X;
}

int generate_file(int argc, char** argv) {
  if (argc != 9 && argc != 10) {
    std::cerr << "usage: bench_fcbcfw gen OUT n d K nnz_per_row seed sample_seed [zipf]\n";
    return 1;
  }
  std::vector<ClassIndex> y;
  const auto X = generate(std::atoll(argv[3]), std::atoll(argv[4]), std::atoi(argv[5]), std::atoi(argv[6]),
                          std::strtoull(argv[7], nullptr, 10), std::strtoull(argv[8], nullptr, 10), y,
                          argc == 10 ? std::atof(argv[9]) : 0.0);
  std::ofstream out(argv[2]);
  char buffer[64];
  for (Eigen::Index i = 0; i < X.rows(); ++i) {
    out << y[static_cast<std::size_t>(i)] + 1;
    for (CsrMatrix<double>::InnerIterator it(X, i); it; ++it) {
      std::snprintf(buffer, sizeof buffer, " %d:%.9g", static_cast<int>(it.col()) + 1, it.value());
      out << buffer;
    }
    out << '\n';
  }
  return out.good() ? 0 : 2;
}

// Records the CPU time at which the objective first reaches a target (evaluated epochs only).
struct TimeToTarget {
  double target, start;
  bool verbose = false;  ///< a progress line per epoch on stderr (--verbose)
  double reached = std::numeric_limits<double>::quiet_NaN();
  std::int64_t epoch = -1;
  bool end_epoch(const EpochReport& r) {
    if (verbose) ProgressPrinter{std::cerr}.end_epoch(r);
    if (std::isnan(reached) && !std::isnan(r.objective) && r.objective <= target) {
      reached = cpu_seconds() - start;
      epoch = r.epoch;
    }
    return false;
  }
};

// Accuracy by label from a sparse W (the model's classes are the training table's; the test set's
// may extend it): scores of the touched classes only, untouched classes score 0.
template <class Scalar>
double accuracy(const FCBCFWSolution<Scalar>& w, const LabelEncoder& train, const Dataset<Scalar>& test) {
  std::vector<double> z(static_cast<std::size_t>(w.n_classes), 0.0);
  std::vector<char> touched(z.size(), 0);
  std::vector<ClassIndex> list;
  const auto X = test.csr();
  const auto y = test.labels().view();
  double hits = 0;
  for (std::int32_t i = 0; i < X.rows(); ++i) {
    for (auto [j, x] : X.outer(i)) {
      if (j >= w.n_features) continue;
      for (auto p = w.weight_ptr[static_cast<std::size_t>(j)]; p < w.weight_ptr[static_cast<std::size_t>(j) + 1]; ++p) {
        const auto k = static_cast<std::size_t>(w.weight_class[static_cast<std::size_t>(p)]);
        if (!touched[k]) list.push_back(static_cast<ClassIndex>(k));
        touched[k] = 1;
        z[k] += static_cast<double>(x) * static_cast<double>(w.weight[static_cast<std::size_t>(p)]);
      }
    }
    ClassIndex best = -1;
    double best_score = 0;
    for (ClassIndex k : list)
      if (z[static_cast<std::size_t>(k)] > best_score) best_score = z[static_cast<std::size_t>(k)], best = k;
    if (best < 0)  // every touched score ≤ 0: the first class scoring 0
      for (ClassIndex k = 0; k < w.n_classes && best < 0; ++k)
        if (!touched[static_cast<std::size_t>(k)] || z[static_cast<std::size_t>(k)] == 0) best = k;
    hits += train.label_of(best) == test.encoder().label_of(y.single(static_cast<std::size_t>(i)));
    for (ClassIndex k : list) z[static_cast<std::size_t>(k)] = 0, touched[static_cast<std::size_t>(k)] = 0;
    list.clear();
  }
  return hits / static_cast<double>(X.rows());
}

template <class Scalar>
int fit(const std::map<std::string, std::string>& args, const std::string& train_path) {
  const auto get = [&](const std::string& key, const std::string& fallback) {
    const auto it = args.find(key);
    return it == args.end() ? fallback : it->second;
  };
  double start = cpu_seconds();
  const auto train = io::read_libsvm<Scalar>(train_path);
  const double read_seconds = cpu_seconds() - start;
  const double C = std::stod(get("--C", "1")), lambda_pd = std::stod(get("--lambda-pd", "0"));
  const double n = train.n_samples(), mu = 1.0 / (C * n), lambda = lambda_pd / (C * n);
  const std::string search = get("--search", "auto");
  const std::string storage = get("--storage", "auto");
  typename FCBCFW<CrammerSinger, L1>::Options options{
      .tol = std::stod(get("--tol", "1e-3")),
      .max_epochs = std::stoll(get("--max-epochs", "1000")),
      .search = search == "exact" ? FCBCFWSearch::exact
                                  : (search == "bi" ? FCBCFWSearch::bi_stochastic : FCBCFWSearch::automatic),
      .labels_per_search = std::stoi(get("--labels", "1")),
      .active_sweeps = std::stoi(get("--sweeps", "-1")),
      .arc_search = args.count("--no-arc") == 0,
      .storage = storage == "dense" ? FCBCFWStorage::dense
                                    : (storage == "hashed" ? FCBCFWStorage::hashed : FCBCFWStorage::automatic)};
  const FCBCFW<CrammerSinger, L1> solver({}, {.lambda = lambda, .mu = mu}, options);
  std::optional<Dataset<Scalar>> heldout, test;
  const io::LibsvmOptions same{.n_features = train.n_features(), .labels = train.encoder(),
                               .unknown_label = io::UnknownLabel::extend};
  if (args.count("--heldout")) heldout = io::read_libsvm<Scalar>(args.at("--heldout"), same);
  if (args.count("--test")) test = io::read_libsvm<Scalar>(args.at("--test"), same);
  TimeToTarget to_target{std::stod(get("--target", "-inf")), 0.0, args.count("--verbose") > 0};
  start = cpu_seconds();
  to_target.start = start;
  FCBCFWSolution<Scalar> solution;
  double heldout_accuracy = std::numeric_limits<double>::quiet_NaN();
  if (heldout) {  // PD-Sparse's -h/-e: the model of the best held-out epoch
    HeldoutEarlyStop<Scalar> early(heldout->csr(), heldout->labels().view(), 3);
    const auto r = solver.fit(train.template problem<Eigen::RowMajor>(), to_target, early);
    const LinearModel<Scalar>& m = r.model;
    solution.n_features = m.n_features();
    solution.n_classes = m.n_classes();
    solution.weight_ptr.assign(static_cast<std::size_t>(m.n_features()) + 1, 0);
    for (std::int64_t j = 0; j < m.n_features(); ++j) {
      const auto row = m.row_of_feature(j);
      if (row >= 0)
        for (auto [k, w] : m.row(static_cast<std::size_t>(row))) {
          solution.weight_class.push_back(k);
          solution.weight.push_back(w);
        }
      solution.weight_ptr[static_cast<std::size_t>(j) + 1] = static_cast<std::int64_t>(solution.weight.size());
    }
    solution.info = r.info;
    heldout_accuracy = early.best_score();
  } else {  // sparse W throughout: nothing of size d×K
    solution = solver.solve(train.template problem<Eigen::RowMajor>(), to_target);
  }
  const double fit_seconds = cpu_seconds() - start;
  const SolverInfo& info = solution.info;
  std::printf("read_cpu=%.3f fit_cpu=%.3f status=%s epochs=%lld objective=%.10g gap=%.3g nnz=%lld nnz_rows=%lld "
              "time_to_target=%.3f epoch_to_target=%lld",
              read_seconds, fit_seconds, std::string(to_string(info.status)).c_str(),
              static_cast<long long>(info.epochs), info.objective, info.measure,
              static_cast<long long>(solution.weight.size()), static_cast<long long>(info.nnz_rows), to_target.reached,
              static_cast<long long>(to_target.epoch));
  if (heldout) std::printf(" heldout_accuracy=%.4f", heldout_accuracy);
  if (test) std::printf(" test_accuracy=%.4f", accuracy(solution, train.encoder(), *test));
  std::printf("\n");
  return 0;
}

// F of (1) with λ = 0, μ = 1/(Cn) for a LIBLINEAR model on DATA, and its number of nonzeros.
int liblinear_objective(int argc, char** argv) {
  if (argc != 5) {
    std::cerr << "usage: bench_fcbcfw objective DATA MODEL C\n";
    return 1;
  }
  const auto model = io::load_liblinear_model<double>(argv[3]);
  io::LibsvmOptions options{.n_features = model.n_features(), .labels = LabelEncoder(model.labels())};
  const auto data = io::read_libsvm<double>(argv[2], options);
  const double n = data.n_samples(), mu = 1.0 / (std::atof(argv[4]) * n);
  // Model class k has label model.labels()[k]; the data's classes follow the sorted table.
  std::vector<std::size_t> data_class(static_cast<std::size_t>(model.n_classes()));
  for (ClassIndex k = 0; k < model.n_classes(); ++k)
    data_class[static_cast<std::size_t>(k)] =
        static_cast<std::size_t>(data.encoder().index_of(model.labels()[static_cast<std::size_t>(k)]));
  const auto X = data.csr();
  const auto y = data.labels().view();
  const CrammerSinger loss;
  std::vector<double> s(data_class.size());
  double total = 0;
  for (Eigen::Index i = 0; i < X.rows(); ++i) {
    std::fill(s.begin(), s.end(), 0.0);
    for (auto [j, x] : X.outer(static_cast<std::int32_t>(i))) {
      const auto r = model.row_of_feature(j);
      if (r < 0) continue;
      for (auto [k, w] : model.row(static_cast<std::size_t>(r))) s[data_class[static_cast<std::size_t>(k)]] += x * w;
    }
    total += loss.value<double>(s, y[static_cast<std::size_t>(i)]);
  }
  std::printf("objective=%.10g nnz=%lld\n", total / n + 0.5 * mu * model.weights().squaredNorm(),
              static_cast<long long>(model.nnz()));
  return 0;
}

// --- kernels ----------------------------------------------------------------------------------

// One epoch of FCBCFW (search, subproblem, updates and the gap evaluation) on generated data
// with n = 20000, d = 50000, 40 nonzeros per row, K classes; λ' = 1, C = 1.
void BM_fcbcfw_epoch(benchmark::State& state) {
  const auto K = static_cast<ClassIndex>(state.range(0));
  const auto search = state.range(1) ? FCBCFWSearch::bi_stochastic : FCBCFWSearch::exact;
  std::vector<ClassIndex> y;
  const auto X = generate(20000, 50000, K, 40, 1, 1, y);
  const auto labels = LabelSets::multiclass(y, K);
  const CsrProblem<double> problem{.X = CsrView<double>(X), .y = labels.view()};
  const double n = 20000;
  const FCBCFW<CrammerSinger, L1> solver({}, {.lambda = 1.0 / n, .mu = 1.0 / n},
                                         {.max_epochs = 3, .search = search});
  for (auto _ : state) benchmark::DoNotOptimize(solver.solve(problem).info.objective);
  state.SetLabel(search == FCBCFWSearch::exact ? "exact search, 3 epochs" : "bi-stochastic search, 3 epochs");
}
BENCHMARK(BM_fcbcfw_epoch)->Args({1000, 0})->Args({16000, 0})->Args({16000, 1})->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::string(argv[1]) == "gen") return generate_file(argc, argv);
  if (argc >= 2 && std::string(argv[1]) == "objective") return liblinear_objective(argc, argv);
  if (argc >= 3 && std::string(argv[1]) == "fit") {
    std::map<std::string, std::string> args;
    for (int a = 3; a < argc; ++a) {
      const std::string key = argv[a];
      if (key == "--float" || key == "--verbose" || key == "--no-arc") args[key] = "1";
      else if (a + 1 < argc) args[key] = argv[++a];
    }
    return args.count("--float") ? fit<float>(args, argv[2]) : fit<double>(args, argv[2]);
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
