#pragma once
/// \file engine.hpp
/// The state and the steps of one run of Algorithm 1 of Agarwal et al. (2014) (implementation
/// detail): the step (6) from W or, with momentum, from an extrapolated point
/// (`DescentEngine`), and the same step with a learned metric, L-BFGS preconditioned by P
/// (`QuasiNewtonEngine`); `run` and `run_quasi_newton` are the loops over their steps, shared by
/// GLS and Stagewise's blocks. core.hpp holds the machinery the steps call (Σ̂, P, the link,
/// scores, gradients, certificates); gls.hpp the mathematics (GLS's class comment).
///
/// Notation as in gls.hpp: W (p × K, p = d or d + 1 with the intercept row), the scores
/// S = X̃W + offset, the link residuals D_i = (c_i/n)(g(s_i) − y_i), G = ∇F(W), P = LΣ̂ + μI
/// the preconditioner, F the objective and f its loss part; the measure is ‖∇F‖_F/‖∇F(0)‖_F.

#include <Eigen/Core>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iostream>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "../../../core/callbacks.hpp"
#include "../../../core/status.hpp"
#include "../../../core/stopwatch.hpp"
#include "../../../core/traits.hpp"
#include "../../solver_base.hpp"
#include "core.hpp"

namespace sparsemc::detail::gls {

/// Settings of one run of Algorithm 1 (a subset of GLSOptions, shared with Stagewise).
struct RunSettings {
  double tol = 1e-6;
  std::int64_t max_epochs = 1000;
  double time_limit = 0.0;
  bool accelerated = false;
  bool verbose = false;
  int memory = 0;  ///< > 0: the quasi-Newton scheme (run_quasi_newton) with this many pairs
  std::int64_t refresh = 0;  ///< quasi-Newton: rebuild the preconditioner every this many iterations (0: never)
};

/// What one run of Algorithm 1 returns.
struct RunOutcome {
  Status status = Status::max_iter;
  std::int64_t epochs = 0;
  double objective = std::numeric_limits<double>::quiet_NaN();
  double measure = std::numeric_limits<double>::quiet_NaN();
};

/// (μ/2)‖V_{0:d}‖²: the ridge part of F at V (the intercept row d, if any, is not penalised).
template <class Scalar>
double ridge_value(double mu, Eigen::Index d, const ClassMatrix<Scalar>& V) {
  return 0.5 * mu * static_cast<double>(V.topRows(d).squaredNorm());
}

/// ⟨A, B⟩_F accumulated in Scalar, returned as double.
template <class Scalar>
double inner(const ClassMatrix<Scalar>& A, const ClassMatrix<Scalar>& B) {
  return static_cast<double>((A.array() * B.array()).sum());
}

/// Where a run starts: ‖∇F(0)‖_F, the scale of the stopping test whatever the start, and the
/// loss part f at W.
struct StartPoint {
  double reference = 0.0;  ///< ‖∇F(0)‖_F
  double f = 0.0;          ///< (1/n) Σ_i c_i ℓ(s_i, y_i) at W
  /// The divisor of the measure (1 when ∇F(0) = 0).
  [[nodiscard]] double scale() const noexcept { return reference > 0.0 ? reference : 1.0; }
};

/// The start of both schemes: ∇F(0) from the scores at W = 0 (the offset), then S and D at W
/// (unchanged for a cold start). Leaves G = ∇F(0) without the ridge.
template <class Loss, class Prob, class Scalar>
StartPoint start_point(const Loss& loss, const Prob& problem, const ClassMatrix<Scalar>& W,
                       const ClassMatrix<Scalar>& offset, ClassMatrix<Scalar>& S, ClassMatrix<Scalar>& D,
                       ClassMatrix<Scalar>& G) {
  StartPoint start;
  if (offset.size() > 0) S = offset;
  else S.setZero();
  start.f = link_residual(loss, problem, S, D);
  {
    const ClassMatrix<Scalar> zero = ClassMatrix<Scalar>::Zero(W.rows(), W.cols());
    gradient(problem, D, zero, 0.0, G);
  }
  start.reference = static_cast<double>(G.norm());
  if (!W.isZero(0)) {
    scores(problem, W, offset, S);
    start.f = link_residual(loss, problem, S, D);
  }
  return start;
}

/// FISTA's t-sequence (Beck & Teboulle 2009) with the function-value restart of O'Donoghue &
/// Candès (2015): the momentum β of the step from Y = W + β(W − W_prev).
struct Momentum {
  double t = 1.0;        ///< t_k
  double t_next = 1.0;   ///< t_{k+1} of the coming step
  double beta = 0.0;     ///< β = (t_k − 1)/t_{k+1}; 0: the step is taken from W
  bool restart = true;   ///< the first step has no momentum

  /// β and t_{k+1} of the coming step (0 and 1 without momentum or after a restart).
  void plan(bool accelerated) {
    beta = 0.0;
    t_next = 1.0;
    if (accelerated && !restart) {
      t_next = 0.5 * (1.0 + std::sqrt(1.0 + 4.0 * t * t));
      beta = (t - 1.0) / t_next;
    }
  }
  /// After a step: restart when F increased (or always without momentum), else t_k ← t_{k+1}.
  void advance(bool accelerated, bool increased) {
    restart = !accelerated || increased;
    t = restart ? 1.0 : t_next;
  }
};

/// One run of Algorithm 1, plain or accelerated (see `run`): the constructor sizes the work
/// space; `run` calls start(), then per pass extrapolate(), verdict(), confirm_at_w() and
/// step(), and after a stop by the callback or the time limit measure_at_w(). The problem, P,
/// the settings and W are held by reference: the engine lives inside one run.
template <class Loss, class Prob, class Scalar>
class DescentEngine {
 public:
  DescentEngine(const Loss& loss, const Prob& problem, const Preconditioner<Scalar>& P, double mu,
                const RunSettings& settings, ClassMatrix<Scalar>& W, const ClassMatrix<Scalar>& offset)
      : loss_(loss),
        problem_(problem),
        P_(P),
        mu_(mu),
        settings_(settings),
        offset_(offset),
        d_(problem.n_features()),
        W_(W),
        W_prev_(W),
        Y_(W.rows(), W.cols()),
        W_next_(W.rows(), W.cols()),
        G_(W.rows(), W.cols()),
        Z_(W.rows(), W.cols()),
        S_(problem.n_samples(), W.cols()),
        S_prev_(problem.n_samples(), W.cols()),
        S_Y_(problem.n_samples(), W.cols()),
        S_next_(problem.n_samples(), W.cols()),
        D_(problem.n_samples(), W.cols()),
        D_Y_(problem.n_samples(), W.cols()) {}

  /// ‖∇F(0)‖, S and D at W, F(W). False when F or the scale is not finite.
  bool start() {
    const StartPoint start = start_point(loss_, problem_, W_, offset_, S_, D_, G_);
    scale_ = start.scale();
    F_ = start.f + ridge_value(mu_, d_, W_);
    if (!std::isfinite(F_) || !std::isfinite(start.reference)) return false;
    S_prev_ = S_;
    return true;
  }

  /// The point Y of the step, W itself or W + β(W − W_prev) with its extrapolated scores
  /// (scores are linear in W), and G = ∇F(Y); the measure there.
  void extrapolate() {
    momentum_.plan(settings_.accelerated);
    at_w_ = momentum_.beta == 0.0;
    if (at_w_) {
      gradient(problem_, D_, W_, mu_, G_);
    } else {
      const auto b = static_cast<Scalar>(momentum_.beta);
      Y_.noalias() = (Scalar(1) + b) * W_ - b * W_prev_;
      S_Y_.noalias() = (Scalar(1) + b) * S_ - b * S_prev_;
      link_residual(loss_, problem_, S_Y_, D_Y_);
      gradient(problem_, D_Y_, Y_, mu_, G_);
    }
    measure_ = static_cast<double>(G_.norm()) / scale_;
  }

  /// The verdict before a step: a non-finite measure, W certified (only at W itself: its exact
  /// gradient), or the budget spent.
  template <class Certify>
  std::optional<Status> verdict(Certify& certify) {
    if (!std::isfinite(measure_)) return Status::numerical_issue;
    if (at_w_) out_.measure = measure_;  // exact at the current W
    double relative = 0.0;
    if (at_w_ && certify(out_.epochs, measure_, false, W_, S_, G_, F_, relative)) return Status::converged;
    if (out_.epochs >= settings_.max_epochs) return Status::max_iter;
    return std::nullopt;
  }

  /// Whether the extrapolated point looks converged: then the next pass restarts at W to
  /// confirm (no step taken).
  bool confirm_at_w() {
    if (!at_w_ && measure_ <= settings_.tol) {
      momentum_.restart = true;
      return true;
    }
    return false;
  }

  /// The step (6), W_next = Y − P⁻¹∇F(Y), with F there; the function restart; W_prev ← W ←
  /// W_next. False when F(W_next) is not finite (W is then unchanged).
  bool step() {
    Z_ = G_;
    P_.solve_in_place(Z_);
    W_next_.noalias() = (at_w_ ? W_ : Y_) - Z_;
    scores(problem_, W_next_, offset_, S_next_);
    const double f_next = link_residual(loss_, problem_, S_next_, D_);
    const double F_next = f_next + ridge_value(mu_, d_, W_next_);
    ++out_.epochs;
    if (!std::isfinite(F_next)) return false;
    momentum_.advance(settings_.accelerated, F_next > F_);
    std::swap(W_prev_, W_);
    std::swap(W_, W_next_);
    std::swap(S_prev_, S_);
    std::swap(S_, S_next_);
    F_ = F_next;
    return true;
  }

  /// The report of the step just taken (its measure: at the point the step started from).
  [[nodiscard]] EpochReport report(double seconds) const { return {out_.epochs, F_, measure_, -1, seconds}; }

  /// The measure at W itself (D holds the residuals at W after a step).
  void measure_at_w() {
    gradient(problem_, D_, W_, mu_, G_);
    out_.measure = static_cast<double>(G_.norm()) / scale_;
  }

  [[nodiscard]] RunOutcome outcome(Status status) {
    out_.status = status;
    out_.objective = F_;
    return out_;
  }

 private:
  const Loss& loss_;
  const Prob& problem_;
  const Preconditioner<Scalar>& P_;
  double mu_;
  const RunSettings& settings_;
  const ClassMatrix<Scalar>& offset_;
  Eigen::Index d_;
  ClassMatrix<Scalar>& W_;
  ClassMatrix<Scalar> W_prev_, Y_, W_next_, G_;
  SquareMatrix<Scalar> Z_;  ///< P⁻¹∇F(Y)
  ClassMatrix<Scalar> S_, S_prev_, S_Y_, S_next_, D_, D_Y_;
  Momentum momentum_;
  RunOutcome out_;
  double scale_ = 1.0;
  double F_ = 0.0;
  double measure_ = 0.0;  ///< at Y, this pass
  bool at_w_ = true;      ///< Y = W (β = 0)
};

/// Algorithm 1 (eq. 6) with ridge μ, optionally with Nesterov momentum, from W (p × K, p = d
/// or d + 1 with the intercept row; updated in place) on the scores X̃W + offset. Converged
/// when `certify(epoch, measure, force, W, S, ∇F, F, relative&)` says so at a point W with its
/// exact gradient (GapCertifier: the duality gap of (1); GradientNormTest: measure ≤ tol), the
/// measure being ‖∇F(W)‖_F/‖∇F(0)‖_F; with momentum, a measure ≤ tol at the extrapolated point
/// moves the next step to W. `on_epoch(report, W)` runs after every step and returns true to
/// stop. See GLS's class comment for the math.
template <class Loss, class Prob, class Scalar, class OnEpoch, class Certify>
RunOutcome run(const Loss& loss, const Prob& problem, const Preconditioner<Scalar>& P, double mu,
               const RunSettings& settings, ClassMatrix<Scalar>& W, const ClassMatrix<Scalar>& offset,
               const Stopwatch& clock, OnEpoch&& on_epoch, Certify&& certify) {
  DescentEngine<Loss, Prob, Scalar> engine(loss, problem, P, mu, settings, W, offset);
  if (!engine.start()) return engine.outcome(Status::numerical_issue);
  while (true) {
    engine.extrapolate();
    if (const std::optional<Status> verdict = engine.verdict(certify)) return engine.outcome(*verdict);
    if (engine.confirm_at_w()) continue;
    if (!engine.step()) return engine.outcome(Status::numerical_issue);
    const EpochReport report = engine.report(clock.seconds());
    if (settings.verbose) ProgressPrinter{std::cerr}.end_epoch(report);
    const bool stop = on_epoch(report, static_cast<const ClassMatrix<Scalar>&>(W));
    if (const auto verdict = epoch_verdict(settings, true, false, stop, report.seconds)) {
      engine.measure_at_w();
      return engine.outcome(*verdict);
    }
  }
}

/// Algorithm 1's step with a learned metric: L-BFGS (Nocedal & Wright, Alg. 7.4) whose initial
/// inverse Hessian is γ P⁻¹, P = LΣ̂ + μI the preconditioner of (6), γ = ⟨s, y⟩ / ⟨y, P⁻¹y⟩
/// from the newest pair. P removes the ill-conditioning of X (as in Algorithm 1); the pairs
/// and γ learn the softmax's actual curvature, which near the optimum is far below the global
/// bound L (most samples are fitted with probabilities near 0 or 1) — the reason Algorithm 1,
/// accelerated or not, slows down there. The first step is exactly (6).
///
/// Cost per iteration as (6): one X̃Δ and one X̃ᵀD product and one solve with P's factor (for
/// dense X both products in one pass over X when the full step is taken: `fused_trial`) —
/// P⁻¹y_i are kept with the pairs (P⁻¹y = P⁻¹g_new − P⁻¹g_old), so the recursion needs no other
/// solve. Scores are linear in W, so the backtracking (Armijo, sufficient decrease 10⁻⁴, halving)
/// re-evaluates only the link on S + αX̃Δ. A pair with ⟨s, y⟩ ≤ 0 (rounding; F is convex) is
/// skipped; if the direction is not a descent direction the memory is cleared and (6) taken.
/// Stopping as `run` (`certify` at the start and after every step, its relative gap in the
/// report); when even the smallest step fails to lower F (its rounding floor), the gap is
/// evaluated at once: certified → converged, else numerical_issue.
template <class Loss, class Prob, class Scalar, class OnEpoch, class Refresh, class Certify>
RunOutcome run_quasi_newton(const Loss& loss, const Prob& problem, Preconditioner<Scalar>& P, double mu,
                            const RunSettings& settings, ClassMatrix<Scalar>& W, const ClassMatrix<Scalar>& offset,
                            const Stopwatch& clock, OnEpoch&& on_epoch, Refresh&& refresh, Certify&& certify) {
  const Eigen::Index n = problem.n_samples();
  const Eigen::Index d = problem.n_features();
  const Eigen::Index p = W.rows();
  const Eigen::Index K = W.cols();
  const auto m = static_cast<std::size_t>(settings.memory);
  ClassMatrix<Scalar> S(n, K), dS(n, K), S_try(n, K), D(n, K), D_try(n, K);
  ClassMatrix<Scalar> G(p, K), G_prev(p, K), G_try(p, K), H(p, K), H_prev(p, K), R(p, K), Q(p, K), Delta(p, K),
      W_try(p, K);
  // The pairs (s_i, y_i, P⁻¹y_i) in a ring, ρ_i = 1/⟨s_i, y_i⟩.
  std::vector<ClassMatrix<Scalar>> s_hist(m, ClassMatrix<Scalar>(p, K)), y_hist(m, ClassMatrix<Scalar>(p, K)),
      z_hist(m, ClassMatrix<Scalar>(p, K));
  std::vector<double> rho(m), alpha(m);
  std::size_t stored = 0, newest = 0;
  double gamma = 1.0;
  const auto dot = [](const ClassMatrix<Scalar>& A, const ClassMatrix<Scalar>& B) {
    return static_cast<double>((A.array() * B.array()).sum());
  };
  const auto ridge_value = [&](const ClassMatrix<Scalar>& V) {
    return 0.5 * mu * static_cast<double>(V.topRows(d).squaredNorm());
  };
  const auto solve = [&](const ClassMatrix<Scalar>& rhs, ClassMatrix<Scalar>& out) {
    out = rhs;
    P.solve_in_place(out);
  };

  // ‖∇F(0)‖: the scale of the stopping test, whatever the start.
  if (offset.size() > 0) S = offset;
  else S.setZero();
  double f = link_residual(loss, problem, S, D);
  {
    const ClassMatrix<Scalar> zero = ClassMatrix<Scalar>::Zero(p, K);
    gradient(problem, D, zero, 0.0, G);
  }
  const double reference = static_cast<double>(G.norm());
  const double scale = reference > 0.0 ? reference : 1.0;
  if (!W.isZero(0)) {
    scores(problem, W, offset, S);
    f = link_residual(loss, problem, S, D);
  }
  gradient(problem, D, W, mu, G);
  RunOutcome out;
  double F = f + ridge_value(W);
  if (!std::isfinite(F) || !std::isfinite(reference)) {
    out.status = Status::numerical_issue;
    out.objective = F;
    return out;
  }
  solve(G, H);
  out.measure = static_cast<double>(G.norm()) / scale;
  double relative = 0.0;
  if (std::isfinite(out.measure) && certify(out.epochs, out.measure, false, W, S, G, F, relative)) {
    out.status = Status::converged;
    out.objective = F;
    return out;
  }
  while (true) {
    if (!std::isfinite(out.measure)) {
      out.status = Status::numerical_issue;
      break;
    }
    if (out.epochs >= settings.max_epochs) {
      out.status = Status::max_iter;
      break;
    }
    // The two-loop recursion: R = H_k G with H_0 = γ P⁻¹ (P⁻¹G = H, P⁻¹y_i = z_i).
    Q = G;
    R = H;
    for (std::size_t j = 0; j < stored; ++j) {
      const std::size_t i = (newest + m - j) % m;
      alpha[i] = rho[i] * dot(s_hist[i], Q);
      Q -= static_cast<Scalar>(alpha[i]) * y_hist[i];
      R -= static_cast<Scalar>(alpha[i]) * z_hist[i];
    }
    R *= static_cast<Scalar>(gamma);
    for (std::size_t j = stored; j-- > 0;) {
      const std::size_t i = (newest + m - j) % m;
      const double beta = rho[i] * dot(y_hist[i], R);
      R += static_cast<Scalar>(alpha[i] - beta) * s_hist[i];
    }
    double slope = -dot(G, R);
    if (!(slope < 0.0)) {  // not a descent direction (rounding): forget the pairs, take (6)
      stored = 0;
      gamma = 1.0;
      R = H;
      slope = -dot(G, R);
    }
    Delta = -R;
    // The full step first: X̃Δ once (the line search moves along it); with dense X the same
    // pass over X also gives the gradient at W + Δ (`fused`), kept if the full step is taken.
    double step = 1.0, F_try = 0.0;
    bool fused = false;
    W_try = W + Delta;
    if constexpr (is_dense_problem_v<Prob>) {
      F_try = fused_trial(loss, problem, S, Delta, dS, S_try, D_try, G_try) + ridge_value(W_try);
      fused = true;
    } else {
      dS.noalias() = design(problem) * Delta.topRows(d);
      if (p > d) dS.rowwise() += Delta.row(d);
      S_try = S + dS;
      F_try = link_residual(loss, problem, S_try, D_try) + ridge_value(W_try);
    }
    for (int trial = 1; trial < 40 && !(F_try <= F + 1e-4 * step * slope); ++trial) {  // Armijo, halving
      step *= 0.5;
      S_try = S + static_cast<Scalar>(step) * dS;
      W_try = W + static_cast<Scalar>(step) * Delta;
      F_try = link_residual(loss, problem, S_try, D_try) + ridge_value(W_try);
      fused = false;
    }
    ++out.epochs;
    if (!std::isfinite(F_try)) {
      out.status = Status::numerical_issue;
      break;
    }
    if (!(F_try <= F)) {  // no decrease even at the smallest step: F is at its rounding floor
      out.status = certify(out.epochs, out.measure, true, W, S, G, F, relative) ? Status::converged
                                                                                 : Status::numerical_issue;
      break;
    }
    std::swap(W, W_try);
    std::swap(S, S_try);
    std::swap(D, D_try);
    std::swap(G, G_prev);
    std::swap(H, H_prev);
    F = F_try;
    if (fused) {
      std::swap(G, G_try);
      G.topRows(d) += static_cast<Scalar>(mu) * W.topRows(d);
    } else {
      gradient(problem, D, W, mu, G);
    }
    solve(G, H);
    // The new pair: s = W − W_prev = stepΔ, y = G − G_prev, P⁻¹y = H − H_prev.
    if (m > 0) {
      const std::size_t slot = stored == 0 ? newest : (newest + 1) % m;
      ClassMatrix<Scalar>& s_new = s_hist[slot];
      ClassMatrix<Scalar>& y_new = y_hist[slot];
      ClassMatrix<Scalar>& z_new = z_hist[slot];
      s_new = static_cast<Scalar>(step) * Delta;
      y_new = G - G_prev;
      const double sy = dot(s_new, y_new);
      if (sy > 0.0) {
        z_new = H - H_prev;
        const double yz = dot(y_new, z_new);
        rho[slot] = 1.0 / sy;
        if (yz > 0.0) gamma = sy / yz;
        newest = slot;
        stored = std::min(stored + 1, m);
      } else if (stored == m) {
        --stored;  // the slot held the oldest pair, now overwritten
      }
    }
    if (settings.refresh > 0 && out.epochs % settings.refresh == 0) {
      refresh(static_cast<const ClassMatrix<Scalar>&>(D), P);
      solve(G, H);
      for (std::size_t j = 0; j < stored; ++j) {
        const std::size_t i = (newest + m - j) % m;
        solve(y_hist[i], z_hist[i]);
      }
      if (stored > 0) {
        const double yz = dot(y_hist[newest], z_hist[newest]);
        if (yz > 0.0) gamma = 1.0 / (rho[newest] * yz);
      }
    }
    out.measure = static_cast<double>(G.norm()) / scale;
    const bool certified =
        std::isfinite(out.measure) && certify(out.epochs, out.measure, false, W, S, G, F, relative);
    const EpochReport report{out.epochs, F, out.measure, -1, clock.seconds(), relative};
    if (settings.verbose) ProgressPrinter{std::cerr}.end_epoch(report);
    const bool stop = on_epoch(report, static_cast<const ClassMatrix<Scalar>&>(W));
    if (certified) {
      out.status = Status::converged;
      break;
    }
    if (stop) {
      out.status = Status::stopped_by_callback;
      break;
    }
    if (settings.time_limit > 0.0 && report.seconds >= settings.time_limit) {
      out.status = Status::time_limit;
      break;
    }
  }
  out.objective = F;
  return out;
}

}  // namespace sparsemc::detail::gls
