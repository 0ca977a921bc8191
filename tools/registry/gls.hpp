#pragma once
/// \file gls.hpp
/// Registers the generalized least squares family (Agarwal et al. 2014; solver/gls/):
///
/// - `gls`: GLS<Link>, Algorithm 1 with quasi-Newton steps (GLSOptions::memory = 10: L-BFGS
///   whose initial metric is the factorised second moment (LΣ̂ + μI)⁻¹; measured 2.3× fewer
///   iterations than the Nesterov-accelerated Algorithm 1 on random features of mnist10k), for
///   the logistic loss (softmax link) and least squares (identity link: the ridge solution in
///   one step), ridge μ only (--penalty none). It stops on the duality gap of (1), with the
///   library's fast defaults (single-precision Σ̂, curvature refresh every 40 iterations).
///   With `--features rff:D[:BANDWIDTH]` it fits on D random Fourier features of the data and
///   writes a staged model (the generator's seed, D and bandwidth, then W).
/// - `gls-cal`: CalibratedLS, Algorithm 2 (least squares with a learned polynomial link and the
///   simplex projection), on the original features or on `--features rff:D[:BANDWIDTH]`.
/// - `stagewise`: Stagewise<Link>, Algorithm 3 — `--stages` blocks of `--block-size` features
///   from the generator `--features` (rff[:D[:BANDWIDTH]], sample, sample-replace, frequent),
///   each fitted by Algorithm 1 (`--calibrate`: Algorithm 2's calibration after every stage).
///
/// gls-cal and stagewise always write staged models (model/staged_model.hpp,
/// io/staged_model_io.hpp), which sparsemc-predict and sparsemc-eval recognise. Meant for dense,
/// ill-conditioned features with d (or D, or the block size) up to a few thousand: Σ̂ is d × d.
/// Never picked by auto. The three also fit a dense design (`takes_dense`: the Python package's
/// numpy arrays, not copied); every fit returns class indices, which the Dataset paths relabel.

#include <sparsemc/core/stopwatch.hpp>
#include <sparsemc/solver/gls/calibrated_ls.hpp>
#include <sparsemc/solver/gls/gls.hpp>
#include <sparsemc/solver/gls/stagewise.hpp>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "registry.hpp"

namespace sparsemc::tools {

namespace gls_tools {

/// The feature generator given by --features.
struct FeatureSpec {
  enum class Kind { original, rff, sample, sample_replace, frequent };
  Kind kind = Kind::original;
  std::int64_t dim = 0;   ///< rff: D, the number of random features (0: not given)
  double bandwidth = 0;   ///< rff: σ (0: the default, σ² = (1/n) Σ‖x_i − x̄‖²)
};

inline constexpr const char* features_grammar =
    "original, rff[:D[:BANDWIDTH]] (D >= 1 random Fourier features, BANDWIDTH > 0), sample, sample-replace or "
    "frequent";

/// Parses --features; nullopt (with `why` set) when the text is not in the grammar.
inline std::optional<FeatureSpec> parse_features(const std::string& text, std::string& why) {
  using Kind = FeatureSpec::Kind;
  FeatureSpec f;
  const std::string_view t = text;
  if (t.empty() || t == "original") return f;
  if (t == "sample") return f.kind = Kind::sample, f;
  if (t == "sample-replace") return f.kind = Kind::sample_replace, f;
  if (t == "frequent") return f.kind = Kind::frequent, f;
  if (t.substr(0, 3) == "rff" && (t.size() == 3 || t[3] == ':')) {
    f.kind = Kind::rff;
    if (t.size() == 3) return f;
    const std::string_view rest = t.substr(4);
    const auto colon = rest.find(':');
    const std::string_view d = rest.substr(0, colon);
    long long dim = 0;
    bool ok = d.empty() || (tools::detail::parse_all(d, dim) && dim >= 1 && dim <= 100000000);
    f.dim = dim;
    if (ok && colon != std::string_view::npos) {
      const std::string_view b = rest.substr(colon + 1);
      ok = b.empty() || (tools::detail::parse_all(b, f.bandwidth) && std::isfinite(f.bandwidth) && f.bandwidth > 0);
    }
    if (ok) return f;
  }
  why = "--features: expects " + std::string(features_grammar) + ", got '" + text + "'";
  return std::nullopt;
}

/// A problem's X as an Eigen expression with samples in rows: the sparse map of a CsrProblem,
/// the map of a DenseProblem.
template <class Prob>
decltype(auto) design(const Prob& problem) {
  if constexpr (requires { problem.X.eigen(); }) return problem.X.eigen();
  else return (problem.X);
}

/// The random Fourier features of --features rff:D[:BANDWIDTH] for the samples X (an Eigen
/// expression, samples in rows; seed: --seed, or 0).
template <class Design>
auto make_rff(const Design& X, const FeatureSpec& f, const FitSettings& s) {
  const double sigma = f.bandwidth > 0 ? f.bandwidth : rff_default_bandwidth(X);
  return RandomFourierFeatures<typename Design::Scalar>(s.seed.value_or(0), X.cols(), f.dim, sigma);
}

/// A model over the D random features → the staged model over the data's n_features: every
/// stage reads φ(x) from the same generator.
template <class Scalar>
StagedModel<Scalar> on_random_features(const StagedModel<Scalar>& fitted, const RandomFourierFeatures<Scalar>& rff,
                                       std::int64_t n_features) {
  StagedModel<Scalar> out(n_features, fitted.labels(), fitted.calibration_degree());
  for (const auto& stage : fitted.stages()) {
    typename StagedModel<Scalar>::Stage copy;
    copy.features = StagedModel<Scalar>::Features::rff;
    copy.rff = rff;
    copy.linear = stage.linear;
    copy.calibration = stage.calibration;
    out.add_stage(std::move(copy));
  }
  out.provenance() = fitted.provenance();
  return out;
}

/// The rows X of the dense φ(X) as a DenseProblem with the data's labels and costs.
template <class Matrix, class Prob>
auto dense_problem(const Matrix& Z, const Prob& problem) {
  return DenseProblem<typename Matrix::Scalar>{{Z.data(), Z.rows(), Z.cols()}, problem.y, problem.sample_weights};
}

/// Builds a solver from the settings as `tools::detail::fit_with` does.
template <class Solver, class Loss, class Family>
Solver make_solver(const FitSettings& s) {
  typename Solver::Options options{};
  tools::detail::apply_common(options, s);
  Family::configure(options, s);
  options.validate();
  NoPenalty ridge{};
  ridge.mu = s.mu;
  if constexpr (std::is_same_v<Solver, CalibratedLS>) return Solver(LeastSquares{}, ridge, options);
  else return Solver(Loss{}, ridge, options);
}

/// The registry's two staged fits of a family over its `fit_on<Loss>(problem, settings,
/// callback)`, which takes a CsrProblem or a DenseProblem and returns class indices: on a
/// Dataset (then relabelled with its labels) and on a dense design.
template <class Family>
struct StagedFits {
  static constexpr bool takes_dense = true;
  template <class Loss, class Penalty, class Scalar, class Index>
  static StagedResult<Scalar> fit_staged(const Dataset<Scalar, Index>& data, const FitSettings& s, ToolCallback& callback) {
    StagedResult<Scalar> r = Family::template fit_on<Loss>(data.template problem<Eigen::RowMajor>(), s, callback);
    r.model.set_labels(data.encoder().labels());
    return r;
  }
  template <class Loss, class Penalty, class Scalar>
  static StagedResult<Scalar> fit_staged_dense(const DenseProblem<Scalar>& problem, const FitSettings& s,
                                               ToolCallback& callback) {
    return Family::template fit_on<Loss>(problem, s, callback);
  }
};

}  // namespace gls_tools

struct GlsFamily : gls_tools::StagedFits<GlsFamily> {
  template <class Loss, class Penalty>
  using Solver = GLS<Loss>;
  template <class Loss, class Penalty>
  static constexpr bool accepts = GLSAccepts<Loss, Penalty>;
  static constexpr int layout = Eigen::RowMajor;
  static constexpr const char* name = "gls";
  static constexpr const char* summary =
      "generalized least squares (Agarwal et al. 2014, Alg. 1, quasi-Newton): L-BFGS steps (10 pairs) whose "
      "initial metric is the factorised d x d second moment (formed in single precision, refreshed from the "
      "samples' curvatures every 40 iterations); converged = relative duality gap of (1) <= --tol (default "
      "1e-3; with --mu 0 there is no certificate); --features rff:D[:BANDWIDTH] fits on D random Fourier "
      "features (a staged model)";
  static constexpr const char* extra_options[] = {"--features"};
  /// The library's defaults are the tools': quasi-Newton steps with 10 pairs (fewer iterations
  /// than the accelerated variant at the same cost per iteration), the single-precision Σ̂ and a
  /// curvature refresh every 40 iterations (docs/gls-mnist.md) — set here too, so that the
  /// tools keep the fast path if a library default changes.
  template <class Options>
  static void configure(Options& o, const FitSettings&) {
    o.memory = 10;
    o.single_precision_gram = true;
    o.curvature_refresh = 40;
  }
  static int auto_priority(const FitSettings&) { return 0; }
  static std::string requirement(const FitSettings& s) {
    std::string why;
    const auto f = gls_tools::parse_features(s.features, why);
    if (!f) return why;
    using Kind = gls_tools::FeatureSpec::Kind;
    if (f->kind != Kind::original && f->kind != Kind::rff)
      return "takes --features original or rff:D[:BANDWIDTH], got '" + s.features + "'";
    if (f->kind == Kind::rff && f->dim == 0) return "needs the number D of random features: --features rff:D[:BANDWIDTH]";
    return "";
  }
  static bool staged(const FitSettings& s) {
    std::string why;
    const auto f = gls_tools::parse_features(s.features, why);
    return f && f->kind == gls_tools::FeatureSpec::Kind::rff;
  }
  /// GLS on φ(X), D random Fourier features: one uncalibrated stage reading φ(x), its classes
  /// the indices 0..K−1. Its time includes drawing and applying the features.
  template <class Loss, class Prob>
  static StagedResult<typename Prob::scalar_type> fit_on(const Prob& problem, const FitSettings& s, ToolCallback& callback) {
    using Scalar = typename Prob::scalar_type;
    const Stopwatch clock;
    std::string why;
    const auto f = *gls_tools::parse_features(s.features, why);
    const auto X = gls_tools::design(problem);
    const auto rff = gls_tools::make_rff(X, f, s);
    const auto Z = rff.transform(X);
    const auto solver = gls_tools::make_solver<GLS<Loss>, Loss, GlsFamily>(s);
    Result<Scalar> r = solver.fit(gls_tools::dense_problem(Z, problem), callback);
    r.info.seconds = clock.seconds();
    StagedModel<Scalar> model(X.cols(), r.model.labels(), 3);
    typename StagedModel<Scalar>::Stage stage;
    stage.features = StagedModel<Scalar>::Features::rff;
    stage.rff = rff;
    stage.linear = std::move(r.model);
    model.add_stage(std::move(stage));
    model.provenance() = model.stages().front().linear.provenance();
    return {std::move(model), r.info};
  }
};

struct GlsCalFamily : gls_tools::StagedFits<GlsCalFamily> {
  template <class Loss, class Penalty>
  using Solver = CalibratedLS;
  template <class Loss, class Penalty>
  static constexpr bool accepts = CalibratedLSAccepts<Loss, Penalty>;
  static constexpr int layout = Eigen::RowMajor;
  static constexpr const char* name = "gls-cal";
  static constexpr const char* summary =
      "calibrated least squares (Agarwal et al. 2014, Alg. 2): residual least-squares fits alternating with a "
      "cubic calibration and the simplex projection; 'converged' means stalled: an iteration lowered the "
      "square loss by <= --tol times its value at 0 (default 1e-6; a stall test, no certificate, gap n/a); "
      "--features rff:D[:BANDWIDTH] fits on D random Fourier features; writes a staged model";
  static constexpr bool staged_only = true;
  static constexpr const char* extra_options[] = {"--features"};
  template <class Options>
  static void configure(Options&, const FitSettings&) {}
  static int auto_priority(const FitSettings&) { return 0; }
  static std::string requirement(const FitSettings& s) { return GlsFamily::requirement(s); }
  static bool staged(const FitSettings&) { return true; }
  /// Algorithm 2 on X or on its random Fourier features (the fit's time then includes drawing
  /// and applying them); the classes are the indices 0..K−1.
  template <class Loss, class Prob>
  static StagedResult<typename Prob::scalar_type> fit_on(const Prob& problem, const FitSettings& s, ToolCallback& callback) {
    std::string why;
    const auto f = *gls_tools::parse_features(s.features, why);
    const auto solver = gls_tools::make_solver<CalibratedLS, LeastSquares, GlsCalFamily>(s);
    if (f.kind != gls_tools::FeatureSpec::Kind::rff) return solver.fit(problem, callback);
    const Stopwatch clock;
    const auto X = gls_tools::design(problem);
    const auto rff = gls_tools::make_rff(X, f, s);
    const auto Z = rff.transform(X);
    auto r = solver.fit(gls_tools::dense_problem(Z, problem), callback);
    r.info.seconds = clock.seconds();
    r.model = gls_tools::on_random_features(r.model, rff, X.cols());
    return r;
  }
};

struct StagewiseFamily : gls_tools::StagedFits<StagewiseFamily> {
  template <class Loss, class Penalty>
  using Solver = Stagewise<Loss>;
  template <class Loss, class Penalty>
  static constexpr bool accepts = StagewiseAccepts<Loss, Penalty>;
  static constexpr int layout = Eigen::RowMajor;
  static constexpr const char* name = "stagewise";
  static constexpr const char* summary =
      "stagewise regression (Agarwal et al. 2014, Alg. 3): --stages T blocks of --block-size P features from "
      "--features rff[:D[:BANDWIDTH]] (default rff; D = T*P), sample, sample-replace or frequent, each fitted "
      "to the residual by Alg. 1 (--max-epochs = GLS iterations per block, logistic); --calibrate (least "
      "squares): calibrated stages; runs every stage (never 'converged', no certificate of (1), gap n/a; "
      "--tol is each block's relative gradient norm); writes a staged model";
  static constexpr bool staged_only = true;
  static constexpr const char* extra_options[] = {"--block-size", "--stages", "--features", "--calibrate"};
  /// --max-epochs is the GLS iteration budget of every block (StagewiseOptions::inner_epochs).
  static constexpr std::int64_t default_max_epochs = StagewiseOptions{}.inner_epochs;

  /// (stages, block size) from --stages, --block-size and D of --features rff:D.
  static std::pair<std::int64_t, std::int64_t> shape(const FitSettings& s, const gls_tools::FeatureSpec& f) {
    const StagewiseOptions defaults{};
    const std::int64_t p = s.block_size.value_or(f.dim > 0 ? std::min(f.dim, defaults.block_size) : defaults.block_size);
    const std::int64_t T = s.stages.value_or(f.dim > 0 ? (f.dim + p - 1) / p : defaults.max_epochs);
    return {T, p};
  }
  template <class Options>
  static void configure(Options& o, const FitSettings& s) {
    std::string why;
    const auto f = *gls_tools::parse_features(s.features, why);
    using Kind = gls_tools::FeatureSpec::Kind;
    const auto [T, p] = shape(s, f);
    o.max_epochs = T;
    o.block_size = p;
    o.inner_epochs = s.max_epochs.value_or(StagewiseOptions{}.inner_epochs);
    o.calibrate = s.calibrate;
    o.bandwidth = f.bandwidth;
    o.features = f.kind == Kind::sample           ? StagewiseFeatures::sample_without_replacement
                 : f.kind == Kind::sample_replace ? StagewiseFeatures::sample_with_replacement
                 : f.kind == Kind::frequent       ? StagewiseFeatures::most_frequent_first
                                                  : StagewiseFeatures::rff;
  }
  static int auto_priority(const FitSettings&) { return 0; }
  static std::string requirement(const FitSettings& s) {
    std::string why;
    const auto f = gls_tools::parse_features(s.features, why);
    if (!f) return why;
    using Kind = gls_tools::FeatureSpec::Kind;
    if (f->kind == Kind::original && !s.features.empty())
      return "takes --features rff[:D[:BANDWIDTH]], sample, sample-replace or frequent, got 'original'";
    if (f->dim > 0) {
      const auto [T, p] = shape(s, *f);
      if (T * p != f->dim)
        return "draws --stages T blocks of --block-size P random features: --features rff:" + std::to_string(f->dim) +
               " needs D = T*P, got T = " + std::to_string(T) + ", P = " + std::to_string(p);
    }
    if (s.calibrate && s.loss != LeastSquares::name) return "--calibrate needs --loss least-squares";
    return "";
  }
  static bool staged(const FitSettings&) { return true; }
  /// Algorithm 3 on a CsrProblem or a DenseProblem; the classes are the indices 0..K−1.
  template <class Loss, class Prob>
  static StagedResult<typename Prob::scalar_type> fit_on(const Prob& problem, const FitSettings& s, ToolCallback& callback) {
    return gls_tools::make_solver<Stagewise<Loss>, Loss, StagewiseFamily>(s).fit(problem, callback);
  }
};

template const bool registered<GlsFamily, SPARSEMC_REGISTRY_INDEX>;
template const bool registered<GlsCalFamily, SPARSEMC_REGISTRY_INDEX>;
template const bool registered<StagewiseFamily, SPARSEMC_REGISTRY_INDEX>;

}  // namespace sparsemc::tools
