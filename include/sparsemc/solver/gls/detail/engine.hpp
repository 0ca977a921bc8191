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
///
/// `Sums` (solver/sample_sums.hpp) completes the sums over samples of a sparse problem split
/// among processes: f and G are then the whole problem's on every process, so every process
/// takes the same steps, line-search trials and decisions (the clock and the callbacks' stop
/// are agreed through it too).

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "../../../core/callbacks.hpp"
#include "../../../core/status.hpp"
#include "../../../core/stopwatch.hpp"
#include "../../../core/traits.hpp"
#include "../../sample_sums.hpp"
#include "../../solver_base.hpp"
#include "core.hpp"

namespace sparsemc::detail::gls {

/// Settings of one run of Algorithm 1 (a subset of GLSOptions, shared with Stagewise).
struct RunSettings {
  double tol = 1e-6;
  std::int64_t max_epochs = 1000;
  double time_limit = 0.0;
  bool accelerated = false;
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
template <class Loss, class Prob, class Scalar, class Sums>
StartPoint start_point(const Loss& loss, const Prob& problem, const ClassMatrix<Scalar>& W,
                       const ClassMatrix<Scalar>& offset, ClassMatrix<Scalar>& S, ClassMatrix<Scalar>& D,
                       ClassMatrix<Scalar>& G, const Sums& sums) {
  StartPoint start;
  if (offset.size() > 0) S = offset;
  else S.setZero();
  start.f = link_residual(loss, problem, S, D, sums);
  {
    const ClassMatrix<Scalar> zero = ClassMatrix<Scalar>::Zero(W.rows(), W.cols());
    gradient(problem, D, zero, 0.0, G, sums);
  }
  start.reference = static_cast<double>(G.norm());
  if (!W.isZero(0)) {
    scores(problem, W, offset, S);
    start.f = link_residual(loss, problem, S, D, sums);
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
template <class Loss, class Prob, class Scalar, class Sums>
class DescentEngine {
 public:
  DescentEngine(const Loss& loss, const Prob& problem, const Preconditioner<Scalar>& P, double mu,
                const RunSettings& settings, ClassMatrix<Scalar>& W, const ClassMatrix<Scalar>& offset,
                const Sums& sums)
      : loss_(loss),
        problem_(problem),
        P_(P),
        mu_(mu),
        settings_(settings),
        offset_(offset),
        sums_(sums),
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
    const StartPoint start = start_point(loss_, problem_, W_, offset_, S_, D_, G_, sums_);
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
      gradient(problem_, D_, W_, mu_, G_, sums_);
    } else {
      const auto b = static_cast<Scalar>(momentum_.beta);
      Y_.noalias() = (Scalar(1) + b) * W_ - b * W_prev_;
      S_Y_.noalias() = (Scalar(1) + b) * S_ - b * S_prev_;
      link_residual(loss_, problem_, S_Y_, D_Y_, sums_);
      gradient(problem_, D_Y_, Y_, mu_, G_, sums_);
    }
    measure_ = static_cast<double>(G_.norm()) / scale_;
  }

  /// The verdict before a step: a non-finite measure, W certified (only at W itself: its exact
  /// gradient), or the budget spent.
  template <class Certify>
  std::optional<Status> verdict(Certify& test) {
    if (!std::isfinite(measure_)) return Status::numerical_issue;
    if (at_w_) out_.measure = measure_;  // exact at the current W
    double relative = 0.0;
    if (at_w_ && test(out_.epochs, measure_, false, W_, S_, G_, F_, relative)) return Status::converged;
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
    const double f_next = link_residual(loss_, problem_, S_next_, D_, sums_);
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
    gradient(problem_, D_, W_, mu_, G_, sums_);
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
  Sums sums_;
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
template <class Loss, class Prob, class Scalar, class OnEpoch, class Certify, class Sums = LocalSums>
RunOutcome run(const Loss& loss, const Prob& problem, const Preconditioner<Scalar>& P, double mu,
               const RunSettings& settings, ClassMatrix<Scalar>& W, const ClassMatrix<Scalar>& offset,
               const Stopwatch& clock, OnEpoch&& on_epoch, Certify&& certify, const Sums& sums = {}) {
  DescentEngine<Loss, Prob, Scalar, Sums> engine(loss, problem, P, mu, settings, W, offset, sums);
  if (!engine.start()) return engine.outcome(Status::numerical_issue);
  while (true) {
    engine.extrapolate();
    if (const std::optional<Status> verdict = engine.verdict(certify)) return engine.outcome(*verdict);
    if (engine.confirm_at_w()) continue;
    if (!engine.step()) return engine.outcome(Status::numerical_issue);
    const EpochReport report = engine.report(sums.max(clock.seconds()));
    const bool stop = sums.any(on_epoch(report, static_cast<const ClassMatrix<Scalar>&>(W)));
    if (const auto verdict = epoch_verdict(settings, true, false, stop, report.seconds)) {
      engine.measure_at_w();
      return engine.outcome(*verdict);
    }
  }
}

/// Armijo backtracking of the quasi-Newton step (Nocedal & Wright, §3.1 and Alg. 3.1).
inline constexpr double armijo_decrease = 1e-4;  ///< c₁ of the sufficient decrease (3.4a), N&W's suggested value
inline constexpr double armijo_shrink = 0.5;     ///< the step is halved after every failed trial
/// Trials per line search, the full step included: the smallest step is 2⁻³⁹ ≈ 2·10⁻¹², below
/// which F's change is rounding (F is then at its floor; see run_quasi_newton).
inline constexpr int armijo_trials = 40;

/// The L-BFGS memory (Nocedal & Wright, Alg. 7.4): the newest m pairs (s_i, y_i) in a ring,
/// each with z_i = P⁻¹y_i and ρ_i = 1/⟨s_i, y_i⟩, and γ of the initial inverse Hessian γP⁻¹.
template <class Scalar>
struct CurvaturePairs {
  std::size_t capacity;  ///< m
  std::vector<ClassMatrix<Scalar>> s, y, z;
  std::vector<double> rho, alpha;
  std::size_t stored = 0, newest = 0;
  double gamma = 1.0;

  CurvaturePairs(std::size_t m, Eigen::Index p, Eigen::Index K)
      : capacity(m), s(m, ClassMatrix<Scalar>(p, K)), y(m, ClassMatrix<Scalar>(p, K)), z(m, ClassMatrix<Scalar>(p, K)),
        rho(m), alpha(m) {}

  /// The ring slot of the j-th newest pair (j < stored).
  [[nodiscard]] std::size_t slot(std::size_t j) const { return (newest + capacity - j) % capacity; }

  /// The two-loop recursion: R = H_k G with H_0 = γP⁻¹, given H = P⁻¹G (Q: work space).
  void two_loop(const ClassMatrix<Scalar>& G, const ClassMatrix<Scalar>& H, ClassMatrix<Scalar>& Q,
                ClassMatrix<Scalar>& R) {
    Q = G;
    R = H;
    for (std::size_t j = 0; j < stored; ++j) {
      const std::size_t i = slot(j);
      alpha[i] = rho[i] * inner(s[i], Q);
      Q -= static_cast<Scalar>(alpha[i]) * y[i];
      R -= static_cast<Scalar>(alpha[i]) * z[i];
    }
    R *= static_cast<Scalar>(gamma);
    for (std::size_t j = stored; j-- > 0;) {
      const std::size_t i = slot(j);
      const double beta = rho[i] * inner(y[i], R);
      R += static_cast<Scalar>(alpha[i] - beta) * s[i];
    }
  }

  /// Forgets every pair: the next direction is P⁻¹'s, the step (6).
  void forget() {
    stored = 0;
    gamma = 1.0;
  }

  /// Stores the pair of the step just taken: s = stepΔ, y = G − G_prev, P⁻¹y = H − H_prev
  /// (H = P⁻¹G), γ = ⟨s, y⟩/⟨y, P⁻¹y⟩; a pair with ⟨s, y⟩ ≤ 0 (rounding: F is convex) is
  /// skipped, and then the oldest pair, whose slot it took, is lost.
  void push(double step, const ClassMatrix<Scalar>& Delta, const ClassMatrix<Scalar>& G,
            const ClassMatrix<Scalar>& G_prev, const ClassMatrix<Scalar>& H, const ClassMatrix<Scalar>& H_prev) {
    if (capacity == 0) return;
    const std::size_t i = stored == 0 ? newest : (newest + 1) % capacity;
    s[i] = static_cast<Scalar>(step) * Delta;
    y[i] = G - G_prev;
    const double sy = inner(s[i], y[i]);
    if (sy > 0.0) {
      z[i] = H - H_prev;
      const double yz = inner(y[i], z[i]);
      rho[i] = 1.0 / sy;
      if (yz > 0.0) gamma = sy / yz;
      newest = i;
      stored = std::min(stored + 1, capacity);
    } else if (stored == capacity) {
      --stored;  // the slot held the oldest pair, now overwritten
    }
  }

  /// After P changed: z_i = P⁻¹y_i again, and γ from the newest pair.
  void resolve(const Preconditioner<Scalar>& P) {
    for (std::size_t j = 0; j < stored; ++j) {
      const std::size_t i = slot(j);
      z[i] = y[i];
      P.solve_in_place(z[i]);
    }
    if (stored > 0) {
      const double yz = inner(y[newest], z[newest]);
      if (yz > 0.0) gamma = 1.0 / (rho[newest] * yz);
    }
  }
};

/// A trial point of the line search along Δ: W + stepΔ, F there, and whether the gradient
/// there came with it (`fused_trial`, the full step on dense X).
struct LineSearchTrial {
  double step = 1.0;
  double F = 0.0;
  bool fused = false;
};

/// One run of the quasi-Newton scheme (see `run_quasi_newton`): the constructor sizes the work
/// space and the pairs; `run_quasi_newton` calls start() and certify(), then per iteration
/// verdict(), direction(), line_search(), trial_verdict(), accept(), on schedule
/// refresh_metric(), certify() and report(). The problem, P, the settings and W are held by
/// reference: the engine lives inside one run.
template <class Loss, class Prob, class Scalar, class Sums>
class QuasiNewtonEngine {
  static_assert(!is_dense_problem_v<Prob> || std::is_same_v<Sums, LocalSums>,
                "a dense problem is not split by samples (its fused pass has no reductions)");

 public:
  QuasiNewtonEngine(const Loss& loss, const Prob& problem, Preconditioner<Scalar>& P, double mu,
                    const RunSettings& settings, ClassMatrix<Scalar>& W, const ClassMatrix<Scalar>& offset,
                    const Sums& sums)
      : loss_(loss),
        problem_(problem),
        P_(P),
        mu_(mu),
        settings_(settings),
        offset_(offset),
        sums_(sums),
        d_(problem.n_features()),
        W_(W),
        S_(problem.n_samples(), W.cols()),
        dS_(problem.n_samples(), W.cols()),
        S_try_(problem.n_samples(), W.cols()),
        D_(problem.n_samples(), W.cols()),
        D_try_(problem.n_samples(), W.cols()),
        G_(W.rows(), W.cols()),
        G_prev_(W.rows(), W.cols()),
        G_try_(W.rows(), W.cols()),
        H_(W.rows(), W.cols()),
        H_prev_(W.rows(), W.cols()),
        R_(W.rows(), W.cols()),
        Q_(W.rows(), W.cols()),
        Delta_(W.rows(), W.cols()),
        W_try_(W.rows(), W.cols()),
        pairs_(static_cast<std::size_t>(settings.memory), W.rows(), W.cols()) {}

  /// ‖∇F(0)‖, then at W: S, D, G = ∇F, F, H = P⁻¹G and the measure. False when F or the
  /// scale is not finite.
  bool start() {
    const StartPoint start = start_point(loss_, problem_, W_, offset_, S_, D_, G_, sums_);
    scale_ = start.scale();
    gradient(problem_, D_, W_, mu_, G_, sums_);
    F_ = start.f + ridge_value(mu_, d_, W_);
    if (!std::isfinite(F_) || !std::isfinite(start.reference)) return false;
    precondition_gradient();
    out_.measure = static_cast<double>(G_.norm()) / scale_;
    return true;
  }

  /// Whether `certify` certifies the current W (a finite measure only); its relative gap is
  /// kept for the report.
  template <class Certify>
  bool certify(Certify& test) {
    return std::isfinite(out_.measure) && test(out_.epochs, out_.measure, false, W_, S_, G_, F_, relative_);
  }

  /// The verdict before an iteration: a non-finite measure or the budget spent.
  [[nodiscard]] std::optional<Status> verdict() const {
    if (!std::isfinite(out_.measure)) return Status::numerical_issue;
    if (out_.epochs >= settings_.max_epochs) return Status::max_iter;
    return std::nullopt;
  }

  /// Δ = −H_k G by the two-loop recursion; if that is not a descent direction (rounding), the
  /// pairs are forgotten and Δ = −P⁻¹G, the step (6). Its slope ⟨G, Δ⟩.
  void direction() {
    pairs_.two_loop(G_, H_, Q_, R_);
    slope_ = -inner(G_, R_);
    if (!(slope_ < 0.0)) {
      pairs_.forget();
      R_ = H_;
      slope_ = -inner(G_, R_);
    }
    Delta_ = -R_;
  }

  /// The full step first: X̃Δ once (the line search moves along it, scores being linear in W);
  /// with dense X the same pass over X also gives the gradient at W + Δ (`fused_trial`), kept
  /// if the full step is taken. Then Armijo halving. Counts the iteration.
  void line_search() {
    trial_ = LineSearchTrial{};
    W_try_ = W_ + Delta_;
    if constexpr (is_dense_problem_v<Prob>) {
      trial_.F = fused_trial(loss_, problem_, S_, Delta_, dS_, S_try_, D_try_, G_try_) + ridge_value(mu_, d_, W_try_);
      trial_.fused = true;
    } else {
      dS_.noalias() = design(problem_) * Delta_.topRows(d_);
      if (W_.rows() > d_) dS_.rowwise() += Delta_.row(d_);
      S_try_ = S_ + dS_;
      trial_.F = link_residual(loss_, problem_, S_try_, D_try_, sums_) + ridge_value(mu_, d_, W_try_);
    }
    for (int t = 1; t < armijo_trials && !(trial_.F <= F_ + armijo_decrease * trial_.step * slope_); ++t) {
      trial_.step *= armijo_shrink;
      S_try_ = S_ + static_cast<Scalar>(trial_.step) * dS_;
      W_try_ = W_ + static_cast<Scalar>(trial_.step) * Delta_;
      trial_.F = link_residual(loss_, problem_, S_try_, D_try_, sums_) + ridge_value(mu_, d_, W_try_);
      trial_.fused = false;
    }
    ++out_.epochs;
  }

  /// The verdict on the line search's last trial: F not finite; or no decrease even at the
  /// smallest step, F at its rounding floor, where the gap is evaluated at once (`force`):
  /// certified → converged, else numerical_issue.
  template <class Certify>
  std::optional<Status> trial_verdict(Certify& test) {
    if (!std::isfinite(trial_.F)) return Status::numerical_issue;
    if (!(trial_.F <= F_))
      return test(out_.epochs, out_.measure, true, W_, S_, G_, F_, relative_) ? Status::converged
                                                                                   : Status::numerical_issue;
    return std::nullopt;
  }

  /// W ← the trial point with its S, D and F; G = ∇F there (from the fused pass when it gave
  /// it), H = P⁻¹G, the new pair and the measure.
  void accept() {
    std::swap(W_, W_try_);
    std::swap(S_, S_try_);
    std::swap(D_, D_try_);
    std::swap(G_, G_prev_);
    std::swap(H_, H_prev_);
    F_ = trial_.F;
    if (trial_.fused) {
      std::swap(G_, G_try_);
      G_.topRows(d_) += static_cast<Scalar>(mu_) * W_.topRows(d_);
    } else {
      gradient(problem_, D_, W_, mu_, G_, sums_);
    }
    precondition_gradient();
    pairs_.push(trial_.step, Delta_, G_, G_prev_, H_, H_prev_);
    out_.measure = static_cast<double>(G_.norm()) / scale_;
  }

  /// Whether P is rebuilt after this iteration (every `settings.refresh` iterations).
  [[nodiscard]] bool refresh_due() const {
    return settings_.refresh > 0 && out_.epochs % settings_.refresh == 0;
  }

  /// `refresh(D, P)` rebuilds P from the current fit; P⁻¹G and the pairs' P⁻¹y follow.
  template <class Refresh>
  void refresh_metric(Refresh& refresh) {
    refresh(static_cast<const ClassMatrix<Scalar>&>(D_), P_);
    precondition_gradient();
    pairs_.resolve(P_);
  }

  /// The report of the iteration (with the relative gap of its certificate, NaN if none).
  [[nodiscard]] EpochReport report(double seconds) const {
    return {out_.epochs, F_, out_.measure, -1, seconds, relative_};
  }

  [[nodiscard]] RunOutcome outcome(Status status) {
    out_.status = status;
    out_.objective = F_;
    return out_;
  }

 private:
  /// H = P⁻¹G.
  void precondition_gradient() {
    H_ = G_;
    P_.solve_in_place(H_);
  }

  const Loss& loss_;
  const Prob& problem_;
  Preconditioner<Scalar>& P_;
  double mu_;
  const RunSettings& settings_;
  const ClassMatrix<Scalar>& offset_;
  Sums sums_;
  Eigen::Index d_;
  ClassMatrix<Scalar>& W_;
  ClassMatrix<Scalar> S_, dS_, S_try_, D_, D_try_;
  ClassMatrix<Scalar> G_, G_prev_, G_try_, H_, H_prev_, R_, Q_, Delta_, W_try_;
  CurvaturePairs<Scalar> pairs_;
  LineSearchTrial trial_;
  RunOutcome out_;
  double scale_ = 1.0;
  double F_ = 0.0;
  double slope_ = 0.0;     ///< ⟨G, Δ⟩ < 0
  double relative_ = 0.0;  ///< the last certificate's relative gap (NaN: not evaluated)
};

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
template <class Loss, class Prob, class Scalar, class OnEpoch, class Refresh, class Certify, class Sums = LocalSums>
RunOutcome run_quasi_newton(const Loss& loss, const Prob& problem, Preconditioner<Scalar>& P, double mu,
                            const RunSettings& settings, ClassMatrix<Scalar>& W, const ClassMatrix<Scalar>& offset,
                            const Stopwatch& clock, OnEpoch&& on_epoch, Refresh&& refresh, Certify&& certify,
                            const Sums& sums = {}) {
  QuasiNewtonEngine<Loss, Prob, Scalar, Sums> engine(loss, problem, P, mu, settings, W, offset, sums);
  if (!engine.start()) return engine.outcome(Status::numerical_issue);
  if (engine.certify(certify)) return engine.outcome(Status::converged);
  while (true) {
    if (const std::optional<Status> verdict = engine.verdict()) return engine.outcome(*verdict);
    engine.direction();
    engine.line_search();
    if (const std::optional<Status> verdict = engine.trial_verdict(certify)) return engine.outcome(*verdict);
    engine.accept();
    if (engine.refresh_due()) engine.refresh_metric(refresh);
    const bool certified = engine.certify(certify);
    const EpochReport report = engine.report(sums.max(clock.seconds()));
    const bool stop = sums.any(on_epoch(report, static_cast<const ClassMatrix<Scalar>&>(W)));
    if (const auto verdict = epoch_verdict(settings, true, certified, stop, report.seconds))
      return engine.outcome(*verdict);
  }
}

}  // namespace sparsemc::detail::gls
