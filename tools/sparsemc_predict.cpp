/// \file sparsemc_predict.cpp
/// sparsemc-predict: applies a native or LIBLINEAR model to a LIBSVM file, writes the
/// predicted labels and reports accuracy (multiclass) or precision@k (multilabel).

#include <sparsemc/io/atomic_file.hpp>
#include <iostream>
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
};

int predict(const PredictArgs& args) {
  // A staged model (gls-cal, stagewise, gls on random features) predicts through its chain;
  // `model` then only carries its labels.
  if (!args.output_file.empty() && args.output_file != "-") {
    try {
      io::check_writable(args.output_file);
    } catch (const std::runtime_error& e) {
      throw InputError(e.what());
    }
  }
  std::optional<StagedModel<double>> staged;
  if (is_staged_model_file(args.model_file)) staged = load_staged<double>(args.model_file);
  const LinearModel<double> model = staged ? label_carrier(*staged) : load_model<double>(args.model_file);
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
  const double seconds = watch.seconds();

  if (!args.output_file.empty()) {
    const auto write = [&](std::ostream& out) {
      for (Eigen::Index i = 0; i < top.rows(); ++i) {
        for (Eigen::Index r = 0; r < top.cols(); ++r)
          out << (r ? " " : "") << model.labels()[static_cast<std::size_t>(top(i, r))];
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
  app.add_flag("--zero-based", args.zero_based, wrap("feature indices in TEST start at 0 (default: at 1)"));
  app.add_flag("--multilabel", args.multilabel,
               wrap("read TEST as multilabel (a line may have no label) even when no line has a comma-separated "
                    "label list (default: multilabel only when some line has one)"));
  app.add_flag("--json", args.json,
               wrap("print one JSON object instead of text: samples, classes, multilabel, top_k, accuracy, correct "
                    "and top_k_accuracy (multiclass) or precision_at_k (multilabel), predict_seconds (default: text)"));
  app.footer(exit_status_help);
  return run_tool("sparsemc-predict", app, argc, argv, [&] { return predict(args); });
}
