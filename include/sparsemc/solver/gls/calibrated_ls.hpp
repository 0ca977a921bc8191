#pragma once
/// \file calibrated_ls.hpp
/// `CalibratedLS`: calibrated least squares (Agarwal et al., "Least Squares Revisited", ICML
/// 2014, Algorithm 2) — least squares with a learned link: alternate a least-squares fit of the
/// residual and a least-squares fit of the targets on polynomials of the predictions, then
/// project the predictions onto the probability simplex.

#include <Eigen/Core>

#include <cmath>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "../../core/callbacks.hpp"
#include "../../core/status.hpp"
#include "../../core/stopwatch.hpp"
#include "../../core/traits.hpp"
#include "../../core/validate.hpp"
#include "../../data/dense_problem.hpp"
#include "../../data/problem.hpp"
#include "../../loss/least_squares.hpp"
#include "../../model/staged_model.hpp"
#include "../../penalty/none.hpp"
#include "../solver_base.hpp"
#include "detail/calibration.hpp"
#include "detail/core.hpp"
#include "detail/staged.hpp"

namespace sparsemc {

/// Options of `CalibratedLS`. Every field has a default; `validate()` names a bad field.
struct CalibratedLSOptions {
  /// Stop (status `converged`) when one iteration lowers the square loss by at most tol times
  /// its value at Ŷ = 0: (E_{t−1} − E_t) ≤ tol · E_0, E_t = (1/n) Σ_i c_i ½‖ŷ_i⁽ᵗ⁾ − y_i‖².
  /// Algorithm 2 has no certificate: this is a stall test, not a bound on E_t − inf E.
  double tol = 1e-6;
  /// Iteration budget: at most this many stages (each a residual fit and a calibration fit).
  std::int64_t max_epochs = 50;
  /// Wall-clock budget in seconds (0 = none), checked once per iteration.
  double time_limit = 0.0;
  /// Fit an unpenalised intercept b_t in every residual fit (a column of ones in X̃).
  bool fit_intercept = false;
  /// m: the calibration basis is u(ỹ) = [ỹ, ỹ², …, ỹ^m, 1] elementwise (the paper uses m = 3).
  int calibration_degree = 3;
  /// δ = gram_ridge · (mean diagonal of Σ̂ + μI) added to the residual fit's normal matrix
  /// (keeps it positive definite when Σ̂ is singular; see GLSOptions::gram_ridge).
  double gram_ridge = 1e-10;

  /// Throws std::invalid_argument naming the first field out of range.
  void validate() const {
    detail::require_stopping_rule(tol, max_epochs, time_limit);
    detail::require_positive("calibration_degree", calibration_degree);
    detail::require_nonnegative("gram_ridge", gram_ridge);
    detail::require_finite("gram_ridge", gram_ridge);
  }
};

/// What CalibratedLS solves: a generalised linear loss with the identity link (LeastSquares)
/// and the ridge.
template <class Loss, class Penalty>
concept CalibratedLSAccepts = GeneralizedLinearLoss<Loss> && (Loss::inverse_link == InverseLink::identity) &&
                              std::same_as<Penalty, NoPenalty>;

/// Calibrated least squares, Algorithm 2 of Agarwal et al. (2014). From Ŷ⁽⁰⁾ = 0 (or a warm
/// start's predictions), every iteration t
///
///     W_t = argmin_W (1/n) Σ_i c_i ½‖y_i − ŷ_i⁽ᵗ⁻¹⁾ − Wᵀx̃_i‖² + (μ/2)‖W‖²,
///     ỹ_i = ŷ_i⁽ᵗ⁻¹⁾ + W_tᵀx̃_i                                                       (10)
///     W̃_t = argmin_W̃ Σ_i c_i ‖y_i − W̃ᵀu(ỹ_i)‖²,   ŷ_i⁽ᵗ⁾ = clip(W̃_tᵀu(ỹ_i))           (11)
///
/// with x̃ = [x; 1] when fit_intercept, u(ỹ) = [ỹ, ỹ², …, ỹ^m, 1] (m = calibration_degree) and
/// clip the Euclidean projection onto the probability simplex (prox/simplex.hpp). The ridge
/// μ (the paper has μ = 0) is for ill-posed X. The residual fit is one solve with the Cholesky
/// factor of Σ̂ + μI (formed and factorised once, as in GLS); the calibration fit solves an
/// (mK + 1)-sized system. Each step can only lower the training square loss
/// E_t = (1/n) Σ c_i ½‖ŷ_i⁽ᵗ⁾ − y_i‖²: the residual fit could choose W = 0, the calibration
/// could choose the identity, and the projection moves every row towards its target (which
/// lies in the simplex); a safeguard enforces the middle one against rounding. E_t is the
/// reported objective; the measure is the last relative decrease (E_{t−1} − E_t)/E_0.
///
/// **What its stop means.** Algorithm 2 does not minimise objective (1) — the calibration
/// makes the predictor a chain, not a linear map of x — and it has no duality gap of its own
/// problem either. So here, unlike for the solvers of (1), `converged` means "stalled": the
/// last iteration lowered E by at most tol·E_0 (E never rises). info.duality_gap and
/// info.relative_gap are NaN (no certificate is claimed).
///
/// Predictions depend on every stage (the model is not a single linear map, "not proper" in
/// the paper's words), so `fit` returns a `StagedModel` (model/staged_model.hpp) that stores
/// the chain; io/staged_model_io.hpp saves and loads it. Multilabel targets (indicators of
/// class sets) are accepted; the simplex projection then assumes one class per sample.
///
/// \code
///   #include <sparsemc/solver/gls/calibrated_ls.hpp>
///   using namespace sparsemc;
///   CalibratedLS solver(LeastSquares{}, NoPenalty{.mu = 1e-6}, CalibratedLSOptions{.max_epochs = 10});
///   StagedResult<double> result = solver.fit(problem);     // CsrProblem, CscProblem or DenseProblem
///   auto yhat = result.model.predict(test.csr());
/// \endcode
class CalibratedLS : public detail::SolverBase<CalibratedLS, LeastSquares, NoPenalty, CalibratedLSOptions, StagedModel, StagedResult, true> {
  using Base = detail::SolverBase<CalibratedLS, LeastSquares, NoPenalty, CalibratedLSOptions, StagedModel, StagedResult, true>;
  friend Base;

 public:
  using Options = CalibratedLSOptions;
  /// The registered solver name (provenance, tools).
  static constexpr std::string_view name = "gls-cal";

  CalibratedLS(LeastSquares loss, NoPenalty ridge, Options options = {}) : Base(loss, ridge, std::move(options)) {
    detail::require_nonnegative("mu", penalty_.mu);
    detail::require_finite("mu", penalty_.mu);
  }

 private:
  /// Algorithm 2: the shared chain state and the residual fit (detail/staged.hpp), then per
  /// iteration the fit (10), the calibration (11), the report and the verdict, then the
  /// shared epilogue.
  template <class Prob, class Scalar, class... Callbacks>
  StagedResult<Scalar> run(const Prob& problem, const StagedModel<Scalar>* initial, Callbacks&... callbacks) const {
    problem.validate();
    const Stopwatch clock;
    const Eigen::Index d = problem.n_features();
    const bool intercept = options_.fit_intercept;
    detail::gls::StagedFit<Scalar> fit(problem, options_.calibration_degree);
    const double E0 = fit.square_loss();
    if (initial != nullptr) start_from(*initial, problem, fit);
    fit.begin(E0, fit.square_loss());
    detail::gls::ResidualFit<Prob> residual_fit(problem, intercept, penalty_.mu, options_.gram_ridge, fit.c);

    Status status = Status::max_iter;
    notify_begin(callbacks...);
    while (fit.epoch < options_.max_epochs) {
      ++fit.epoch;
      residual_fit(fit);                                                            // (10)
      ClassMatrix<Scalar> calibration = fit.calibrate(options_.calibration_degree);  // (11), the projection
      const double E_next = fit.square_loss();
      const ClassMatrix<Scalar>& W = residual_fit.W();
      if (!std::isfinite(E_next) || !W.allFinite()) {
        status = Status::numerical_issue;
        break;
      }
      typename StagedModel<Scalar>::Stage stage;
      stage.linear = LinearModel<Scalar>(W.topRows(d), detail::gls::stage_intercept(W, d, intercept), fit.labels);
      stage.calibration = std::move(calibration);
      fit.model.add_stage(std::move(stage));
      fit.advance(E_next);

      const EpochReport report = fit.report(clock.seconds());
      const bool stop = notify_end_epoch(report, [&]() -> const StagedModel<Scalar>& { return fit.model; }, callbacks...);
      if (const auto verdict = detail::epoch_verdict(options_, true, fit.measure <= options_.tol, stop, report.seconds)) {
        status = *verdict;
        break;
      }
    }
    StagedResult<Scalar> result = fit.finish(LeastSquares::name, name, penalty_.mu, status, clock);
    notify_end(result.info, callbacks...);
    return result;
  }

  /// A warm start: the chain of `initial` (same d, K and calibration degree) and its predictions.
  template <class Prob, class Scalar>
  void start_from(const StagedModel<Scalar>& initial, const Prob& problem, detail::gls::StagedFit<Scalar>& fit) const {
    if (initial.n_features() != static_cast<std::int64_t>(problem.n_features()) ||
        initial.n_classes() != problem.n_classes() || initial.calibration_degree() != options_.calibration_degree)
      throw std::invalid_argument("CalibratedLS::fit: the initial model does not match the problem (d, K) and "
                                  "calibration_degree");
    fit.model = initial;
    fit.Yhat = initial.decision_function(problem.X);
  }

  using Base::loss_;
  using Base::options_;
  using Base::penalty_;
};

}  // namespace sparsemc
