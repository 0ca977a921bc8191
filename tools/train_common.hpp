#pragma once
/// \file train_common.hpp
/// What sparsemc-train and sparsemc-train-mpi share: the options (the data and model files,
/// the objective (1), the solver and its stopping rule, the costs c_i, the reports) and the
/// report of a fit, in text and JSON.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <limits>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "cli.hpp"
#include "data.hpp"
#include "registry/registry.hpp"

namespace sparsemc::tools {

/// What the shared options set.
struct FitArgs {
  FitSettings fit;
  std::string solver = "auto";
  std::string train_file, model_file, model_format = "native";
  std::string weights_file;  // --weights: one sample weight per line
  std::optional<double> C;   // --C: LIBLINEAR's C, mapped to lambda or mu once n is known
  double bias = -1.0;
  std::vector<std::string> class_weights;
  bool zero_based = false, use_float = false, verbose = false, quiet = false, json = false, multilabel = false;
  /// The tolerance in effect: --tol, else the solver's default (NaN for a solver without one).
  double tol = std::numeric_limits<double>::quiet_NaN();
};

/// The shared options a tool adds its own to (for CLI11's excludes).
struct FitOptions {
  CLI::Option* lambda;
  CLI::Option* mu;
  CLI::Option* C;
  CLI::Option* verbose;
};

/// Registers the shared options on `app`, writing into `args`; `threads_used_by` ends the
/// help of --threads.
inline FitOptions add_fit_options(CLI::App& app, FitArgs& args, const std::string& threads_used_by) {
  app.add_option("TRAIN", args.train_file, wrap("training data file"))->required();
  app.add_option("MODEL", args.model_file,
                 wrap("where the model is written; '-' writes it to stdout (the report then goes to stderr)"))
      ->required();
  app.add_option("--loss", args.fit.loss,
                 wrap("loss l of (1) (default squared-hinge): squared-hinge (Weston-Watkins), huber-hinge (its "
                      "Huberised hinge, smooth, width 1), ovr-squared-hinge (one-vs-rest), crammer-singer "
                      "(multilabel: separation ranking), logistic (multinomial), least-squares"))
      ->type_name("NAME")
      ->check(one_of(names_of(AllLosses{})));
  app.add_option("--penalty", args.fit.penalty,
                 wrap("penalty R of (1) (default l1l2): l1l2 (sum of row 2-norms, feature selection), l1 (sum of "
                      "|w_jk|), l1linf (sum of row max-norms), none"))
      ->type_name("NAME")
      ->check(one_of(names_of(AllPenalties{})));
  auto* lambda = app.add_option("--lambda", args.fit.lambda, wrap("lambda of (1), a number >= 0 (default 0.001)"))
                     ->type_name("X")
                     ->check(real_at_least(0));
  auto* mu = app.add_option("--mu", args.fit.mu, wrap("mu of (1), the ridge weight, a number >= 0 (default 0)"))
                 ->type_name("X")
                 ->check(real_at_least(0));
  auto* C = app.add_option_function<double>(
                   "--C", [&](double v) { args.C = v; },
                   wrap("LIBLINEAR's -c C instead of --lambda: its objectives weigh C times the summed loss against "
                        "the penalty, so (1) gets 1/(nC) (n samples) as lambda, or as mu with --penalty none. "
                        "LIBLINEAR -s 5 -c C is --loss ovr-squared-hinge --penalty l1 --C C; -s 4 -c C is --loss "
                        "crammer-singer --penalty none --C C (the losses of the other -s differ from ours: see "
                        "docs/cli.md); a number > 0 (default: none)"))
                ->type_name("C")
                ->check(real_at_least(0, true))
                ->excludes(lambda);
  app.add_option("--solver", args.solver,
                 wrap("solver: " + Registry::names() +
                      " (default auto: the best registered solver for the loss "
                      "and penalty; see the list below)"))
      ->type_name("NAME");
  app.add_option_function<double>(
         "--tol", [&](double v) { args.fit.tol = v; },
         wrap("stop when the relative duality gap of (1), (F - D)/|F| (an upper bound on (F - F*)/|F|), is "
              "<= tol: that is what status converged means, for every solver of (1); a number > 0 (default "
              "1e-3: within 0.1 % of the optimum; --tol 1e-6 asks for more). Three solvers solve other "
              "problems and stop on their own criteria: fbpd-epi certifies its constrained problem (its "
              "relative KKT residual <= tol), gls-cal stops when a stage lowers the square loss by <= tol "
              "times its value at 0, and stagewise fits --stages blocks, each to GLS's tolerance tol"))
      ->type_name("X")
      ->check(real_at_least(0, true));
  app.add_option_function<std::int64_t>(
         "--max-epochs", [&](std::int64_t v) { args.fit.max_epochs = v; },
         wrap("maximum passes over the data, an integer >= 1 (default: the solver's, "
              "listed below); reaching it is a success with status max_iter"))
      ->type_name("N")
      ->check(integer_at_least(1));
  app.add_option("--time-limit", args.fit.time_limit,
                 wrap("wall-clock budget of the solve in seconds, a number >= 0; 0 = none (default 0)"))
      ->type_name("SECONDS")
      ->check(real_at_least(0));
  app.add_option_function<std::uint64_t>(
         "--seed", [&](std::uint64_t v) { args.fit.seed = v; },
         wrap("seed of randomised solvers, an integer >= 0 (default: the solver's)"))
      ->type_name("N")
      ->check(integer_at_least(0));
  app.add_option_function<double>("--eta", [&](double v) { args.fit.eta = v; },
                                  wrap("fbpd-epi only: the bound eta >= 0 of its constraint (1/n) sum_i c_i loss_i <= eta "
                                       "(it minimises lambda R(W) + (mu/2) ||W||_F^2 under it) (default: none)"))
      ->type_name("X")
      ->check(real_at_least(0));
  add_threads_option(app, args.fit.threads, threads_used_by);
  app.add_option("--bias", args.bias,
                 wrap("append a constant feature of value B to every sample (LIBLINEAR's -B; it is penalised like "
                      "any feature), a number >= 0 (default: none)"))
      ->type_name("B")
      ->check(real_at_least(0));
  app.add_flag("--intercept", args.fit.fit_intercept,
               wrap("fit an unpenalised intercept b (where the solver supports it; default off)"));
  app.add_option("--class-weight", args.class_weights,
                 wrap("multiply the cost c_i of samples of class LABEL by W >= 0 (LIBLINEAR's -wi); repeatable "
                      "(default: all 1)"))
      ->type_name("LABEL:W")
      ->allow_extra_args(false);
  app.add_option("--weights", args.weights_file,
                 wrap("multiply the cost c_i of each sample by its weight from FILE: one number >= 0 per line, one line "
                      "per training sample, in file order (LIBLINEAR's instance weights; combines with --class-weight "
                      "by product) (default: all 1)"))
      ->type_name("FILE");
  app.add_flag("--zero-based", args.zero_based, wrap("feature indices in the files start at 0 (default: at 1)"));
  app.add_flag("--multilabel", args.multilabel,
               wrap("read the files as multilabel (a line may have no label) even when no line has a "
                    "comma-separated label list (default: multilabel only when some line has one; a line "
                    "without a label in a multiclass file is an error at its file:line:column)"));
  app.add_flag("--float", args.use_float, wrap("compute in single precision (default: double)"));
  app.add_option("--model-format", args.model_format,
                 wrap("native (sparse text, exact) or liblinear (LIBLINEAR's model format, for liblinear-predict) "
                      "(default native)"))
      ->type_name("FORMAT")
      ->check(one_of({"native", "liblinear"}));
  auto* verbose = app.add_flag("--verbose", args.verbose,
                               wrap("print every epoch's progress line and every file read on stderr (default: a "
                                    "line about once a second once a run has lasted a second, and a line per file "
                                    "whose reading took that long)"));
  app.add_flag("--quiet", args.quiet, wrap("print no progress on stderr, errors only (default off)"))->excludes(verbose);
  return {lambda, mu, C, verbose};
}

/// With --penalty none, (1) has no lambda R term: a --lambda other than 0 would be ignored, so it
/// is refused, as is --C beside --mu (C sets mu), and lambda is 0 in what is reported and recorded.
inline void settle_no_penalty(FitArgs& args, const FitOptions& shared) {
  if (args.fit.penalty != sparsemc::NoPenalty::name) return;
  if (shared.lambda->count() > 0 && args.fit.lambda != 0.0)
    throw UsageError("--lambda: --penalty none has no lambda term (the ridge weight is --mu); drop --lambda or "
                     "choose --penalty " + join(names_of(AllPenalties{})));
  if (args.C && shared.mu->count() > 0) throw UsageError("--C: with --penalty none, C sets mu; drop --mu");
  args.fit.lambda = 0.0;
}

/// --C: LIBLINEAR's C weighs the summed loss against the penalty (docs/math.md's peer table), so
/// dividing its objective by nC gives (1) with 1/(nC) on the penalty that is there: lambda, or
/// mu with --penalty none.
inline void set_from_C(FitArgs& args, std::int64_t n_samples) {
  const double weight = 1.0 / (static_cast<double>(n_samples) * *args.C);
  (args.fit.penalty == sparsemc::NoPenalty::name ? args.fit.mu : args.fit.lambda) = weight;
}

/// The summary of one fit, in JSON (the fields --json promises).
template <class Scalar>
nlohmann::json fit_json(const Result<Scalar>& r, const FitSettings& s, double tol, const std::optional<TestScore>& test,
                        const std::optional<TestScore>& heldout = std::nullopt) {
  nlohmann::json j;
  j["solver"] = r.model.provenance().solver;
  j["loss"] = s.loss;
  j["penalty"] = s.penalty;
  j["lambda"] = s.lambda;
  j["mu"] = s.mu;
  j["status"] = std::string(to_string(r.info.status));
  j["epochs"] = r.info.epochs;
  j["objective"] = json_number(r.info.objective);
  add_gap_json(j, r.info.duality_gap, r.info.relative_gap);
  j["tol"] = json_number(tol);
  j["measure_name"] = r.info.measure_name;
  j["measure"] = json_number(r.info.measure);
  j["nnz"] = r.info.nnz;
  j["nnz_rows"] = r.info.nnz_rows;
  j["train_seconds"] = r.info.seconds;
  j["gap_evaluations"] = r.info.gap_evaluations;
  j["gap_seconds"] = r.info.gap_seconds;
  if (test) add_test_json(j, *test);
  if (heldout) {
    nlohmann::json h;
    add_test_json(h, *heldout);
    for (auto& [key, value] : h.items()) j["heldout_" + key.substr(5)] = value;  // test_x → heldout_x
  }
  return j;
}

/// The certificate line of a fit: "duality gap X (relative Y)" and, for every status but
/// converged, how far the fit is from the certificate the tolerance asks for.
inline std::string certificate_line(const SolverInfo& info, double tol) {
  std::ostringstream os;
  os << describe_gap(info.duality_gap, info.relative_gap);
  if (info.status != Status::converged && !std::isnan(info.relative_gap)) {
    os << std::setprecision(4) << "; not certified (status " << to_string(info.status) << ")";
    if (std::isfinite(tol)) os << ", tol " << tol;
  }
  return os.str();
}

/// ", of which X s (Y %) in N duality gap evaluations", when the solver evaluated any.
inline std::string gap_time(const SolverInfo& info) {
  if (info.gap_evaluations == 0) return {};
  std::ostringstream os;
  os << std::setprecision(3) << ", of which " << info.gap_seconds << " s ("
     << 100.0 * info.gap_seconds / std::max(info.seconds, 1e-12) << " %) in " << info.gap_evaluations
     << " duality gap evaluations";
  return os.str();
}

/// The text report of one fit (what the README's main job shows).
template <class Scalar>
void print_summary(std::ostream& out, const Result<Scalar>& r, const FitSettings& s, double tol,
                   const std::optional<TestScore>& test, const std::optional<TestScore>& heldout = std::nullopt) {
  const auto& info = r.info;
  out << std::setprecision(10) << "solver " << r.model.provenance().solver << "  loss " << s.loss << "  penalty "
      << s.penalty << "  lambda " << s.lambda << "  mu " << s.mu << '\n'
      << "status " << to_string(info.status) << " after " << info.epochs << " epochs, " << info.measure_name << ' '
      << std::setprecision(3) << info.measure << '\n'
      << std::setprecision(10) << "objective " << info.objective << '\n'
      << certificate_line(info, tol) << '\n'
      << "nonzero feature rows " << info.nnz_rows << " of " << r.model.n_features() << "  (nonzero weights " << info.nnz
      << ")\n"
      << std::setprecision(4) << "train time " << info.seconds << " s" << gap_time(info) << '\n';
  if (heldout) out << "held-out " << describe(*heldout) << '\n';
  if (test) out << "test " << describe(*test) << '\n';
}

}  // namespace sparsemc::tools
