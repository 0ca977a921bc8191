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

namespace sparsemc::tools {
namespace {

/// Everything the command line says, after validation by CLI11.
struct TrainArgs {
  FitSettings fit;
  std::string solver = "auto";
  std::string train_file, model_file, test_file, heldout_file, model_format = "native";
  std::string weights_file;     // --weights: one sample weight per line
  int cv = 0;                   // --cv K: K-fold cross-validation (0: none)
  std::string init_file;        // --init: the model a fit starts from
  std::optional<double> C;      // --C: LIBLINEAR's C, mapped to lambda or mu once n is known
  std::optional<int> patience;  // --patience: epochs without improvement on --heldout (default 3)
  double bias = -1.0;
  std::vector<std::string> class_weights;
  std::string path;  // N[:RATIO]
  std::vector<double> lambda_grid;  // --lambda-grid: the λ chosen from on --heldout
  bool zero_based = false, use_float = false, verbose = false, quiet = false, json = false, multilabel = false;
  /// The tolerance in effect: --tol, else the solver's default (NaN for a solver without one).
  double tol = std::numeric_limits<double>::quiet_NaN();
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

/// --C: LIBLINEAR's C weighs the summed loss against the penalty (docs/math.md's peer table), so
/// dividing its objective by nC gives (1) with 1/(nC) on the penalty that is there: lambda, or
/// mu with --penalty none.
void set_from_C(TrainArgs& args, std::int64_t n_samples) {
  const double weight = 1.0 / (static_cast<double>(n_samples) * *args.C);
  (args.fit.penalty == sparsemc::NoPenalty::name ? args.fit.mu : args.fit.lambda) = weight;
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
  args.fit.n_features = data.n_features();
  // auto chose before the data was read; the data (multilabel, its shape) and --C's exact lambda
  // or mu may call for another solver, with its own default tol.
  const SolverSpec& spec = args.solver == "auto" ? Registry::resolve("auto", args.fit) : resolved;
  if (&spec != &resolved)
    args.tol = args.fit.tol.value_or(spec.default_tol.value_or(std::numeric_limits<double>::quiet_NaN()));
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
  if (spec.writes_staged(args.fit)) return train_staged(args, spec, data, test, progress);

  // The solvers see only the features that occur (hashed data: a few of 2^31 possible indices),
  // so their memory follows the used features; expand() gives each model its indices back.
  const FeatureMap features = data.compact_features();
  if (heldout) heldout->apply_feature_map(features);
  if (initial) initial = restrict_features(*initial, features);

  const FitFunction<Scalar> fit = spec.fit<Scalar>(args.fit.loss, args.fit.penalty);
  ToolCallback callback{[&progress](const EpochReport& r) { return progress.epoch(r); }};
  // The fitted model over the file's features again (and its bias feature marked): what is
  // scored on --test and saved.
  const auto expand = [&](Result<Scalar>& r) {
    r.model = expand_features(r.model, features);
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
  const auto split = [&](int f) {
    const auto [train_rows, test_rows] = fold_samples(fold, f);
    return std::pair{data.subset(train_rows), data.subset(test_rows)};
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
  TrainArgs args;
  CLI::App app{
      "sparsemc-train: fit a sparse linear multiclass/multilabel model by minimising\n"
      "  F(W) = (1/n) sum_i c_i loss(W'x_i + b, y_i) + lambda R(W) + (mu/2) ||W||_F^2      (1)\n"
      "on TRAIN (LIBSVM/SVMlight text: 'label idx:val ...' or multilabel 'l1,l2 idx:val ...', plain,\n"
      ".gz or .bz2) and save the model to MODEL.",
      "sparsemc-train"};
  app.get_formatter()->column_width(34);
  app.add_option("TRAIN", args.train_file, wrap("training data file"))->required();
  app.add_option("MODEL", args.model_file,
                 wrap("where the model is written; '-' writes it to stdout (the report then goes to stderr)"))
      ->required();
  app.add_option("--loss", args.fit.loss,
                 wrap("loss l of (1) (default squared-hinge): squared-hinge (Weston-Watkins), ovr-squared-hinge "
                      "(one-vs-rest), crammer-singer (multilabel: separation ranking), logistic (multinomial), "
                      "least-squares"))
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
  app.add_option_function<double>("--eta", [&](double v) { args.fit.eta = v; },
                                  wrap("fbpd-epi only: the bound eta >= 0 of its constraint (1/n) sum_i c_i loss_i <= eta "
                                       "(it minimises lambda R(W) + (mu/2) ||W||_F^2 under it) (default: none)"))
      ->type_name("X")
      ->check(real_at_least(0));
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
  add_threads_option(app, args.fit.threads,
                     "reading the data, the one-vs-rest losses with an l1 or no penalty (bcd), fbpd, fista, gls "
                     "and prediction");
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
          ->excludes(lambda);
  app.add_option("--path", args.path,
                 wrap("solve a regularisation path instead of one lambda: N values from lambda_max (where W = 0 "
                      "becomes optimal; for crammer-singer lambda_start >= lambda_max, where W = 0 is proven "
                      "optimal, reported as lambda_start) down to lambda_max*RATIO, log-spaced, each warm-started from the previous; "
                      "prints one line per lambda; N = 1 solves at lambda_max*RATIO only. MODEL receives the "
                      "last model, or with --heldout or --cv the model of the lambda they choose; --test scores "
                      "that model only (default: off; RATIO default 0.01)"))
      ->type_name("N[:RATIO]")
      ->excludes(lambda)
      ->excludes(lambda_grid)
      ->excludes(C);
  lambda_grid->excludes(C);
  app.add_flag_callback(
      "--list-solvers",
      [] {
        std::cout << solvers_json().dump() << std::endl;
        throw CLI::Success();
      },
      wrap("print the solver table as one JSON object and exit: {\"solvers\": [{name, losses, penalties, "
           "intercept, layout, certifies, stop}]}; certifies: whether its converged is the certificate of (1), "
           "else stop says what it stops on (default: off)"));
  auto* verbose = app.add_flag("--verbose", args.verbose,
                               wrap("print every epoch's progress line and every file read on stderr (default: a "
                                    "line about once a second once a run has lasted a second, and a line per file "
                                    "whose reading took that long)"));
  app.add_flag("--quiet", args.quiet, wrap("print no progress on stderr, errors only (default off)"))->excludes(verbose);
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
    if (args.C && args.fit.penalty == sparsemc::NoPenalty::name && mu->count() > 0)
      throw UsageError("--C: with --penalty none, C sets mu; drop --mu");
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
    return args.use_float ? train<float>(args, spec, path) : train<double>(args, spec, path);
  });
}
