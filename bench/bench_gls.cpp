// Generalized least squares (Agarwal et al. 2014) benchmarks.
//
//   bench_gls [Google Benchmark flags]
//       kernels: a GLS fit (softmax, plain and accelerated) on 400 random Fourier features of dna.
//
//   bench_gls --compare DIR [--data FILE] [--train N] [--rff D] [--mu M] [--fista-limit SECONDS]
//             [--stages T] [--block P] [--svm] [--stagewise-only]
//       the mnist10k study behind docs/gls-mnist.md (driven by bench/gls_mnist.py): splits the
//       data (seeded) into N training and the rest test samples, makes D random Fourier features
//       (Gaussian kernel, σ² = mean squared deviation of the training samples), writes them to
//       DIR as float64 row-major binaries (+ int32 labels; + LIBSVM text with --svm, for
//       liblinear-train), and prints one JSON object per line:
//         {"run": "gls"|"gls-plain"|"fista", "trace": [[seconds, F], ...], ...}  objective (1) over time
//         {"run": "table1", "features": "raw"|"rff", "linear": e, "logistic": e, "calibrated": e}  test errors
//         {"run": "stagewise", "calibrate": b, "trace": [[seconds, test error], ...]}
//       (--stagewise-only: the features and the stagewise runs only)
//
//   bench_gls --trace DIR --solver gls-qn|gls|gls-plain|fista [--mu M] [--limit SECONDS] [--memory M]
//             [--tol T] [--single-gram] [--refresh N]
//       one solver on the random features a --compare run wrote to DIR (train.bin, train.labels):
//       prints {"run": NAME, "trace": [[seconds, F], ...], ...} (objective (1), logistic + ridge,
//       no intercept; seconds include forming and factorising Σ̂). gls-qn is GLS with
//       quasi-Newton steps (GLSOptions::memory, default 10); --single-gram (default) / --exact-gram
//       forms Σ̂ in single / double precision (GLSOptions::single_precision_gram); --refresh N
//       rebuilds the preconditioner from the samples' curvatures every N iterations (default 40,
//       curvature_refresh; 0 = never).

#include <benchmark/benchmark.h>

#include <sparsemc/core/rng.hpp>
#include <sparsemc/io/libsvm.hpp>
#include <sparsemc/solver/fista/prox_gradient.hpp>
#include <sparsemc/solver/gls/calibrated_ls.hpp>
#include <sparsemc/solver/gls/gls.hpp>
#include <sparsemc/solver/gls/stagewise.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "data_dirs.hpp"

namespace {

using namespace sparsemc;
using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// --- Google Benchmark kernels --------------------------------------------------------------------

struct DnaFeatures {
  RowMatrix Z;
  LabelSets labels;
  DnaFeatures() {
    auto data = io::read_libsvm<double>((sparsemc_test::repo_data() / "dna.scale").string());
    Z = RandomFourierFeatures<double>(1, data.n_features(), 400, 4.0).transform(data.csr().eigen());
    labels = data.labels();
  }
  [[nodiscard]] DenseProblem<double> problem() const { return {{Z.data(), Z.rows(), Z.cols()}, labels.view(), {}}; }
};

void BM_GlsSoftmax(benchmark::State& state) {
  static const DnaFeatures data;
  const GLS solver(Logistic{}, NoPenalty{.mu = 1e-3},
                   GLSOptions{.tol = 1e-6, .max_epochs = 10000, .accelerated = state.range(0) != 0, .memory = 0});
  std::int64_t epochs = 0;
  for (auto _ : state) {
    auto result = solver.fit(data.problem());
    epochs = result.info.epochs;
    benchmark::DoNotOptimize(result.info.objective);
  }
  state.counters["epochs"] = static_cast<double>(epochs);
}
BENCHMARK(BM_GlsSoftmax)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// --- the mnist10k study --------------------------------------------------------------------------

struct Split {
  RowMatrix X_train, X_test;  // raw pixels, dense
  LabelSets y_train, y_test;
};

Split split(const Dataset<double>& data, Eigen::Index n_train, std::uint64_t seed) {
  const Eigen::Index n = data.n_samples();
  std::vector<Eigen::Index> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), Eigen::Index{0});
  Rng rng(seed);
  shuffle(std::span<Eigen::Index>(order), rng);
  const RowMatrix X = RowMatrix(data.csr().eigen());
  Split s;
  s.X_train.resize(n_train, X.cols());
  s.X_test.resize(n - n_train, X.cols());
  std::vector<ClassIndex> a, b;
  for (Eigen::Index r = 0; r < n; ++r) {
    const auto i = order[static_cast<std::size_t>(r)];
    const ClassIndex k = data.labels().view().single(static_cast<std::size_t>(i));
    if (r < n_train) s.X_train.row(r) = X.row(i), a.push_back(k);
    else s.X_test.row(r - n_train) = X.row(i), b.push_back(k);
  }
  const ClassIndex K = data.n_classes();
  s.y_train = LabelSets::multiclass(a, K);
  s.y_test = LabelSets::multiclass(b, K);
  return s;
}

void write_binary(const std::filesystem::path& path, const RowMatrix& Z, const LabelSets& y) {
  std::ofstream out(path.string() + ".bin", std::ios::binary);
  out.write(reinterpret_cast<const char*>(Z.data()), static_cast<std::streamsize>(Z.size() * sizeof(double)));
  std::ofstream labels(path.string() + ".labels", std::ios::binary);
  for (std::size_t i = 0; i < y.size(); ++i) {
    const std::int32_t k = y.view().single(i);
    labels.write(reinterpret_cast<const char*>(&k), sizeof k);
  }
}

void write_svm(const std::filesystem::path& path, const RowMatrix& Z, const LabelSets& y) {
  std::FILE* out = std::fopen(path.string().c_str(), "w");
  if (out == nullptr) throw std::runtime_error("cannot write " + path.string());
  for (Eigen::Index i = 0; i < Z.rows(); ++i) {
    std::fprintf(out, "%d", y.view().single(static_cast<std::size_t>(i)));
    for (Eigen::Index j = 0; j < Z.cols(); ++j) std::fprintf(out, " %lld:%.9g", static_cast<long long>(j + 1), Z(i, j));
    std::fputc('\n', out);
  }
  std::fclose(out);
}

double error_of(const std::vector<ClassIndex>& predicted, const LabelSets& y) {
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < predicted.size(); ++i) wrong += predicted[i] != y.view().single(i) ? 1 : 0;
  return static_cast<double>(wrong) / static_cast<double>(predicted.size());
}

/// JSON "[[t, v], ...]" of a history's (seconds, objective).
std::string trace_json(const History& h) {
  std::string s = "[";
  for (std::size_t e = 0; e < h.epochs.size(); ++e) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s[%.6f, %.17g]", e ? ", " : "", h.epochs[e].seconds, h.epochs[e].objective);
    s += buf;
  }
  return s + "]";
}

/// Test errors of linear (ridge LS), logistic (GLS softmax) and calibrated LS on one feature set.
void table1(const char* features, const RowMatrix& Z_train, const LabelSets& y_train, const RowMatrix& Z_test,
            const LabelSets& y_test, double mu) {
  const DenseProblem<double> problem{{Z_train.data(), Z_train.rows(), Z_train.cols()}, y_train.view(), {}};
  const auto linear = GLS(LeastSquares{}, NoPenalty{.mu = mu}, GLSOptions{.fit_intercept = true}).fit(problem);
  const auto logistic = GLS(Logistic{}, NoPenalty{.mu = mu},
                            GLSOptions{.tol = 1e-5, .max_epochs = 2000, .time_limit = 60, .fit_intercept = true,
                                       .accelerated = true, .memory = 0})
                            .fit(problem);
  const auto calibrated =
      CalibratedLS(LeastSquares{}, NoPenalty{.mu = mu}, CalibratedLSOptions{.max_epochs = 20, .fit_intercept = true})
          .fit(problem);
  std::printf(
      "{\"run\": \"table1\", \"features\": \"%s\", \"d\": %lld, \"mu\": %g, \"linear\": %.4f, \"logistic\": %.4f, "
      "\"calibrated\": %.4f, \"logistic_epochs\": %lld, \"calibrated_stages\": %lld}\n",
      features, static_cast<long long>(Z_train.cols()), mu, error_of(linear.model.predict_classes(Z_test), y_test),
      error_of(logistic.model.predict_classes(Z_test), y_test),
      error_of(calibrated.model.predict_classes(DenseRowView<double>(Z_test.data(), Z_test.rows(), Z_test.cols())), y_test),
      static_cast<long long>(logistic.info.epochs), static_cast<long long>(calibrated.info.epochs));
  std::fflush(stdout);
}

int compare(int argc, char** argv) {
  std::filesystem::path dir = argv[2];
  std::string data_path = (sparsemc_test::shared_data() / "multiclass" / "mnist10k_npm.bz2").string();
  Eigen::Index n_train = 8000, D = 4000;
  std::int64_t stages = 16, block = 512;
  double mu = 1e-4, fista_limit = 120;
  bool svm = false, stagewise_only = false;
  for (int i = 3; i < argc; ++i) {
    const std::string flag = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(flag + " needs a value");
      return argv[++i];
    };
    if (flag == "--data") data_path = value();
    else if (flag == "--train") n_train = std::stol(value());
    else if (flag == "--rff") D = std::stol(value());
    else if (flag == "--mu") mu = std::stod(value());
    else if (flag == "--fista-limit") fista_limit = std::stod(value());
    else if (flag == "--stages") stages = std::stoll(value());
    else if (flag == "--block") block = std::stoll(value());
    else if (flag == "--svm") svm = true;
    else if (flag == "--stagewise-only") stagewise_only = true;
    else throw std::invalid_argument("unknown argument " + flag);
  }
  std::filesystem::create_directories(dir);
  const auto data = io::read_libsvm<double>(data_path);
  const Split s = split(data, n_train, 2014);
  // σ² = (1/n) Σ ‖x_i − x̄‖² of the training pixels (Stagewise's default bandwidth).
  const Eigen::RowVectorXd mean = s.X_train.colwise().mean();
  const double sigma = std::sqrt((s.X_train.rowwise() - mean).squaredNorm() / static_cast<double>(n_train));
  const RandomFourierFeatures<double> rff(42, s.X_train.cols(), D, sigma);
  const RowMatrix Z_train = rff.transform(s.X_train), Z_test = rff.transform(s.X_test);
  write_binary(dir / "train", Z_train, s.y_train);
  write_binary(dir / "test", Z_test, s.y_test);
  if (svm) {
    write_svm(dir / "train.svm", Z_train, s.y_train);
    write_svm(dir / "test.svm", Z_test, s.y_test);
  }
  std::printf("{\"run\": \"setup\", \"n_train\": %lld, \"n_test\": %lld, \"d_raw\": %lld, \"rff\": %lld, \"sigma\": %.17g, \"mu\": %g}\n",
              static_cast<long long>(n_train), static_cast<long long>(s.X_test.rows()),
              static_cast<long long>(s.X_train.cols()), static_cast<long long>(D), sigma, mu);
  std::fflush(stdout);

  // Objective (1) (logistic + ridge, no intercept) over time: GLS (accelerated and plain) and FISTA.
  const DenseProblem<double> problem{{Z_train.data(), Z_train.rows(), Z_train.cols()}, s.y_train.view(), {}};
  for (const bool accelerated : {true, false}) {
    if (stagewise_only) break;
    History h;
    const auto r = GLS(Logistic{}, NoPenalty{.mu = mu},
                       GLSOptions{.tol = 1e-9, .max_epochs = 100000, .time_limit = accelerated ? fista_limit : fista_limit / 2,
                                  .accelerated = accelerated, .memory = 0})
                       .fit(problem, h);
    std::printf("{\"run\": \"%s\", \"status\": \"%s\", \"epochs\": %lld, \"objective\": %.17g, \"test_error\": %.4f, \"trace\": %s}\n",
                accelerated ? "gls" : "gls-plain", std::string(to_string(r.info.status)).c_str(),
                static_cast<long long>(r.info.epochs), r.info.objective,
                error_of(r.model.predict_classes(Z_test), s.y_test), trace_json(h).c_str());
    std::fflush(stdout);
  }
  if (!stagewise_only) {
    const Eigen::SparseMatrix<double, Eigen::RowMajor, std::int32_t> Zs = Z_train.sparseView();
    const CsrProblem<double> sparse{CsrView<double>(Zs), s.y_train.view(), {}};
    History h;
    const auto r = ProxGradient(Logistic{}, NoPenalty{.mu = mu},
                                ProxGradientOptions{.tol = 1e-9, .max_epochs = 1000000, .time_limit = fista_limit})
                       .fit(sparse, h);
    std::printf("{\"run\": \"fista\", \"status\": \"%s\", \"epochs\": %lld, \"objective\": %.17g, \"trace\": %s}\n",
                std::string(to_string(r.info.status)).c_str(), static_cast<long long>(r.info.epochs), r.info.objective,
                trace_json(h).c_str());
    std::fflush(stdout);
  }

  // Table 1: raw pixels and the random features.
  if (!stagewise_only) {
    table1("raw", s.X_train, s.y_train, s.X_test, s.y_test, mu);
    table1("rff", Z_train, s.y_train, Z_test, s.y_test, mu);
  }

  // Stagewise regression on the raw pixels with fresh random-feature blocks: test error over time.
  const DenseProblem<double> raw{{s.X_train.data(), s.X_train.rows(), s.X_train.cols()}, s.y_train.view(), {}};
  for (const bool calibrate : {false, true}) {
    RowMatrix Y_test = RowMatrix::Zero(s.X_test.rows(), data.n_classes());
    std::string trace = "[";
    struct TestError {
      const Split* s;
      RowMatrix* Y;
      std::string* trace;
      bool end_epoch(const EpochReport& report, const StagedModel<double>& model) {
        // Apply only the newest stage to the running test predictions (the chain is incremental).
        model.apply_stage(model.stages().size() - 1, DenseRowView<double>(s->X_test.data(), s->X_test.rows(), s->X_test.cols()), *Y);
        char buf[64];
        std::snprintf(buf, sizeof buf, "%s[%.6f, %.4f]", report.epoch > 1 ? ", " : "", report.seconds,
                      error_of(StagedModel<double>::argmax_rows(*Y), s->y_test));
        *trace += buf;
        return false;
      }
    } callback{&s, &Y_test, &trace};
    const auto r = Stagewise(LeastSquares{}, NoPenalty{.mu = mu},
                             StagewiseOptions{.max_epochs = stages, .seed = 3, .fit_intercept = true, .block_size = block,
                                              .bandwidth = sigma, .calibrate = calibrate})
                       .fit(raw, callback);
    std::printf("{\"run\": \"stagewise\", \"calibrate\": %s, \"block\": %lld, \"stages\": %lld, \"seconds\": %.3f, \"trace\": %s]}\n",
                calibrate ? "true" : "false", static_cast<long long>(block), static_cast<long long>(r.info.epochs),
                r.info.seconds, trace.c_str());
    std::fflush(stdout);
  }
  return 0;
}

int trace(int argc, char** argv) {
  const std::filesystem::path dir = argv[2];
  std::string solver = "gls-qn";
  double mu = 1e-6, limit = 150, tol = 1e-9;
  int memory = 10;
  bool single_gram = GLSOptions{}.single_precision_gram;  // the library's defaults
  std::int64_t refresh = GLSOptions{}.curvature_refresh;
  for (int i = 3; i < argc; ++i) {
    const std::string flag = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(flag + " needs a value");
      return argv[++i];
    };
    if (flag == "--solver") solver = value();
    else if (flag == "--mu") mu = std::stod(value());
    else if (flag == "--limit") limit = std::stod(value());
    else if (flag == "--tol") tol = std::stod(value());
    else if (flag == "--memory") memory = std::stoi(value());
    else if (flag == "--single-gram") single_gram = true;
    else if (flag == "--exact-gram") single_gram = false;
    else if (flag == "--refresh") refresh = std::stoll(value());
    else throw std::invalid_argument("unknown argument " + flag);
  }
  const auto bytes = static_cast<Eigen::Index>(std::filesystem::file_size(dir / "train.bin"));
  const auto n = static_cast<Eigen::Index>(std::filesystem::file_size(dir / "train.labels") / sizeof(std::int32_t));
  RowMatrix Z(n, bytes / static_cast<Eigen::Index>(sizeof(double)) / n);
  std::ifstream(dir / "train.bin", std::ios::binary)
      .read(reinterpret_cast<char*>(Z.data()), static_cast<std::streamsize>(Z.size() * sizeof(double)));
  std::vector<std::int32_t> raw(static_cast<std::size_t>(n));
  std::ifstream(dir / "train.labels", std::ios::binary)
      .read(reinterpret_cast<char*>(raw.data()), static_cast<std::streamsize>(raw.size() * sizeof(std::int32_t)));
  const std::vector<ClassIndex> y(raw.begin(), raw.end());
  const LabelSets labels = LabelSets::multiclass(y, *std::max_element(y.begin(), y.end()) + 1);
  History h;
  SolverInfo info;
  if (solver == "fista") {
    const Eigen::SparseMatrix<double, Eigen::RowMajor, std::int32_t> Zs = Z.sparseView();
    const CsrProblem<double> sparse{CsrView<double>(Zs), labels.view(), {}};
    info = ProxGradient(Logistic{}, NoPenalty{.mu = mu},
                        ProxGradientOptions{.tol = tol, .max_epochs = 1000000, .time_limit = limit})
               .fit(sparse, h)
               .info;
  } else {
    const DenseProblem<double> problem{{Z.data(), Z.rows(), Z.cols()}, labels.view(), {}};
    info = GLS(Logistic{}, NoPenalty{.mu = mu},
               GLSOptions{.tol = tol, .max_epochs = 100000, .time_limit = limit, .accelerated = solver == "gls",
                          .memory = solver == "gls-qn" ? memory : 0, .single_precision_gram = single_gram,
                          .curvature_refresh = refresh})
               .fit(problem, h)
               .info;
  }
  std::printf("{\"run\": \"%s\", \"status\": \"%s\", \"epochs\": %lld, \"objective\": %.17g, \"seconds\": %.3f, "
              "\"trace\": %s}\n",
              solver.c_str(), std::string(to_string(info.status)).c_str(), static_cast<long long>(info.epochs),
              info.objective, info.seconds, trace_json(h).c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 3 && std::string(argv[1]) == "--trace") {
    try {
      return trace(argc, argv);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "bench_gls: %s\n", e.what());
      return 1;
    }
  }
  if (argc >= 3 && std::string(argv[1]) == "--compare") {
    try {
      return compare(argc, argv);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "bench_gls: %s\n", e.what());
      return 1;
    }
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
