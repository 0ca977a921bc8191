#pragma once
/// \file gls.hpp
/// `GLS<Link>`: generalized least squares (Agarwal, Kakade, Karampatziakis, Song & Valiant,
/// "Least Squares Revisited: Scalable Approaches for Multi-class Prediction", ICML 2014,
/// Algorithm 1) — preconditioned gradient descent whose preconditioner, the second moment of
/// the features, is factorised once; parameter-free and insensitive to the conditioning of X.

#include <Eigen/Core>

#include <cmath>
#include <concepts>
#include <cstdint>
#include <limits>
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
#include "../../loss/concepts.hpp"
#include "../../loss/least_squares.hpp"
#include "../../loss/logistic.hpp"
#include "../../model/linear_model.hpp"
#include "../../penalty/none.hpp"
#include "../duality_gap.hpp"
#include "../sample_sums.hpp"
#include "../solver_base.hpp"
#include "detail/core.hpp"
#include "detail/engine.hpp"

namespace sparsemc {

/// Options of `GLS`. Every field has a default; `validate()` names a bad field.
struct GLSOptions {
  /// Converged when the relative duality gap of (1) at the returned point is ≤ tol:
  /// (F − D)/max(|F|, 10⁻¹²) ≤ tol, so F − F* ≤ tol·|F| (solver/duality_gap.hpp). The default
  /// certifies a fit within 0.1 % of the optimum. With μ = 0 there is no finite certificate.
  double tol = 1e-3;
  /// Iteration budget; one iteration is one step (6): one XW, one XᵀD and two triangular solves.
  std::int64_t max_epochs = 1000;
  /// Wall-clock budget in seconds (0 = none), checked once per iteration.
  double time_limit = 0.0;
  /// Fit an unpenalised intercept b ∈ R^K (a column of ones appended to X in Σ̂).
  bool fit_intercept = false;
  /// L, the Lipschitz constant of the link g = ∇Φ in the preconditioner LΣ̂ + μI; 0 takes the
  /// loss's curvature_bound: ½ for softmax (exact: the largest eigenvalue of diag(p) − ppᵀ),
  /// 1 for the identity. The paper uses L = 1 for softmax (valid, twice as cautious).
  double lipschitz = 0.0;
  /// Nesterov momentum in the Σ̂-metric (the paper's §4 remark) with the function-value
  /// restart of O'Donoghue & Candès; false is plain Algorithm 1 (monotone).
  bool accelerated = false;
  /// > 0: quasi-Newton steps — L-BFGS with this many pairs, its initial inverse Hessian the
  /// preconditioner (LΣ̂ + μI)⁻¹ scaled by the learned curvature, Armijo backtracking — instead
  /// of (6) (`accelerated` is then ignored). Same cost per iteration; it does not stall where
  /// the softmax's curvature falls far below L near the optimum. 0: Algorithm 1 (or Nesterov).
  /// Default 10: fewer iterations than the accelerated Algorithm 1 at the same cost per
  /// iteration (docs/gls-mnist.md), and the same minimiser.
  int memory = 10;
  /// δ = gram_ridge · (mean diagonal of LΣ̂ + μI), added to the preconditioner's diagonal so
  /// it is positive definite when Σ̂ is singular (grown automatically if the Cholesky
  /// factorisation still fails). It changes the path, not the minimiser.
  double gram_ridge = 1e-10;
  /// Dense double X only: form Σ̂ in single precision (chunks of 1,024 samples, accumulated in
  /// double; its entries then carry relative errors of about 10⁻⁷) and factorise it in double.
  /// Forming Σ̂ is the set-up's largest cost (O(nd²)) and runs twice as fast in float. Σ̂ only
  /// preconditions: the gradient stays exact, so the iterates converge to the same minimiser,
  /// but the identity link then needs a few steps instead of one. Ignored for float or sparse X.
  /// On by default: the answer is certified by the duality gap whatever the preconditioner.
  bool single_precision_gram = true;
  /// Quasi-Newton only (memory > 0): every `curvature_refresh` iterations, rebuild the
  /// preconditioner from the current fit, P = X̃ᵀ diag(c_i w_i) X̃/n + μI with w_i = ½‖g(s_i) − y_i‖₁
  /// (for softmax 1 − p_{i,y_i}: about the curvature of sample i, which tends to 0 for samples
  /// fitted with confidence), and recompute P⁻¹ of the stored pairs. Each rebuild costs another
  /// set-up (forming and factorising a Σ̂); it pays where the global bound L·Σ̂ weighs all
  /// samples alike while only the uncertain ones still carry curvature (near-separable data).
  /// 0: never (the metric stays LΣ̂ + μI). Default 40 (measured on mnist RFF, docs/gls-mnist.md):
  /// a fit certified in fewer iterations never pays for a refresh.
  std::int64_t curvature_refresh = 40;

  /// Throws std::invalid_argument naming the first field out of range.
  void validate() const {
    detail::require_stopping_rule(tol, max_epochs, time_limit);
    detail::require_nonnegative("lipschitz", lipschitz);
    detail::require_finite("lipschitz", lipschitz);
    detail::require_nonnegative("memory", memory);
    detail::require_nonnegative("curvature_refresh", curvature_refresh);
    detail::require_nonnegative("gram_ridge", gram_ridge);
    detail::require_finite("gram_ridge", gram_ridge);
  }
};

/// What GLS solves: a generalised linear loss (∇ℓ = g(s) − t_y: Logistic, LeastSquares) with
/// the ridge only.
template <class Loss, class Penalty>
concept GLSAccepts = GeneralizedLinearLoss<Loss> && std::same_as<Penalty, NoPenalty>;

/// Generalized least squares, Algorithm 1 of Agarwal et al. (2014), for objective (1) with a
/// GLM loss ℓ(s, y) = Φ(s) − yᵀs and ridge μ (no sparse penalty):
///
///     F(W, b) = (1/n) Σ_i c_i ℓ(Wᵀx_i + b, y_i) + (μ/2)‖W‖_F²,
///     ∇_W F   = Xᵀ(g(S) − Y)C/n + μW,   g = ∇Φ the link,   S = XW + 1bᵀ.
///
/// `Link` is the loss policy whose gradient is g(s) − y: `Logistic` (softmax link,
/// multinomial logistic regression) or `LeastSquares` (identity link). If g is L-Lipschitz,
/// (LΣ̂ + μI) ⊗ I_K majorises the Hessian of F (Σ̂ = X̃ᵀCX̃/n, X̃ = [X 1] with an intercept),
/// so the step
///
///     Wᵗ⁺¹ = Wᵗ − (LΣ̂ + μI)⁻¹ ∇F(Wᵗ)                                               (6)
///
/// — the paper's eq. (6) with the ridge added to both the gradient and the preconditioner —
/// decreases F monotonically, at the rate of Theorem 1, independently of the conditioning of
/// Σ̂. By default the steps are quasi-Newton in that metric (memory = 10).
///
/// `converged` means (F − D)/max(|F|, 10⁻¹²) ≤ tol at the returned (W, b), the relative duality
/// gap of (1) (solver/duality_gap.hpp); with μ = 0 no finite certificate exists.
///
/// `fit_part` solves one part of a sparse problem split by samples among processes (one
/// reduction of Σ̂ per factorisation, of ∇F — p × K numbers — per iteration, of one number
/// per line-search trial; sparsemc/mpi/sample_partition.hpp).
///
/// Implementation notes: docs/gls-mnist.md.
///
/// \code
///   #include <sparsemc/solver/gls/gls.hpp>
///   using namespace sparsemc;
///   GLS solver(Logistic{}, NoPenalty{.mu = 1e-4}, GLSOptions{.tol = 1e-6});
///   Result<double> result = solver.fit(dense_problem);            // or a CsrProblem
///   std::cout << result.info.objective << ' ' << result.info.epochs << '\n';
///   auto ridge = GLS(LeastSquares{}, NoPenalty{.mu = 1e-3}).fit(problem);   // one step (sparse X)
/// \endcode
template <class Link>
class GLS : public detail::SolverBase<GLS<Link>, Link, NoPenalty, GLSOptions, LinearModel, Result, true> {
  using Base = detail::SolverBase<GLS<Link>, Link, NoPenalty, GLSOptions, LinearModel, Result, true>;
  friend Base;

 public:
  using Options = GLSOptions;
  /// The registered solver name (provenance, tools).
  static constexpr std::string_view name = "gls";

  GLS(Link link, NoPenalty ridge, Options options = {}) : Base(std::move(link), ridge, std::move(options)) {
    detail::require_nonnegative("mu", penalty_.mu);
    detail::require_finite("mu", penalty_.mu);
  }

  /// Fits (1) over a problem split by samples among processes: `part` holds this process's
  /// samples (part.n_total the samples of the whole), `sums` completes every sum over the
  /// samples (sample_sums.hpp; mpi::SampleSums over MPI ranks) — Σ̂, the loss, the gradient,
  /// the gap —, `initial` a warm start or null. Every process calls it with its part, the same
  /// options and the same `initial`; each returns the same model and information block, the
  /// serial solve's iterates up to the order of the sums, certified by the gap of the whole.
  template <RealScalar Scalar, StorageIndex Index, int Order, SampleSums Sums, class... Callbacks>
  Result<Scalar> fit_part(const Problem<Scalar, Index, Order>& part, const Sums& sums,
                          const LinearModel<Scalar>* initial, Callbacks&&... callbacks) const {
    return solve(part, initial, sums, callbacks...);
  }

  /// L used in the preconditioner (options().lipschitz, or the loss's curvature bound).
  template <RealScalar Scalar>
  [[nodiscard]] double lipschitz(ClassIndex K) const {
    return options_.lipschitz > 0.0 ? options_.lipschitz
                                    : static_cast<double>(loss_.template curvature_bound<Scalar>(K));
  }

 private:
  template <class Prob, class Scalar, class... Callbacks>
  Result<Scalar> run(const Prob& problem, const LinearModel<Scalar>* initial, Callbacks&... callbacks) const {
    return solve(problem, initial, LocalSums{}, callbacks...);
  }

  /// The solve: Σ̂ factorised, then the quasi-Newton or descent loop of detail/engine.hpp with
  /// the gap's certifier, then the certificate at the returned W and the shared epilogue. The
  /// sums over samples, the clock and the callbacks' stop are agreed through `sums`.
  template <class Prob, class Scalar, class Sums, class... Callbacks>
  Result<Scalar> solve(const Prob& problem, const LinearModel<Scalar>* initial, const Sums& sums,
                       Callbacks&... callbacks) const {
    static_assert(GeneralizedLinearLoss<Link> && SmoothLoss<Link, Scalar>,
                  "GLS needs a GLM loss whose gradient is link(s) − y (GeneralizedLinearLoss): Logistic (softmax) or "
                  "LeastSquares (identity).");
    problem.validate();
    const Stopwatch clock;
    const Eigen::Index d = problem.n_features();
    const ClassIndex K = problem.n_classes();
    const bool intercept = options_.fit_intercept;
    const Eigen::Index p = d + (intercept ? 1 : 0);

    ClassMatrix<Scalar> W = ClassMatrix<Scalar>::Zero(p, K);
    std::vector<Label> labels = detail::cold_start_labels(K);
    double bias = -1.0;
    if (initial != nullptr) {
      detail::check_warm_start(name, *initial, d, K);
      initial->copy_to(W);
      if (intercept && initial->has_intercept()) W.row(d) = initial->intercept().transpose();
      labels = initial->labels();
      bias = initial->provenance().bias;
    }
    const auto make_model = [&](const ClassMatrix<Scalar>& V) {
      return LinearModel<Scalar>(V.topRows(d), intercept ? ClassVector<Scalar>(V.row(d).transpose()) : ClassVector<Scalar>(),
                                 labels);
    };

    auto P = detail::gls::factorise(
        detail::gls::second_moment(problem, intercept, options_.single_precision_gram, nullptr, sums),
        lipschitz<Scalar>(K), penalty_.mu, d, options_.gram_ridge);
    notify_begin(callbacks...);
    const detail::gls::RunSettings settings{.tol = options_.tol,
                                            .max_epochs = options_.max_epochs,
                                            .time_limit = options_.time_limit,
                                            .accelerated = options_.accelerated,
                                            .memory = options_.memory,
                                            .refresh = options_.curvature_refresh};
    const auto refresh = [&](const ClassMatrix<Scalar>& D, detail::gls::Preconditioner<Scalar>& Q) {
      refresh_metric(problem, D, Q, sums);
    };
    const auto on_epoch = [&](const EpochReport& report, const ClassMatrix<Scalar>& V) {
      return notify_end_epoch(report, [&] { return make_model(V); }, callbacks...);
    };
    // Only the duality gap of (1) decides `converged` (detail::gls::GapCertifier).
    detail::gls::GapCertifier<Link, Prob, Scalar, Sums> certify(loss_, problem, penalty_.mu, intercept, options_.tol,
                                                                sums);
    const auto outcome =
        options_.memory > 0
            ? detail::gls::run_quasi_newton(loss_, problem, P, penalty_.mu, settings, W, ClassMatrix<Scalar>(), clock,
                                            on_epoch, refresh, certify, sums)
            : detail::gls::run(loss_, problem, P, penalty_.mu, settings, W, ClassMatrix<Scalar>(), clock, on_epoch,
                               certify, sums);

    // The certificate at the returned W (the last evaluation if it was at this W).
    DualityGap gap = certify.last();
    if (certify.epoch() != outcome.epochs || outcome.status == Status::numerical_issue) {
      ClassMatrix<Scalar> S;
      detail::gls::scores(problem, W, ClassMatrix<Scalar>(), S);
      gap = certify.at(W, S);
    }
    Result<Scalar> result = detail::finish_result<Link, NoPenalty>(
        make_model(W), name, penalty_, bias, gap,
        {.status = outcome.status, .epochs = outcome.epochs, .objective = outcome.objective,
         .measure_name = "gradient_norm", .measure = outcome.measure});
    if (std::isnan(gap.primal - gap.dual)) result.info.duality_gap = std::numeric_limits<double>::quiet_NaN();
    result.model.provenance().lambda = 0.0;
    result.info.seconds = sums.max(clock.seconds());
    certify.gap_spent().record_into(result.info);
    notify_end(result.info, callbacks...);
    return result;
  }

  /// The quasi-Newton scheme's curvature refresh: P = Σ̂_w + μI rebuilt from the second moment
  /// weighted by the current curvature estimate of each sample, w_i = (n/(2c_i))‖D_i‖₁ with
  /// D_i = (c_i/n)(g(s_i) − y_i) the link residual (0 for a sample of weight 0); L = 1, the
  /// weights carry the curvature.
  template <class Prob, class Scalar, class Sums>
  void refresh_metric(const Prob& problem, const ClassMatrix<Scalar>& D, detail::gls::Preconditioner<Scalar>& P,
                      const Sums& sums) const {
    const Eigen::Index n_part = problem.n_samples();
    const auto n = static_cast<Scalar>(problem.normaliser());
    Eigen::Matrix<Scalar, Eigen::Dynamic, 1> w(n_part);
    for (Eigen::Index i = 0; i < n_part; ++i) {
      const Scalar c = problem.weight(static_cast<typename Prob::index_type>(i));
      w[i] = c > Scalar(0) ? Scalar(0.5) * n / c * D.row(i).cwiseAbs().sum() : Scalar(0);
    }
    P = detail::gls::factorise(
        detail::gls::second_moment(problem, options_.fit_intercept, options_.single_precision_gram, &w, sums), 1.0,
        penalty_.mu, problem.n_features(), options_.gram_ridge);
  }

  using Base::loss_;
  using Base::options_;
  using Base::penalty_;
};

}  // namespace sparsemc
