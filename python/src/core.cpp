/// \file core.cpp
/// `sparsemc._core`, the compiled part of the Python package: the solver registry of the
/// command-line tools (every solver × loss × penalty, float and double, 32- and 64-bit
/// indices; tools/registry/registry.hpp) run over the caller's scipy/numpy buffers.
///
/// X arrives as its three compressed arrays and is wrapped, not copied (`Dataset::borrowing`);
/// the other layout is built once if the chosen solver needs it. A dense X reaches the families
/// that fit a dense design as a `DenseProblem` over the caller's array: C-contiguous for those
/// that read it by samples, Fortran-contiguous for the coordinate solvers. The GIL is released during a
/// fit; the per-epoch hook takes it back to forward progress lines and to check for Ctrl-C,
/// which stops the solve and is raised as KeyboardInterrupt. Linear models cross as their stored
/// rows (support, row_start, classes, weights): the CSC arrays of coef_ (K × d). A staged model
/// (gls-cal, stagewise, gls on random features: model/staged_model.hpp) is not linear in x; it
/// stays in C++ as a `StagedModel` object that predicts and pickles as its staged-model text.
///
/// The Python side (sparsemc/_estimators.py) validates, converts to canonical CSR/CSC and
/// calls the functions defined at the end of this file.

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <sparsemc/data/dense_problem.hpp>
#include <sparsemc/io/any_model.hpp>
#include <sparsemc/io/liblinear_model.hpp>
#include <sparsemc/io/model_io.hpp>
#include <sparsemc/io/staged_model_io.hpp>
#include <sparsemc/solver/duality_gap.hpp>
#include <sparsemc/solver/objective.hpp>
#include <sparsemc/version.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <numeric>
#include <optional>
#include <type_traits>
#include <span>
#include <string>
#include <variant>
#include <vector>

#ifdef SPARSEMC_USE_OPENMP
#include <omp.h>
#endif

#include "data.hpp"
#include "registry/registry.hpp"

namespace py = pybind11;
using namespace sparsemc;
using tools::FitSettings;
using tools::Registry;
using tools::SolverSpec;
using tools::ToolCallback;

namespace {

/// X as the Python side hands it over: layout, shape and the compressed arrays (1-D, contiguous,
/// values float32/float64, indices int32/int64 of one type).
struct SparseInput {
  std::string layout;  ///< "csr" or "csc"
  std::int64_t rows = 0, cols = 0;
  py::array indptr, indices, data;
};

/// The class sets: sample i's classes are classes[offsets[i] .. offsets[i+1]).
struct ClassSets {
  py::array_t<std::int64_t, py::array::c_style> offsets;
  py::array_t<ClassIndex, py::array::c_style> classes;
  ClassIndex n_classes = 0;
};

/// Runs `f.template operator()<Scalar>()` for the value type of `values` (float32 or float64).
template <class F>
py::object with_scalar(const py::array& values, const char* what, F&& f) {
  if (values.dtype().is(py::dtype::of<float>())) return f.template operator()<float>();
  if (values.dtype().is(py::dtype::of<double>())) return f.template operator()<double>();
  throw py::type_error(std::string(what) + ": values must be float32 or float64");
}

/// Runs `f.template operator()<Scalar, Index>()` for X's value and index types.
template <class F>
py::object with_types(const SparseInput& X, F&& f) {
  const bool wide = X.indices.dtype().is(py::dtype::of<std::int64_t>());
  if (!wide && !X.indices.dtype().is(py::dtype::of<std::int32_t>()))
    throw py::type_error("X: indices must be int32 or int64");
  if (!X.indptr.dtype().is(X.indices.dtype())) throw py::type_error("X: indptr and indices must have one dtype");
  return with_scalar(X.data, "X", [&]<class Scalar>() {
    return wide ? f.template operator()<Scalar, std::int64_t>() : f.template operator()<Scalar, std::int32_t>();
  });
}

/// A C-contiguous (row-major) or Fortran-contiguous (column-major) n × d array as a view (no copy).
template <class Scalar, int Order = Eigen::RowMajor>
DenseView<Scalar, Order> dense_view(const py::array& X) {
  constexpr bool rows = Order == Eigen::RowMajor;
  if (X.ndim() != 2 || !(X.flags() & (rows ? py::array::c_style : py::array::f_style)))
    throw py::value_error(rows ? "X: not a C-contiguous 2-D array" : "X: not a Fortran-contiguous 2-D array");
  return {static_cast<const Scalar*>(X.data()), X.shape(0), X.shape(1)};
}

template <class T>
const T* pointer(const py::array& a, const char* what) {
  if (a.ndim() != 1 || !(a.flags() & py::array::c_style)) throw py::value_error(std::string(what) + ": not a contiguous 1-D array");
  return static_cast<const T*>(a.data());
}

/// The class sets of n samples.
LabelSets label_sets(const ClassSets& y, std::int64_t n) {
  LabelSets sets(y.n_classes);
  const auto offsets = y.offsets.unchecked<1>();
  const std::span<const ClassIndex> classes(y.classes.data(), static_cast<std::size_t>(y.classes.size()));
  if (offsets.shape(0) != n + 1) throw py::value_error("y: one class set per sample of X is needed");
  for (std::int64_t i = 0; i < n; ++i)
    sets.push_back(classes.subspan(static_cast<std::size_t>(offsets(i)), static_cast<std::size_t>(offsets(i + 1) - offsets(i))));
  return sets;
}

/// The data set over the caller's arrays (no copy of X) with class indices 0..K−1 as labels.
template <class Scalar, class Index>
Dataset<Scalar, Index> borrow(const SparseInput& X, const ClassSets& y, const std::optional<py::array>& weights) {
  const auto n = static_cast<Index>(X.rows), d = static_cast<Index>(X.cols);
  const auto* indptr = pointer<Index>(X.indptr, "X.indptr");
  const auto* indices = pointer<Index>(X.indices, "X.indices");
  const auto* values = pointer<Scalar>(X.data, "X.data");
  LabelSets sets = label_sets(y, X.rows);
  std::vector<Label> labels(static_cast<std::size_t>(y.n_classes));
  std::iota(labels.begin(), labels.end(), Label{0});
  LabelEncoder encoder(std::move(labels));
  Dataset<Scalar, Index> data =
      X.layout == "csr"
          ? Dataset<Scalar, Index>::borrowing(CsrView<Scalar, Index>(n, d, indptr, indices, values), std::move(sets), encoder)
          : Dataset<Scalar, Index>::borrowing(CscView<Scalar, Index>(n, d, indptr, indices, values), std::move(sets), encoder);
  if (weights) {
    const auto* w = pointer<Scalar>(*weights, "sample_weight");
    data.set_sample_weights(std::vector<Scalar>(w, w + weights->size()));
  }
  return data;
}

/// The fit's threads (n_jobs: `FitSettings::threads`, 0 = every core) for every OpenMP region it
/// runs — the solvers' own loops and Eigen's products — as sparsemc-train's --threads sets them;
/// the caller's count comes back when the fit returns. (A solver's `threads` option alone would
/// leave GLS's and FISTA's products on every core.)
class FitThreads {
 public:
  explicit FitThreads(int threads) {
#ifdef SPARSEMC_USE_OPENMP
    if (threads > 0) {
      callers_ = omp_get_max_threads();
      omp_set_num_threads(threads);
    }
#else
    (void)threads;
#endif
  }
  ~FitThreads() {
#ifdef SPARSEMC_USE_OPENMP
    if (callers_ > 0) omp_set_num_threads(callers_);
#endif
  }
  FitThreads(const FitThreads&) = delete;
  FitThreads& operator=(const FitThreads&) = delete;

 private:
  int callers_ = 0;  ///< the caller's team, restored; 0: left alone
};

/// The epoch hook of a fit from Python: Ctrl-C stops the solve (the pending KeyboardInterrupt is
/// raised when the fit returns); progress lines go to `progress` (a callable taking one str),
/// every epoch when `every_epoch`, else about once a second.
struct PythonHook {
  py::object progress;  ///< None: silent
  bool every_epoch = false;
  bool interrupted = false;
  std::chrono::steady_clock::time_point last_line = std::chrono::steady_clock::now();

  bool operator()(const EpochReport& r) {
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) {
      interrupted = true;
      return true;
    }
    if (progress.is_none()) return false;
    const auto now = std::chrono::steady_clock::now();
    if (!every_epoch && now - last_line < std::chrono::seconds(1)) return false;
    last_line = now;
    std::ostringstream line;
    line << "epoch " << r.epoch << "  objective " << r.objective;
    if (!std::isnan(r.relative_gap)) line << "  relative_gap " << r.relative_gap;
    line << "  nnz_rows " << r.nnz_rows << "  t " << r.seconds << "s";
    progress(line.str());
    return false;
  }
  /// After the fit: re-raises the KeyboardInterrupt that stopped it.
  void raise_if_interrupted() const {
    if (interrupted) throw py::error_already_set();
  }
};

FitSettings settings_from(const py::dict& s) {
  FitSettings out;
  auto get = [&](const char* key) -> std::optional<py::handle> {
    if (!s.contains(key) || s[key].is_none()) return std::nullopt;
    return s[key];
  };
  if (auto v = get("loss")) out.loss = v->cast<std::string>();
  if (auto v = get("penalty")) out.penalty = v->cast<std::string>();
  if (auto v = get("lambda")) out.lambda = v->cast<double>();
  if (auto v = get("mu")) out.mu = v->cast<double>();
  if (auto v = get("tol")) out.tol = v->cast<double>();
  if (auto v = get("max_epochs")) out.max_epochs = v->cast<std::int64_t>();
  if (auto v = get("time_limit")) out.time_limit = v->cast<double>();
  if (auto v = get("seed")) out.seed = v->cast<std::uint64_t>();
  if (auto v = get("fit_intercept")) out.fit_intercept = v->cast<bool>();
  if (auto v = get("multilabel")) out.multilabel = v->cast<bool>();
  if (auto v = get("threads")) out.threads = v->cast<int>();
  if (auto v = get("features")) out.features = v->cast<std::string>();
  if (auto v = get("stages")) out.stages = v->cast<std::int64_t>();
  if (auto v = get("block_size")) out.block_size = v->cast<std::int64_t>();
  if (auto v = get("calibrate")) out.calibrate = v->cast<bool>();
  return out;
}

/// The settings of a fit on X: auto's choice may depend on its shape.
FitSettings settings_from(const py::dict& s, const SparseInput& X) {
  FitSettings out = settings_from(s);
  out.n_samples = X.rows;
  out.n_features = X.cols;
  return out;
}

/// A model's stored rows as numpy arrays: coef_ (K × d) in CSC form is (weights, classes, indptr
/// over the support).
template <class Scalar>
py::dict model_to_python(const LinearModel<Scalar>& model) {
  std::vector<std::int64_t> row_start{0};
  std::vector<ClassIndex> classes;
  std::vector<Scalar> weights;
  for (std::size_t r = 0; r < model.support().size(); ++r) {
    for (auto [k, w] : model.row(r)) classes.push_back(k), weights.push_back(w);
    row_start.push_back(static_cast<std::int64_t>(classes.size()));
  }
  const auto& p = model.provenance();
  py::dict out;
  out["n_features"] = model.n_features();
  out["support"] = py::array_t<std::int64_t>(static_cast<py::ssize_t>(model.support().size()), model.support().data());
  out["row_start"] = py::array_t<std::int64_t>(static_cast<py::ssize_t>(row_start.size()), row_start.data());
  out["classes"] = py::array_t<ClassIndex>(static_cast<py::ssize_t>(classes.size()), classes.data());
  out["weights"] = py::array_t<Scalar>(static_cast<py::ssize_t>(weights.size()), weights.data());
  out["intercept"] = py::array_t<Scalar>(model.intercept().size(), model.intercept().data());
  out["labels"] = py::array_t<Label>(static_cast<py::ssize_t>(model.labels().size()), model.labels().data());
  out["loss"] = p.loss, out["penalty"] = p.penalty, out["solver"] = p.solver;
  out["lambda"] = p.lambda, out["mu"] = p.mu, out["status"] = p.status, out["bias"] = p.bias;
  return out;
}

template <class Scalar>
LinearModel<Scalar> model_from_python(const py::dict& m) {
  auto vec = [&]<class T>(const char* key, T) {
    const auto a = py::array_t<T, py::array::c_style | py::array::forcecast>::ensure(m[key]);
    if (!a) throw py::value_error(std::string("model: '") + key + "' is not an array");
    return std::vector<T>(a.data(), a.data() + a.size());
  };
  const auto intercept_values = vec("intercept", Scalar{});
  typename LinearModel<Scalar>::Vector intercept =
      Eigen::Map<const typename LinearModel<Scalar>::Vector>(intercept_values.data(), static_cast<Eigen::Index>(intercept_values.size()));
  LinearModel<Scalar> model(m["n_features"].cast<std::int64_t>(), vec("support", std::int64_t{}), vec("row_start", std::int64_t{}),
                            vec("classes", ClassIndex{}), vec("weights", Scalar{}), std::move(intercept),
                            vec("labels", Label{}));
  auto& p = model.provenance();
  auto text = [&](const char* key, std::string& into) {
    if (m.contains(key) && !m[key].is_none()) into = m[key].cast<std::string>();
  };
  text("loss", p.loss), text("penalty", p.penalty), text("solver", p.solver), text("status", p.status);
  if (m.contains("lambda")) p.lambda = m["lambda"].cast<double>();
  if (m.contains("mu")) p.mu = m["mu"].cast<double>();
  if (m.contains("bias")) p.bias = m["bias"].cast<double>();
  return model;
}

template <class Scalar>
py::dict result_to_python(const Result<Scalar>& r) {
  py::dict out = model_to_python(r.model);
  const SolverInfo& i = r.info;
  out["status_name"] = std::string(to_string(i.status));
  out["epochs"] = i.epochs, out["objective"] = i.objective, out["duality_gap"] = i.duality_gap;
  out["relative_gap"] = i.relative_gap, out["measure_name"] = i.measure_name, out["measure"] = i.measure;
  out["nnz"] = i.nnz, out["nnz_rows"] = i.nnz_rows, out["seconds"] = i.seconds;
  out["gap_evaluations"] = i.gap_evaluations, out["gap_seconds"] = i.gap_seconds;
  return out;
}

/// A staged model in the precision it was fitted (or read) in.
struct PythonStagedModel {
  std::variant<StagedModel<float>, StagedModel<double>> model;

  [[nodiscard]] std::string text() const {
    return std::visit([](const auto& m) { return io::format_staged_model(m); }, model);
  }
  /// The model of its text, in the precision the text's second line ("scalar float") names.
  [[nodiscard]] static PythonStagedModel from_text(const std::string& text, const std::string& source) {
    const auto second_line = text.find('\n') + 1;
    if (text.compare(second_line, 13, "scalar float\n") == 0) return {io::parse_staged_model<float>(text, source)};
    return {io::parse_staged_model<double>(text, source)};
  }

  /// ŷ⁽ᵀ⁾ (n × K) of the samples X (CSR, values in the model's precision).
  [[nodiscard]] py::object decision_function(const SparseInput& X) const {
    if (X.layout != "csr") throw py::value_error("X: a staged model predicts from CSR data");
    return with_types(X, [&]<class Scalar, class Index>() -> py::object {
      return scores<Scalar>(CsrView<Scalar, Index>(static_cast<Index>(X.rows), static_cast<Index>(X.cols),
                                                   pointer<Index>(X.indptr, "X.indptr"),
                                                   pointer<Index>(X.indices, "X.indices"), pointer<Scalar>(X.data, "X.data")));
    });
  }
  /// ŷ⁽ᵀ⁾ of a dense X (C-contiguous n × d, the model's precision; not copied).
  [[nodiscard]] py::object decision_function_dense(const py::array& X) const {
    return with_scalar(X, "X", [&]<class Scalar>() -> py::object { return scores<Scalar>(dense_view<Scalar>(X)); });
  }
  /// The fields a Python estimator reads (as a linear model's dict has them).
  [[nodiscard]] py::dict description() const {
    return std::visit(
        [](const auto& m) {
          const auto& p = m.provenance();
          py::dict d;
          d["n_features"] = m.n_features(), d["n_stages"] = m.stages().size();
          d["labels"] = py::array_t<Label>(static_cast<py::ssize_t>(m.labels().size()), m.labels().data());
          d["calibrated"] = std::any_of(m.stages().begin(), m.stages().end(), [](const auto& t) { return t.calibration.size() > 0; });
          d["loss"] = p.loss, d["penalty"] = p.penalty, d["solver"] = p.solver;
          d["lambda"] = p.lambda, d["mu"] = p.mu, d["status"] = p.status;
          return d;
        },
        model);
  }

  /// Writes the model with class k labelled `labels[k]` (the estimator's integer classes_).
  void save(const std::string& path, std::vector<Label> labels) const {
    std::visit(
        [&](const auto& m) {
          auto named = m;
          named.set_labels(std::move(labels));
          io::save_staged_model(named, path);
        },
        model);
  }

 private:
  template <class Scalar, class Design>
  [[nodiscard]] py::object scores(const Design& X) const {
    const auto* m = std::get_if<StagedModel<Scalar>>(&model);
    if (m == nullptr) throw py::type_error("X: values must have the staged model's dtype");
    if (X.cols() != m->n_features())
      throw py::value_error("X has " + std::to_string(X.cols()) + " features, the model " + std::to_string(m->n_features()));
    typename StagedModel<Scalar>::RowMatrix Y;
    {
      py::gil_scoped_release release;
      Y = m->decision_function(X);
    }
    py::array_t<Scalar> out({Y.rows(), Y.cols()});
    std::copy(Y.data(), Y.data() + Y.size(), out.mutable_data());
    return out;
  }
};

/// A staged model as the Python side takes it: its description, the model itself under "staged".
py::dict staged_to_python(PythonStagedModel staged) {
  py::dict out = staged.description();
  out["staged"] = py::cast(std::move(staged));
  return out;
}

template <class Scalar>
py::dict staged_result_to_python(StagedResult<Scalar> r) {
  py::dict out = staged_to_python({std::move(r.model)});
  const SolverInfo& i = r.info;
  out["status_name"] = std::string(to_string(i.status));
  out["epochs"] = i.epochs, out["objective"] = i.objective, out["duality_gap"] = i.duality_gap;
  out["relative_gap"] = i.relative_gap, out["seconds"] = i.seconds, out["gap_seconds"] = i.gap_seconds;
  return out;
}

/// The registered solver for the settings (`auto` resolved); errors name the Python parameters.
const SolverSpec& resolve(const std::string& solver, const FitSettings& s) { return Registry::resolve(solver, s); }

/// A fit whose model is a StagedModel (the settings' `spec.writes_staged`).
py::object fit_staged(const SolverSpec& spec, const SparseInput& X, const ClassSets& y, const FitSettings& s,
                      const std::optional<py::array>& sample_weight, py::object progress, bool every_epoch) {
  return with_types(X, [&]<class Scalar, class Index>() -> py::object {
    const auto fit_function = spec.staged_fit<Scalar, Index>(s.loss, s.penalty);
    if (fit_function == nullptr) throw py::value_error("solver=" + spec.name + ": not built for these index types");
    const Dataset<Scalar, Index> data = borrow<Scalar, Index>(X, y, sample_weight);
    PythonHook hook{std::move(progress), every_epoch};
    ToolCallback callback{std::ref(hook)};
    StagedResult<Scalar> result;
    {
      py::gil_scoped_release release;
      result = fit_function(data, s, callback);
    }
    hook.raise_if_interrupted();
    return staged_result_to_python(std::move(result));
  });
}

py::object fit(const SparseInput& X, const ClassSets& y, const py::dict& settings, const std::string& solver,
               const std::optional<py::array>& sample_weight, const std::optional<py::dict>& init, py::object progress,
               bool every_epoch) {
  FitSettings s = settings_from(settings, X);
  const SolverSpec& spec = resolve(solver, s);
  const FitThreads threads(s.threads);
  if (spec.writes_staged(s)) {
    if (init) throw py::value_error("warm_start=True: solver=" + spec.name + " returns a staged model, which starts from 0");
    return fit_staged(spec, X, y, s, sample_weight, std::move(progress), every_epoch);
  }
  return with_types(X, [&]<class Scalar, class Index>() -> py::object {
    const auto fit_function = spec.fit<Scalar, Index>(s.loss, s.penalty);
    if (fit_function == nullptr) throw py::value_error("solver=" + spec.name + ": not built for these index types");
    const Dataset<Scalar, Index> data = borrow<Scalar, Index>(X, y, sample_weight);
    std::optional<LinearModel<Scalar>> initial;
    if (init) initial = model_from_python<Scalar>(*init);
    PythonHook hook{std::move(progress), every_epoch};
    ToolCallback callback{std::ref(hook)};
    Result<Scalar> result;
    {
      py::gil_scoped_release release;
      result = fit_function(data, s, initial ? &*initial : nullptr, callback);
    }
    hook.raise_if_interrupted();
    return result_to_python(result);
  });
}

/// The settings of a fit on a dense n × d X: auto's choice may depend on the shape.
FitSettings dense_settings(const py::dict& settings, py::ssize_t n_samples, py::ssize_t n_features) {
  FitSettings s = settings_from(settings);
  s.n_samples = n_samples, s.n_features = n_features;
  return s;
}

/// The layout in which the solver the settings resolve to (auto too) fits a dense n × d X
/// without a copy: "C" (row-major), "F" (column-major: the coordinate solvers), or None.
std::optional<std::string> dense_layout(const py::dict& settings, const std::string& solver, py::ssize_t n_samples,
                                        py::ssize_t n_features) {
  const FitSettings s = dense_settings(settings, n_samples, n_features);
  const SolverSpec& spec = resolve(solver, s);
  if (spec.writes_staged(s)) return spec.dense_staged_fit<double>(s.loss, s.penalty) ? std::optional<std::string>("C") : std::nullopt;
  if (spec.dense_fit<double>(s.loss, s.penalty)) return "C";
  if (spec.dense_column_fit<double>(s.loss, s.penalty)) return "F";
  return std::nullopt;
}

/// A fit on a dense X (n × d, float32/float64: not copied, nor are the sample weights) by a
/// family that takes one (`dense_layout`): C-contiguous for the generalized least squares
/// family, fista, sdm, fbpd, fbpd-epi and fcbcfw, Fortran-contiguous for bcd-* and scd*;
/// warm-started from `init` if given (linear fits).
py::object fit_dense(const py::array& X, const ClassSets& y, const py::dict& settings, const std::string& solver,
                     const std::optional<py::array>& sample_weight, const std::optional<py::dict>& init,
                     py::object progress, bool every_epoch) {
  if (X.ndim() != 2) throw py::value_error("X: not a 2-D array");
  const FitSettings s = dense_settings(settings, X.shape(0), X.shape(1));
  const SolverSpec& spec = resolve(solver, s);
  const FitThreads threads(s.threads);
  const bool staged = spec.writes_staged(s);
  if (staged && init) throw py::value_error("warm_start=True: solver=" + spec.name + " returns a staged model, which starts from 0");
  return with_scalar(X, "X", [&]<class Scalar>() -> py::object {
    const LabelSets sets = label_sets(y, s.n_samples);
    std::span<const Scalar> weights;
    if (sample_weight)
      weights = {pointer<Scalar>(*sample_weight, "sample_weight"), static_cast<std::size_t>(sample_weight->size())};
    PythonHook hook{std::move(progress), every_epoch};
    ToolCallback callback{std::ref(hook)};
    std::optional<LinearModel<Scalar>> initial;
    if (init) initial = model_from_python<Scalar>(*init);
    // The fit in the layout the family reads, on the problem over X in that layout.
    auto run = [&]<int Order>(auto fit_function) -> py::object {
      const DenseProblem<Scalar, Order> problem{dense_view<Scalar, Order>(X), sets.view(), weights};
      problem.validate();
      if constexpr (std::is_same_v<decltype(fit_function), sparsemc::tools::DenseStagedFitFunction<Scalar>>) {
        StagedResult<Scalar> result;
        {
          py::gil_scoped_release release;
          result = fit_function(problem, s, callback);
        }
        hook.raise_if_interrupted();
        return staged_result_to_python(std::move(result));
      } else {
        Result<Scalar> result;
        {
          py::gil_scoped_release release;
          result = fit_function(problem, s, initial ? &*initial : nullptr, callback);
        }
        hook.raise_if_interrupted();
        return result_to_python(result);
      }
    };
    if (staged) {
      if (const auto fit_function = spec.dense_staged_fit<Scalar>(s.loss, s.penalty))
        return run.template operator()<Eigen::RowMajor>(fit_function);
    } else if (const auto fit_function = spec.dense_fit<Scalar>(s.loss, s.penalty)) {
      return run.template operator()<Eigen::RowMajor>(fit_function);
    } else if (const auto column_fit = spec.dense_column_fit<Scalar>(s.loss, s.penalty)) {
      return run.template operator()<Eigen::ColMajor>(column_fit);
    }
    throw py::value_error("solver=" + spec.name + " takes sparse X only");
  });
}

py::object fit_heldout(const SparseInput& X, const ClassSets& y, const SparseInput& X_val, const ClassSets& y_val,
                       int patience, const py::dict& settings, const std::string& solver,
                       const std::optional<py::array>& sample_weight, py::object progress, bool every_epoch) {
  FitSettings s = settings_from(settings, X);
  s.heldout = true;
  const SolverSpec& spec = resolve(solver, s);
  const FitThreads threads(s.threads);
  return with_types(X, [&]<class Scalar, class Index>() -> py::object {
    const auto fit_function = spec.heldout_fit<Scalar, Index>(s.loss, s.penalty);
    if (fit_function == nullptr)
      throw py::value_error("early_stopping=True: solver=" + spec.name + " does not return its best held-out epoch");
    const Dataset<Scalar, Index> data = borrow<Scalar, Index>(X, y, sample_weight);
    const Dataset<Scalar, Index> heldout = borrow<Scalar, Index>(X_val, y_val, std::nullopt);
    PythonHook hook{std::move(progress), every_epoch};
    ToolCallback callback{std::ref(hook)};
    Result<Scalar> result;
    {
      py::gil_scoped_release release;
      result = fit_function(data, s, heldout, patience, callback);
    }
    hook.raise_if_interrupted();
    return result_to_python(result);
  });
}

/// λ_max (or Crammer–Singer's λ_start) of the settings on the data.
double lambda_start(const SparseInput& X, const ClassSets& y, const py::dict& settings) {
  const FitSettings s = settings_from(settings);
  return with_types(X, [&]<class Scalar, class Index>() -> py::object {
           const Dataset<Scalar, Index> data = borrow<Scalar, Index>(X, y, std::nullopt);
           return py::float_(tools::compute_lambda_max(data, s));
         })
      .cast<double>();
}

/// The whole grid: the solver's screened path where it has one, else fits warm-started from the
/// previous λ's model.
py::object path(const SparseInput& X, const ClassSets& y, const py::dict& settings, const std::string& solver,
                const std::vector<double>& lambdas, const std::optional<py::array>& sample_weight, py::object progress,
                bool every_epoch) {
  FitSettings s = settings_from(settings, X);
  if (!lambdas.empty()) s.lambda = lambdas.front();
  const SolverSpec& spec = resolve(solver, s);
  const FitThreads threads(s.threads);
  return with_types(X, [&]<class Scalar, class Index>() -> py::object {
    const Dataset<Scalar, Index> data = borrow<Scalar, Index>(X, y, sample_weight);
    PythonHook hook{std::move(progress), every_epoch};
    ToolCallback callback{std::ref(hook)};
    std::vector<Result<Scalar>> results;
    {
      py::gil_scoped_release release;
      if (const auto grid = spec.path<Scalar, Index>(s.loss, s.penalty)) {
        results = grid(data, s, lambdas, callback);
      } else {
        const auto fit_function = spec.fit<Scalar, Index>(s.loss, s.penalty);
        for (double lambda : lambdas) {
          s.lambda = lambda;
          results.push_back(fit_function(data, s, results.empty() ? nullptr : &results.back().model, callback));
          if (hook.interrupted) break;
        }
      }
    }
    hook.raise_if_interrupted();
    py::list out;
    for (const auto& r : results) out.append(result_to_python(r));
    return out;
  });
}

/// Objective (1) of any linear model on the data, its two parts and its duality gap (an upper
/// bound on F − F*, NaN for a loss without a conjugate), as sparsemc-eval prints them.
py::dict evaluate(const SparseInput& X, const ClassSets& y, const py::dict& settings, const py::dict& model,
                  const std::optional<py::array>& sample_weight) {
  const FitSettings s = settings_from(settings);
  const FitThreads threads(s.threads);
  py::dict out;
  with_types(X, [&]<class Scalar, class Index>() -> py::object {
    const Dataset<Scalar, Index> data = borrow<Scalar, Index>(X, y, sample_weight);
    const LinearModel<Scalar> m = model_from_python<Scalar>(model);
    const auto problem = data.template problem<Eigen::RowMajor>();
    tools::dispatch(tools::AllLosses{}, tools::AllPenalties{}, s.loss, s.penalty, [&]<class Loss, class Penalty>() {
      Penalty penalty{};
      penalty.lambda = s.lambda;
      penalty.mu = s.mu;
      ObjectiveValue value;
      DualityGap certificate;
      {
        py::gil_scoped_release release;
        value = objective(Loss{}, penalty, problem, m);
        if constexpr (ConjugateLoss<Loss, Scalar>) {
          GapWorkspace<Scalar> work;
          certificate = duality_gap(Loss{}, penalty, problem, m, work);
        }
      }
      out["objective"] = value.total(), out["loss_part"] = value.loss, out["penalty_part"] = value.penalty;
      out["duality_gap"] = certificate.gap(), out["relative_gap"] = certificate.relative();
    });
    return py::none();
  });
  return out;
}

void save_model(const py::dict& model, const std::string& path, const std::string& format) {
  const LinearModel<double> m = model_from_python<double>(model);
  if (format == "liblinear")
    io::save_liblinear_model(m, path);
  else if (format == "native")
    io::save_model(m, path);
  else
    throw py::value_error("format: expects 'native' or 'liblinear', got '" + format + "'");
}

/// Reads a native, LIBLINEAR or staged model file (the format from its first word); a staged
/// model comes as its description with the `StagedModel` under "staged".
py::dict load_model(const std::string& path) {
  io::AnyModel<double> loaded = tools::load_any_model<double>(path);
  if (auto* linear = std::get_if<LinearModel<double>>(&loaded)) return model_to_python(*linear);
  return staged_to_python({std::move(std::get<StagedModel<double>>(loaded))});
}

/// What the registry has: solver → (losses, penalties, intercept, seeded, default tol and epochs).
py::list solvers() {
  py::list out;
  for (const SolverSpec& spec : Registry::solvers()) {
    py::dict d;
    d["name"] = spec.name, d["summary"] = spec.summary, d["layout"] = spec.layout;
    d["losses"] = spec.losses, d["penalties"] = spec.penalties, d["intercept"] = spec.intercept;
    d["heldout_best"] = spec.returns_heldout_best();
    d["staged"] = spec.staged != nullptr;
    out.append(d);
  }
  return out;
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "sparsemc's compiled core: the solver registry over scipy/numpy buffers (see sparsemc/_estimators.py)";
  m.attr("__version__") = SPARSEMC_VERSION_STRING;
  py::register_exception<tools::UsageError>(m, "UsageError", PyExc_ValueError);
  py::register_exception<io::ParseError>(m, "ParseError", PyExc_ValueError);
  py::register_exception<tools::InputError>(m, "InputError", PyExc_ValueError);

  py::class_<SparseInput>(m, "SparseInput")
      .def(py::init([](std::string layout, std::int64_t rows, std::int64_t cols, py::array indptr, py::array indices,
                       py::array data) {
             return SparseInput{std::move(layout), rows, cols, std::move(indptr), std::move(indices), std::move(data)};
           }),
           py::arg("layout"), py::arg("rows"), py::arg("cols"), py::arg("indptr"), py::arg("indices"), py::arg("data"))
      .def_property_readonly("data_pointer", [](const SparseInput& X) { return reinterpret_cast<std::uintptr_t>(X.data.data()); });
  py::class_<PythonStagedModel>(m, "StagedModel",
                                "A staged model (gls-cal, stagewise, gls on random features): predicts, pickles, saves")
      .def("decision_function", &PythonStagedModel::decision_function, py::arg("X"))
      .def("decision_function_dense", &PythonStagedModel::decision_function_dense, py::arg("X"))
      .def("description", &PythonStagedModel::description)
      .def("save", &PythonStagedModel::save, py::arg("path"), py::arg("labels"))
      .def(py::pickle([](const PythonStagedModel& m) { return py::bytes(m.text()); },
                      [](const py::bytes& text) { return PythonStagedModel::from_text(text, "<pickle>"); }));
  py::class_<ClassSets>(m, "ClassSets")
      .def(py::init([](py::array_t<std::int64_t, py::array::c_style> offsets, py::array_t<ClassIndex, py::array::c_style> classes,
                       ClassIndex n_classes) { return ClassSets{std::move(offsets), std::move(classes), n_classes}; }),
           py::arg("offsets"), py::arg("classes"), py::arg("n_classes"));

  m.def("fit", &fit, py::arg("X"), py::arg("y"), py::arg("settings"), py::arg("solver"), py::arg("sample_weight"),
        py::arg("init"), py::arg("progress"), py::arg("every_epoch"));
  m.def("fit_dense", &fit_dense, py::arg("X"), py::arg("y"), py::arg("settings"), py::arg("solver"),
        py::arg("sample_weight"), py::arg("init"), py::arg("progress"), py::arg("every_epoch"));
  m.def("dense_layout", &dense_layout, py::arg("settings"), py::arg("solver"), py::arg("n_samples"),
        py::arg("n_features"));
  m.def("fit_heldout", &fit_heldout, py::arg("X"), py::arg("y"), py::arg("X_val"), py::arg("y_val"), py::arg("patience"),
        py::arg("settings"), py::arg("solver"), py::arg("sample_weight"), py::arg("progress"), py::arg("every_epoch"));
  m.def("lambda_max", &lambda_start, py::arg("X"), py::arg("y"), py::arg("settings"));
  m.def("path", &path, py::arg("X"), py::arg("y"), py::arg("settings"), py::arg("solver"), py::arg("lambdas"),
        py::arg("sample_weight"), py::arg("progress"), py::arg("every_epoch"));
  m.def("evaluate", &evaluate, py::arg("X"), py::arg("y"), py::arg("settings"), py::arg("model"),
        py::arg("sample_weight"));
  m.def("save_model", &save_model, py::arg("model"), py::arg("path"), py::arg("format"));
  m.def("load_model", &load_model, py::arg("path"));
  m.def("solvers", &solvers);
  m.def("openmp_threads", &available_threads,
        "The OpenMP team of the calling thread's next parallel region (what n_jobs=None uses); 1 without OpenMP");
  m.def("multilabel_losses", &tools::multilabel_losses);
  m.def("losses", [] { return tools::names_of(tools::AllLosses{}); });
  m.def("penalties", [] { return tools::names_of(tools::AllPenalties{}); });
  m.def("resolve", [](const std::string& solver, const py::dict& settings) { return resolve(solver, settings_from(settings)).name; },
        py::arg("solver"), py::arg("settings"));
}
