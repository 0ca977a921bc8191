/// \file sparsemc_train_mpi.cpp
/// sparsemc-train-mpi: sparsemc-train over MPI ranks — `mpirun -np P sparsemc-train-mpi
/// [options] TRAIN MODEL` fits objective (1) split by classes (sparsemc/mpi/class_partition.hpp)
/// or by samples (sparsemc/mpi/sample_partition.hpp) and rank 0 writes the model file
/// sparsemc-train would. Its --help is the user
/// documentation; docs/mpi.md the design and the capacity plan.

#include <cstdint>
#include <iostream>
#include <limits>
#include <optional>
#include <stdexcept>
#include <streambuf>
#include <string>
#include <vector>

#include <sparsemc/core/stopwatch.hpp>
#include <sparsemc/mpi/class_partition.hpp>
#include <sparsemc/mpi/read.hpp>
#include <sparsemc/mpi/sample_partition.hpp>
#include <sparsemc/solver/fbpd/fbpd.hpp>
#include <sparsemc/solver/fista/prox_gradient.hpp>
#include <sparsemc/solver/gls/gls.hpp>

#include "cli.hpp"
#include "data.hpp"
#include "registry/registry.hpp"
#include "train_common.hpp"

namespace sparsemc::tools {
namespace {

/// Whether (1) with the loss and penalty called so is a sum of one problem per class: a
/// ClassSeparableLoss with an EntrywisePenalty.
bool separates_classes(const std::string& loss, const std::string& penalty) {
  bool separable = false;
  dispatch(AllLosses{}, AllPenalties{}, loss, penalty, [&]<class Loss, class Penalty>() {
    separable = ClassSeparableLoss<Loss> && EntrywisePenalty<Penalty, double>;
  });
  return separable;
}

/// The names of the losses and penalties the class partition takes, for messages.
std::string separable_pairs() {
  std::vector<std::string> losses, penalties;
  [&]<class... Losses>(TypeList<Losses...>) {
    (..., (ClassSeparableLoss<Losses> && (losses.emplace_back(Losses::name), true)));
  }(AllLosses{});
  [&]<class... Penalties>(TypeList<Penalties...>) {
    (..., (EntrywisePenalty<Penalties, double> && (penalties.emplace_back(Penalties::name), true)));
  }(AllPenalties{});
  return "--loss " + join(losses, " or ") + " with --penalty " + join(penalties, " or ");
}

/// What a failed step is, besides a malformed input or a bad value.
enum class StepKind { input, compute };

/// Runs a collective step of the tool; a failure on any rank becomes, on every rank, the
/// error the serial tool would raise: a malformed input an InputError, a bad value a
/// UsageError, anything else an InputError in an input step (a file that cannot be opened,
/// read or written) and a NumericalError in a compute step (memory, a solver's exception).
template <class Step>
auto on_every_rank(StepKind kind, Step&& step) {
  try {
    return step();
  } catch (const io::ParseError& e) {  // raised on every rank alike, after the ranks agreed
    throw InputError(e.what());
  } catch (const mpi::RankError& e) {
    switch (e.kind()) {
      case mpi::RankError::Kind::parse: throw InputError(e.what());
      case mpi::RankError::Kind::invalid_argument: throw UsageError(e.what());
      case mpi::RankError::Kind::out_of_memory: throw NumericalError(e.what());
      case mpi::RankError::Kind::other: break;
    }
    if (kind == StepKind::input) throw InputError(e.what());
    throw NumericalError(e.what());
  }
}

/// Runs `step` on every rank as one collective input step (mpi::collectively): a UsageError
/// stays a usage error on every rank, anything else is the input error sparsemc-train gives.
template <class Step>
void input_step(const mpi::Communicator& world, Step&& step) {
  on_every_rank(StepKind::input, [&] {
    mpi::collectively(world, [&] {
      try {
        step();
      } catch (const UsageError& e) {
        throw std::invalid_argument(e.what());
      }
    });
  });
}

/// Silences std::cout and std::cerr for its lifetime (every rank but 0): a stream buffer
/// that drops everything, the streams' own buffers given back at the end.
class Silence {
 public:
  Silence() : out_(std::cout.rdbuf(&discard_)), err_(std::cerr.rdbuf(&discard_)) {}
  Silence(const Silence&) = delete;
  Silence& operator=(const Silence&) = delete;
  ~Silence() {
    std::cout.rdbuf(out_);
    std::cerr.rdbuf(err_);
  }

 private:
  struct Discard : std::streambuf {
    int_type overflow(int_type c) override { return c; }
  } discard_;
  std::streambuf* out_;
  std::streambuf* err_;
};

/// What sparsemc-train-mpi takes beyond the shared options.
struct MpiArgs : FitArgs {
  std::string test_file;           // --test
  std::string init_file;           // --init: the model a fit starts from
  std::string partition = "auto";  // --partition
  int classes_per_fit = 0;         // --classes-per-fit (0: a rank's whole share at once)
};

/// How (1) is split over the ranks.
enum class Partition { classes, samples };

/// The solvers split by samples: one pass over the samples per step, its sums reduced.
bool splits_by_samples(const std::string& solver) {
  return solver == "fista" || solver == "gls" || solver == "fbpd" || solver == "fbpd-epi";
}

/// The solver of the sample partition: --solver, or for auto fista (a smooth loss) or fbpd
/// (Crammer–Singer, the one loss that is not smooth).
std::string sample_solver(const MpiArgs& args) {
  if (args.solver != "auto") return args.solver;
  return loss_is_smooth(args.fit.loss) ? "fista" : "fbpd";
}

/// The partition of --partition for these settings (auto: by classes where (1) separates over
/// them and the solver is not one split by samples; else by samples, with `sample_solver`).
Partition choose_partition(const MpiArgs& args) {
  const bool separable = separates_classes(args.fit.loss, args.fit.penalty);
  const bool data_parallel = splits_by_samples(args.solver);
  if (args.partition == "classes" || (args.partition == "auto" && separable && !data_parallel)) {
    if (!separable)
      throw UsageError("--partition classes: --loss " + args.fit.loss + " --penalty " + args.fit.penalty +
                       " couples the classes; the class partition takes " + separable_pairs());
    return Partition::classes;
  }
  if (args.solver != "auto" && !data_parallel)
    throw UsageError("--solver " + args.solver +
                     ": the sample partition runs fista, gls, fbpd or fbpd-epi (give one of them or auto)");
  if (sample_solver(args).starts_with("fbpd") && args.fit.loss != CrammerSinger::name)
    throw UsageError("--solver " + args.solver + ": split by samples it fits the crammer-singer loss; --loss " +
                     args.fit.loss + " is smooth: give --solver fista or auto");
  return Partition::samples;
}

/// The options of a solver from the shared settings, validated, as sparsemc-train builds them.
template <class Options>
Options solver_options(const FitSettings& s) {
  Options options{};
  detail::apply_common(options, s);
  if constexpr (requires { options.eta; })
    if (s.eta) options.eta = *s.eta;
  options.validate();
  return options;
}

/// The class partition: every rank parses its share of the file and then holds every sample;
/// each fits the one-vs-rest problems of its classes with the registered solver. `labels`
/// receives the training data's label table.
template <class Scalar>
Result<Scalar> fit_classes(const mpi::Communicator& world, MpiArgs& args, const io::LibsvmOptions& options,
                           Progress& progress, LabelEncoder& labels) {
  const Stopwatch read_watch;
  Dataset<Scalar> data = on_every_rank(StepKind::input, [&] {
    const Dataset<Scalar> part = mpi::read_libsvm_part<Scalar>(world, args.train_file, options);
    return mpi::gather_dataset(world, part);
  });
  progress.file_read(args.train_file, data.n_samples(), data.n_features(), data.nnz(), read_watch.seconds());
  if (args.C) set_from_C(args, data.n_samples());
  args.fit.multilabel = data.multilabel();
  args.fit.n_samples = data.n_samples();
  labels = data.encoder();
  if (args.bias >= 0) data = append_bias(data, args.bias);
  std::optional<LinearModel<Scalar>> initial;
  input_step(world, [&] {
    if (!args.class_weights.empty()) data.set_class_weights(parse_class_weights(args.class_weights, data.encoder()));
    if (!args.weights_file.empty())
      data.set_sample_weights(read_sample_weights<Scalar>(args.weights_file, data.n_samples()));
    if (!args.init_file.empty())
      initial = align_initial_model(load_model<Scalar>(args.init_file), data.encoder(), data.n_features(), args.bias,
                                    args.fit.fit_intercept);
  });
  // The solvers see only the features that occur, as in sparsemc-train.
  const FeatureMap features = data.compact_features();
  if (initial) initial = restrict_features(std::move(*initial), features);
  // auto sees the shape the solvers see (hashed data: the features used).
  args.fit.n_features = data.n_features();
  const SolverSpec& spec = Registry::resolve(args.solver, args.fit);
  args.tol = args.fit.tol.value_or(spec.default_tol.value_or(std::numeric_limits<double>::quiet_NaN()));
  const FitFunction<Scalar> fit = spec.fit<Scalar>(args.fit.loss, args.fit.penalty);
  ToolCallback callback{[&progress](const EpochReport& r) { return progress.epoch(r); }};
  Result<Scalar> result = on_every_rank(StepKind::compute, [&] {
    return mpi::fit_by_classes(
        world, data,
        [&](const Dataset<Scalar>& mine, const LinearModel<Scalar>* start) {
          return fit(mine, args.fit, start, callback);
        },
        args.classes_per_fit, initial ? &*initial : nullptr);
  });
  if (world.root()) result.model = expand_features(std::move(result.model), features);
  return result;
}

/// The sample partition: every rank parses and keeps its share of the file; the sample solver
/// (fista, gls, fbpd or fbpd-epi) runs on every rank, its sums over the samples reduced over
/// the ranks. `labels` receives the training data's label table (the same on every rank).
template <class Scalar>
Result<Scalar> fit_samples(const mpi::Communicator& world, MpiArgs& args, const io::LibsvmOptions& options,
                           Progress& progress, LabelEncoder& labels) {
  const Stopwatch read_watch;
  mpi::PartOfFile where;
  Dataset<Scalar> part = on_every_rank(
      StepKind::input, [&] { return mpi::read_libsvm_part<Scalar>(world, args.train_file, options, &where); });
  std::int64_t nnz = part.nnz();
  world.sum(nnz);
  progress.file_read(args.train_file, where.n_samples, part.n_features(), nnz, read_watch.seconds());
  if (args.C) set_from_C(args, where.n_samples);
  args.fit.multilabel = world.max(static_cast<std::int32_t>(part.multilabel())) != 0;
  args.fit.n_samples = where.n_samples;
  args.fit.n_features = part.n_features();
  labels = part.encoder();
  if (args.fit.multilabel && !loss_supports_multilabel(args.fit.loss))
    throw UsageError("--loss " + args.fit.loss + " does not support multilabel data (" + args.train_file +
                     " has samples with several or no labels); multilabel losses: " + join(multilabel_losses()));
  const std::string solver_name = sample_solver(args);
  const SolverSpec& spec = Registry::resolve(solver_name, args.fit);
  args.tol = args.fit.tol.value_or(spec.default_tol.value_or(std::numeric_limits<double>::quiet_NaN()));
  if (args.bias >= 0) part = append_bias(part, args.bias);
  std::optional<LinearModel<Scalar>> initial;
  input_step(world, [&] {
    if (!args.class_weights.empty()) part.set_class_weights(parse_class_weights(args.class_weights, part.encoder()));
    if (!args.weights_file.empty()) {
      const std::vector<Scalar> all = read_sample_weights<Scalar>(args.weights_file, where.n_samples);
      const auto first = all.begin() + where.first_sample;
      part.set_sample_weights(std::vector<Scalar>(first, first + part.n_samples()));
    }
    if (!args.init_file.empty())
      initial = align_initial_model(load_model<Scalar>(args.init_file), part.encoder(), part.n_features(), args.bias,
                                    args.fit.fit_intercept);
  });
  ToolCallback callback{[&progress](const EpochReport& r) { return progress.epoch(r); }};
  std::optional<Result<Scalar>> result;
  const auto problem = part.template problem<Eigen::RowMajor>();
  const auto fit = [&](const auto& solver) {
    result = mpi::fit_by_samples(world, solver, problem, initial ? &*initial : nullptr, callback);
  };
  // The registry has checked that the solver takes the loss and the penalty (and fbpd-epi's η).
  const FitSettings& s = args.fit;
  // By samples, FBPD runs its exact (separation ranking) form only: the smooth losses go to fista.
  dispatch(AllLosses{}, AllPenalties{}, s.loss, s.penalty, [&]<class Loss, class Penalty>() {
    const Penalty penalty = detail::penalty_from<Penalty>(s);
    if (solver_name == "gls") {
      if constexpr (GLSAccepts<Loss, Penalty>) fit(GLS<Loss>(Loss{}, penalty, solver_options<GLSOptions>(s)));
    } else if (solver_name == "fbpd") {
      if constexpr (SeparationRankingLoss<Loss>)
        fit(FBPD<Loss, Penalty>(Loss{}, penalty, solver_options<FBPDOptions>(s)));
    } else if (solver_name == "fbpd-epi") {
      if constexpr (FBPDAccepts<Loss, Penalty, Constrained>)
        fit(FBPD<Loss, Penalty, Constrained>(Loss{}, penalty, solver_options<FBPDOptions>(s)));
    } else if constexpr (ProxGradientAccepts<Loss, Penalty, Scalar>) {
      fit(ProxGradient<Loss, Penalty>(Loss{}, penalty, solver_options<ProxGradientOptions>(s)));
    }
  });
  result->model.set_labels(part.encoder().labels());
  result->model.provenance().solver = spec.name;
  return std::move(*result);
}

/// Fits by the partition, then rank 0 scores the model on --test, reports and writes it.
template <class Scalar>
int train(const mpi::Communicator& world, MpiArgs& args, Partition partition) {
  Progress progress(args.quiet ? Verbosity::quiet : args.verbose ? Verbosity::verbose : Verbosity::normal, std::cerr);
  std::ostream& report = args.model_file == "-" ? std::cerr : std::cout;  // stdout carries MODEL '-'
  io::LibsvmOptions options{.zero_based = args.zero_based, .threads = args.fit.threads};
  if (args.multilabel) options.label_format = io::LabelFormat::multilabel;
  LabelEncoder labels;
  Result<Scalar> result = partition == Partition::classes ? fit_classes<Scalar>(world, args, options, progress, labels)
                                                          : fit_samples<Scalar>(world, args, options, progress, labels);
  const char* partition_name = partition == Partition::classes ? "classes" : "samples";
  on_every_rank(StepKind::input, [&] {
    mpi::collectively(world, [&] {
      if (!world.root()) return;
      result.model.provenance().bias = args.bias;
      // The test file is read with the training features and labels, as sparsemc-train reads it.
      std::optional<TestScore> score;
      if (!args.test_file.empty())
        score = score_model(result.model, read_dataset<Scalar>(args.test_file, {.zero_based = args.zero_based,
                                                                                .n_features = args.fit.n_features,
                                                                                .labels = &labels,
                                                                                .multilabel = args.multilabel || args.fit.multilabel,
                                                                                .extra_features_ignored = true,
                                                                                .progress = &progress}));
      if (args.json) {
        nlohmann::json out = fit_json(result, args.fit, args.tol, score);
        out["ranks"] = world.size();
        out["partition"] = partition_name;
        out["reduced_bytes"] = world.reduced_bytes();
        std::cout << out.dump() << std::endl;  // --json: MODEL is a file
      } else {
        report << "ranks " << world.size() << "  partition " << partition_name << "  reduced "
               << static_cast<double>(world.reduced_bytes()) / 1e6 << " MB per rank\n";
        print_summary(report, result, args.fit, args.tol, score);
      }
      if (result.info.status != Status::numerical_issue) save_model(result.model, args.model_file, args.model_format);
    });
  });
  if (result.info.status == Status::numerical_issue)
    throw NumericalError("the solver stopped on non-finite values (status numerical_issue); the model was not saved");
  return exit_ok;
}

}  // namespace
}  // namespace sparsemc::tools

int main(int argc, char** argv) {
  using namespace sparsemc::tools;
  return_large_blocks_when_freed();
  sparsemc::mpi::Environment environment(argc, argv);
  const sparsemc::mpi::Communicator world;
  // Every failure is agreed on by the ranks and reported by rank 0; the others stay silent.
  std::optional<Silence> silence;
  if (!world.root()) silence.emplace();
  MpiArgs args;
  CLI::App app{
      "sparsemc-train-mpi: sparsemc-train over MPI. Run as\n"
      "  mpirun -np P sparsemc-train-mpi [options] TRAIN MODEL\n"
      "to fit (1) of sparsemc-train on TRAIN over P ranks, each parsing its share of the file, and\n"
      "write from rank 0 the model file sparsemc-train would. By classes (" + separable_pairs() + "):\n"
      "each rank holds every sample and fits the one-vs-rest problems of K/P classes, and the\n"
      "ranks' gaps add up to the certificate of the whole. By samples (fista: every smooth loss;\n"
      "gls: --penalty none; fbpd, fbpd-epi: crammer-singer): each rank holds its share of the\n"
      "samples; the gradient (fbpd: T'y) is summed over the ranks every iteration and the\n"
      "certificate is the whole problem's (docs/mpi.md).",
      "sparsemc-train-mpi"};
  app.get_formatter()->column_width(34);
  const FitOptions shared = add_fit_options(app, args, "each rank: reading its share of the file and its solver (with several ranks on one machine, "
                             "give each its share of the cores: --threads 1 for a rank per core)");
  app.add_option("--partition", args.partition,
                 wrap("how (1) is split over the ranks: classes, samples, or auto (default auto: by classes for " +
                      separable_pairs() + " with any solver but fista, gls, fbpd and fbpd-epi; else by samples, with --solver or "
                      "for auto fista (smooth losses) or fbpd (crammer-singer))"))
      ->type_name("HOW")
      ->check(one_of({"auto", "classes", "samples"}));
  app.add_option("--classes-per-fit", args.classes_per_fit,
                 wrap("by classes: the classes a rank fits at once, an integer >= 0 (default 0: its whole share); a "
                      "solver keeps a dense column of W and n scores per class, so at extreme K a few classes at a "
                      "time bound a rank's memory"))
      ->type_name("N")
      ->check(integer_at_least(0));
  app.add_option("--test", args.test_file,
                 wrap("rank 0 evaluates the model on FILE (read with the training features and labels; a feature "
                      "beyond the training data's is ignored) and reports accuracy (multiclass) or precision@1 "
                      "(multilabel) (default: none)"))
      ->type_name("FILE");
  app.add_option("--init", args.init_file,
                 wrap("start the fit from MODEL (native or LIBLINEAR format; every rank reads it) instead of W = 0, "
                      "as sparsemc-train's --init: it must have the training data's labels, and a bias feature or "
                      "intercept only with --bias or --intercept; features beyond the data are dropped (default: "
                      "none)"))
      ->type_name("MODEL");
  app.add_flag("--json", args.json,
               wrap("print one JSON object on stdout instead of text: sparsemc-train's fields (solver, loss, penalty, "
                    "lambda, mu, status, epochs, objective, duality_gap, relative_gap, tol, measure_name, measure, "
                    "nnz, nnz_rows, train_seconds, gap_evaluations, gap_seconds, test_accuracy with --test), and ranks, "
                    "partition and reduced_bytes (what rank 0 contributed to the sums over the ranks: the communication beyond "
                    "reading) (default: text)"));
  app.footer(Registry::help() + "\n" + train_exit_status_help);
  add_version_flag(app, "sparsemc-train-mpi");

  return run_tool("sparsemc-train-mpi", app, argc, argv, [&] {
    settle_no_penalty(args, shared);
    if (args.C) set_from_C(args, 1);
    const SolverSpec& spec = Registry::resolve(args.solver, args.fit);
    const Partition partition = choose_partition(args);
    if (spec.writes_staged(args.fit))
      throw UsageError("--solver " + spec.name + " writes a staged model; sparsemc-train-mpi fits linear models only");
    if (args.model_file == "-" && args.json)
      throw UsageError("--json: MODEL '-' writes the model to stdout, where the JSON report would go too; give MODEL "
                       "a file name");
    on_every_rank(StepKind::input, [&] {
      sparsemc::mpi::collectively(world, [&] {
        if (world.root() && args.model_file != "-") sparsemc::io::check_writable(args.model_file);
      });
    });
    use_threads(args.fit.threads);
    if (!args.use_float) return train<double>(world, args, partition);
#if SPARSEMC_REGISTRY_FLOAT
    return train<float>(world, args, partition);
#else
    throw UsageError(no_float_fits);
#endif
  });
}
