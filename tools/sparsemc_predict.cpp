/// \file sparsemc_predict.cpp
/// sparsemc-predict: applies a native or LIBLINEAR model to a LIBSVM file, writes the
/// predicted labels and reports accuracy (multiclass) or precision@k (multilabel).

#include <sparsemc/io/atomic_file.hpp>
#include <iomanip>
#include <iostream>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "cli.hpp"
#include "data.hpp"
#include "staged.hpp"

namespace sparsemc::tools {
namespace {

struct PredictArgs {
  std::string test_file, model_file, output_file;
  int top_k = 1;
  bool zero_based = false, json = false, multilabel = false;
  bool proba = false, scores = false;  // OUTPUT lines carry P(k | x) or s_k after the label
  int threads = 0;
};

/// --proba's probabilities in the model's class order: the softmax of a multinomial logistic
/// model (P(k | x) = exp(s_k) / Σ_r exp(s_r)), or for a LIBLINEAR one-vs-rest logistic model
/// what `liblinear-predict -b 1` computes, the sigmoids 1/(1 + exp(−s_k)) normalised to sum 1.
/// Any other model is refused: its scores are not log-odds.
template <class Scalar>
typename LinearModel<Scalar>::RowMatrix class_probabilities(const LinearModel<Scalar>& model, const CsrView<Scalar>& X) {
  const std::string& loss = model.provenance().loss;
  if (loss == "logistic") return model.predict_proba(X);
  if (loss == "ovr-logistic") {
    typename LinearModel<Scalar>::RowMatrix P = model.decision_function(X);
    P = (Scalar(1) + (-P.array()).exp()).inverse().matrix();
    P.array().colwise() /= P.array().rowwise().sum();
    return P;
  }
  throw UsageError("--proba: probabilities need a logistic model (sparsemc-train --loss logistic, or LIBLINEAR -s 0, "
                   "6 or 7); MODEL was trained with loss " + (loss.empty() ? std::string("unknown") : loss) +
                   ", whose scores are not log-odds (--scores writes them)");
}

int predict(const PredictArgs& args) {
  use_threads(args.threads);
  if ((args.proba || args.scores) && args.output_file.empty())
    throw UsageError(std::string(args.proba ? "--proba" : "--scores") + ": the values are written to OUTPUT; give OUTPUT "
                     "('-' for stdout)");
  if ((args.proba || args.scores) && args.top_k > 1)
    throw UsageError(std::string(args.proba ? "--proba" : "--scores") + ": writes one label per line; drop --top-k");
  // A staged model (gls-cal, stagewise, gls on random features) predicts through its chain;
  // `model` then only carries its labels.
  if (!args.output_file.empty() && args.output_file != "-") {
    try {
      io::check_writable(args.output_file);
    } catch (const std::runtime_error& e) {
      throw InputError(e.what());
    }
  }
  io::AnyModel<double> loaded = load_any_model<double>(args.model_file);
  const StagedModel<double>* staged = std::get_if<StagedModel<double>>(&loaded);
  const LinearModel<double> model = staged ? label_carrier(*staged) : std::get<LinearModel<double>>(std::move(loaded));
  if (args.top_k > model.n_classes())
    throw UsageError("--top-k: expects an integer from 1 to the model's " + std::to_string(model.n_classes()) +
                     " classes, got " + std::to_string(args.top_k));
  // The test data is read with the model's features and label table.
  const LabelEncoder table(model.labels());
  const Dataset<double> test = read_dataset<double>(
      args.test_file, {.zero_based = args.zero_based, .n_features = model.n_data_features(), .labels = &table,
                       .multilabel = args.multilabel, .extra_features_ignored = true});
  Stopwatch watch;
  const auto k = static_cast<ClassIndex>(args.top_k);
  const ClassRanking top =
      staged ? rank_scores<double>(staged->decision_function(test.csr()), k) : model.top_k(test.csr(), k);
  // --proba / --scores: the n × K values written after each sample's label.
  LinearModel<double>::RowMatrix values;
  if (args.proba) values = class_probabilities(model, test.csr());
  else if (args.scores) values = staged ? staged->decision_function(test.csr()) : model.decision_function(test.csr());
  const double seconds = watch.seconds();

  if (!args.output_file.empty()) {
    const auto write = [&](std::ostream& out) {
      if (values.size() > 0) {  // LIBLINEAR's -b 1 layout: a header naming the columns' labels
        out << "labels";
        for (Label l : model.labels()) out << ' ' << l;
        out << '\n' << std::setprecision(std::numeric_limits<double>::max_digits10);
      }
      for (Eigen::Index i = 0; i < top.rows(); ++i) {
        for (Eigen::Index r = 0; r < top.cols(); ++r)
          out << (r ? " " : "") << model.labels()[static_cast<std::size_t>(top(i, r))];
        for (Eigen::Index k = 0; k < values.cols(); ++k) out << ' ' << values(i, k);
        out << '\n';
      }
      out.flush();
    };
    if (args.output_file == "-") {
      write(std::cout);
      if (!std::cout) throw InputError("<stdout>: write error");
    } else {
      // Atomically: a failed write (full disk) leaves an older OUTPUT as it was.
      try {
        io::write_file_atomically(args.output_file, write);
      } catch (const std::runtime_error& e) {
        throw InputError(e.what());
      }
    }
  }

  const TestScore score = score_ranking(model, test, top);
  if (args.json) {
    nlohmann::json j;
    j["samples"] = score.samples;
    j["classes"] = model.n_classes();
    j["multilabel"] = score.multilabel;
    j["top_k"] = args.top_k;
    if (score.multilabel) {
      j["precision_at_k"] = score.top_k;
    } else {
      j["accuracy"] = score.accuracy();
      j["correct"] = score.correct;
      j["top_k_accuracy"] = score.top_k;
    }
    j["predict_seconds"] = seconds;
    if (args.output_file != "-")
      std::cout << j.dump() << std::endl;
    else
      std::cerr << j.dump() << std::endl;
  } else {
    (args.output_file == "-" ? std::cerr : std::cout) << describe(score) << '\n';
  }
  return exit_ok;
}

}  // namespace
}  // namespace sparsemc::tools

int main(int argc, char** argv) {
  using namespace sparsemc::tools;
  return_large_blocks_when_freed();
  PredictArgs args;
  CLI::App app{
      "sparsemc-predict: apply MODEL (native, staged or LIBLINEAR format, recognised from its first line) to TEST\n"
      "(LIBSVM/SVMlight text, plain, .gz or .bz2; read with the model's features and label table),\n"
      "write the predicted labels to OUTPUT and print the accuracy (multiclass) or precision@k\n"
      "(multilabel) against TEST's labels. Labels the model never saw count as misses; features beyond\n"
      "the model's are ignored (as LIBLINEAR's predict does).",
      "sparsemc-predict"};
  app.get_formatter()->column_width(30);
  app.add_option("TEST", args.test_file, wrap("test data file"))->required();
  app.add_option("MODEL", args.model_file, wrap("model file written by sparsemc-train or liblinear-train"))->required();
  app.add_option("OUTPUT", args.output_file,
                 wrap("file receiving one line per sample: the predicted label, or with --top-k K the K best "
                      "labels, best first, separated by blanks; '-' writes to stdout (the report then goes to "
                      "stderr) (default: no file)"));
  app.add_option("--top-k", args.top_k,
                 wrap("rank the K best classes: OUTPUT lists K labels per sample, and the report gives top-K "
                      "accuracy (multiclass) or precision@K (multilabel); an integer >= 1 (default 1)"))
      ->type_name("K")
      ->check(integer_at_least(1));
  auto* proba = app.add_flag(
      "--proba", args.proba,
      wrap("write each sample's class probabilities after its label in OUTPUT, in the layout of liblinear-predict -b 1 "
           "(a first line 'labels L1 ... LK' names the columns); logistic models only: softmax for sparsemc's "
           "multinomial logistic, LIBLINEAR's normalised sigmoids for its -s 0/6/7 models (default off)"));
  app.add_flag("--scores", args.scores,
               wrap("write each sample's decision values s = W'x + b after its label in OUTPUT, same layout as "
                    "--proba; any model (default off)"))
      ->excludes(proba);
  app.add_flag("--zero-based", args.zero_based, wrap("feature indices in TEST start at 0 (default: at 1)"));
  app.add_flag("--multilabel", args.multilabel,
               wrap("read TEST as multilabel (a line may have no label) even when no line has a comma-separated "
                    "label list (default: multilabel only when some line has one)"));
  add_threads_option(app, args.threads, "reading TEST and prediction");
  app.add_flag("--json", args.json,
               wrap("print one JSON object instead of text: samples, classes, multilabel, top_k, accuracy, correct "
                    "and top_k_accuracy (multiclass) or precision_at_k (multilabel), predict_seconds (default: text)"));
  app.footer(apply_exit_status_help);
  add_version_flag(app, "sparsemc-predict");
  return run_tool("sparsemc-predict", app, argc, argv, [&] { return predict(args); });
}
