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
#include "../../loss/concepts.hpp"
#include "../../loss/least_squares.hpp"
#include "../../loss/logistic.hpp"
#include "../../model/linear_model.hpp"
#include "../../penalty/none.hpp"
#include "../solver_base.hpp"
#include "detail/core.hpp"

namespace sparsemc {

/// Options of `GLS`. Every field has a default; `validate()` names a bad field.
struct GLSOptions {
  /// Stop when ‖∇F(W, b)‖_F ≤ tol · ‖∇F(0, 0)‖_F, F objective (1) (relative to W = 0, b = 0).
  double tol = 1e-6;
  /// Iteration budget; one iteration is one step (6): one XW, one XᵀD and two triangular solves.
  std::int64_t max_epochs = 1000;
  /// Wall-clock budget in seconds (0 = none), checked once per iteration.
  double time_limit = 0.0;
  /// Fit an unpenalised intercept b ∈ R^K (a column of ones appended to X in Σ̂).
  bool fit_intercept = false;
  /// Print one progress line per iteration to std::cerr.
  bool verbose = false;
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
  int memory = 0;
  /// δ = gram_ridge · (mean diagonal of LΣ̂ + μI), added to the preconditioner's diagonal so
  /// it is positive definite when Σ̂ is singular (grown automatically if the Cholesky
  /// factorisation still fails). It changes the path, not the minimiser.
  double gram_ridge = 1e-10;
  /// Dense double X only: form Σ̂ in single precision (chunks of 1,024 samples, accumulated in
  /// double; its entries then carry relative errors of about 10⁻⁷) and factorise it in double.
  /// Forming Σ̂ is the set-up's largest cost (O(nd²)) and runs twice as fast in float. Σ̂ only
  /// preconditions: the gradient stays exact, so the iterates converge to the same minimiser,
  /// but the identity link then needs a few steps instead of one. Ignored for float or sparse X.
  bool single_precision_gram = false;
  /// Quasi-Newton only (memory > 0): every `curvature_refresh` iterations, rebuild the
  /// preconditioner from the current fit, P = X̃ᵀ diag(c_i w_i) X̃/n + μI with w_i = ½‖g(s_i) − y_i‖₁
  /// (for softmax 1 − p_{i,y_i}: about the curvature of sample i, which tends to 0 for samples
  /// fitted with confidence), and recompute P⁻¹ of the stored pairs. Each rebuild costs another
  /// set-up (forming and factorising a Σ̂); it pays where the global bound L·Σ̂ weighs all
  /// samples alike while only the uncertain ones still carry curvature (near-separable data).
  /// 0: never (the metric stays LΣ̂ + μI).
  std::int64_t curvature_refresh = 0;

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
/// Σ̂. Σ̂ is formed once (a symmetric rank update for dense X, the sparse product XᵀCX for
/// sparse X) and Cholesky-factorised once (d×d, one factor serves all K classes); each step
/// costs one XW and one XᵀD product (O(ndK) dense, O(nnz·K) sparse) plus two triangular
/// solves (O(d²K)). With the identity link and L = 1, (6) is the ridge regression solution
/// after one step (W = (Σ̂ + μI)⁻¹XᵀCY/n), and the second iteration confirms convergence.
///
/// **L**: softmax's exact bound is ½ (default, `Logistic::curvature_bound`); the paper's L = 1
/// is also valid (`lipschitz = 1`) and takes steps half as long. **Acceleration** (`accelerated`,
/// §4 of the paper): momentum Y = W + β(W − W_prev), β from FISTA's t-sequence, the step (6)
/// taken from Y, and a restart whenever F increases.
///
/// **Set-up and metric** (dense X, large d): `single_precision_gram` forms Σ̂ in float (the
/// O(nd²) rank update at twice the speed; Σ̂ only preconditions); `curvature_refresh` (with
/// `memory`) rebuilds the preconditioner every so many iterations from the samples' current
/// curvatures, X̃ᵀ diag(c_i w_i) X̃/n + μI — near the optimum of a near-separable problem only
/// the uncertain samples carry curvature, and the fixed metric LΣ̂ + μI misjudges it.
///
/// **Stopping** on the gradient of (1) relative to W = 0: ‖∇F(W, b)‖_F ≤ tol ‖∇F(0, 0)‖_F
/// (measure "gradient_norm"); a warm start at the optimum stops at once.
///
/// **Data**: a sparse `Problem` (CSR or CSC) or a `DenseProblem` (row-major dense X; images,
/// random Fourier features). Memory: Σ̂ and its factor share one p × p matrix (p = d + 1 with an
/// intercept); a few n × K and p × K matrices. The link is evaluated in parallel over samples
/// with SPARSEMC_USE_OPENMP; Eigen parallelises the dense products.
///
/// \code
///   #include <sparsemc/solver/gls/gls.hpp>
///   using namespace sparsemc;
///   GLS solver(Logistic{}, NoPenalty{.mu = 1e-4}, GLSOptions{.tol = 1e-8, .accelerated = true});
///   Result<double> result = solver.fit(dense_problem);            // or a CsrProblem
///   std::cout << result.info.objective << ' ' << result.info.epochs << '\n';
///   auto ridge = GLS(LeastSquares{}, NoPenalty{.mu = 1e-3}).fit(problem);   // one step
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

  /// L used in the preconditioner (options().lipschitz, or the loss's curvature bound).
  template <RealScalar Scalar>
  [[nodiscard]] double lipschitz(ClassIndex K) const {
    return options_.lipschitz > 0.0 ? options_.lipschitz
                                    : static_cast<double>(Link::template curvature_bound<Scalar>(K));
  }

 private:
  template <class Prob, class Scalar, class... Callbacks>
  Result<Scalar> run(const Prob& problem, const LinearModel<Scalar>* initial, Callbacks&... callbacks) const {
    static_assert(SmoothLoss<Link, Scalar>,
                  "GLS needs a GLM loss whose gradient is link(s) − y: Logistic (softmax) or LeastSquares (identity).");
    problem.validate();
    const Stopwatch clock;
    const Eigen::Index d = problem.n_features();
    const ClassIndex K = problem.n_classes();
    const bool intercept = options_.fit_intercept;
    const Eigen::Index p = d + (intercept ? 1 : 0);

    ClassMatrix<Scalar> W = ClassMatrix<Scalar>::Zero(p, K);
    std::vector<Label> labels(static_cast<std::size_t>(K));
    std::iota(labels.begin(), labels.end(), Label{0});
    if (initial != nullptr) {
      if (initial->n_features() != static_cast<std::int64_t>(d) || initial->n_classes() != K)
        throw std::invalid_argument("GLS::fit: the initial model is " + std::to_string(initial->n_features()) + " × " +
                                    std::to_string(initial->n_classes()) + " but the problem is " + std::to_string(d) +
                                    " × " + std::to_string(K));
      initial->copy_to(W);
      if (intercept && initial->has_intercept()) W.row(d) = initial->intercept().transpose();
      labels = initial->labels();
    }
    const auto make_model = [&](const ClassMatrix<Scalar>& V) {
      return LinearModel<Scalar>(V.topRows(d), intercept ? ClassVector<Scalar>(V.row(d).transpose()) : ClassVector<Scalar>(),
                                 labels);
    };

    auto P = detail::gls::factorise(detail::gls::second_moment(problem, intercept, options_.single_precision_gram),
                                          lipschitz<Scalar>(K),
                                          penalty_.mu, d, options_.gram_ridge);
    notify_begin(callbacks...);
    const detail::gls::RunSettings settings{options_.tol,         options_.max_epochs, options_.time_limit,
                                            options_.accelerated, options_.verbose,    options_.memory,
                                            options_.curvature_refresh};
    const auto refresh = [&](const ClassMatrix<Scalar>& D, detail::gls::Preconditioner<Scalar>& Q) {
      const Eigen::Index n = problem.n_samples();
      Eigen::Matrix<Scalar, Eigen::Dynamic, 1> w(n);
      for (Eigen::Index i = 0; i < n; ++i) {
        const Scalar c = problem.weight(static_cast<typename Prob::index_type>(i));
        w[i] = c > Scalar(0) ? Scalar(0.5) * static_cast<Scalar>(n) / c * D.row(i).cwiseAbs().sum() : Scalar(0);
      }
      Q = detail::gls::factorise(detail::gls::second_moment(problem, intercept, options_.single_precision_gram, &w),
                                 1.0, penalty_.mu, d, options_.gram_ridge);
    };
    const auto on_epoch = [&](const EpochReport& report, const ClassMatrix<Scalar>& V) {
      return notify_end_epoch(report, [&] { return make_model(V); }, callbacks...);
    };
    const auto outcome =
        options_.memory > 0
            ? detail::gls::run_quasi_newton(loss_, problem, P, penalty_.mu, settings, W, ClassMatrix<Scalar>(), clock,
                                            on_epoch, refresh)
            : detail::gls::run(loss_, problem, P, penalty_.mu, settings, W, ClassMatrix<Scalar>(), clock, on_epoch);

    Result<Scalar> result{make_model(W), {}};
    auto& provenance = result.model.provenance();
    provenance.loss = std::string(Link::name);
    provenance.penalty = std::string(NoPenalty::name);
    provenance.solver = std::string(name);
    provenance.lambda = 0.0;
    provenance.mu = penalty_.mu;
    provenance.status = std::string(to_string(outcome.status));
    if (initial != nullptr) provenance.bias = initial->provenance().bias;
    auto& info = result.info;
    info.status = outcome.status;
    info.epochs = outcome.epochs;
    info.objective = outcome.objective;
    info.measure_name = "gradient_norm";
    info.measure = outcome.measure;
    info.nnz = result.model.nnz();
    info.nnz_rows = result.model.nnz_rows();
    info.seconds = clock.seconds();
    notify_end(info, callbacks...);
    return result;
  }

  using Base::loss_;
  using Base::options_;
  using Base::penalty_;
};

}  // namespace sparsemc
