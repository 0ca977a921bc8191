#pragma once
/// \file calibrated_ls.hpp
/// `CalibratedLS`: calibrated least squares (Agarwal et al., "Least Squares Revisited", ICML
/// 2014, Algorithm 2) — least squares with a learned link: alternate a least-squares fit of the
/// residual and a least-squares fit of the targets on polynomials of the predictions, then
/// project the predictions onto the probability simplex.

#include <Eigen/Core>

#include <cmath>
#include <cstdint>
#include <iostream>
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
  /// Print one progress line per iteration to std::cerr.
  bool verbose = false;
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
  template <class Prob, class Scalar, class... Callbacks>
  StagedResult<Scalar> run(const Prob& problem, const StagedModel<Scalar>* initial, Callbacks&... callbacks) const {
    problem.validate();
    const Stopwatch clock;
    const Eigen::Index n = problem.n_samples();
    const Eigen::Index d = problem.n_features();
    const ClassIndex K = problem.n_classes();
    const bool intercept = options_.fit_intercept;
    const Eigen::Index p = d + (intercept ? 1 : 0);

    std::vector<Label> labels(static_cast<std::size_t>(K));
    std::iota(labels.begin(), labels.end(), Label{0});
    StagedModel<Scalar> model(d, labels, options_.calibration_degree);
    const auto c = detail::gls::costs(problem);
    const auto Y = detail::gls::indicator_targets(problem);
    ClassMatrix<Scalar> Yhat = ClassMatrix<Scalar>::Zero(n, K);
    const double E0 = detail::gls::square_loss(Yhat, Y, c);
    if (initial != nullptr) {
      if (initial->n_features() != static_cast<std::int64_t>(d) || initial->n_classes() != K ||
          initial->calibration_degree() != options_.calibration_degree)
        throw std::invalid_argument("CalibratedLS::fit: the initial model does not match the problem (d, K) and "
                                    "calibration_degree");
      model = *initial;
      Yhat = initial->decision_function(problem.X);
    }
    double E = detail::gls::square_loss(Yhat, Y, c);
    const double scale = E0 > 0.0 ? E0 : 1.0;

    const auto P = detail::gls::factorise(detail::gls::second_moment(problem, intercept), 1.0, penalty_.mu, d,
                                          options_.gram_ridge);
    ClassMatrix<Scalar> D(n, K), G(p, K), W(p, K), Ytilde(n, K), U;
    detail::gls::SquareMatrix<Scalar> Z(p, K);
    const Eigen::Matrix<Scalar, Eigen::Dynamic, 1> c_over_n = c / static_cast<Scalar>(n);

    Status status = Status::max_iter;
    double measure = std::numeric_limits<double>::quiet_NaN();
    std::int64_t epoch = 0;
    notify_begin(callbacks...);
    while (epoch < options_.max_epochs) {
      ++epoch;
      // Residual fit (10): W = (Σ̂ + μI)⁻¹ X̃ᵀC(Y − Ŷ)/n, Ỹ = Ŷ + X̃W.
      D.noalias() = c_over_n.asDiagonal() * (Y - Yhat);
      W.setZero();
      detail::gls::gradient(problem, D, W, 0.0, G);
      Z = G;
      P.solve_in_place(Z);
      W = Z;
      detail::gls::scores(problem, W, Yhat, Ytilde);
      // Calibration (11) and the simplex projection.
      ClassMatrix<Scalar> calibration = detail::gls::calibrate(Ytilde, Y, c, options_.calibration_degree, U, Yhat);
      const double E_next = detail::gls::square_loss(Yhat, Y, c);
      if (!std::isfinite(E_next) || !W.allFinite()) {
        status = Status::numerical_issue;
        break;
      }
      typename StagedModel<Scalar>::Stage stage;
      stage.linear = LinearModel<Scalar>(W.topRows(d), intercept ? ClassVector<Scalar>(W.row(d).transpose())
                                                                 : ClassVector<Scalar>(), labels);
      stage.calibration = std::move(calibration);
      model.add_stage(std::move(stage));
      measure = (E - E_next) / scale;
      E = E_next;

      const EpochReport report{epoch, E, measure, -1, clock.seconds()};
      if (options_.verbose) ProgressPrinter{std::cerr}.end_epoch(report);
      const bool stop = notify_end_epoch(report, [&]() -> const StagedModel<Scalar>& { return model; }, callbacks...);
      if (measure <= options_.tol) {
        status = Status::converged;
        break;
      }
      if (stop) {
        status = Status::stopped_by_callback;
        break;
      }
      if (options_.time_limit > 0.0 && report.seconds >= options_.time_limit) {
        status = Status::time_limit;
        break;
      }
    }

    auto& provenance = model.provenance();
    provenance.loss = std::string(LeastSquares::name);
    provenance.penalty = std::string(NoPenalty::name);
    provenance.solver = std::string(name);
    provenance.lambda = 0.0;
    provenance.mu = penalty_.mu;
    provenance.status = std::string(to_string(status));
    StagedResult<Scalar> result{std::move(model), {}};
    auto& info = result.info;
    info.status = status;
    info.epochs = epoch;
    info.objective = E;
    info.measure_name = "relative_decrease";
    info.measure = measure;
    info.seconds = clock.seconds();
    notify_end(info, callbacks...);
    return result;
  }

  using Base::loss_;
  using Base::options_;
  using Base::penalty_;
};

}  // namespace sparsemc
