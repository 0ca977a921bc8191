// Test helper: fits GLS (generalized least squares, Agarwal et al. 2014 Algorithm 1) on a
// LIBSVM file and prints objective (1) and the solve's information as one JSON object, for
// tests/scripts/check_gls_vs_sklearn.py.
//
//   gls_driver [--link softmax|identity] [--mu X] [--tol X] [--max-epochs N] [--intercept]
//              [--accelerated] [--lipschitz L] [--memory M] [--refresh N] [--layout csr|csc]
//              [--rff D [--dump-features FILE]] [--weights-out FILE] DATA
//
// --weights-out writes W (d lines of K values, %.17g) and, with --intercept, b as one more line.

#include <sparsemc/io/libsvm_reader.hpp>
#include <sparsemc/loss/losses.hpp>
#include <sparsemc/penalty/none.hpp>
#include <sparsemc/core/stopwatch.hpp>
#include <sparsemc/model/staged_model.hpp>
#include <sparsemc/solver/duality_gap.hpp>
#include <sparsemc/solver/gls/gls.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace {

using namespace sparsemc;

struct Args {
  std::string link = "softmax", layout = "csr", data, weights_out, dump_features;
  std::int64_t rff = 0;
  double mu = 0;
  GLSOptions options;
};

template <class Link, class Problem>
int fit(const Args& args, const Problem& problem) {
  const GLS solver(Link{}, NoPenalty{.mu = args.mu}, args.options);
  History history;
  const auto result = solver.fit(problem, history);
  // The gap evaluations' share of the solve: their number (reports that carry a relative gap,
  // plus the epilogue's when the last report has none) times the time of one evaluation at the
  // returned model (its scores included: an upper estimate).
  std::int64_t evaluations = 0;
  for (const auto& e : history.epochs) evaluations += std::isnan(e.relative_gap) ? 0 : 1;
  if (history.epochs.empty() || std::isnan(history.epochs.back().relative_gap)) ++evaluations;
  const bool intercept = result.model.has_intercept();
  ClassMatrix<double> W(problem.n_features() + (intercept ? 1 : 0), problem.n_classes()), S;
  W.topRows(problem.n_features()) = result.model.dense();
  if (intercept) W.row(problem.n_features()) = result.model.intercept().transpose();
  GapWorkspace<double> work;
  const Stopwatch clock;
  constexpr int gap_repeats = 3;
  for (int r = 0; r < gap_repeats; ++r) {
    S.resize(problem.n_samples(), problem.n_classes());
    detail::gls::scores(problem, W, ClassMatrix<double>(), S);
    (void)detail::gls::duality_gap(Link{}, problem, args.mu, W, S, intercept, work);
  }
  const double gap_seconds = clock.seconds() / gap_repeats;
  std::printf(
      "{\"solver\": \"gls\", \"link\": \"%s\", \"layout\": \"%s\", \"mu\": %.17g, \"status\": \"%s\", "
      "\"epochs\": %lld, \"objective\": %.17g, \"relative_gap\": %.6g, \"measure\": %.6g, \"seconds\": %.6f, "
      "\"gap_evaluations\": %lld, \"gap_share\": %.4f}\n",
      args.link.c_str(), args.layout.c_str(), args.mu, std::string(to_string(result.info.status)).c_str(),
      static_cast<long long>(result.info.epochs), result.info.objective, result.info.relative_gap, result.info.measure,
      result.info.seconds, static_cast<long long>(evaluations),
      static_cast<double>(evaluations) * gap_seconds / std::max(result.info.seconds, 1e-12));
  if (!args.weights_out.empty()) {
    std::FILE* out = std::fopen(args.weights_out.c_str(), "w");
    if (out == nullptr) throw std::runtime_error("cannot write " + args.weights_out);
    const auto W = result.model.dense();
    for (Eigen::Index j = 0; j < W.rows(); ++j)
      for (Eigen::Index k = 0; k < W.cols(); ++k) std::fprintf(out, "%.17g%c", W(j, k), k + 1 == W.cols() ? '\n' : ' ');
    const auto& b = result.model.intercept();
    for (Eigen::Index k = 0; k < b.size(); ++k) std::fprintf(out, "%.17g%c", b[k], k + 1 == b.size() ? '\n' : ' ');
    std::fclose(out);
  }
  return result.info.status == Status::numerical_issue ? 3 : 0;
}

/// --rff D: GLS on D random Fourier features of X (dense), as `sparsemc-train --solver gls
/// --features rff:D` does (seed 0, the default bandwidth); --dump-features writes them.
template <class Link, class Problem>
int fit_rff(const Args& args, const Problem& problem) {
  const RandomFourierFeatures<double> rff(0, problem.n_features(), args.rff, rff_default_bandwidth(problem.X.eigen()));
  const auto Z = rff.transform(problem.X.eigen());
  if (!args.dump_features.empty()) {
    std::FILE* out = std::fopen(args.dump_features.c_str(), "wb");
    if (out == nullptr) throw std::runtime_error("cannot write " + args.dump_features);
    for (Eigen::Index i = 0; i < Z.rows(); ++i)
      for (Eigen::Index j = 0; j < Z.cols(); ++j) {
        const double v = Z(i, j);
        std::fwrite(&v, sizeof v, 1, out);
      }
    std::fclose(out);
  }
  const DenseProblem<double> dense{{Z.data(), Z.rows(), Z.cols()}, problem.y, problem.sample_weights};
  return fit<Link>(args, dense);
}

template <class Problem>
int with_link(const Args& args, const Problem& problem) {
  if (args.rff > 0) {
    if (args.link == "softmax") return fit_rff<Logistic>(args, problem);
    if (args.link == "identity") return fit_rff<LeastSquares>(args, problem);
  }
  if (args.link == "softmax") return fit<Logistic>(args, problem);
  if (args.link == "identity") return fit<LeastSquares>(args, problem);
  throw std::invalid_argument("--link must be softmax or identity, got " + args.link);
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(flag + " needs a value");
      return argv[++i];
    };
    if (flag == "--link") a.link = value();
    else if (flag == "--mu") a.mu = std::stod(value());
    else if (flag == "--tol") a.options.tol = std::stod(value());
    else if (flag == "--max-epochs") a.options.max_epochs = std::stoll(value());
    else if (flag == "--intercept") a.options.fit_intercept = true;
    else if (flag == "--accelerated") {  // Nesterov-accelerated Algorithm 1 (the default is quasi-Newton)
      a.options.accelerated = true;
      a.options.memory = 0;
    }
    else if (flag == "--lipschitz") a.options.lipschitz = std::stod(value());
    else if (flag == "--memory") a.options.memory = std::stoi(value());
    else if (flag == "--refresh") a.options.curvature_refresh = std::stoll(value());
    else if (flag == "--layout") a.layout = value();
    else if (flag == "--rff") a.rff = std::stoll(value());
    else if (flag == "--dump-features") a.dump_features = value();
    else if (flag == "--weights-out") a.weights_out = value();
    else if (!flag.empty() && flag[0] != '-' && a.data.empty()) a.data = flag;
    else throw std::invalid_argument("unknown argument " + flag);
  }
  if (a.data.empty()) throw std::invalid_argument("usage: gls_driver [options] DATA");
  if (a.layout != "csr" && a.layout != "csc") throw std::invalid_argument("--layout must be csr or csc, got " + a.layout);
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Args args = parse(argc, argv);
    const auto data = io::read_libsvm_plain<double>(args.data);
    if (args.layout == "csc") return with_link(args, data.problem<Eigen::ColMajor>());
    return with_link(args, data.problem<Eigen::RowMajor>());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gls_driver: %s\n", e.what());
    return 1;
  }
}
