// Test helper: fits ProxGradient on a LIBSVM file and prints objective (1) and the solve's
// information as one JSON object, for scripts that compare sparsemc with other solvers
// (tests/scripts/check_fista_vs_sklearn.py) and for timing CSC against CSR.
//
//   fista_driver [--loss logistic|squared-hinge|ovr-squared-hinge|least-squares]
//                [--penalty none|l1|l1l2|l1linf] [--lambda X] [--mu X] [--tol X]
//                [--max-epochs N] [--intercept] [--layout csr|csc]
//                [--restart none|function|gradient] [--step-decrease X] [--repeat N]   (defaults: the library's)
//                [--weights-out FILE] DATA
//
// --weights-out writes W (d lines of K values, %.17g) and, with --intercept, b as one more
// line. --repeat N fits N times and reports the fastest (for timings). gap_share estimates the
// duality-gap evaluations' share of the solve time.

#include <sparsemc/io/libsvm_reader.hpp>
#include <sparsemc/loss/losses.hpp>
#include <sparsemc/penalty/penalties.hpp>
#include <sparsemc/core/stopwatch.hpp>
#include <sparsemc/solver/duality_gap.hpp>
#include <sparsemc/solver/fista/prox_gradient.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace {

using namespace sparsemc;

struct Args {
  std::string loss = "logistic", penalty = "l1l2", layout = "csr", restart, data, weights_out;  // restart: empty = the library default
  double lambda = 0, mu = 0;
  int repeat = 1;
  ProxGradientOptions options;
};

template <class Loss, class Penalty, class Problem>
int fit(const Args& args, const Problem& problem) {
  const ProxGradient solver(Loss{}, Penalty{.lambda = args.lambda, .mu = args.mu}, args.options);
  Result<double> best;
  History history;
  for (int r = 0; r < args.repeat; ++r) {
    History h;
    auto result = solver.fit(problem, h);
    if (r == 0 || result.info.seconds < best.info.seconds) {
      best = std::move(result);
      history = std::move(h);
    }
  }
  const auto parts = objective(Loss{}, Penalty{.lambda = args.lambda, .mu = args.mu}, problem, best.model);
  // The gap evaluations' share of the solve: their number (epochs whose report carries a
  // relative gap, plus the epilogue's if the last one was not at the returned model) times
  // the time of one evaluation at the returned model (its scores included: an upper estimate).
  std::int64_t evaluations = 0;
  for (const auto& e : history.epochs) evaluations += std::isnan(e.relative_gap) ? 0 : 1;
  if (history.epochs.empty() || std::isnan(history.epochs.back().relative_gap)) ++evaluations;
  GapWorkspace<double> work;
  const Penalty penalty{.lambda = args.lambda, .mu = args.mu};
  (void)duality_gap(Loss{}, penalty, problem, best.model, work);  // warm the work space
  const Stopwatch clock;
  constexpr int gap_repeats = 5;
  for (int r = 0; r < gap_repeats; ++r) (void)duality_gap(Loss{}, penalty, problem, best.model, work);
  const double gap_seconds = clock.seconds() / gap_repeats;
  std::printf(
      "{\"solver\": \"fista\", \"loss\": \"%s\", \"penalty\": \"%s\", \"layout\": \"%s\", \"lambda\": %.17g, "
      "\"mu\": %.17g, \"status\": \"%s\", \"epochs\": %lld, \"objective\": %.17g, \"loss_part\": %.17g, "
      "\"penalty_part\": %.17g, \"duality_gap\": %.6g, \"relative_gap\": %.6g, \"measure\": %.6g, "
      "\"nnz_rows\": %lld, \"seconds\": %.6f, \"gap_evaluations\": %lld, \"gap_share\": %.4f}\n",
      std::string(Loss::name).c_str(), std::string(Penalty::name).c_str(), args.layout.c_str(), args.lambda, args.mu,
      std::string(to_string(best.info.status)).c_str(), static_cast<long long>(best.info.epochs), best.info.objective,
      parts.loss, parts.penalty, best.info.duality_gap, best.info.relative_gap, best.info.measure,
      static_cast<long long>(best.info.nnz_rows), best.info.seconds, static_cast<long long>(evaluations),
      static_cast<double>(evaluations) * gap_seconds / std::max(best.info.seconds, 1e-12));
  if (!args.weights_out.empty()) {
    std::FILE* out = std::fopen(args.weights_out.c_str(), "w");
    if (out == nullptr) throw std::runtime_error("cannot write " + args.weights_out);
    const auto W = best.model.dense();
    for (Eigen::Index j = 0; j < W.rows(); ++j)
      for (Eigen::Index k = 0; k < W.cols(); ++k) std::fprintf(out, "%.17g%c", W(j, k), k + 1 == W.cols() ? '\n' : ' ');
    const auto& b = best.model.intercept();
    for (Eigen::Index k = 0; k < b.size(); ++k) std::fprintf(out, "%.17g%c", b[k], k + 1 == b.size() ? '\n' : ' ');
    std::fclose(out);
  }
  return best.info.status == Status::numerical_issue ? 3 : 0;
}

template <class Loss, class Problem>
int with_penalty(const Args& args, const Problem& problem) {
  if (args.penalty == "none") return fit<Loss, NoPenalty>(args, problem);
  if (args.penalty == "l1") return fit<Loss, L1>(args, problem);
  if (args.penalty == "l1l2") return fit<Loss, L1L2>(args, problem);
  if (args.penalty == "l1linf") return fit<Loss, L1Linf>(args, problem);
  throw std::invalid_argument("--penalty must be none, l1, l1l2 or l1linf, got " + args.penalty);
}

template <class Problem>
int with_loss(const Args& args, const Problem& problem) {
  if (args.loss == "logistic") return with_penalty<Logistic>(args, problem);
  if (args.loss == "squared-hinge") return with_penalty<SquaredHinge>(args, problem);
  if (args.loss == "ovr-squared-hinge") return with_penalty<OvrSquaredHinge>(args, problem);
  if (args.loss == "least-squares") return with_penalty<LeastSquares>(args, problem);
  throw std::invalid_argument("--loss must be logistic, squared-hinge, ovr-squared-hinge or least-squares, got " + args.loss);
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(flag + " needs a value");
      return argv[++i];
    };
    if (flag == "--loss") a.loss = value();
    else if (flag == "--penalty") a.penalty = value();
    else if (flag == "--lambda") a.lambda = std::stod(value());
    else if (flag == "--mu") a.mu = std::stod(value());
    else if (flag == "--tol") a.options.tol = std::stod(value());
    else if (flag == "--max-epochs") a.options.max_epochs = std::stoll(value());
    else if (flag == "--intercept") a.options.fit_intercept = true;
    else if (flag == "--layout") a.layout = value();
    else if (flag == "--restart") a.restart = value();
    else if (flag == "--step-decrease") a.options.step_decrease = std::stod(value());
    else if (flag == "--repeat") a.repeat = std::stoi(value());
    else if (flag == "--weights-out") a.weights_out = value();
    else if (!flag.empty() && flag[0] != '-' && a.data.empty()) a.data = flag;
    else throw std::invalid_argument("unknown argument " + flag);
  }
  if (a.data.empty()) throw std::invalid_argument("usage: fista_driver [options] DATA");
  if (a.restart.empty()) {
    // keep ProxGradientOptions' default
  } else if (a.restart == "none") a.options.restart = RestartScheme::none;
  else if (a.restart == "function") a.options.restart = RestartScheme::function;
  else if (a.restart == "gradient") a.options.restart = RestartScheme::gradient;
  else throw std::invalid_argument("--restart must be none, function or gradient, got " + a.restart);
  if (a.layout != "csr" && a.layout != "csc") throw std::invalid_argument("--layout must be csr or csc, got " + a.layout);
  if (a.repeat < 1) throw std::invalid_argument("--repeat must be >= 1");
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Args args = parse(argc, argv);
    const auto data = io::read_libsvm_plain<double>(args.data);
    if (args.layout == "csc") return with_loss(args, data.problem<Eigen::ColMajor>());
    return with_loss(args, data.problem<Eigen::RowMajor>());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fista_driver: %s\n", e.what());
    return 1;
  }
}
