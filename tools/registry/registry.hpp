#pragma once
/// \file registry.hpp
/// The solver registry of `sparsemc-train`: a table from a solver's name (`--solver NAME`) to
/// what it accepts (losses × penalties, intercept, layout) and a type-erased function that runs
/// its fit on a Dataset with the common options.
///
/// The library is all templates (`BlockCD<Loss, Penalty, StepRule>`); the tool gets strings
/// from the command line. The registry is where the two meet: each family describes itself
/// once as a small struct, and `make_spec` instantiates its fit for every pair of the tools'
/// losses × penalties (AllLosses × AllPenalties, policies.hpp) that the solver's concept accepts,
/// in float and double for the index type SPARSEMC_REGISTRY_INDEX, storing plain function
/// pointers. A new loss in AllLosses is registered with every family whose concept it meets.
/// The Python package (python/src/core.cpp) runs the same table.
///
/// Adding a solver family = one file `tools/registry/<family>.hpp` plus one `#include` line in
/// `tools/registry/families.hpp`. The file looks like this (see fista.hpp for a real one):
///
/// \code
///   #include <sparsemc/solver/bcd/block_cd.hpp>
///   #include "registry.hpp"
///   namespace sparsemc::tools {
///   struct BcdLsFamily {
///     template <class Loss, class Penalty>
///     using Solver = BlockCD<Loss, Penalty, TsengYun>;     // built from (Loss, Penalty, Options)
///     // Which of the tools' losses × penalties (policies.hpp) it runs: the solver's own concept.
///     template <class Loss, class Penalty>
///     static constexpr bool accepts = BlockCDAccepts<Loss, Penalty>;
///     static constexpr int layout = Eigen::ColMajor;        // the Problem layout fit() takes
///     static constexpr const char* name = "bcd-ls";
///     static constexpr const char* summary = "block coordinate descent, Tseng-Yun line search";
///     // --solver auto picks the accepting solver with the highest priority (0 = never).
///     static int auto_priority(const FitSettings&) { return 10; }
///     // Optional: a requirement beyond loss × penalty ("" when met) and extra Options setup.
///     // (--intercept is accepted when Options has fit_intercept.)
///     static std::string requirement(const FitSettings& s) { return ""; }
///     template <class Options> static void configure(Options&, const FitSettings&) {}
///     // Only for a solver of another problem than (1) (fbpd-epi): what its stop means; every
///     // solver of (1) stops on the relative duality gap of (1) <= tol, which --tol's help says.
///     static constexpr const char* stop = "...";
///   };
///   template const bool registered<BcdLsFamily, SPARSEMC_REGISTRY_INDEX>;
///   }
/// \endcode
///
/// A family whose fit returns a `StagedModel` (model/staged_model.hpp: calibrated least squares,
/// stagewise regression, or a fit on random Fourier features) also defines
/// `fit_staged<Loss, Penalty, Scalar, Index>(data, settings, callback)` returning a StagedResult and
/// `staged(settings)` saying when that fit is the one to run (always, for a family that sets
/// `static constexpr bool staged_only = true` and has no linear fit); it lists the extra options
/// it takes (`--block-size`, `--stages`, `--features`, `--calibrate`) in `extra_options`.
///
/// A family whose solver also fits a dense design (`DenseProblem` in the family's `layout`: the
/// generalized least squares family, fista, sdm, fbpd and fcbcfw row-major, the coordinate
/// solvers bcd-* and scd* column-major) sets `static constexpr bool takes_dense = true` and,
/// when it has a staged fit, defines `fit_staged_dense<Loss, Penalty, Scalar>(problem, settings,
/// callback)`; its linear fit on dense X is `dense_fit_with`. The Python package hands C- or
/// Fortran-contiguous numpy arrays to these, as the layout asks, without a copy.
///
/// Registration runs during static initialisation, before main(); tools/CMakeLists.txt compiles
/// each family listed in families.hpp as a translation unit of its own. The table is kept sorted
/// by solver name.

#include <Eigen/SparseCore>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <sparsemc/core/callbacks.hpp>
#include <sparsemc/data/dataset.hpp>
#include <sparsemc/data/dense_problem.hpp>
#include <sparsemc/model/early_stopping.hpp>
#include <sparsemc/model/linear_model.hpp>
#include <sparsemc/model/staged_model.hpp>
#include <sparsemc/solver/objective.hpp>

#include "../errors.hpp"
#include "policies.hpp"

namespace sparsemc::tools {

/// The solver-independent settings of a fit, as given on the command line. Unset optionals
/// mean "the solver's own default" (its Options{}).
struct FitSettings {
  std::string loss = "squared-hinge";
  std::string penalty = "l1l2";
  double lambda = 1e-3;                       ///< λ of (1)
  double mu = 0.0;                            ///< μ of (1)
  std::optional<double> tol;                  ///< Options::tol
  std::optional<std::int64_t> max_epochs;     ///< Options::max_epochs
  double time_limit = 0.0;                    ///< Options::time_limit, seconds, 0 = none
  std::optional<std::uint64_t> seed;          ///< Options::seed
  std::optional<double> eta;                  ///< Options::eta of fbpd-epi (--eta): (1/n) Σ c_i ℓ_i ≤ η
  int threads = 0;                            ///< Options::threads where a solver has it (0 = every core)
  bool fit_intercept = false;                 ///< Options::fit_intercept (--intercept)
  bool multilabel = false;                    ///< the training data is multilabel (known once it is read)
  std::int64_t n_samples = 0;                 ///< the training data's samples (known once it is read; 0 before)
  std::int64_t n_features = 0;                ///< and its features
  bool heldout = false;                       ///< --heldout: the fit must return its best held-out epoch
  // The generalized least squares family's own settings (see tools/registry/gls.hpp).
  std::optional<std::int64_t> block_size;     ///< --block-size: features per stage (stagewise)
  std::optional<std::int64_t> stages;         ///< --stages: number of stages (stagewise)
  std::string features;                       ///< --features: the feature generator ("" = solver's default)
  bool calibrate = false;                     ///< --calibrate: calibrated stages (stagewise)
};

/// The per-epoch callback the tools pass to every fit. What it does (progress lines on stderr,
/// at every epoch or about once a second) is the tool's `on_epoch`, so that a change of that
/// policy recompiles the tool and not the solver instantiations of the registry.
struct ToolCallback {
  std::function<bool(const EpochReport&)> on_epoch;  ///< returns true to stop the solve
  bool end_epoch(const EpochReport& report) { return on_epoch && on_epoch(report); }
};

/// A type-erased fit: (data, settings, optional warm start, callback) → Result.
template <class Scalar, class Index = std::int32_t>
using FitFunction = Result<Scalar> (*)(const Dataset<Scalar, Index>&, const FitSettings&, const LinearModel<Scalar>*,
                                       ToolCallback&);

/// A type-erased fit with PD-Sparse's held-out early stop (-h/-e): after every epoch the model
/// is scored on `heldout` (read with the training features and labels), the solve stops once
/// the score has not improved for `patience` epochs, and the best epoch's model is returned.
/// Registered only by families whose solver returns that model (`returns_heldout_best`).
template <class Scalar, class Index = std::int32_t>
using HeldoutFitFunction = Result<Scalar> (*)(const Dataset<Scalar, Index>&, const FitSettings&,
                                              const Dataset<Scalar, Index>& heldout, int patience, ToolCallback&);

/// A type-erased regularisation path for solvers that solve a whole λ grid in one call
/// (`fit_path`, BlockCD's strong rules): (data, settings, λ grid, callback) → one Result per λ.
template <class Scalar, class Index = std::int32_t>
using PathFunction = std::vector<Result<Scalar>> (*)(const Dataset<Scalar, Index>&, const FitSettings&,
                                                     std::span<const double>, ToolCallback&);

/// A type-erased fit whose model is a `StagedModel` (a chain of stages or random features).
template <class Scalar, class Index = std::int32_t>
using StagedFitFunction = StagedResult<Scalar> (*)(const Dataset<Scalar, Index>&, const FitSettings&, ToolCallback&);

/// A type-erased fit on a dense design (n × d in the layout `Order`, the caller's memory; classes
/// are the indices 0..K−1), for the families that take one (`takes_dense`).
template <class Scalar, int Order = Eigen::RowMajor>
using DenseFitFunction = Result<Scalar> (*)(const DenseProblem<Scalar, Order>&, const FitSettings&,
                                            const LinearModel<Scalar>*, ToolCallback&);

/// The same for a fit whose model is a `StagedModel`.
template <class Scalar>
using DenseStagedFitFunction = StagedResult<Scalar> (*)(const DenseProblem<Scalar>&, const FitSettings&, ToolCallback&);

/// The index type of X that the fits of this translation unit are instantiated for. The tools
/// read files into 32-bit indices; the Python module (python/) compiles every family a second
/// time with SPARSEMC_REGISTRY_INDEX defined as std::int64_t, so that scipy matrices with 64-bit
/// indices reach the solvers without a copy too (the two registrations of a family merge).
#ifndef SPARSEMC_REGISTRY_INDEX
#define SPARSEMC_REGISTRY_INDEX std::int32_t
#endif

/// Whether the fits are instantiated in single precision too (CMake's SPARSEMC_TOOLS_FLOAT, on
/// by default): half of every family's instantiations. scripts/run.sh builds the tools without
/// them, and their --float then says how to get it.
#ifndef SPARSEMC_REGISTRY_FLOAT
#define SPARSEMC_REGISTRY_FLOAT 1
#endif
inline constexpr bool registry_has_float = SPARSEMC_REGISTRY_FLOAT != 0;

/// --float's refusal in a build without the single-precision fits.
inline constexpr const char* no_float_fits =
    "--float: these tools were built without single-precision fits (-DSPARSEMC_TOOLS_FLOAT=OFF, as "
    "scripts/run.sh builds them); configure with -DSPARSEMC_TOOLS_FLOAT=ON (the default) to use it";

/// A solver's type-erased functions for one (Scalar, Index), keyed by (loss, penalty).
template <class Scalar, class Index>
struct FitTables {
  using Key = std::pair<std::string, std::string>;
  std::map<Key, FitFunction<Scalar, Index>> fit;
  /// Families whose solver returns the held-out best model: the early-stopped fit.
  std::map<Key, HeldoutFitFunction<Scalar, Index>> heldout;
  /// Families whose solver has `fit_path`: the whole-grid path.
  std::map<Key, PathFunction<Scalar, Index>> path;
  /// Families with a staged fit.
  std::map<Key, StagedFitFunction<Scalar, Index>> staged;
  /// Families that take a dense design (`takes_dense`): their fits on it, linear and staged,
  /// row-major, and the column-major fits of the coordinate solvers (filled in the 32-bit-index
  /// tables only: a dense design has no index type).
  std::map<Key, DenseFitFunction<Scalar>> dense;
  std::map<Key, DenseStagedFitFunction<Scalar>> dense_staged;
  std::map<Key, DenseFitFunction<Scalar, Eigen::ColMajor>> dense_columns;
};

/// One registered solver.
struct SolverSpec {
  std::string name;                    ///< --solver NAME
  std::string summary;                 ///< one line for --help
  std::string layout;                  ///< "CSC" or "CSR": the layout its fit converts the data to
  std::vector<std::string> losses;     ///< accepted --loss values
  std::vector<std::string> penalties;  ///< accepted --penalty values
  bool intercept = false;              ///< accepts --intercept
  bool seeded = false;                 ///< uses --seed
  std::optional<double> default_tol;   ///< its Options{}.tol (1e-3 for every solver of (1))
  /// What its stop means when it is not the certificate of (1) (a solver of another problem:
  /// `Family::stop`, or a staged-only family's own criterion); "" for every solver of (1),
  /// whose `converged` means relative duality gap of (1) <= tol.
  std::string stop;
  std::optional<std::int64_t> default_max_epochs;  ///< its Options{}.max_epochs
  int (*auto_priority)(const FitSettings&) = nullptr;       ///< > 0: a candidate for auto
  std::string (*requirement)(const FitSettings&) = nullptr;  ///< "" when the settings suit it
  /// Families with a staged fit: the settings under which it runs instead of the linear fit.
  bool (*staged)(const FitSettings&) = nullptr;
  /// The options beyond the common ones that it takes ("--block-size", "--features", …).
  std::vector<std::string> extra_options;

  [[nodiscard]] bool accepts(const std::string& loss, const std::string& penalty) const {
    const auto& t = tables<double, std::int32_t>();
    return t.fit.count({loss, penalty}) != 0 || t.staged.count({loss, penalty}) != 0;
  }
  /// True when a fit with these settings returns a StagedModel (use staged_fit, not fit).
  [[nodiscard]] bool writes_staged(const FitSettings& s) const { return staged != nullptr && staged(s); }
  /// True when the family returns the held-out best model (it registered `heldout_fit`).
  [[nodiscard]] bool returns_heldout_best() const { return !tables<double, std::int32_t>().heldout.empty(); }
  /// True when it takes the extra option `flag` ("--stages").
  [[nodiscard]] bool takes(std::string_view flag) const {
    return std::find(extra_options.begin(), extra_options.end(), flag) != extra_options.end();
  }
  /// The staged fit for a (loss, penalty) pair; null when not accepted.
  template <class Scalar, class Index = std::int32_t>
  [[nodiscard]] StagedFitFunction<Scalar, Index> staged_fit(const std::string& loss, const std::string& penalty) const {
    return look_up(tables<Scalar, Index>().staged, loss, penalty);
  }
  /// The fit for a (loss, penalty) pair; null when not accepted.
  template <class Scalar, class Index = std::int32_t>
  [[nodiscard]] FitFunction<Scalar, Index> fit(const std::string& loss, const std::string& penalty) const {
    return look_up(tables<Scalar, Index>().fit, loss, penalty);
  }
  /// The held-out early-stopped fit for a (loss, penalty) pair; null when not offered.
  template <class Scalar, class Index = std::int32_t>
  [[nodiscard]] HeldoutFitFunction<Scalar, Index> heldout_fit(const std::string& loss,
                                                              const std::string& penalty) const {
    return look_up(tables<Scalar, Index>().heldout, loss, penalty);
  }
  /// The fits on a dense design for a (loss, penalty) pair; null when the family takes none.
  template <class Scalar>
  [[nodiscard]] DenseFitFunction<Scalar> dense_fit(const std::string& loss, const std::string& penalty) const {
    return look_up(tables<Scalar, std::int32_t>().dense, loss, penalty);
  }
  /// The fit on a column-major dense design (the coordinate solvers); null when none.
  template <class Scalar>
  [[nodiscard]] DenseFitFunction<Scalar, Eigen::ColMajor> dense_column_fit(const std::string& loss,
                                                                           const std::string& penalty) const {
    return look_up(tables<Scalar, std::int32_t>().dense_columns, loss, penalty);
  }
  template <class Scalar>
  [[nodiscard]] DenseStagedFitFunction<Scalar> dense_staged_fit(const std::string& loss,
                                                                const std::string& penalty) const {
    return look_up(tables<Scalar, std::int32_t>().dense_staged, loss, penalty);
  }
  /// The whole-grid path for a (loss, penalty) pair; null when the family solves paths by a
  /// sequence of warm-started fits.
  template <class Scalar, class Index = std::int32_t>
  [[nodiscard]] PathFunction<Scalar, Index> path(const std::string& loss, const std::string& penalty) const {
    return look_up(tables<Scalar, Index>().path, loss, penalty);
  }
  /// The function tables for (Scalar, Index); those of an index type the registry was not
  /// built for (SPARSEMC_REGISTRY_INDEX) are empty.
  template <class Scalar, class Index>
  [[nodiscard]] FitTables<Scalar, Index>& tables() {
    return std::get<FitTables<Scalar, Index>>(tables_);
  }
  template <class Scalar, class Index>
  [[nodiscard]] const FitTables<Scalar, Index>& tables() const {
    return std::get<FitTables<Scalar, Index>>(tables_);
  }
  /// Takes over the function tables `other` filled (the same family registered for another index
  /// type from another translation unit).
  void merge_tables(SolverSpec&& other) {
    auto take = [](auto& into, auto& from) {
      into.fit.merge(from.fit);
      into.heldout.merge(from.heldout);
      into.path.merge(from.path);
      into.staged.merge(from.staged);
      into.dense.merge(from.dense);
      into.dense_staged.merge(from.dense_staged);
      into.dense_columns.merge(from.dense_columns);
    };
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (take(std::get<I>(tables_), std::get<I>(other.tables_)), ...);
    }(std::make_index_sequence<std::tuple_size_v<decltype(tables_)>>{});
  }
  /// "losses squared-hinge|logistic × penalties l1l2|l1" for messages and --help.
  [[nodiscard]] std::string accepted() const {
    return "--loss " + join(losses) + " with --penalty " + join(penalties);
  }

 private:
  /// table[(loss, penalty)], or null.
  template <class Function>
  static Function look_up(const std::map<std::pair<std::string, std::string>, Function>& table, const std::string& loss,
                          const std::string& penalty) {
    const auto it = table.find({loss, penalty});
    return it == table.end() ? nullptr : it->second;
  }

  std::tuple<FitTables<float, std::int32_t>, FitTables<double, std::int32_t>, FitTables<float, std::int64_t>,
             FitTables<double, std::int64_t>>
      tables_;
};

/// The table of registered solvers (a process-wide list filled during static initialisation).
class Registry {
 public:
  /// Adds a solver, keeping the table sorted by name (families register from separate translation
  /// units, in no fixed order); a solver already there (registered for another index type) takes
  /// over the new function tables. Returns true so that a family file can register with a variable.
  static bool add(SolverSpec spec) {
    auto& solvers = list();
    const auto at = std::lower_bound(solvers.begin(), solvers.end(), spec.name,
                                     [](const SolverSpec& s, const std::string& name) { return s.name < name; });
    if (at != solvers.end() && at->name == spec.name)
      at->merge_tables(std::move(spec));
    else
      solvers.insert(at, std::move(spec));
    return true;
  }
  [[nodiscard]] static const std::vector<SolverSpec>& solvers() { return list(); }
  /// The solver called `name`, or null.
  [[nodiscard]] static const SolverSpec* find(std::string_view name) {
    for (const auto& s : list())
      if (s.name == name) return &s;
    return nullptr;
  }

  /// Resolves `--solver NAME` (or `auto`) for the settings, or throws UsageError saying what
  /// the named solver accepts / which solvers exist.
  [[nodiscard]] static const SolverSpec& resolve(const std::string& name, const FitSettings& s) {
    if (name == "auto") {
      const SolverSpec* best = nullptr;
      int best_priority = 0;
      for (const auto& spec : list()) {
        if (!spec.accepts(s.loss, s.penalty) || (spec.requirement && !spec.requirement(s).empty())) continue;
        if (s.fit_intercept && !spec.intercept) continue;
        const int p = spec.auto_priority ? spec.auto_priority(s) : 0;
        if (p > best_priority) best = &spec, best_priority = p;
      }
      if (best == nullptr) {
        std::ostringstream os;
        os << "--solver auto: no registered solver accepts --loss " << s.loss << " with --penalty " << s.penalty
           << (s.fit_intercept ? " and --intercept" : "") << (s.mu > 0 ? "" : " at --mu 0") << "; registered: ";
        for (const auto& spec : list()) os << "\n  " << spec.name << ": " << spec.accepted() << describe_extra(spec);
        throw UsageError(os.str());
      }
      return *best;
    }
    const SolverSpec* spec = find(name);
    if (spec == nullptr) throw UsageError("--solver: expects one of " + names() + ", got '" + name + "'");
    if (!spec->accepts(s.loss, s.penalty))
      throw UsageError("--solver " + name + " does not accept --loss " + s.loss + " with --penalty " + s.penalty +
                       "; it accepts " + spec->accepted());
    if (s.fit_intercept && !spec->intercept)
      throw UsageError("--solver " + name + " does not support --intercept; use --bias B (a constant feature)");
    if (spec->requirement) {
      const std::string why = spec->requirement(s);
      if (!why.empty()) throw UsageError("--solver " + name + " " + why);
    }
    return *spec;
  }

  /// "auto|fista|bcd-ls|…" for --help and messages.
  [[nodiscard]] static std::string names() {
    std::string s = "auto";
    for (const auto& spec : list()) s += "|" + spec.name;
    return s;
  }

  /// A --help paragraph: one block per solver with what it accepts and its --max-epochs; what
  /// --tol means is the same for every solver of (1) (--tol's help), so only the solvers of
  /// other problems say what their stop means.
  [[nodiscard]] static std::string help() {
    std::ostringstream os;
    os << "Solvers (--solver NAME; auto picks the best registered one for the loss and penalty):\n";
    for (const auto& spec : list()) {
      os << "  " << spec.name << ": " << spec.summary << "\n      " << spec.accepted() << describe_extra(spec)
         << "\n      data layout " << spec.layout << "; default --max-epochs "
         << (spec.default_max_epochs ? std::to_string(*spec.default_max_epochs) : std::string("-")) << '\n';
      if (!spec.stop.empty()) os << "      stops: " << spec.stop << '\n';
    }
    return os.str();
  }

 private:
  static std::vector<SolverSpec>& list() {
    static std::vector<SolverSpec> solvers;
    return solvers;
  }
  static std::string describe_extra(const SolverSpec& spec) {
    std::string s = spec.intercept ? "; --intercept supported" : "";
    if (spec.requirement) {
      FitSettings probe;  // a requirement that fails at defaults is worth printing
      probe.loss = spec.losses.front();
      probe.penalty = spec.penalties.front();
      const std::string why = spec.requirement(probe);
      if (!why.empty()) s += "; " + why;
    }
    return s;
  }
};

namespace detail {

/// Copies the common settings into a solver's Options where the Options has the field.
template <class Options>
void apply_common(Options& o, const FitSettings& s) {
  if constexpr (requires { o.tol; })
    if (s.tol) o.tol = static_cast<std::remove_cvref_t<decltype(o.tol)>>(*s.tol);
  if constexpr (requires { o.max_epochs; })
    if (s.max_epochs) o.max_epochs = static_cast<std::remove_cvref_t<decltype(o.max_epochs)>>(*s.max_epochs);
  if constexpr (requires { o.time_limit; }) o.time_limit = s.time_limit;
  if constexpr (requires { o.seed; })
    if (s.seed) o.seed = static_cast<std::remove_cvref_t<decltype(o.seed)>>(*s.seed);
  if constexpr (requires { o.threads; }) o.threads = s.threads;
  if constexpr (requires { o.fit_intercept; }) o.fit_intercept = s.fit_intercept;
}

/// The penalty of the settings: their λ and μ.
template <class Penalty>
Penalty penalty_from(const FitSettings& s) {
  Penalty penalty{};
  penalty.lambda = s.lambda;
  penalty.mu = s.mu;
  return penalty;
}

/// The fit every family uses: build the solver from (loss, penalty, options), take the problem in
/// the family's layout, fit (warm-started when `initial` is given), stamp the registered name.
template <class Family, class Loss, class Penalty>
typename Family::template Solver<Loss, Penalty> make_solver(const FitSettings& s) {
  using Solver = typename Family::template Solver<Loss, Penalty>;
  typename Solver::Options options{};
  apply_common(options, s);
  if constexpr (requires { Family::configure(options, s); }) Family::configure(options, s);
  options.validate();
  return Solver(Loss{}, penalty_from<Penalty>(s), options);
}

/// The data's labels on the model, in place (solvers return class indices) and the registered name.
template <class Family, class Scalar, class Index>
void finish_result(Result<Scalar>& result, const Dataset<Scalar, Index>& data) {
  if (result.model.labels() != data.encoder().labels()) result.model.set_labels(data.encoder().labels());
  result.model.provenance().solver = Family::name;
}

template <class Family, class Loss, class Penalty, class Scalar, class Index>
Result<Scalar> fit_with(const Dataset<Scalar, Index>& data, const FitSettings& s, const LinearModel<Scalar>* initial,
                        ToolCallback& callback) {
  const auto solver = make_solver<Family, Loss, Penalty>(s);
  const auto problem = data.template problem<Family::layout>();
  Result<Scalar> result = initial != nullptr ? solver.fit(problem, *initial, callback) : solver.fit(problem, callback);
  finish_result<Family>(result, data);
  return result;
}

/// The fit on a dense design of a family that takes one: the solver built as in fit_with (warm
/// started from `initial` if not null), its model labelled with the class indices.
template <class Family, class Loss, class Penalty, class Scalar>
Result<Scalar> dense_fit_with(const DenseProblem<Scalar, Family::layout>& problem, const FitSettings& s,
                              const LinearModel<Scalar>* initial, ToolCallback& callback) {
  const auto solver = make_solver<Family, Loss, Penalty>(s);
  Result<Scalar> result = initial != nullptr ? solver.fit(problem, *initial, callback) : solver.fit(problem, callback);
  result.model.provenance().solver = Family::name;
  return result;
}

template <class Family, class Loss, class Penalty, class Scalar, class Index>
Result<Scalar> fit_heldout(const Dataset<Scalar, Index>& data, const FitSettings& s, const Dataset<Scalar, Index>& heldout,
                           int patience, ToolCallback& callback) {
  const auto solver = make_solver<Family, Loss, Penalty>(s);
  HeldoutEarlyStop<Scalar, Index> early(heldout.csr(), heldout.labels().view(), patience);
  Result<Scalar> result = solver.fit(data.template problem<Family::layout>(), callback, early);
  finish_result<Family>(result, data);
  return result;
}

/// The path every family with `fit_path` uses: the solver built as in fit_with (λ = the grid's
/// first), the grid solved in one call, each result relabelled and stamped.
template <class Family, class Loss, class Penalty, class Scalar, class Index>
std::vector<Result<Scalar>> path_with(const Dataset<Scalar, Index>& data, const FitSettings& s,
                                      std::span<const double> lambdas, ToolCallback& callback) {
  FitSettings first = s;
  first.lambda = lambdas.empty() ? s.lambda : lambdas.front();
  const auto solver = make_solver<Family, Loss, Penalty>(first);
  std::vector<Result<Scalar>> results = solver.fit_path(data.template problem<Family::layout>(), lambdas, callback);
  for (Result<Scalar>& result : results) finish_result<Family>(result, data);
  return results;
}

template <class Family, class Loss, class Penalty>
using OptionsOf = typename Family::template Solver<Loss, Penalty>::Options;

/// Calls `f.template operator()<Loss, Penalty>()` for every pair of the tools' losses ×
/// penalties that the family accepts, in the order of AllLosses × AllPenalties.
template <class Family, class F>
[[gnu::cold]] void for_each_accepted(F&& f) {
  [&]<class... Losses>(TypeList<Losses...>) __attribute__((cold)) {
    auto one_loss = [&]<class Loss>() __attribute__((cold)) {
      [&]<class... Penalties>(TypeList<Penalties...>) __attribute__((cold)) {
        auto one_pair = [&]<class Penalty>() __attribute__((cold)) {
          if constexpr (Family::template accepts<Loss, Penalty>) f.template operator()<Loss, Penalty>();
        };
        (one_pair.template operator()<Penalties>(), ...);
      }(AllPenalties{});
    };
    (one_loss.template operator()<Losses>(), ...);
  }(AllLosses{});
}

/// Fills the (Scalar, Index) tables of `spec` for every (Loss, Penalty) the family accepts.
template <class Family, class Scalar, class Index>
[[gnu::cold]] void fill_tables(SolverSpec& spec) {
  constexpr bool staged_only = requires { requires Family::staged_only; };
  auto& tables = spec.tables<Scalar, Index>();
  for_each_accepted<Family>([&]<class Loss, class Penalty>() __attribute__((cold)) {
    const std::pair<std::string, std::string> key{std::string(Loss::name), std::string(Penalty::name)};
    if constexpr (requires { &Family::staged; })
      tables.staged[key] = &Family::template fit_staged<Loss, Penalty, Scalar, Index>;
    if constexpr (requires { requires Family::takes_dense; } && std::is_same_v<Index, std::int32_t>) {
      if constexpr (requires { &Family::staged; })
        tables.dense_staged[key] = &Family::template fit_staged_dense<Loss, Penalty, Scalar>;
      if constexpr (!staged_only) {
        if constexpr (Family::layout == Eigen::ColMajor) tables.dense_columns[key] = &dense_fit_with<Family, Loss, Penalty, Scalar>;
        else tables.dense[key] = &dense_fit_with<Family, Loss, Penalty, Scalar>;
      }
    }
    if constexpr (!staged_only) {
      tables.fit[key] = &fit_with<Family, Loss, Penalty, Scalar, Index>;
      if constexpr (requires { requires Family::returns_heldout_best; })
        tables.heldout[key] = &fit_heldout<Family, Loss, Penalty, Scalar, Index>;
      using Solver = typename Family::template Solver<Loss, Penalty>;
      if constexpr (requires(const Solver& solver, const CscProblem<Scalar, Index>& csc, std::span<const double> grid,
                             ToolCallback& cb) { solver.fit_path(csc, grid, cb); })
        tables.path[key] = &path_with<Family, Loss, Penalty, Scalar, Index>;
    }
  });
}

/// The names of the losses and of the penalties in the pairs the family accepts, each once, in
/// the tools' order; and the defaults of its Options (the same type for every pair).
template <class Family>
[[gnu::cold]] void describe_accepted(SolverSpec& spec) {
  auto add = [](std::vector<std::string>& names, std::string_view name) __attribute__((cold)) {
    if (std::find(names.begin(), names.end(), name) == names.end()) names.emplace_back(name);
  };
  for_each_accepted<Family>([&]<class Loss, class Penalty>() __attribute__((cold)) {
    add(spec.losses, Loss::name);
    add(spec.penalties, Penalty::name);
    using Options = OptionsOf<Family, Loss, Penalty>;
    const Options defaults{};
    spec.intercept = requires { defaults.fit_intercept; };
    spec.seeded = requires { defaults.seed; };
    if constexpr (requires { defaults.tol; }) spec.default_tol = static_cast<double>(defaults.tol);
    if constexpr (requires { Family::default_max_epochs; })
      spec.default_max_epochs = Family::default_max_epochs;  // when --max-epochs means something else
    else if constexpr (requires { defaults.max_epochs; })
      spec.default_max_epochs = static_cast<std::int64_t>(defaults.max_epochs);
  });
}

}  // namespace detail

/// Where a path starts: λ_max of (1) for the settings' smooth loss and penalty on the data (the
/// smallest λ at which W = 0 is optimal; with --intercept, at the best intercept-only model), and
/// for Crammer–Singer (no intercept) the bound λ_start ≥ λ_max at which W = 0 is proven optimal.
template <class Scalar, class Index>
double compute_lambda_max(const Dataset<Scalar, Index>& data, const FitSettings& s) {
  double out = 0.0;
  dispatch(AllLosses{}, AllPenalties{}, s.loss, s.penalty, [&]<class Loss, class Penalty>() {
    Penalty penalty{};
    penalty.lambda = 0.0;
    penalty.mu = s.mu;
    if constexpr (SmoothLoss<Loss, Scalar>)
      out = lambda_max(Loss{}, penalty, data.template problem<Eigen::RowMajor>(), s.fit_intercept);
    else if constexpr (SeparationRankingLoss<Loss>)
      out = crammer_singer_lambda_start(penalty, data.template problem<Eigen::RowMajor>());
  });
  return out;
}

/// Describes a family (see the file comment) as a SolverSpec with its fit tables for `Index`
/// filled, in double and (registry_has_float) float. Registration runs once, at start-up: it and
/// the helpers above are cold (lambdas through GCC's `__attribute__`, which unlike `[[gnu::cold]]`
/// applies to their call operator), so the linker gathers them from every family's translation
/// unit into .text.unlikely instead of leaving a page or two of start-up code in each family's
/// code; `sparsemc-train --help` then faults in 0.45 MB less of the executable (docs/sdm.md).
template <class Family, class Index>
[[gnu::cold]] SolverSpec make_spec() {
  SolverSpec spec;
  spec.name = Family::name;
  spec.summary = Family::summary;
  spec.layout = Family::layout == Eigen::ColMajor ? "CSC" : "CSR";
  detail::describe_accepted<Family>(spec);
  spec.auto_priority = &Family::auto_priority;
  if constexpr (requires { &Family::requirement; }) spec.requirement = &Family::requirement;
  if constexpr (requires { Family::extra_options; })
    for (const char* flag : Family::extra_options) spec.extra_options.emplace_back(flag);
  constexpr bool staged_only = requires { requires Family::staged_only; };
  if constexpr (requires { Family::stop; })
    spec.stop = Family::stop;
  else if constexpr (staged_only)
    spec.stop = "its own criterion (--tol's help); a staged model is not certified for (1)";
  if constexpr (requires { &Family::staged; }) spec.staged = &Family::staged;
  if constexpr (registry_has_float) detail::fill_tables<Family, float, Index>(spec);
  detail::fill_tables<Family, double, Index>(spec);
  return spec;
}

/// Registers a family's fits for `Index` once per program: a family file instantiates it for
/// its translation unit's index type,
///   template const bool registered<BcdLsFamily, SPARSEMC_REGISTRY_INDEX>;
/// and registration runs during static initialisation, before main().
template <class Family, class Index>
inline const bool registered = Registry::add(make_spec<Family, Index>());

}  // namespace sparsemc::tools
