/// \file sparsemc_eval.cpp
/// sparsemc-eval: objective (1) of any native or LIBLINEAR model on a data set, with its loss
/// and penalty parts and its duality gap (an upper bound on F − F*, solver/duality_gap.hpp) —
/// the common yardstick of the benchmark harness and the peer comparisons: a peer's model is
/// certified by the same bound as sparsemc's.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <optional>
#include <sparsemc/solver/duality_gap.hpp>
#include <sparsemc/solver/objective.hpp>
#include <sparsemc/solver/sdm/sequential_dual.hpp>
#include <string>
#include <vector>

#include "cli.hpp"
#include "data.hpp"
#include "registry/policies.hpp"
#include "staged.hpp"

namespace sparsemc::tools {
namespace {

struct EvalArgs {
  std::string data_file, model_file;
  std::optional<std::string> loss, penalty;
  std::optional<double> lambda, mu;
  std::vector<std::string> class_weights;
  bool zero_based = false, json = false, multilabel = false;
  int threads = 0;
  std::int64_t dual_epochs = 1000;
};

/// The model with its classes in increasing label order (the order the reader gives the data's
/// class indices); F is invariant to this permutation of W's columns.
LinearModel<double> with_sorted_labels(LinearModel<double> model) {
  const auto& labels = model.labels();
  std::vector<std::size_t> order(labels.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return labels[a] < labels[b]; });
  bool sorted = true;
  for (std::size_t k = 0; k < order.size(); ++k) sorted = sorted && order[k] == k;
  if (sorted) return model;
  std::vector<ClassIndex> new_class(order.size());  // old class → its place in label order
  for (std::size_t k = 0; k < order.size(); ++k) new_class[order[k]] = static_cast<ClassIndex>(k);
  LinearModel<double>::Vector b(model.intercept().size());
  std::vector<Label> sorted_labels(labels.size());
  for (std::size_t k = 0; k < order.size(); ++k) {
    if (b.size() > 0) b[static_cast<Eigen::Index>(k)] = model.intercept()[static_cast<Eigen::Index>(order[k])];
    sorted_labels[k] = labels[order[k]];
  }
  std::vector<std::int64_t> row_start{0};
  std::vector<ClassIndex> classes;
  std::vector<double> weights;
  std::vector<std::pair<ClassIndex, double>> row;
  for (std::size_t r = 0; r < model.support().size(); ++r) {
    row.clear();
    for (auto [k, w] : model.row(r)) row.emplace_back(new_class[static_cast<std::size_t>(k)], w);
    std::sort(row.begin(), row.end());
    for (const auto& [k, w] : row) {
      classes.push_back(k);
      weights.push_back(w);
    }
    row_start.push_back(static_cast<std::int64_t>(classes.size()));
  }
  LinearModel<double> out(model.n_features(), model.support(), std::move(row_start), std::move(classes), std::move(weights),
                          std::move(b), std::move(sorted_labels));
  out.provenance() = model.provenance();
  return out;
}

int evaluate(EvalArgs& args) {
  use_threads(args.threads);
  // A staged model (gls-cal, stagewise, gls on random features): `model` carries its labels.
  io::AnyModel<double> loaded = load_any_model<double>(args.model_file);
  const StagedModel<double>* staged = std::get_if<StagedModel<double>>(&loaded);
  const LinearModel<double> model =
      staged ? label_carrier(*staged) : with_sorted_labels(std::get<LinearModel<double>>(std::move(loaded)));
  const auto& made = model.provenance();
  // Unset flags default to what the model records about its training (native models record
  // all four; LIBLINEAR models record no lambda and mu, and losses of their own naming).
  auto require = [&](auto& flag, const auto& recorded, bool known, const char* name) {
    if (flag) return;
    if (!known)
      throw UsageError(std::string(name) + ": required (" + args.model_file +
                       " does not record a value sparsemc-eval can use)");
    flag = recorded;
  };
  const auto losses = names_of(AllLosses{});
  const auto penalties = names_of(AllPenalties{});
  if (staged) {
    // Its loss and μ are recorded; it has no sparse penalty. Its classes stay in file order:
    // the reader is given its label table.
    const auto& rec = staged->provenance();
    require(args.loss, rec.loss, rec.loss == Logistic::name || rec.loss == LeastSquares::name, "--loss");
    if (*args.loss != Logistic::name && *args.loss != LeastSquares::name)
      throw UsageError("--loss " + *args.loss + ": a staged model is evaluated with logistic or least-squares only");
    if (args.penalty && *args.penalty != NoPenalty::name)
      throw UsageError("--penalty " + *args.penalty + ": a staged model has no sparse penalty (none only)");
    if (args.lambda && *args.lambda != 0.0)
      throw UsageError("--lambda: a staged model has no sparse penalty (0 only)");
    if (!std::is_sorted(staged->labels().begin(), staged->labels().end()))
      throw InputError(args.model_file + ": a staged model's labels must be in increasing order");
    args.penalty = std::string(NoPenalty::name);
    args.lambda = 0.0;
    require(args.mu, rec.mu, std::isfinite(rec.mu), "--mu");
  } else {
    require(args.loss, made.loss, std::find(losses.begin(), losses.end(), made.loss) != losses.end(), "--loss");
    require(args.penalty, made.penalty,
            std::find(penalties.begin(), penalties.end(), made.penalty) != penalties.end(), "--penalty");
    require(args.lambda, made.lambda, std::isfinite(made.lambda), "--lambda");
    require(args.mu, made.mu, std::isfinite(made.mu), "--mu");
  }

  const LabelEncoder table(model.labels());
  Dataset<double> data = read_dataset<double>(args.data_file, {.zero_based = args.zero_based,
                                                               .n_features = model.n_data_features(),
                                                               .labels = &table,
                                                               .multilabel = args.multilabel,
                                                               .unknown_labels_are_errors = true});
  if (made.bias >= 0) data = append_bias(data, made.bias);
  if (!args.class_weights.empty()) data.set_class_weights(parse_class_weights(args.class_weights, data.encoder()));
  if (data.multilabel() && !loss_supports_multilabel(*args.loss))
    throw UsageError("--loss " + *args.loss + " is not defined for multilabel data (" + args.data_file + ")");

  // The certificate keeps O(d·K) state: let d follow the features the data and the model use
  // (hashed data: a few of 2^31 possible indices), each row of the model keeping its column.
  FeatureMap features;
  if (!staged) {
    features = FeatureMap::used_by(data.matrix());
    features.add(model.support());
    data.apply_feature_map(features);
  }
  const LinearModel<double> compact = staged ? LinearModel<double>() : restrict_features(model, features);

  ObjectiveValue value;
  // The certificate of the model for (1): NaN (not evaluated) for a staged model, whose
  // predictions are not a linear model of (1).
  DualityGap certificate;
  if (staged) {
    value = *args.loss == Logistic::name ? staged_objective<Logistic>(*staged, data, *args.mu)
                                         : staged_objective<LeastSquares>(*staged, data, *args.mu);
  } else dispatch(AllLosses{}, AllPenalties{}, *args.loss, *args.penalty, [&]<class Loss, class Penalty>() {
    Penalty penalty{};
    penalty.lambda = *args.lambda;
    penalty.mu = *args.mu;
    const auto problem = data.problem<Eigen::RowMajor>();
    // The scores once: the objective's loss part and the certificate both start from them.
    GapWorkspace<double> work;
    work.team = resolve_threads(args.threads);
    compute_scores(problem, compact, work.S);
    value = {loss_value(Loss{}, problem, work.S, work.team), penalty_value(penalty, compact)};
    // A Crammer-Singer model with the ridge term or the elastic net: the subgradient's dual
    // point is loose where samples sit at a kink, and the sequential dual method's epochs raise
    // it from there (multiclass, no intercept; sequential_dual_bound). Its start is that point,
    // so its D is at least the subgradient's: the latter is not evaluated.
    bool raise_dual = false;
    double elastic_lambda = 0.0;  // the elastic net's λ (0: the ridge term alone)
    if constexpr (SeparationRankingLoss<Loss>) {
      if constexpr (std::same_as<Penalty, L1>) elastic_lambda = penalty.lambda;
      raise_dual = args.dual_epochs > 0 &&
                   (std::same_as<Penalty, NoPenalty> || std::same_as<Penalty, L1> || penalty.lambda == 0) &&
                   penalty.mu > 0 && !compact.has_intercept() && !data.multilabel();
    }
    if (raise_dual) {
      certificate = sequential_dual_bound(problem, work.S, L1{.lambda = elastic_lambda, .mu = penalty.mu}, value.total(),
                                          {.max_epochs = args.dual_epochs, .threads = work.team});
    } else if constexpr (ConjugateLoss<Loss, double>) {
      if (penalty.mu > 0) {
        // (G1) takes XᵀD̃ row by row from the data's CSC copy: no d × K array (duality_gap.hpp).
        certificate = duality_gap_at_scores(Loss{}, penalty, data.problem<Eigen::ColMajor>(), work.S, value.penalty,
                                            compact.has_intercept(), work);
      } else {
        // On CSR data XᵀD̃ scatters on one thread; with more, it gathers from X's columns (the
        // data's CSC copy, made once), in the same order: the same gap.
        if (work.team > 1)
          work.transposed_product = [&data, team = work.team](ClassMatrixRef<double> D, ClassMatrix<double>& G) {
            weight_gradient(data.problem<Eigen::ColMajor>(), D, G, team);
          };
        certificate = duality_gap_at_scores(Loss{}, penalty, problem, work.S, value.penalty, compact.has_intercept(),
                                            work);
      }
    }
  });
  // The gap at the objective printed above (the two are computed the same way, in double).
  const double gap = certificate.gap(), relative = certificate.relative();  // NaN when not evaluated
  // A non-finite objective (weights that overflow the scores) is a numerical failure: exit 3
  // after the report, in text and JSON alike.
  const bool finite = std::isfinite(value.total());
  if (args.json) {
    nlohmann::json j;
    j["objective"] = json_number(value.total());
    j["loss_part"] = json_number(value.loss);
    j["penalty_part"] = json_number(value.penalty);
    add_gap_json(j, gap, relative);
    j["loss"] = *args.loss;
    j["penalty"] = *args.penalty;
    j["lambda"] = *args.lambda;
    j["mu"] = *args.mu;
    j["samples"] = data.n_samples();
    j["nnz"] = model.nnz();
    j["nnz_rows"] = model.nnz_rows();
    std::cout << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << std::endl;
  } else {
    std::printf("objective %.17g\nloss %.17g\npenalty %.17g\n%s\nnnz_rows %lld\n", value.total(), value.loss,
                value.penalty, describe_gap(gap, relative).c_str(), static_cast<long long>(model.nnz_rows()));
  }
  if (!finite)
    throw NumericalError("the objective of " + args.model_file + " on " + args.data_file +
                         " is not finite (loss part " + std::to_string(value.loss) + ", penalty part " +
                         std::to_string(value.penalty) + ")");
  return exit_ok;
}

}  // namespace
}  // namespace sparsemc::tools

int main(int argc, char** argv) {
  using namespace sparsemc::tools;
  return_large_blocks_when_freed();
  EvalArgs args;
  CLI::App app{
      "sparsemc-eval: print objective (1) of MODEL (native or LIBLINEAR format) on DATA,\n"
      "  F(W) = (1/n) sum_i c_i loss(W'x_i + b, y_i) + lambda R(W) + (mu/2) ||W||_F^2,\n"
      "and its loss part (1/n) sum_i c_i loss and penalty part lambda R(W) + (mu/2)||W||^2, in double\n"
      "precision, and its duality gap F - D (an upper bound on F - F*, whoever trained MODEL: a LIBLINEAR\n"
      "model is certified like sparsemc's) with the relative gap (F - D)/|F|, which sparsemc-train's\n"
      "--tol bounds for status converged; the gap has no finite value with --penalty none and --mu 0.\n"
      "For --loss crammer-singer the dual point is built from a subgradient of the loss, which is far\n"
      "from the dual optimum where samples sit at a kink. With mu > 0 and the ridge term (lambda 0, any\n"
      "penalty: LIBLINEAR's -s 4) or the elastic net (--penalty l1: PD-Sparse's problem), on multiclass\n"
      "data with no intercept, epochs of the sequential dual method raise it (see --dual-epochs), and\n"
      "the gap is close to F - F*; otherwise it is a valid bound but loose (a model certified at 1e-3\n"
      "by sparsemc-train, whose solvers keep a dual iterate, can show a relative gap above 1).\n"
      "A bias feature recorded in the model is appended to DATA as in training (the intercept of a\n"
      "model that has one is taken as fitted).\n"
      "A staged model (gls-cal, stagewise, gls on random features) gives the loss part at its\n"
      "predictions (scores, for logistic) and, for a single uncalibrated stage (gls on random\n"
      "features), the ridge (mu/2)||W||^2 on them: what its training reported; no duality gap.",
      "sparsemc-eval"};
  app.get_formatter()->column_width(30);
  app.add_option("DATA", args.data_file, wrap("data file (LIBSVM/SVMlight, plain, .gz or .bz2)"))->required();
  app.add_option("MODEL", args.model_file, wrap("model file (native or LIBLINEAR)"))->required();
  app.add_option("--loss", args.loss,
                 wrap("loss of (1): " + join(names_of(AllLosses{})) + " (default: the one MODEL records)"))
      ->type_name("L")
      ->check(one_of(names_of(AllLosses{})));
  app.add_option("--penalty", args.penalty,
                 wrap("penalty R of (1): " + join(names_of(AllPenalties{})) + " (default: the one MODEL records)"))
      ->type_name("P")
      ->check(one_of(names_of(AllPenalties{})));
  app.add_option("--lambda", args.lambda, wrap("lambda of (1), a number >= 0 (default: MODEL's)"))
      ->type_name("X")
      ->check(real_at_least(0));
  app.add_option("--mu", args.mu, wrap("mu of (1), a number >= 0 (default: MODEL's)"))
      ->type_name("X")
      ->check(real_at_least(0));
  app.add_option("--class-weight", args.class_weights,
                 wrap("c_i of samples of class LABEL is W, as in training; repeatable (default: all 1)"))
      ->type_name("LABEL:W")
      ->allow_extra_args(false);
  app.add_flag("--zero-based", args.zero_based, wrap("feature indices in DATA start at 0 (default: at 1)"));
  app.add_flag("--multilabel", args.multilabel,
               wrap("read DATA as multilabel (a line may have no label) even when no line has a comma-separated "
                    "label list (default: multilabel only when some line has one)"));
  app.add_option("--dual-epochs", args.dual_epochs,
                 wrap("--loss crammer-singer with mu > 0 and lambda 0 or --penalty l1: at most N epochs of the "
                      "sequential dual method raise the dual point, until their own gap is a tenth of the model's or "
                      "the dual stalls; they hold an n x K dual and a d x K W (two with lambda > 0) (0: the "
                      "subgradient's loose bound alone; default 1000)"))
      ->type_name("N")
      ->check(integer_at_least(0));
  add_threads_option(app, args.threads, "reading DATA and the duality gap");
  app.add_flag("--json", args.json,
               wrap("print one JSON object: objective, loss_part, penalty_part, duality_gap, relative_gap, loss, "
                    "penalty, lambda, mu, samples, nnz, nnz_rows; duality_gap and relative_gap are null when not "
                    "finite, and gap_note then says why (default: text)"));
  app.footer(apply_exit_status_help);
  add_version_flag(app, "sparsemc-eval");
  return run_tool("sparsemc-eval", app, argc, argv, [&] { return evaluate(args); });
}
