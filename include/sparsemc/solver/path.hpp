#pragma once
/// \file path.hpp
/// Regularisation paths: objective (1) solved for a decreasing grid of λ, each solve
/// warm-started from the previous solution (Friedman, Hastie & Tibshirani, "Regularization
/// paths for generalized linear models via coordinate descent", J. Stat. Softw. 33, 2010).
///
/// The grid starts at λ_max, the smallest λ for which W = 0 is optimal,
///
///     λ_max = max_j R°(∇_W L_j(0, b₀))          (objective.hpp; b₀ the best intercept-only
///                                                model when the intercept is fitted),
///
/// and descends log-uniformly to λ_min = ratio · λ_max in N points:
/// λ_k = λ_max · ratio^{k/(N−1)}, k = 0, …, N−1. Neighbouring solutions are close, so a
/// warm-started solver needs few epochs per point and the whole path costs about as much as
/// one cold solve at λ_min.
///
/// A solver with `fit_path(problem, lambdas)` returning one Result per λ (BlockCD) solves the
/// whole grid in one call, with the options of `make_solver(λ_0)`; every point is certified by its
/// own duality gap (BlockCD: relative gap ≤ tol).
/// Any other solver works that is built by a factory from λ and has the shape of the sparsemc solvers:
/// `fit(problem)` and `fit(problem, initial_model)` returning `Result<Scalar>`. To compute
/// λ_max the solver must also expose `loss()` and `penalty()` (and `options().fit_intercept`
/// if it fits an intercept), as every sparsemc solver does; or give `PathOptions::lambda_max`.
///
/// \code
///   using namespace sparsemc;
///   auto train = io::read_libsvm<double>("dna.scale");
///   auto test = io::read_libsvm<double>("dna.scale.t", {.n_features = train.n_features(),
///                                                       .labels = train.encoder()});
///   auto make = [](double lambda) {
///     return BlockCD<SquaredHinge, L1L2, TsengYun>({}, {.lambda = lambda});  // each point certified
///   };
///   auto path = regularization_path(train.problem<Eigen::ColMajor>(), make,
///                                   PathOptions{.n_lambdas = 20, .ratio = 1e-2},
///                                   HeldOutAccuracy<double>{test.csr(), test.labels().view()});
///   for (const PathPoint& p : path.points)
///     std::printf("%g %g %lld %g\n", p.lambda, p.objective, (long long)p.nnz_rows, p.accuracy);
/// \endcode

#include <cmath>
#include <concepts>
#include <cstdint>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "../core/status.hpp"
#include "../core/stopwatch.hpp"
#include "../core/traits.hpp"
#include "../core/validate.hpp"
#include "../data/labels.hpp"
#include "../data/problem.hpp"
#include "../data/sparse_view.hpp"
#include "../model/linear_model.hpp"
#include "../model/metrics.hpp"
#include "objective.hpp"

namespace sparsemc {

/// Options of `regularization_path`.
struct PathOptions {
  /// N ≥ 1: number of λ values on the grid (N = 1 solves at λ_max · ratio only).
  std::int32_t n_lambdas = 20;
  /// λ_min / λ_max ∈ (0, 1]: where the log-uniform grid ends.
  double ratio = 1e-2;
  /// λ_max if > 0; 0 computes it from the gradient at W = 0 (objective.hpp `lambda_max`).
  double lambda_max = 0.0;

  /// Throws std::invalid_argument naming the first field out of range.
  void validate() const {
    detail::require_positive("n_lambdas", n_lambdas);
    if (!(ratio > 0.0 && ratio <= 1.0)) detail::fail_option("ratio", "in (0, 1]", ratio);
    detail::require_nonnegative("lambda_max", lambda_max);
    detail::require_finite("lambda_max", lambda_max);
  }
};

/// One point of a path: the solve at one λ.
struct PathPoint {
  double lambda = 0.0;          ///< λ of (1)
  double objective = 0.0;       ///< F of (1) at the returned model
  std::int64_t nnz_rows = 0;    ///< nonzero feature rows of W
  std::int64_t epochs = 0;      ///< epochs (iterations) of this solve
  double seconds = 0.0;         ///< wall-clock time of this solve
  Status status = Status::max_iter;
  /// What the evaluation functor returned (e.g. held-out accuracy); NaN without one.
  double accuracy = std::numeric_limits<double>::quiet_NaN();
};

/// A whole path: one point and one model per λ, in grid order (decreasing λ).
template <RealScalar Scalar>
struct PathResult {
  double lambda_max = 0.0;
  std::vector<PathPoint> points;
  std::vector<LinearModel<Scalar>> models;
  /// Σ of the solves' times: what the path cost.
  [[nodiscard]] double seconds() const {
    double total = 0.0;
    for (const auto& p : points) total += p.seconds;
    return total;
  }
};

/// The default evaluation: none (PathPoint::accuracy stays NaN).
struct NoEvaluation {
  template <RealScalar Scalar>
  double operator()(const LinearModel<Scalar>&) const noexcept {
    return std::numeric_limits<double>::quiet_NaN();
  }
};

/// Evaluation by accuracy on held-out data (CSR features and their class sets; a multiclass
/// prediction is right when it is in the sample's class set).
template <RealScalar Scalar, StorageIndex Index = std::int32_t>
struct HeldOutAccuracy {
  CsrView<Scalar, Index> X;
  LabelView y;
  double operator()(const LinearModel<Scalar>& model) const {
    const auto predicted = model.predict_classes(X);
    return metrics::accuracy(predicted, y);
  }
};

/// The log-uniform grid λ_k = λ_max · ratio^{k/(N−1)}, k = 0, …, N−1 (N = 1: λ_max · ratio).
inline std::vector<double> lambda_grid(double lambda_max, std::int32_t n_lambdas, double ratio) {
  std::vector<double> grid(static_cast<std::size_t>(n_lambdas));
  for (std::int32_t k = 0; k < n_lambdas; ++k) {
    const double t = n_lambdas == 1 ? 1.0 : static_cast<double>(k) / static_cast<double>(n_lambdas - 1);
    grid[static_cast<std::size_t>(k)] = lambda_max * std::pow(ratio, t);
  }
  return grid;
}

/// Solves (1) along the grid of PathOptions, each solve warm-started from the previous one.
/// `make_solver(λ)` builds the solver for one λ; `evaluate(model)` (optional) scores each
/// solution, e.g. `HeldOutAccuracy`. Throws std::invalid_argument for bad options, and when
/// λ_max is needed but the solver cannot give its loss and penalty.
template <RealScalar Scalar, StorageIndex Index, int Order, class MakeSolver, class Evaluate = NoEvaluation>
PathResult<Scalar> regularization_path(const Problem<Scalar, Index, Order>& problem, MakeSolver&& make_solver,
                                       const PathOptions& options = {}, Evaluate&& evaluate = {}) {
  options.validate();
  PathResult<Scalar> path;
  path.lambda_max = options.lambda_max;
  if (path.lambda_max == 0.0) {
    const auto solver = make_solver(1.0);
    if constexpr (requires { solver.loss(); solver.penalty(); }) {
      bool fit_intercept = false;
      if constexpr (requires { solver.options().fit_intercept; }) fit_intercept = solver.options().fit_intercept;
      path.lambda_max = lambda_max(solver.loss(), solver.penalty(), problem, fit_intercept);
    } else {
      throw std::invalid_argument(
          "regularization_path: the solver has no loss() and penalty() to compute lambda_max from; "
          "set PathOptions::lambda_max");
    }
    if (!(path.lambda_max > 0.0) || !std::isfinite(path.lambda_max))
      throw std::invalid_argument("regularization_path: lambda_max is " + std::to_string(path.lambda_max) +
                                  " (the gradient at W = 0 vanishes or the penalty has no finite dual norm); "
                                  "set PathOptions::lambda_max");
  }
  const std::vector<double> grid = lambda_grid(path.lambda_max, options.n_lambdas, options.ratio);
  path.points.reserve(grid.size());
  path.models.reserve(grid.size());
  auto add_point = [&](double lambda, Result<Scalar>&& result) {
    PathPoint point;
    point.lambda = lambda;
    point.objective = result.info.objective;
    point.nnz_rows = result.info.nnz_rows;
    point.epochs = result.info.epochs;
    point.seconds = result.info.seconds;
    point.status = result.info.status;
    point.accuracy = static_cast<double>(evaluate(result.model));
    path.points.push_back(point);
    path.models.push_back(std::move(result.model));
  };
  const std::span<const double> lambdas(grid);
  if constexpr (requires(const std::invoke_result_t<MakeSolver&, double>& s) {
                  { s.fit_path(problem, lambdas) } -> std::same_as<std::vector<Result<Scalar>>>;
                }) {
    // The solver solves the whole grid in one call (sharing its set-up and screening work).
    std::vector<Result<Scalar>> results = make_solver(grid.front()).fit_path(problem, lambdas);
    for (std::size_t k = 0; k < results.size(); ++k) add_point(grid[k], std::move(results[k]));
  } else {
    for (const double lambda : grid) {
      const auto solver = make_solver(lambda);
      add_point(lambda, path.models.empty() ? solver.fit(problem) : solver.fit(problem, path.models.back()));
    }
  }
  return path;
}

}  // namespace sparsemc
