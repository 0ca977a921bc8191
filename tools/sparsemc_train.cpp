/// \file sparsemc_train.cpp
/// sparsemc-train: fits objective (1) of ARCHITECTURE.md on a LIBSVM/SVMlight file with a
/// registered solver and saves the model. Its --help is the user documentation.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <iomanip>
#include <iostream>
#include <limits>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <sparsemc/data/folds.hpp>
#include <sparsemc/solver/path.hpp>

#include "cli.hpp"
#include "data.hpp"
#include "registry/registry.hpp"
#include "staged.hpp"
#include "train_common.hpp"

namespace sparsemc::tools {
namespace {

/// Everything the command line says, after validation by CLI11: the options shared with
/// sparsemc-train-mpi (train_options.hpp) and sparsemc-train's own.
struct TrainArgs : FitArgs {
  std::string test_file, heldout_file;
  int cv = 0;                   // --cv K: K-fold cross-validation (0: none)
  std::string init_file;        // --init: the model a fit starts from
  std::optional<int> patience;  // --patience: epochs without improvement on --heldout (default 3)
  std::string path;  // N[:RATIO]
  std::vector<double> lambda_grid;  // --lambda-grid: the λ chosen from on --heldout
};

/// --path N[:RATIO]: N log-spaced λ from λ_max down to λ_max·RATIO.
struct PathSpec {
  int points = 0;
  double ratio = 1e-2;
};

std::optional<PathSpec> parse_path(const std::string& text) {
  if (text.empty()) return std::nullopt;
  PathSpec spec;
  const auto colon = text.find(':');
  const std::string n = text.substr(0, colon);
  long long points = 0;
  bool ok = detail::parse_all(n, points) && points >= 1 && points <= 1000000;
  spec.points = static_cast<int>(points);
  if (ok && colon != std::string::npos) {
    ok = detail::parse_all(std::string_view(text).substr(colon + 1), spec.ratio) && spec.ratio > 0 && spec.ratio < 1;
  }
  if (!ok) throw UsageError("--path: expects N[:RATIO] with an integer N >= 1 and 0 < RATIO < 1, got '" + text + "'");
  return spec;
}

/// One line of a regularisation path.
template <class Scalar>
void print_path_line(std::ostream& out, const Result<Scalar>& r, double lambda) {
  out << std::setprecision(6) << "lambda " << lambda << "  objective " << std::setprecision(10) << r.info.objective
      << std::setprecision(6) << "  nnz_rows " << r.info.nnz_rows << "  epochs " << r.info.epochs << "  time "
      << r.info.seconds << "s  " << to_string(r.info.status) << std::setprecision(3) << "  relative gap "
      << r.info.relative_gap << '\n';
}

/// One line of a choice of lambda on held-out data (`score` says how the fit did there; the
/// test set is not looked at).
template <class Scalar>
void print_grid_line(std::ostream& out, const Result<Scalar>& r, double lambda, const std::string& score) {
  out << std::setprecision(6) << "lambda " << lambda << "  " << score << "  nnz " << r.info.nnz << "  epochs "
      << r.info.epochs << "  time " << r.info.seconds << "s  " << to_string(r.info.status) << std::setprecision(3)
      << "  relative gap " << r.info.relative_gap << '\n';
}

/// A cross-validated score: each fold's, and their mean weighted by the folds' sizes (the
/// score over all samples, each scored by the model that did not see it, as LIBLINEAR's -v).
struct CvScore {
  std::vector<double> folds;
  double weighted_sum = 0.0;
  std::int64_t samples = 0;
  void add(const TestScore& s) {
    folds.push_back(primary_score(s));
    weighted_sum += primary_score(s) * static_cast<double>(s.samples);
    samples += s.samples;
  }
  [[nodiscard]] double mean() const { return samples > 0 ? weighted_sum / static_cast<double>(samples) : 0.0; }
  /// "cross-validation accuracy 0.93 (5 folds: 0.92 0.94 ...)".
  [[nodiscard]] std::string describe(const std::string& name) const {
    std::ostringstream os;
    os << std::setprecision(6) << "cross-validation " << name << ' ' << mean() << " (" << folds.size() << " folds:";
    for (const double f : folds) os << ' ' << f;
    os << ')';
    return os.str();
  }
};

/// The summary of a staged fit (gls-cal, stagewise, gls on random features): as a linear one's,
/// with the number of stages instead of the sparsity.
template <class Scalar>
nlohmann::json staged_json(const StagedResult<Scalar>& r, const FitSettings& s, double tol,
                           const std::optional<TestScore>& test) {
  nlohmann::json j = fit_json(Result<Scalar>{{}, r.info}, s, tol, test);
  j["solver"] = r.model.provenance().solver;
  j["stages"] = r.model.stages().size();
  j.erase("nnz");
  j.erase("nnz_rows");
  return j;
}

template <class Scalar>
void print_staged_summary(std::ostream& out, const StagedResult<Scalar>& r, const FitSettings& s, double tol,
                          const std::optional<TestScore>& test) {
  const auto& info = r.info;
  out << std::setprecision(10) << "solver " << r.model.provenance().solver << "  loss " << s.loss << "  mu " << s.mu
      << '\n'
      << "status " << to_string(info.status) << " after " << info.epochs << " epochs, " << info.measure_name << ' '
      << std::setprecision(3) << info.measure << '\n'
      << std::setprecision(10) << "objective " << info.objective << '\n'
      << certificate_line(info, tol) << '\n'
      << "staged model: " << r.model.stages().size() << " stages over " << r.model.n_features() << " features\n"
      << std::setprecision(4) << "train time " << info.seconds << " s\n";
  if (test) out << "test " << describe(*test) << '\n';
}

/// The registry as JSON (--list-solvers): what each solver accepts, for scripts and the tests.
nlohmann::json solvers_json() {
  nlohmann::json list = nlohmann::json::array();
  for (const SolverSpec& spec : Registry::solvers()) {
    nlohmann::json j;
    j["name"] = spec.name;
    j["losses"] = spec.losses;
    j["penalties"] = spec.penalties;
    j["intercept"] = spec.intercept;
    j["layout"] = spec.layout;
    j["certifies"] = spec.stop.empty();
    if (!spec.stop.empty()) j["stop"] = spec.stop;
    list.push_back(std::move(j));
  }
  return nlohmann::json{{"solvers", std::move(list)}};
}


/// Trains a solver whose model is a StagedModel and saves it (staged format).
template <class Scalar>
int train_staged(TrainArgs& args, const SolverSpec& spec, Dataset<Scalar>& data, const std::optional<Dataset<Scalar>>& test,
                 Progress& progress) {
  const StagedFitFunction<Scalar> fit = spec.staged_fit<Scalar>(args.fit.loss, args.fit.penalty);
  ToolCallback callback{[&progress](const EpochReport& r) { return progress.epoch(r); }};
  std::ostream& report = args.model_file == "-" ? std::cerr : std::cout;  // stdout carries MODEL '-'
  std::optional<CvScore> cv_score;
  if (args.cv > 0) {  // K-fold cross-validation (LIBLINEAR's -v), then the fit on all the data
    const std::vector<int> fold = stratified_folds(data.labels().view(), args.cv, args.fit.seed.value_or(1));
    cv_score.emplace();
    for (int f = 0; f < args.cv; ++f) {
      const auto [train_rows, test_rows] = fold_samples(fold, f);
      cv_score->add(score_staged(fit(data.subset(train_rows), args.fit, callback).model, data.subset(test_rows)));
    }
  }
  StagedResult<Scalar> result = fit(data, args.fit, callback);
  std::optional<TestScore> score;
  if (test) score = score_staged(result.model, *test);
  const std::string score_name = primary_score_name(data.multilabel());
  if (args.json) {
    nlohmann::json out = staged_json(result, args.fit, args.tol, score);
    if (cv_score) {
      out["cv_" + score_name] = cv_score->mean();
      out["cv_folds"] = cv_score->folds;
    }
    std::cout << out.dump() << std::endl;  // --json: MODEL is a file
  } else {
    if (cv_score) report << cv_score->describe(score_name) << '\n';
    print_staged_summary(report, result, args.fit, args.tol, score);
  }
  if (result.info.status == Status::numerical_issue)
    throw NumericalError("the solver stopped on non-finite values (status numerical_issue); the model was not saved");
  save_staged(result.model, args.model_file);
  return exit_ok;
}

/// Trains (one λ or a path) in the given precision; returns the exit status.
template <class Scalar>
int train(TrainArgs& args, const SolverSpec& resolved, const std::optional<PathSpec>& path) {
  Progress progress(args.quiet ? Verbosity::quiet : args.verbose ? Verbosity::verbose : Verbosity::normal, std::cerr);
  std::ostream& report = args.model_file == "-" ? std::cerr : std::cout;  // stdout carries MODEL '-'
  Dataset<Scalar> data = read_dataset<Scalar>(
      args.train_file, {.zero_based = args.zero_based, .multilabel = args.multilabel, .progress = &progress});
  if (args.C) set_from_C(args, data.n_samples());
  args.fit.multilabel = data.multilabel();
  args.fit.n_samples = data.n_samples();
  const std::int64_t data_features = data.n_features();
  if (data.multilabel() && !loss_supports_multilabel(args.fit.loss))
    throw UsageError("--loss " + args.fit.loss + " does not support multilabel data (" + args.train_file +
                     " has samples with several or no labels); multilabel losses: " + join(multilabel_losses()));
  if (args.bias >= 0) data = append_bias(data, args.bias);
  if (!args.class_weights.empty()) data.set_class_weights(parse_class_weights(args.class_weights, data.encoder()));
  if (!args.weights_file.empty()) data.set_sample_weights(read_sample_weights<Scalar>(args.weights_file, data.n_samples()));
  std::optional<LinearModel<Scalar>> initial;
  if (!args.init_file.empty())
    initial = align_initial_model(load_model<Scalar>(args.init_file), data.encoder(), data.n_features(), args.bias,
                                  args.fit.fit_intercept);

  // Test and held-out files are read with the training features and labels.
  const auto read_like_training = [&](const std::string& file) {
    return read_dataset<Scalar>(file, {.zero_based = args.zero_based,
                                       .n_features = data_features,
                                       .labels = &data.encoder(),
                                       .multilabel = args.multilabel || data.multilabel(),
                                       .extra_features_ignored = true,
                                       .progress = &progress});
  };
  std::optional<Dataset<Scalar>> test, heldout;
  if (!args.test_file.empty()) test = read_like_training(args.test_file);
  if (!args.heldout_file.empty()) {
    heldout = read_like_training(args.heldout_file);
    if (args.bias >= 0) heldout = append_bias(*heldout, args.bias);
  }
  if (args.cv > data.n_samples())
    throw UsageError("--cv: " + std::to_string(args.cv) + " folds for the " + std::to_string(data.n_samples()) +
                     " samples of " + args.train_file + "; K must be at most the number of samples");
  // auto picks no staged solver: `resolved` is the solver's family here.
  if (resolved.writes_staged(args.fit)) {
    args.fit.n_features = data.n_features();
    return train_staged(args, resolved, data, test, progress);
  }

  // The solvers see only the features that occur (hashed data: a few of 2^31 possible indices),
  // so their memory follows the used features; expand() gives each model its indices back.
  const FeatureMap features = data.compact_features();
  if (heldout) heldout->apply_feature_map(features);
  if (initial) initial = restrict_features(std::move(*initial), features);
  // auto chose before the data was read; the data (multilabel, the shape the solvers see) and
  // --C's exact lambda or mu may call for another solver, with its own default tol.
  args.fit.n_features = data.n_features();
  const SolverSpec& spec = args.solver == "auto" ? Registry::resolve("auto", args.fit) : resolved;
  if (&spec != &resolved)
    args.tol = args.fit.tol.value_or(spec.default_tol.value_or(std::numeric_limits<double>::quiet_NaN()));

  const FitFunction<Scalar> fit = spec.fit<Scalar>(args.fit.loss, args.fit.penalty);
  ToolCallback callback{[&progress](const EpochReport& r) { return progress.epoch(r); }};
  // The fitted model over the file's features again (and its bias feature marked): what is
  // scored on --test and saved.
  const auto expand = [&](Result<Scalar>& r) {
    r.model = expand_features(std::move(r.model), features);
    r.model.provenance().bias = args.bias;
  };

  // Fits along a decreasing lambda grid on `on`, each fit warm-started from the previous one — in
  // one call when the solver has a whole-grid path (BlockCD: strong-rule screening) — and hands
  // each result (on the compact features) to `each(result, lambda)`.
  const auto fit_grid = [&](const Dataset<Scalar>& on, std::span<const double> grid, auto&& each) {
    FitSettings settings = args.fit;
    if (const PathFunction<Scalar> fit_path = spec.path<Scalar>(settings.loss, settings.penalty)) {
      std::vector<Result<Scalar>> results = fit_path(on, settings, grid, callback);
      for (std::size_t k = 0; k < results.size(); ++k) each(results[k], grid[k]);
      return;
    }
    std::optional<LinearModel<Scalar>> warm;  // the previous lambda's model
    for (const double lambda : grid) {
      settings.lambda = lambda;
      Result<Scalar> next = fit(on, settings, warm ? &*warm : nullptr, callback);
      const bool failed = next.info.status == Status::numerical_issue;
      warm = next.model;
      each(next, lambda);
      if (failed) return;
    }
  };
  // The lambdas to choose from: --path's grid from lambda_max, or --lambda-grid, largest first.
  std::vector<double> candidates = args.lambda_grid;
  std::optional<double> lambda_max;
  // Smooth losses start at λ_max exactly; Crammer–Singer at a λ_start >= λ_max (objective.hpp).
  const bool exact_lambda_max = loss_is_smooth(args.fit.loss);
  if (path) {
    lambda_max = compute_lambda_max(data, args.fit);
    candidates = lambda_grid(*lambda_max, path->points, path->ratio);
    if (!args.json)
      report << (exact_lambda_max ? "# lambda_max " : "# lambda_start (W = 0 optimal; >= lambda_max) ") << *lambda_max
             << "\n";
  }
  std::sort(candidates.begin(), candidates.end(), std::greater<>());
  const bool early_stop = heldout && spec.heldout_fit<Scalar>(args.fit.loss, args.fit.penalty) != nullptr;
  const std::string score_name = primary_score_name(data.multilabel());
  // --cv K: the stratified folds (seeded by --seed) and a fold's training and scoring sets.
  const std::vector<int> fold =
      args.cv > 0 ? stratified_folds(data.labels().view(), args.cv, args.fit.seed.value_or(1)) : std::vector<int>{};
  // A solver that walks X's columns reads the CSC copy only: the row-major X is freed, and a
  // fold's training part, gathered from the columns, is kept column-major too.
  const bool columns_only = spec.layout == "CSC";
  if (columns_only) data.keep_csc_only();
  const auto split = [&](int f) {
    const auto [train_rows, test_rows] = fold_samples(fold, f);
    Dataset<Scalar> fold_train = data.subset(train_rows);
    if (columns_only) fold_train.keep_csc_only();
    return std::pair{std::move(fold_train), data.subset(test_rows)};
  };

  nlohmann::json out;
  std::optional<Result<Scalar>> result;
  std::optional<TestScore> heldout_score;
  std::optional<CvScore> cv_score;
  nlohmann::json grid_points = nlohmann::json::array();
  if (early_stop) {
    // PD-Sparse's held-out early stop (-h/-e), and its choice of lambda (§5) over --lambda-grid:
    // the best held-out score, ties to the fewer nonzero weights.
    const HeldoutFitFunction<Scalar> fit_heldout = spec.heldout_fit<Scalar>(args.fit.loss, args.fit.penalty);
    const auto fit_and_score = [&] {
      Result<Scalar> r = fit_heldout(data, args.fit, *heldout, args.patience.value_or(3), callback);
      // Scored as the early stop scored it: before finish() marks the bias feature, which the
      // held-out set carries as a column.
      const TestScore h = score_model(r.model, *heldout);
      return std::pair{std::move(r), h};
    };
    if (candidates.empty()) {
      auto [r, h] = fit_and_score();
      result = std::move(r);
      heldout_score = h;
    } else {
      double chosen = 0.0;
      for (const double lambda : candidates) {
        args.fit.lambda = lambda;
        auto [next, h] = fit_and_score();
        grid_points.push_back(fit_json(next, args.fit, args.tol, std::nullopt, h));
        if (!args.json) print_grid_line(report, next, lambda, "held-out " + describe(h));
        if (next.info.status == Status::numerical_issue) continue;
        if (!result || h.accuracy() > heldout_score->accuracy() ||
            (h.accuracy() == heldout_score->accuracy() && next.info.nnz < result->info.nnz)) {
          result = std::move(next);
          heldout_score = h;
          chosen = lambda;
        }
      }
      if (!result) throw NumericalError("every lambda stopped on non-finite values; the model was not saved");
      args.fit.lambda = chosen;
    }
  } else if (!candidates.empty() && heldout) {
    // lambda chosen on the held-out file: the grid fitted on the training data, each model scored
    // on FILE; the best score wins, ties to the larger lambda (the sparser model).
    double best = -1.0;
    fit_grid(data, candidates, [&](Result<Scalar>& next, double lambda) {
      const TestScore h = score_model(next.model, *heldout);
      FitSettings at = args.fit;
      at.lambda = lambda;
      grid_points.push_back(fit_json(next, at, args.tol, std::nullopt, h));
      if (!args.json) print_grid_line(report, next, lambda, "held-out " + describe(h));
      if (next.info.status != Status::numerical_issue && primary_score(h) > best) {
        best = primary_score(h);
        heldout_score = h;
        args.fit.lambda = lambda;
        result = std::move(next);
      }
    });
    if (!result) throw NumericalError("every lambda stopped on non-finite values; the model was not saved");
  } else if (!candidates.empty() && args.cv > 0) {
    // lambda chosen by K-fold cross-validation: the grid fitted on each fold's training part and
    // scored on the fold; the best pooled score wins (ties: the larger lambda); the model saved is
    // a plain fit on all the data at that lambda.
    std::vector<CvScore> scores(candidates.size());
    for (int f = 0; f < args.cv; ++f) {
      const auto [fold_train, fold_test] = split(f);
      std::size_t k = 0;
      fit_grid(fold_train, candidates, [&](Result<Scalar>& next, double) { scores[k++].add(score_model(next.model, fold_test)); });
      for (; k < candidates.size(); ++k) scores[k].add(TestScore{.multilabel = data.multilabel()});  // after a failure
    }
    std::size_t chosen = 0;
    for (std::size_t k = 0; k < candidates.size(); ++k) {
      grid_points.push_back(nlohmann::json{{"lambda", candidates[k]}, {"cv_" + score_name, scores[k].mean()},
                                           {"cv_folds", scores[k].folds}});
      if (!args.json) report << std::setprecision(6) << "lambda " << candidates[k] << "  " << scores[k].describe(score_name) << '\n';
      if (scores[k].mean() > scores[chosen].mean()) chosen = k;
    }
    args.fit.lambda = candidates[chosen];
    cv_score = scores[chosen];
    result = fit(data, args.fit, nullptr, callback);
  } else if (!candidates.empty()) {
    // A path without held-out data: every lambda reported, the last model saved (and only it
    // scored on --test: choosing lambda by the test score would report an optimistic one).
    fit_grid(data, candidates, [&](Result<Scalar>& next, double lambda) {
      FitSettings at = args.fit;
      at.lambda = lambda;
      grid_points.push_back(fit_json(next, at, args.tol, std::nullopt));
      if (!args.json) print_path_line(report, next, lambda);
      args.fit.lambda = lambda;
      result = std::move(next);
    });
  } else {
    if (args.cv > 0) {
      // K-fold cross-validation at the one lambda (LIBLINEAR's -v), then the fit on all the data.
      // The folds' training parts share (K−2)/(K−1) of their samples, so each fold starts from
      // the previous fold's model: a warm start, each fit still certified on its own part.
      cv_score.emplace();
      std::optional<LinearModel<Scalar>> warm;
      for (int f = 0; f < args.cv; ++f) {
        const auto [fold_train, fold_test] = split(f);
        Result<Scalar> fold_fit = fit(fold_train, args.fit, warm ? &*warm : nullptr, callback);
        cv_score->add(score_model(fold_fit.model, fold_test));
        warm = std::move(fold_fit.model);
      }
    }
    result = fit(data, args.fit, initial ? &*initial : nullptr, callback);
    if (heldout) heldout_score = score_model(result->model, *heldout);
  }

  {
    expand(*result);
    std::optional<TestScore> score;
    if (test) score = score_model(result->model, *test);
    out = fit_json(*result, args.fit, args.tol, score, heldout_score);
    if (cv_score) {
      out["cv_" + score_name] = cv_score->mean();
      out["cv_folds"] = cv_score->folds;
    }
    if (!args.json) {
      if (!candidates.empty() && (heldout || args.cv > 0))
        report << "# chosen lambda " << args.fit.lambda << " (best " << (heldout ? "held-out" : "cross-validated")
                  << " score)\n";
      if (cv_score) report << cv_score->describe(score_name) << '\n';
      if (!path || heldout || args.cv > 0) print_summary(report, *result, args.fit, args.tol, score, heldout_score);
      else if (score) report << "test (last lambda) " << describe(*score) << '\n';
    }
    if (path && !heldout && args.cv == 0) out["path"] = grid_points;
    else if (!grid_points.empty()) out["grid"] = grid_points;
    if (lambda_max) out[exact_lambda_max ? "lambda_max" : "lambda_start"] = *lambda_max;
  }
  if (args.json) std::cout << out.dump() << std::endl;  // --json: MODEL is a file
  if (result->info.status == Status::numerical_issue)
    throw NumericalError("the solver stopped on non-finite values (status numerical_issue); the model was not saved");
  save_model(result->model, args.model_file, args.model_format);
  return exit_ok;
}

}  // namespace
}  // namespace sparsemc::tools

int main(int argc, char** argv) {
  using namespace sparsemc::tools;
  return_large_blocks_when_freed();
  TrainArgs args;
  CLI::App app{
      "sparsemc-train: fit a sparse linear multiclass/multilabel model by minimising\n"
      "  F(W) = (1/n) sum_i c_i loss(W'x_i + b, y_i) + lambda R(W) + (mu/2) ||W||_F^2      (1)\n"
      "on TRAIN (LIBSVM/SVMlight text: 'label idx:val ...' or multilabel 'l1,l2 idx:val ...', plain,\n"
      ".gz or .bz2) and save the model to MODEL.",
      "sparsemc-train"};
  app.get_formatter()->column_width(34);
  const FitOptions shared = add_fit_options(
      app, args,
      "reading the data, bcd (by classes for the one-vs-rest losses with an l1 or no penalty; bcd-cst's "
      "rounds), scd (by classes, one-vs-rest), fbpd, fista, gls, the certificates of sdm and fcbcfw, and "
      "prediction");
  app.add_option_function<std::int64_t>(
         "--block-size", [&](std::int64_t v) { args.fit.block_size = v; },
         wrap("stagewise: features per stage, P, an integer >= 1 (default 512, or D of --features rff:D when "
              "smaller)"))
      ->type_name("P")
      ->check(integer_at_least(1));
  app.add_option_function<std::int64_t>(
         "--stages", [&](std::int64_t v) { args.fit.stages = v; },
         wrap("stagewise: the number of stages T, an integer >= 1 (default D/P with --features rff:D, else 8)"))
      ->type_name("T")
      ->check(integer_at_least(1));
  app.add_option("--features", args.fit.features,
                 wrap("gls, gls-cal, stagewise: the features fitted — original (default of gls, gls-cal), "
                      "rff[:D[:BANDWIDTH]] (random Fourier features of the Gaussian kernel exp(-|x-x'|^2/(2 "
                      "BANDWIDTH^2)), D of them (gls, gls-cal: D required; stagewise: D = T*P), BANDWIDTH > 0 "
                      "(default sqrt of the mean squared distance to the mean), seeded by --seed; the default of "
                      "stagewise), or for stagewise blocks of original features: sample (without replacement), "
                      "sample-replace, frequent (most frequent first, for text). gls with rff, gls-cal and "
                      "stagewise write a staged model (the chain and its generator), which sparsemc-predict and "
                      "sparsemc-eval read"))
      ->type_name("GEN");
  app.add_flag("--calibrate", args.fit.calibrate,
               wrap("stagewise with --loss least-squares: calibrate every stage (Algorithm 2's cubic link and "
                    "simplex projection) (default off)"));
  app.add_option("--test", args.test_file,
                 wrap("evaluate the model on FILE (read with the training features and labels; a feature beyond the training "
                      "data's is ignored) and report accuracy "
                      "(multiclass) or precision@1 (multilabel) (default: none)"))
      ->type_name("FILE");
  auto* heldout = app.add_option("--heldout", args.heldout_file,
                 wrap("held-out data FILE (read like --test), scored by accuracy or precision@1 (multilabel): with "
                      "--path or --lambda-grid it chooses lambda (the best score, ties to the larger lambda) and "
                      "the chosen model is saved; else its score is reported. --solver fcbcfw stops early on it "
                      "instead, PD-Sparse's -h: after every epoch the model is scored, the solve stops once the "
                      "score has not improved for --patience epochs, and the best epoch's model is saved (status "
                      "stopped_by_callback) (default: none)"))
      ->type_name("FILE");
  app.add_option("--init", args.init_file,
                 wrap("start the fit from MODEL (native or LIBLINEAR format) instead of W = 0: a warm start, e.g. a "
                      "model of a nearby lambda or of older data; it must have the training data's labels, and a "
                      "bias feature or intercept only with --bias or --intercept; features beyond the data are "
                      "dropped (default: none)"))
      ->type_name("MODEL");
  app.add_option("--cv", args.cv,
                            wrap("K-fold cross-validation (LIBLINEAR's -v): stratified folds drawn with --seed, each "
                                 "scored (accuracy, or precision@1 for multilabel data) by the model fitted on the "
                                 "other K-1; prints each fold's score and their mean. With --path or --lambda-grid "
                                 "it chooses lambda (the best mean, ties to the larger lambda). MODEL is then fitted "
                                 "on all the data, at the chosen lambda; an integer >= 2 (default: none)"))
                 ->type_name("K")
                 ->check(integer_at_least(2))
                 ->excludes(heldout);
  app.add_option_function<int>(
         "--patience", [&](int v) { args.patience = v; },
         wrap("epochs without improvement on --heldout before the solve stops, an integer >= 1 (default 3)"))
      ->type_name("N")
      ->check(integer_at_least(1));
  auto* lambda_grid =
      app.add_option("--lambda-grid", args.lambda_grid,
                     wrap("with --heldout or --cv: choose lambda from the comma-separated list (numbers >= 0), fitted "
                          "from the largest down, each warm-started from the previous; print one line per lambda "
                          "and save the model of the best held-out or cross-validated score; only that model is "
                          "scored on --test. With fcbcfw's held-out early stop, PD-Sparse's choice: ties go to the "
                          "fewer nonzero weights (default: none)"))
          ->type_name("X,Y,...")
          ->delimiter(',')
          ->check(real_at_least(0))
          ->excludes(shared.lambda);
  app.add_option("--path", args.path,
                 wrap("solve a regularisation path instead of one lambda: N values from lambda_max (where W = 0 "
                      "becomes optimal; for crammer-singer lambda_start >= lambda_max, where W = 0 is proven "
                      "optimal, reported as lambda_start) down to lambda_max*RATIO, log-spaced, each warm-started from the previous; "
                      "prints one line per lambda; N = 1 solves at lambda_max*RATIO only. MODEL receives the "
                      "last model, or with --heldout or --cv the model of the lambda they choose; --test scores "
                      "that model only (default: off; RATIO default 0.01)"))
      ->type_name("N[:RATIO]")
      ->excludes(shared.lambda)
      ->excludes(lambda_grid)
      ->excludes(shared.C);
  lambda_grid->excludes(shared.C);
  app.add_flag_callback(
      "--list-solvers",
      [] {
        std::cout << solvers_json().dump() << std::endl;
        throw CLI::Success();
      },
      wrap("print the solver table as one JSON object and exit: {\"solvers\": [{name, losses, penalties, "
           "intercept, layout, certifies, stop}]}; certifies: whether its converged is the certificate of (1), "
           "else stop says what it stops on (default: off)"));
  app.add_flag("--json", args.json,
               wrap("print one JSON object on stdout instead of text: solver, loss, penalty, lambda, mu, status, "
                    "epochs, objective, duality_gap (F - D, an upper bound on F - F*), relative_gap (the gap "
                    "over |F|; status converged means relative_gap <= tol), tol (in effect), measure_name, "
                    "measure (the solver's own diagnostic), nnz, nnz_rows, train_seconds, gap_evaluations and "
                    "gap_seconds (the certificate's evaluations and their share of train_seconds), and test_accuracy "
                    "with --test; duality_gap and relative_gap are null when not finite, and gap_note then says "
                    "why (no finite certificate: no penalty with mu = 0; not evaluated) (with --path: also lambda_max and 'path', one object per lambda; with "
                    "--lambda-grid: 'grid', one object per lambda with its held-out score) (default: text)"));
  app.footer(Registry::help() + "\n" + train_exit_status_help);
  add_version_flag(app, "sparsemc-train");

  return run_tool("sparsemc-train", app, argc, argv, [&] {
    args.fit.heldout = !args.heldout_file.empty();
    // --C sets lambda (or mu) once the data's n is known; it is > 0, and so is what auto and the
    // checks below see until then.
    settle_no_penalty(args, shared);
    if (args.C) set_from_C(args, 1);
    const SolverSpec& spec = Registry::resolve(args.solver, args.fit);
    args.tol = args.fit.tol.value_or(spec.default_tol.value_or(std::numeric_limits<double>::quiet_NaN()));
    // The options only some solvers take: name the solvers that do.
    const auto only_for = [&](const char* flag, bool given) {
      if (!given || spec.takes(flag)) return;
      std::string takers;
      for (const auto& s : Registry::solvers())
        if (s.takes(flag)) takers += (takers.empty() ? "" : ", ") + s.name;
      throw UsageError(std::string(flag) + ": applies to --solver " + takers + " only, not " + spec.name);
    };
    only_for("--block-size", args.fit.block_size.has_value());
    only_for("--stages", args.fit.stages.has_value());
    only_for("--features", !args.fit.features.empty());
    only_for("--calibrate", args.fit.calibrate);
    const bool early_stop = spec.heldout_fit<double>(args.fit.loss, args.fit.penalty) != nullptr;
    if (args.patience && (args.heldout_file.empty() || !early_stop)) {
      std::string takers;
      for (const auto& s : Registry::solvers())
        if (s.returns_heldout_best()) takers += (takers.empty() ? "" : ", ") + s.name;
      throw UsageError("--patience: applies to the held-out early stop of --solver " + takers + " with --heldout");
    }
    if (!args.lambda_grid.empty() && args.heldout_file.empty() && args.cv == 0)
      throw UsageError("--lambda-grid: lambda is chosen on held-out data; give --heldout FILE or --cv K");
    if (args.cv > 0 && !args.init_file.empty())
      throw UsageError("--cv: the folds are fitted from W = 0; drop --init");
    if (!args.heldout_file.empty() && spec.writes_staged(args.fit))
      throw UsageError("--heldout: --solver " + spec.name + " writes a staged model, which is fitted once; use --cv K");
    if (spec.writes_staged(args.fit)) {
      // A staged model has its own file format and no λ.
      if (!args.path.empty()) throw UsageError("--path: --solver " + spec.name + " has no lambda to vary");
      if (args.model_format != "native")
        throw UsageError("--model-format " + args.model_format + ": --solver " + spec.name +
                         " writes a staged model (the chain of stages and its feature generator), which has one "
                         "format only; drop --model-format");
      if (args.bias >= 0)
        throw UsageError("--bias: --solver " + spec.name + " writes a staged model, which records no bias feature; "
                         "use --intercept");
    }
    if (!args.init_file.empty()) {
      if (!args.path.empty()) throw UsageError("--init: a --path starts at lambda_max from W = 0; drop --init");
      if (!args.heldout_file.empty()) throw UsageError("--init: cannot be combined with --heldout");
      if (spec.writes_staged(args.fit))
        throw UsageError("--init: --solver " + spec.name + " writes a staged model, which has no warm start");
    }
    const std::optional<PathSpec> path = parse_path(args.path);
    if (path && args.fit.penalty == sparsemc::NoPenalty::name)
      throw UsageError("--path: --penalty none has no lambda to vary; choose --penalty " +
                       join(names_of(AllPenalties{})));
    if (!args.lambda_grid.empty() && args.fit.penalty == sparsemc::NoPenalty::name)
      throw UsageError("--lambda-grid: --penalty none has no lambda to choose; choose --penalty " +
                       join(names_of(AllPenalties{})));
    if (path && args.fit.loss == sparsemc::CrammerSinger::name && args.fit.fit_intercept)
      throw UsageError("--path: with --loss crammer-singer the path starts where W = 0 is optimal without an "
                       "intercept; drop --intercept (or use --bias B)");
    if (args.model_file == "-" && args.json)
      throw UsageError("--json: MODEL '-' writes the model to stdout, where the JSON report would go too; give MODEL "
                       "a file name");
    // MODEL is written atomically at the end; fail now, not after a long solve, when it cannot be.
    try {
      if (args.model_file != "-") sparsemc::io::check_writable(args.model_file);
    } catch (const std::runtime_error& e) {
      throw InputError(e.what());
    }
    use_threads(args.fit.threads);
    if (!args.use_float) return train<double>(args, spec, path);
#if SPARSEMC_REGISTRY_FLOAT
    return train<float>(args, spec, path);
#else
    throw UsageError(no_float_fits);
#endif
  });
}
