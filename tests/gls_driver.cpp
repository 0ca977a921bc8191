// Test helper: fits GLS (generalized least squares, Agarwal et al. 2014 Algorithm 1) on a
// LIBSVM file and prints objective (1) and the solve's information as one JSON object, for
// tests/scripts/check_gls_vs_sklearn.py.
//
//   gls_driver [--link softmax|identity] [--mu X] [--tol X] [--max-epochs N] [--intercept]
//              [--accelerated] [--lipschitz L] [--layout csr|csc] [--weights-out FILE] DATA
//
// --weights-out writes W (d lines of K values, %.17g) and, with --intercept, b as one more line.

#include <sparsemc/io/libsvm_reader.hpp>
#include <sparsemc/loss/losses.hpp>
#include <sparsemc/penalty/none.hpp>
#include <sparsemc/solver/gls/gls.hpp>

#include <cstdio>
#include <stdexcept>
#include <string>

namespace {

using namespace sparsemc;

struct Args {
  std::string link = "softmax", layout = "csr", data, weights_out;
  double mu = 0;
  GLSOptions options;
};

template <class Link, class Problem>
int fit(const Args& args, const Problem& problem) {
  const GLS solver(Link{}, NoPenalty{.mu = args.mu}, args.options);
  const auto result = solver.fit(problem);
  std::printf(
      "{\"solver\": \"gls\", \"link\": \"%s\", \"layout\": \"%s\", \"mu\": %.17g, \"status\": \"%s\", "
      "\"epochs\": %lld, \"objective\": %.17g, \"measure\": %.6g, \"seconds\": %.6f}\n",
      args.link.c_str(), args.layout.c_str(), args.mu, std::string(to_string(result.info.status)).c_str(),
      static_cast<long long>(result.info.epochs), result.info.objective, result.info.measure, result.info.seconds);
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

template <class Problem>
int with_link(const Args& args, const Problem& problem) {
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
    else if (flag == "--accelerated") a.options.accelerated = true;
    else if (flag == "--lipschitz") a.options.lipschitz = std::stod(value());
    else if (flag == "--layout") a.layout = value();
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
