#pragma once
/// \file engine.hpp
/// The state and the steps of one FBPD solve (implementation detail): Chierchia et al.'s
/// Algorithm 1 (regularised) and Algorithm 2 (constrained, epigraphical splitting) on the
/// Crammer–Singer hinge, the forward step of a smooth loss, and PDLP's adaptive restarts and
/// step sizes. fbpd.hpp holds the public class, the mathematics (its class comment) and the
/// loop over these steps.
///
/// Notation as in fbpd.hpp: x = (W, b) the primal point, T the operator of the score
/// differences, y the dual blocks (n × K, y_i ∈ S_{ω_i} for Algorithm 1), U = Tx, G = Tᵀy
/// (or ∇L for a smooth loss), 𝒯 and Σ the diagonal steps, ρ the relaxation. An iteration
/// computes (x̃, ỹ) from (x, y) and then (x⁺, y⁺) = ρ(x̃, ỹ) + (1 − ρ)(x, y); the point
/// measured and returned is x̃ (the prox output, whose zeros are exact).
///
/// Over a problem split by samples among processes, `Sums` (solver/sample_sums.hpp) completes
/// every sum over the samples: the pass's Tᵀy and its sums (`pass_at`), the preconditioner's
/// column sums, and the per-sample loops of the restarts, the adaptive steps, the slack step
/// and the certificate; the dual blocks, the scores and σ_i stay a process's own.

#include <Eigen/Core>

#include <algorithm>
#include <array>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "../../../core/callbacks.hpp"
#include "../../../core/huge_pages.hpp"
#include "../../../core/parallel.hpp"
#include "../../../core/rng.hpp"
#include "../../../core/status.hpp"
#include "../../../core/traits.hpp"
#include "../../../data/dense_problem.hpp"
#include "../../../data/problem.hpp"
#include "../../../loss/crammer_singer.hpp"
#include "../../../model/linear_model.hpp"
#include "../../../prox/epigraph_max.hpp"
#include "../../../prox/simplex.hpp"
#include "../../duality_gap.hpp"
#include "../../gap_schedule.hpp"
#include "../../objective.hpp"
#include "../../sample_sums.hpp"
#include "../../solver_base.hpp"
#include "../options.hpp"
#include "preconditioner.hpp"
#include "regulariser.hpp"
#include "sample_pass.hpp"

namespace sparsemc::detail {

/// The iterates and what is kept between iterations.
template <RealScalar Scalar>
struct FbpdIterates {
  ClassMatrix<Scalar> W, W_prev;  // x⁺ and x
  ClassMatrix<Scalar> G, G_prev;  // Tᵀy⁺ and Tᵀy (or ∇L at x⁺ and x)
  ClassVector<Scalar> b, b_prev, g_b, g_b_prev;
  ClassMatrix<Scalar> W_step, G_step;  // x̃ and Tᵀỹ of a relaxed step (ρ ≠ 1)
  ClassVector<Scalar> b_step, g_b_step;
  ClassMatrix<Scalar> U, Y;             // Tx and the dual y (Crammer–Singer; n × K)
  ClassMatrix<Scalar> U_prev, Y_prev;   // their previous values (a rejected step is undone)
  std::vector<Scalar> zeta, zeta_prev;  // ζ⁺, ζ (Algorithm 2)
  std::vector<Scalar> xi, xi_prev;      // ξ⁺, ξ (Algorithm 2)
  std::vector<Scalar> omega;            // ω_i = c_i / n
};

/// The step sizes: 𝒯 = γs𝒯⁰ per feature row and intercept, Σ = sΣ⁰/γ per sample, with the
/// scale s = 1/‖A‖ (fixed steps) or adapted (`adaptive_steps`).
template <RealScalar Scalar>
struct FbpdSteps {
  DiagonalSteps unit;           // 𝒯⁰, Σ⁰
  double norm_A = 0.0;          // ‖Σ⁰^{½}T𝒯⁰^{½}‖ (times norm_safety), or β for a smooth loss
  double gamma = 1.0;           // the primal/dual balance
  double scale = 0.0;           // s
  std::vector<Scalar> tau_row;  // 𝒯 per feature row
  Scalar tau_b = 0;             // 𝒯 of the intercept
  double sigma_scale = 0.0;     // σ_i = σ⁰_i · sigma_scale
  /// Sets γ and s (s > 0) and the steps from them.
  void set(double g, double s) {
    gamma = g;
    scale = s;
    const double primal = gamma * scale;
    for (std::size_t j = 0; j < tau_row.size(); ++j) tau_row[j] = static_cast<Scalar>(primal * unit.tau0[j]);
    tau_b = static_cast<Scalar>(primal * unit.tau0_b);
    sigma_scale = scale / gamma;
  }
  void set_balance(double g) { set(g, scale); }
  [[nodiscard]] double sigma(Eigen::Index i) const { return unit.sigma0[static_cast<std::size_t>(i)] * sigma_scale; }
};

/// What the adaptive restarts keep: averages since the last restart (Algorithm 1) and the
/// point of the last restart (for the primal weight).
template <RealScalar Scalar>
struct FbpdRestartState {
  ClassMatrix<Scalar> W, G, U, Y;  // x̄, Tᵀȳ, T x̄, ȳ
  ClassVector<Scalar> b, g_b;      // b̄ and the intercept row of Tᵀȳ
  std::vector<Scalar> zeta, xi;    // ζ̄, ξ̄ (Algorithm 2)
  ClassMatrix<Scalar> W_last, Y_last;
  ClassVector<Scalar> b_last;
  std::vector<Scalar> zeta_last, xi_last;
};

/// One FBPD solve of `problem`: FBPD::run calls start(), then per epoch iterate(),
/// evaluate_objective(), evaluate_measure(), restart_if_due(), certify() and report(), and at
/// the end info() and returned_certificate(). The problem, the policies and the options are
/// held by reference: the engine lives inside one FBPD::run.
template <class Loss, class Penalty, class Formulation, TrainingProblem Prob, class Sums = LocalSums>
class FbpdEngine {
  using Scalar = ProblemScalar<Prob>;
  using Index = ProblemIndex<Prob>;

 public:
  // A separation ranking loss (Crammer–Singer) is solved exactly through its dual blocks, whose
  // simplices and epigraph the exact steps below project onto in closed form.
  static constexpr bool exact_hinge = SeparationRankingLoss<Loss>;
  static constexpr bool constrained = std::same_as<Formulation, Constrained>;

  /// Allocates the iterates (W = 0, b = 0, and for Crammer–Singer U = Y = 0) and sets ω.
  FbpdEngine(const Prob& problem, const Loss& loss, const Penalty& penalty,
             const FBPDOptions& options, const Sums& sample_sums = {})
      : problem_(problem),
        loss_(loss),
        penalty_(penalty),
        options_(options),
        sample_sums_(sample_sums),
        n_(problem.n_samples()),
        d_(problem.n_features()),
        K_(problem.n_classes()),
        intercept_(options.fit_intercept),
        pass_(n_, d_, K_, intercept_, !SampleRowProblem<Prob>, pass_threads(options, problem)),
        reg_(penalty, options.feature_groups, options.groups_per_class, d_, K_),
        rho_(static_cast<Scalar>(exact_hinge ? options.relaxation : 1.0)),
        relaxed_(rho_ != Scalar(1)),
        measure_kind_(choose_measure(options.stopping, options.fit_intercept)),
        free_gap_(exact_hinge && !constrained && !options.fit_intercept),
        schedule_(options.tol),
        restarts_(exact_hinge && options.restarts),
        averages_(restarts_ && (measure_kind_ == Measure::duality_gap || measure_kind_ == Measure::kkt_residual)),
        adaptive_(exact_hinge && options.adaptive_steps) {
    const Eigen::Index K_b = intercept_ ? K_ : 0;
    st_.W = advised_zeros<ClassMatrix<Scalar>>(d_, K_);
    st_.W_prev = advised_zeros<ClassMatrix<Scalar>>(d_, K_);
    st_.G.resize(d_, K_);
    st_.G_prev.resize(d_, K_);
    st_.b = ClassVector<Scalar>::Zero(K_b);
    st_.b_prev = ClassVector<Scalar>::Zero(K_b);
    st_.g_b.resize(K_b);
    st_.g_b_prev.resize(K_b);
    st_.omega.resize(static_cast<std::size_t>(n_));
    std::array<double, 2> totals{};  // F(0) = Σ_i ω_i (ℓ_CS(0) = 1 for every sample when K ≥ 2), samples with ω_i > 0
    for (Eigen::Index i = 0; i < n_; ++i) {
      const double w = static_cast<double>(problem_.weight(static_cast<Index>(i))) / problem_.normaliser();
      st_.omega[static_cast<std::size_t>(i)] = static_cast<Scalar>(w);
      totals[0] += w;
      totals[1] += w > 0.0 ? 1.0 : 0.0;
    }
    sample_sums_(std::span<double>(totals));
    loss_scale_ = totals[0] > 0.0 ? totals[0] : 1.0;
    n_active_ = static_cast<Eigen::Index>(totals[1]);
    if constexpr (exact_hinge) {  // zero: the rows of samples without weight are never written
      st_.U = advised_zeros<ClassMatrix<Scalar>>(n_, K_);
      st_.Y = advised_zeros<ClassMatrix<Scalar>>(n_, K_);
      st_.U_prev = advised_zeros<ClassMatrix<Scalar>>(n_, K_);
      st_.Y_prev = advised_zeros<ClassMatrix<Scalar>>(n_, K_);
      if constexpr (constrained) {
        st_.zeta.assign(static_cast<std::size_t>(n_), Scalar(0));
        st_.zeta_prev.assign(static_cast<std::size_t>(n_), Scalar(0));
        st_.xi.assign(static_cast<std::size_t>(n_), Scalar(0));
        st_.xi_prev.assign(static_cast<std::size_t>(n_), Scalar(0));
      }
    }
  }

  /// The step sizes, the start point (W = 0 or the warm start, same d and K) with the dual at
  /// it, the primal weight and F there. Returns the status when the solve ends before its first
  /// iteration: a non-finite F, or a loss part independent of (W, b) (then W = 0 is optimal).
  std::optional<Status> start(const LinearModel<Scalar>* initial) {
    set_unit_steps();
    start_at(initial);
    if (exact_hinge && steps_.norm_A > 0.0) set_primal_weight();
    if (relaxed_) {
      st_.W_step = st_.W;
      st_.b_step = st_.b;
      st_.G_step = st_.G;
      st_.g_b_step = st_.g_b;
    }
    F_ = sums_.loss + reg_.value(st_.W);
    if (!std::isfinite(F_)) return Status::numerical_issue;
    if (!(steps_.norm_A > 0.0)) {
      // The loss part does not depend on (W, b) (K = 1, X̃ = 0 or no weight): W = 0 minimises g,
      // and F(0) = F* (a gap of 0, exact).
      W_out().setZero();
      measure_ = 0.0;
      degenerate_ = true;
      return Status::converged;
    }
    safe_scale_ = 1.0 / steps_.norm_A;
    begin_restarts();
    return std::nullopt;
  }

  /// One accepted iteration: x̃ = prox_{𝒯g}(x − 𝒯G) (and ζ̃ for Algorithm 2), then the dual
  /// step fused with T x̃ and Tᵀỹ (or the gradient at x̃) in one pass over X; with adaptive
  /// steps a step taken with a scale above s̄ is undone and retaken. Then the relaxation.
  void iterate() {
    ++epoch_;
    for (bool accepted = false; !accepted;) {
      // After the swaps the _prev members hold the current iterate.
      swap_iterates();
      primal_step();
      if constexpr (constrained) slack_step();
      dual_pass();
      accepted = !adaptive_ || adapt_step_scale();
    }
    if (relaxed_) relax();
  }

  /// F at x̃ (the loss part from the pass); false when it is not finite.
  bool evaluate_objective() {
    F_ = sums_.loss + reg_.value(W_out());
    return std::isfinite(F_);
  }

  /// The stopping measure at (x̃, ỹ).
  void evaluate_measure() {
    switch (measure_kind_) {
      case Measure::duality_gap:
        measure_ = scaled_gap(F_, sums_.off_mass, G_out());
        break;
      case Measure::kkt_residual:
        measure_ = kkt_residual(W_out(), G_out(), g_b_out(), sums_.loss, sums_.inner, constrained ? sums_.multiplier : 1.0);
        break;
      case Measure::residuals:
        measure_ = step_residual();
        break;
      case Measure::relative_change:
        measure_ = relative_change();
        break;
    }
  }

  /// Adaptive restarts (PDLP): the running averages since the last restart, and every
  /// restart_period iterations the comparison of the current point with the average; the
  /// better one becomes the new start when its error fell enough (see `FBPDOptions::restarts`),
  /// and the primal weight is updated.
  void restart_if_due() {
    restarted_to_average_ = false;
    if (!restarts_) return;
    if (averages_) update_averages();
    if ((epoch_ - restart_epoch_) % restart_period != 0) return;
    double candidate = measure_;
    PointError average{0.0, 0.0};
    if (averages_) {
      average = error_at_average();
      restarted_to_average_ = average.error < candidate;
      candidate = std::min(candidate, average.error);
    }
    const bool restart = candidate <= sufficient_decay * error_at_restart_ ||
                         (candidate <= necessary_decay * error_at_restart_ && candidate > error_at_check_) ||
                         static_cast<double>(epoch_ - restart_epoch_) >= artificial_restart * static_cast<double>(epoch_);
    error_at_check_ = candidate;
    restarted_to_average_ = restarted_to_average_ && restart;
    if (!restart) return;
    if (restarted_to_average_) {  // reported, but not a stopping point: x̄ is not sparse
      move_to_average();
      F_ = average.F;
      measure_ = candidate;
    }
    update_primal_weight();
    rs_.W_last = st_.W;
    rs_.b_last = st_.b;
    rs_.Y_last = st_.Y;
    rs_.zeta_last = st_.zeta;
    rs_.xi_last = st_.xi;
    error_at_restart_ = candidate;
    restart_epoch_ = epoch_;
    averaged_ = 0;
  }

  /// Whether this epoch's point is certified. Algorithm 1: the certificate of (1), every pass
  /// when free, else when the schedule says so (the cheap measure falls to its trigger, or
  /// epochs doubling) and at the last epoch; after a restart to the averages (not a stopping
  /// point) it is the gap there, (F − D)/F(0). Algorithm 2: (8)'s KKT residual ≤ tol. With the
  /// duality gap as the measure, the measure is then reported in (1)'s scale.
  bool certify() {
    bool certified = false;
    if constexpr (!constrained) {
      if (free_gap_ && restarted_to_average_) {
        certificate_ = {F_, F_ - measure_ * loss_scale_};
        certificate_epoch_ = epoch_;
      } else if (free_gap_ || (!restarted_to_average_ && schedule_.due(epoch_, measure_)) ||
                 epoch_ == options_.max_epochs) {  // a restart to the averages is no stopping point: wait a pass
        certificate_ = evaluate_gap(F_);
        certificate_epoch_ = epoch_;
        certified = certificate_.relative() <= options_.tol && !restarted_to_average_;
        if (!free_gap_) schedule_.evaluated(epoch_, measure_, certificate_.relative());
      }
    } else {
      certified = measure_ <= options_.tol && !restarted_to_average_;  // (8)'s KKT residual
    }
    if (measure_kind_ == Measure::duality_gap && certificate_epoch_ == epoch_) measure_ = certificate_.relative();
    return certified;
  }

  /// This epoch's report (the relative gap of (1) when it was evaluated).
  [[nodiscard]] EpochReport report(double seconds) const {
    EpochReport report{epoch_, F_, measure_, count_rows(), seconds};
    if (certificate_epoch_ == epoch_) report.relative_gap = certificate_.relative();
    return report;
  }

  /// The point measured and returned, x̃, as a model with the start's labels.
  [[nodiscard]] LinearModel<Scalar> model() const {
    return LinearModel<Scalar>(W_out(), intercept_ ? b_out() : ClassVector<Scalar>(), labels_);
  }

  /// The gap evaluations of (1) and their time.
  [[nodiscard]] const GapCost& gap_spent() const noexcept { return gap_spent_; }

  /// The information block at the returned model: F of (1) through the shared loss evaluation,
  /// then g; the epochs and the last measure.
  [[nodiscard]] SolverInfo info(Status status) {
    ClassMatrix<Scalar> S;
    compute_scores(problem_, W_out(), b_out(), S);
    double loss = loss_value(loss_, problem_, S);
    sample_sums_(loss);
    return {.status = status,
            .epochs = epoch_,
            .objective = loss + reg_.value(W_out()),
            .measure_name = measure_name(),
            .measure = measure_};
  }

  /// The certificate of (1) at the returned model, whose F is `objective`: evaluated now if the
  /// last epoch did not (none for Algorithm 2, whose certificate is its KKT residual).
  [[nodiscard]] DualityGap returned_certificate(double objective) {
    if (degenerate_) return {objective, objective};
    if (!constrained && certificate_epoch_ != epoch_ && epoch_ > 0) return evaluate_gap(F_);
    if (!constrained && epoch_ == 0) return {};
    return certificate_;
  }

  [[nodiscard]] std::int64_t epoch() const noexcept { return epoch_; }
  /// The warm start's bias feature (−1 without a warm start), for the model's provenance.
  [[nodiscard]] double bias() const noexcept { return bias_; }

 private:
  using Thread = PassThread<Scalar>;

  /// The stopping measure (FBPDStopping resolved for the loss, formulation and intercept).
  enum class Measure { duality_gap, kkt_residual, residuals, relative_change };

  /// A gradient's norm: Euclidean and in the metric of 𝒯⁰.
  struct GradientNorms {
    double plain;
    double weighted;
  };

  /// F and the restarts' error measure at a point.
  struct PointError {
    double F;
    double error;
  };

  /// The gap of the pair (7)/(11) (Crammer–Singer, regularised, no intercept), the KKT residual
  /// (with an intercept, or for Algorithm 2), else the residuals; or what `stopping` names.
  static constexpr Measure choose_measure(FBPDStopping stopping, bool intercept) {
    if (stopping == FBPDStopping::automatic && exact_hinge)
      return constrained || intercept ? Measure::kkt_residual : Measure::duality_gap;
    return stopping == FBPDStopping::relative_change ? Measure::relative_change : Measure::residuals;
  }

  [[nodiscard]] const char* measure_name() const {
    switch (measure_kind_) {
      case Measure::duality_gap: return "duality_gap";
      case Measure::kkt_residual: return "kkt_residual";
      case Measure::residuals: return exact_hinge ? "primal_dual_residual" : "primal_residual";
      case Measure::relative_change: break;
    }
    return "relative_change";
  }

  /// The threads of a sample pass: those of the option that its gather and scatter,
  /// 2·nnz(X)·K multiply-adds (a dense X: its n·d entries), keep busy (detail::team_for_work).
  static int pass_threads(const FBPDOptions& options, const Prob& problem) {
    double entries = 0.0;
    if constexpr (std::same_as<Prob, DenseProblem<Scalar>>) entries = static_cast<double>(problem.X.size());
    else entries = static_cast<double>(problem.X.nnz());
    const double work = 2.0 * entries * static_cast<double>(problem.n_classes());
    return team_for_work(resolve_threads(options.threads), work);
  }

  // ---- the measured point ---------------------------------------------------------------------
  // x̃, the last prox output (x itself when ρ = 1), and Tᵀỹ.
  ClassMatrix<Scalar>& W_out() { return relaxed_ ? st_.W_step : st_.W; }
  ClassVector<Scalar>& b_out() { return relaxed_ ? st_.b_step : st_.b; }
  ClassMatrix<Scalar>& G_out() { return relaxed_ ? st_.G_step : st_.G; }
  ClassVector<Scalar>& g_b_out() { return relaxed_ ? st_.g_b_step : st_.g_b; }
  const ClassMatrix<Scalar>& W_out() const { return relaxed_ ? st_.W_step : st_.W; }
  const ClassVector<Scalar>& b_out() const { return relaxed_ ? st_.b_step : st_.b; }

  // ---- setup --------------------------------------------------------------------------------

  /// 𝒯⁰, Σ⁰ and ‖A‖ (Crammer–Singer), or the forward step τ = 2/β of a smooth loss (no dual).
  void set_unit_steps() {
    steps_.tau_row.resize(static_cast<std::size_t>(d_));
    if constexpr (exact_hinge) {
      steps_.unit = diagonal_steps(problem_, intercept_, options_.preconditioning, sample_sums_);
      reg_.equalise(steps_.unit.tau0);
      steps_.norm_A = options_.norm_safety * operator_norm();
    } else {  // forward step: τ = 2/β, no dual
      steps_.unit.tau0.assign(static_cast<std::size_t>(d_), 1.0);
      steps_.norm_A = static_cast<double>(loss_.template curvature_bound<Scalar>(K_)) *
                      weighted_gram_norm(problem_, intercept_, options_.seed, options_.power_iterations, sample_sums_) *
                      options_.norm_safety * options_.norm_safety;
      if (steps_.norm_A > 0.0) steps_.set(forward_step, 1.0 / steps_.norm_A);  // 𝒯 = 2/β
    }
  }

  /// Power method on AᵀA, A = Σ⁰^{½} T 𝒯⁰^{½}: an estimate of ‖A‖ (from below). W, b, G, g_b of
  /// the iterates are work space.
  double operator_norm() {
    Rng rng(options_.seed);
    ClassMatrix<Scalar> V(st_.W.rows(), st_.W.cols());
    ClassVector<Scalar> v_b(st_.b.size());
    for (Eigen::Index j = 0; j < V.rows(); ++j)
      for (Eigen::Index k = 0; k < V.cols(); ++k) V(j, k) = static_cast<Scalar>(uniform_real(rng) - 0.5);
    for (Eigen::Index k = 0; k < v_b.size(); ++k) v_b[k] = static_cast<Scalar>(uniform_real(rng) - 0.5);
    std::vector<Scalar> root_tau(steps_.unit.tau0.size());
    for (std::size_t j = 0; j < root_tau.size(); ++j) root_tau[j] = static_cast<Scalar>(std::sqrt(steps_.unit.tau0[j]));
    const auto root_tau_b = static_cast<Scalar>(std::sqrt(steps_.unit.tau0_b));
    double estimate = 0.0;
    for (int it = 0; it < options_.power_iterations; ++it) {
      const double norm = std::sqrt(static_cast<double>(V.squaredNorm() + v_b.squaredNorm()));
      if (!(norm > 0.0)) return 0.0;
      V /= static_cast<Scalar>(norm);
      v_b /= static_cast<Scalar>(norm);
      for (Eigen::Index j = 0; j < V.rows(); ++j) st_.W.row(j) = root_tau[static_cast<std::size_t>(j)] * V.row(j);
      st_.b = root_tau_b * v_b;
      pass_at<&FbpdEngine::power_step>(st_.W, st_.b);  // G = TᵀΣ⁰T𝒯⁰^{½}v
      const double rayleigh = sums_.squared_norm;
      const bool settled = it > 0 && std::abs(rayleigh - estimate) <= power_tolerance * rayleigh;
      estimate = std::max(estimate, rayleigh);
      if (settled) break;
      for (Eigen::Index j = 0; j < V.rows(); ++j) V.row(j) = root_tau[static_cast<std::size_t>(j)] * st_.G.row(j);
      v_b = root_tau_b * st_.g_b;
    }
    return std::sqrt(estimate);
  }

  /// The start: the scale of P at W = 0 (‖Tᵀy₀‖ or ‖∇L(0)‖, one extra pass when it is not the
  /// start pass itself), the warm start's W, b, labels and bias, and the start pass — Algorithm 1:
  /// y at the loss subgradient; Algorithm 2: U = Tx, y = 0, ξ = 0, ζ_i = h_i(T_i x); a smooth
  /// loss: ∇L. Then the scale of Q, ‖r‖ = √(n_a(K−1)).
  void start_at(const LinearModel<Scalar>* initial) {
    labels_ = cold_start_labels(K_);
    st_.W.setZero();
    st_.b.setZero();
    const bool cold = initial == nullptr;
    if (!cold || constrained) {  // one pass at W = 0 just for the scale
      if constexpr (exact_hinge) pass_at<&FbpdEngine::init_regularized<false>>(st_.W, st_.b);
      else pass_at<&FbpdEngine::step_smooth>(st_.W, st_.b);
      scale_P_ = gradient_norms();
    }
    if (!cold) {
      check_warm_start("FBPD", *initial, static_cast<std::int64_t>(d_), static_cast<std::int64_t>(K_));
      initial->copy_to(st_.W);
      if (intercept_ && initial->has_intercept()) st_.b = initial->intercept();
      labels_ = initial->labels();
      bias_ = initial->provenance().bias;
    }
    if constexpr (constrained) pass_at<&FbpdEngine::init_constrained>(st_.W, st_.b);
    else if constexpr (exact_hinge) pass_at<&FbpdEngine::init_regularized<true>>(st_.W, st_.b);
    else pass_at<&FbpdEngine::step_smooth>(st_.W, st_.b);
    if (cold && !constrained) scale_P_ = gradient_norms();
    if (!(scale_P_.plain > 0.0)) scale_P_ = {1.0, 1.0};
    scale_Q_ = std::sqrt(static_cast<double>(n_active_) * std::max(K_ - 1, 1));
  }

  /// PDLP's primal weight in the metric of 𝒯⁰, Σ⁰: γ = ‖Σ⁰^{½} r‖ / ‖𝒯⁰^{½} Tᵀy₀‖ (or
  /// `step_balance`), with the scale s = 1/‖A‖.
  void set_primal_weight() {
    double margins = 0.0;
    for (Eigen::Index i = 0; i < n_; ++i)
      if (st_.omega[static_cast<std::size_t>(i)] > Scalar(0)) margins += steps_.unit.sigma0[static_cast<std::size_t>(i)];
    sample_sums_(margins);
    const double automatic = std::sqrt(margins * std::max(K_ - 1, 1)) / scale_P_.weighted;
    steps_.set(options_.step_balance > 0.0 ? options_.step_balance : automatic, 1.0 / steps_.norm_A);
  }

  /// The state of the restarts at the start point: the averages and the last restart point
  /// are the start, and the error at the last restart is its gap (or +∞).
  void begin_restarts() {
    if (!restarts_) return;
    if (averages_) {
      rs_.W = st_.W;
      rs_.G = st_.G;
      rs_.U = st_.U;
      rs_.Y = st_.Y;
      rs_.b = st_.b;
      rs_.g_b = st_.g_b;
      rs_.zeta = st_.zeta;
      rs_.xi = st_.xi;
    }
    rs_.W_last = st_.W;
    rs_.b_last = st_.b;
    rs_.Y_last = st_.Y;
    rs_.zeta_last = st_.zeta;
    rs_.xi_last = st_.xi;
    if (measure_kind_ == Measure::duality_gap) error_at_restart_ = scaled_gap(F_, sums_.off_mass, st_.G);
    error_at_check_ = error_at_restart_;
  }

  // ---- the passes and their per-sample kernels ----------------------------------------------

  /// One pass at (W, b) with the per-sample kernel `Kernel` (a member below): G, g_b of the
  /// iterates receive Σ_i x̃_i z_iᵀ, sums_ what the kernel accumulates — over every process's
  /// samples (one reduction of d·K + K numbers and one of the pass's sums).
  template <auto Kernel>
  void pass_at(const ClassMatrix<Scalar>& W, const ClassVector<Scalar>& b) {
    pass_.run(problem_, W, b, [this](Eigen::Index i, std::span<Scalar> s, Thread& th) { return (this->*Kernel)(i, s, th); },
              st_.G, st_.g_b, sums_);
    sample_sums_(std::span<Scalar>(st_.G.data(), static_cast<std::size_t>(st_.G.size())));
    if (intercept_) sample_sums_(std::span<Scalar>(st_.g_b.data(), static_cast<std::size_t>(st_.g_b.size())));
    sums_.complete(sample_sums_);
  }

  /// The dual step of the formulation at x̃ (or the gradient of a smooth loss).
  void dual_pass() {
    if constexpr (constrained) pass_at<&FbpdEngine::step_constrained>(W_out(), b_out());
    else if constexpr (exact_hinge) pass_at<&FbpdEngine::step_regularized>(W_out(), b_out());
    else pass_at<&FbpdEngine::step_smooth>(W_out(), b_out());
  }

  [[nodiscard]] std::size_t label(Eigen::Index i) const {
    return static_cast<std::size_t>(problem_.y.single(static_cast<std::size_t>(i)));
  }

  /// z_i from a dual block y_i: z = y − (Σy) e_c, i.e. y off the label and −Σ_{k≠c} y_k on it.
  static void dual_to_z(std::span<Scalar> s, const Scalar* y, std::size_t c, double off_mass) {
    for (std::size_t k = 0; k < s.size(); ++k) s[k] = y[k];
    s[c] = static_cast<Scalar>(-off_mass);
  }

  /// Power method, sample i: u = T_i(𝒯⁰^{½}v) = s − s_c·1, ‖Av‖² += σ⁰_i‖u‖², z = σ⁰_i (u − (Σu) e_c).
  /// Sums: squared_norm.
  bool power_step(Eigen::Index i, std::span<Scalar> s, Thread& th) {
    const std::size_t c = label(i);
    const double sigma0 = steps_.unit.sigma0[static_cast<std::size_t>(i)];
    const Scalar sc = s[c];
    double norm2 = 0.0, sum = 0.0;
    for (std::size_t k = 0; k < s.size(); ++k) {
      const Scalar u = k == c ? Scalar(0) : s[k] - sc;
      norm2 += static_cast<double>(u) * static_cast<double>(u);
      sum += static_cast<double>(u);
      s[k] = static_cast<Scalar>(sigma0 * static_cast<double>(u));
    }
    s[c] = static_cast<Scalar>(-sigma0 * sum);
    th.sums.squared_norm += sigma0 * norm2;
    return norm2 > 0.0;
  }

  /// Algorithm 1 start (and the scale at W = 0): y_i = ω_i uniform over argmax_k (u_k + r_k),
  /// the loss subgradient of (1) at the current point; with `Store`, U and Y receive u and y.
  /// Sums: loss, off_mass.
  template <bool Store>
  bool init_regularized(Eigen::Index i, std::span<Scalar> s, Thread& th) {
    const std::size_t c = label(i);
    const Scalar omega = st_.omega[static_cast<std::size_t>(i)];
    const Scalar sc = s[c];
    Scalar top = Scalar(0);  // the label's own term u_c + r_c = 0
    for (std::size_t k = 0; k < s.size(); ++k) {
      s[k] = k == c ? Scalar(0) : s[k] - sc;
      if (k != c) top = std::max(top, s[k] + Scalar(1));
    }
    auto at_top = [&](std::size_t k) { return s[k] + (k == c ? Scalar(0) : Scalar(1)) == top; };
    std::size_t ties = 0;
    for (std::size_t k = 0; k < s.size(); ++k) ties += at_top(k) ? 1 : 0;
    Scalar* y = th.a.data();
    double off = 0.0;
    for (std::size_t k = 0; k < s.size(); ++k) {
      y[k] = at_top(k) ? omega / static_cast<Scalar>(ties) : Scalar(0);
      if (k != c) off += static_cast<double>(y[k]);
    }
    if constexpr (Store) {
      for (std::size_t k = 0; k < s.size(); ++k) {
        st_.U(i, static_cast<Eigen::Index>(k)) = s[k];
        st_.Y(i, static_cast<Eigen::Index>(k)) = y[k];
      }
    }
    th.sums.loss += static_cast<double>(omega) * static_cast<double>(top);
    th.sums.off_mass += off;
    if (!(off > 0.0)) return false;
    dual_to_z(s, y, c, off);
    return true;
  }

  /// Algorithm 2 start: U = Tx, y = 0, ξ = 0, ζ_i = h_i(T_i x). Sums: loss.
  bool init_constrained(Eigen::Index i, std::span<Scalar> s, Thread& th) {
    const std::size_t c = label(i);
    const Scalar sc = s[c];
    Scalar top = Scalar(0);
    for (std::size_t k = 0; k < s.size(); ++k) {
      const Scalar u = k == c ? Scalar(0) : s[k] - sc;
      st_.U(i, static_cast<Eigen::Index>(k)) = u;
      st_.Y(i, static_cast<Eigen::Index>(k)) = Scalar(0);
      if (k != c) top = std::max(top, u + Scalar(1));
    }
    st_.zeta[static_cast<std::size_t>(i)] = top;
    th.sums.loss += static_cast<double>(st_.omega[static_cast<std::size_t>(i)]) * static_cast<double>(top);
    return false;
  }

  /// Algorithm 1 iteration, sample i (s = scores of x̃): ũ = T_i x̃, ỹ = P_S(y + σ_i(2ũ − u) + σ_i r)
  /// (Prop. 3.1: the prox of the conjugate of ω_i h_i is the projection onto S_{ω_i}), then
  /// (u, y) ← ρ(ũ, ỹ) + (1 − ρ)(u, y) (read from U_prev, Y_prev, written to U, Y); z_i from
  /// the new y. Sums: loss, off_mass, dual_residual, inner (the Fenchel–Young gap of the sample
  /// is ω h(ũ) minus its term), cross, dual_move.
  bool step_regularized(Eigen::Index i, std::span<Scalar> s, Thread& th) {
    const std::size_t c = label(i), K = s.size();
    const Scalar omega = st_.omega[static_cast<std::size_t>(i)];
    const double sigma = steps_.sigma(i), inv_sigma = 1.0 / sigma;
    const auto sig = static_cast<Scalar>(sigma);
    const Scalar* u0 = st_.U_prev.row(i).data();
    const Scalar* y0 = st_.Y_prev.row(i).data();
    Scalar* u = st_.U.row(i).data();
    Scalar* y = st_.Y.row(i).data();
    Scalar* v = th.a.data();
    const Scalar sc = s[c];
    Scalar top = Scalar(0);
    for (std::size_t k = 0; k < K; ++k) {
      const Scalar up = k == c ? Scalar(0) : s[k] - sc;
      const Scalar r = k == c ? Scalar(0) : Scalar(1);
      top = std::max(top, up + r);
      v[k] = y0[k] + sig * (Scalar(2) * up - u0[k] + r);
      s[k] = up;
    }
    prox::project_simplex(std::span<Scalar>(v, K), omega, th.scratch);
    double off_step = 0.0, off = 0.0, q2 = 0.0, inner = 0.0, cross = 0.0, dy2 = 0.0;
    for (std::size_t k = 0; k < K; ++k) {
      const double dy = static_cast<double>(v[k]) - static_cast<double>(y0[k]);
      const double du = static_cast<double>(s[k]) - static_cast<double>(u0[k]);
      const double q = du - dy * inv_sigma;
      q2 += q * q;
      cross += dy * du;
      dy2 += dy * dy;
      if (k != c) inner += static_cast<double>(v[k]) * (static_cast<double>(s[k]) + 1.0);
      u[k] = rho_ * s[k] + (Scalar(1) - rho_) * u0[k];
      y[k] = rho_ * v[k] + (Scalar(1) - rho_) * y0[k];
      if (k != c) {
        off_step += static_cast<double>(v[k]);
        off += static_cast<double>(y[k]);
      }
    }
    th.sums.loss += static_cast<double>(omega) * static_cast<double>(top);
    th.sums.off_mass += off_step;
    th.sums.dual_residual += q2;
    th.sums.inner += inner;
    th.sums.cross += cross;
    th.sums.dual_move += dy2 / steps_.unit.sigma0[static_cast<std::size_t>(i)];
    if (!(off > 0.0)) return false;
    dual_to_z(s, y, c, off);
    return true;
  }

  /// Algorithm 2 iteration, sample i (eqs. (12)–(14)): (ŷ, ξ̂), the epigraph projection
  /// (Prop. 3.3), (ỹ, ξ̃), then the relaxation of (u, y, ζ, ξ) (read from the _prev buffers,
  /// written to the current ones); st_.zeta holds ζ̃ on entry. Sums: loss, inner,
  /// dual_residual (y and ξ parts), zeta_residual, cross, dual_move, multiplier.
  bool step_constrained(Eigen::Index i, std::span<Scalar> s, Thread& th) {
    const std::size_t c = label(i), K = s.size(), ii = static_cast<std::size_t>(i);
    const double sigma = steps_.sigma(i), inv_sigma = 1.0 / sigma;
    const auto sig = static_cast<Scalar>(sigma);
    const Scalar* u0 = st_.U_prev.row(i).data();
    const Scalar* y0 = st_.Y_prev.row(i).data();
    Scalar* u = st_.U.row(i).data();
    Scalar* y = st_.Y.row(i).data();
    Scalar* y_hat = th.a.data();
    Scalar* p = th.b.data();
    const Scalar sc = s[c];
    Scalar top = Scalar(0);
    for (std::size_t k = 0; k < K; ++k) {
      const Scalar up = k == c ? Scalar(0) : s[k] - sc;
      if (k != c) top = std::max(top, up + Scalar(1));
      y_hat[k] = y0[k] + sig * (Scalar(2) * up - u0[k]);
      p[k] = y_hat[k] / sig;
      s[k] = up;
    }
    const Scalar zeta_step = st_.zeta[ii], zeta = st_.zeta_prev[ii], xi = st_.xi_prev[ii];
    const Scalar xi_hat = xi + sig * (Scalar(2) * zeta_step - zeta);
    Scalar theta = xi_hat / sig;
    th.margins[c] = Scalar(0);
    prox::project_epigraph_max(std::span<Scalar>(p, K), theta, th.margins, th.scratch);
    th.margins[c] = Scalar(1);
    const Scalar xi_step = xi_hat - sig * theta;
    double off = 0.0, off_step = 0.0, inner = 0.0, q2 = 0.0, cross = 0.0, dy2 = 0.0;
    for (std::size_t k = 0; k < K; ++k) {
      const Scalar y_step = y_hat[k] - sig * p[k];
      const double dy = static_cast<double>(y_step) - static_cast<double>(y0[k]);
      const double du = static_cast<double>(s[k]) - static_cast<double>(u0[k]);
      const double q = du - dy * inv_sigma;
      q2 += q * q;
      cross += dy * du;
      dy2 += dy * dy;
      if (k != c) {
        off_step += static_cast<double>(y_step);
        inner += static_cast<double>(y_step) * (static_cast<double>(s[k]) + 1.0);
      }
      u[k] = rho_ * s[k] + (Scalar(1) - rho_) * u0[k];
      y[k] = rho_ * y_step + (Scalar(1) - rho_) * y0[k];
      if (k != c) off += static_cast<double>(y[k]);
    }
    // ζ residuals with τ_ζ,i = 1/σ_i: P_ζ = σ_iΔζ − Δξ, Q_ξ = Δξ/σ_i − Δζ.
    const double dzeta = static_cast<double>(zeta) - static_cast<double>(zeta_step);
    const double dxi = static_cast<double>(xi) - static_cast<double>(xi_step);
    const double q_xi = dxi / sigma - dzeta, p_zeta = sigma * dzeta - dxi;
    st_.zeta[ii] = rho_ * zeta_step + (Scalar(1) - rho_) * zeta;
    st_.xi[ii] = rho_ * xi_step + (Scalar(1) - rho_) * xi;
    th.sums.loss += static_cast<double>(st_.omega[ii]) * static_cast<double>(top);
    th.sums.inner += inner;
    th.sums.dual_residual += q2 + q_xi * q_xi;
    th.sums.zeta_residual += p_zeta * p_zeta;
    th.sums.cross += cross;
    th.sums.dual_move += dy2 / steps_.unit.sigma0[ii];
    th.sums.multiplier = std::max(th.sums.multiplier, off_step / static_cast<double>(st_.omega[ii]));
    if (!(off > 0.0)) return false;
    dual_to_z(s, y, c, off);
    return true;
  }

  /// Smooth loss: z_i = ω_i ∇ℓ(s_i). Sums: loss.
  bool step_smooth(Eigen::Index i, std::span<Scalar> s, Thread& th) {
    const Scalar omega = st_.omega[static_cast<std::size_t>(i)];
    const std::span<Scalar> g(th.a.data(), s.size());
    const Scalar value = loss_.gradient(std::span<const Scalar>(s), problem_.y[static_cast<std::size_t>(i)], g);
    th.sums.loss += static_cast<double>(omega) * static_cast<double>(value);
    bool nonzero = false;
    for (std::size_t k = 0; k < s.size(); ++k) {
      s[k] = omega * g[k];
      nonzero = nonzero || s[k] != Scalar(0);
    }
    return nonzero;
  }

  // ---- the iteration ------------------------------------------------------------------------

  /// Undoes the swaps of a step (the one taken with a scale above s̄), or starts one.
  void swap_iterates() {
    st_.W.swap(st_.W_prev);
    st_.G.swap(st_.G_prev);
    st_.b.swap(st_.b_prev);
    st_.g_b.swap(st_.g_b_prev);
    st_.U.swap(st_.U_prev);
    st_.Y.swap(st_.Y_prev);
    st_.zeta.swap(st_.zeta_prev);
    st_.xi.swap(st_.xi_prev);
  }

  /// x̃ = prox_{𝒯g}(x − 𝒯G): forward (Tᵀy or ∇L) and backward (prox) steps.
  void primal_step() {
    ClassMatrix<Scalar>& W = W_out();
    for (Eigen::Index j = 0; j < d_; ++j)
      W.row(j) = st_.W_prev.row(j) - steps_.tau_row[static_cast<std::size_t>(j)] * st_.G_prev.row(j);
    reg_.prox(W, steps_.tau_row);
    if (intercept_) b_out().noalias() = st_.b_prev - steps_.tau_b * st_.g_b_prev;
  }

  /// Algorithm 2: ζ̃ = P_{V_η}(ζ − 𝒯_ζξ) in the metric of 𝒯_ζ = Σ⁻¹ (it moves ζ along 𝒯_ζω).
  void slack_step() {
    std::array<double, 2> totals{};  // ωᵀζ and Σ_i ω_i² τ_ζ,i
    for (std::size_t i = 0; i < st_.zeta.size(); ++i) {
      if (st_.omega[i] == Scalar(0)) continue;
      const double tau_zeta = 1.0 / steps_.sigma(static_cast<Eigen::Index>(i));
      st_.zeta[i] = st_.zeta_prev[i] - static_cast<Scalar>(tau_zeta) * st_.xi_prev[i];
      totals[0] += static_cast<double>(st_.omega[i]) * static_cast<double>(st_.zeta[i]);
      totals[1] += static_cast<double>(st_.omega[i]) * static_cast<double>(st_.omega[i]) * tau_zeta;
    }
    sample_sums_(std::span<double>(totals));
    const double excess = totals[0] - options_.eta;
    if (excess > 0.0) {
      const double shift = excess / totals[1];
      for (std::size_t i = 0; i < st_.zeta.size(); ++i)
        st_.zeta[i] -= static_cast<Scalar>(shift * static_cast<double>(st_.omega[i]) / steps_.sigma(static_cast<Eigen::Index>(i)));
    }
  }

  /// PDLP's adaptive step: s̄ of the step just taken (the ζ block's condition τ_ζσ = 1 always
  /// holds) and the next scale min((1 − (k+1)^{−0.3}) s̄, (1 + (k+1)^{−0.6}) s), never below
  /// 1/‖A‖. Returns whether the step is accepted (s ≤ s̄); a rejected one is undone.
  bool adapt_step_scale() {
    ++passes_;
    double dx2 = intercept_ ? static_cast<double>((b_out() - st_.b_prev).squaredNorm()) / steps_.unit.tau0_b : 0.0;
    const ClassMatrix<Scalar>& W = W_out();
    for (Eigen::Index j = 0; j < d_; ++j)
      dx2 += static_cast<double>((W.row(j) - st_.W_prev.row(j)).squaredNorm()) / steps_.unit.tau0[static_cast<std::size_t>(j)];
    const double cross = std::abs(sums_.cross);
    const double limit = cross > 0.0 ? (dx2 / steps_.gamma + steps_.gamma * sums_.dual_move) / (2.0 * cross)
                                     : std::numeric_limits<double>::infinity();
    const double k1 = static_cast<double>(passes_ + 1);
    const double next = std::max(safe_scale_, std::min((1.0 - std::pow(k1, step_shrink_exponent)) * limit,
                                                       (1.0 + std::pow(k1, step_growth_exponent)) * steps_.scale));
    const bool accepted = steps_.scale <= limit || steps_.scale <= safe_scale_;
    if (!accepted) swap_iterates();
    if (std::isfinite(next)) steps_.set(steps_.gamma, next);
    return accepted;
  }

  /// x⁺ = ρx̃ + (1 − ρ)x; Tᵀỹ from Tᵀy⁺ = ρTᵀỹ + (1 − ρ)Tᵀy.
  void relax() {
    st_.W.noalias() = rho_ * W_out() + (Scalar(1) - rho_) * st_.W_prev;
    G_out().noalias() = (st_.G - (Scalar(1) - rho_) * st_.G_prev) / rho_;
    if (intercept_) {
      st_.b.noalias() = rho_ * b_out() + (Scalar(1) - rho_) * st_.b_prev;
      g_b_out().noalias() = (st_.g_b - (Scalar(1) - rho_) * st_.g_b_prev) / rho_;
    }
  }

  // ---- measures -----------------------------------------------------------------------------

  /// Primal and dual residuals P, Q of the class comment, relative to ‖Tᵀy₀‖ and ‖r‖ (the larger).
  [[nodiscard]] double step_residual() {
    const ClassMatrix<Scalar>& W = W_out();
    const ClassMatrix<Scalar>& G = G_out();
    double p2 = sums_.zeta_residual;  // the ζ part (0 for Algorithm 1)
    for (Eigen::Index j = 0; j < d_; ++j)
      p2 += static_cast<double>(((st_.W_prev.row(j) - W.row(j)) / steps_.tau_row[static_cast<std::size_t>(j)] -
                                 (st_.G_prev.row(j) - G.row(j)))
                                    .squaredNorm());
    if (intercept_) p2 += static_cast<double>(((st_.b_prev - b_out()) / steps_.tau_b - (st_.g_b_prev - g_b_out())).squaredNorm());
    const double rho_P = std::sqrt(p2) / scale_P_.plain;
    return exact_hinge ? std::max(rho_P, std::sqrt(sums_.dual_residual) / scale_Q_) : rho_P;
  }

  /// The paper's §4.2 test ‖x̃ − x‖ / ‖x̃‖ with x = (W, b).
  [[nodiscard]] double relative_change() {
    const ClassMatrix<Scalar>& W = W_out();
    const ClassVector<Scalar>& b = b_out();
    const double change = std::sqrt(static_cast<double>((W - st_.W_prev).squaredNorm() + (b - st_.b_prev).squaredNorm()));
    const double size = std::sqrt(static_cast<double>(W.squaredNorm() + b.squaredNorm()));
    return size > 0.0 ? change / size : change;
  }

  /// ‖G‖ (Euclidean, for the relative residual) and ‖𝒯⁰^{½}G‖ (for the primal weight).
  [[nodiscard]] GradientNorms gradient_norms() const {
    double plain = static_cast<double>(st_.g_b.squaredNorm()), weighted = steps_.unit.tau0_b * plain;
    for (Eigen::Index j = 0; j < d_; ++j) {
      const double row = static_cast<double>(st_.G.row(j).squaredNorm());
      plain += row;
      weighted += steps_.unit.tau0[static_cast<std::size_t>(j)] * row;
    }
    return {std::sqrt(plain), std::sqrt(weighted)};
  }

  /// D(y) of (11) = D of (1) (see the class comment); off_mass = rᵀy, TtY = Tᵀy.
  double dual_value(double off_mass, ClassMatrix<Scalar>& TtY) {
    if (penalty_.mu > 0.0) return off_mass - reg_.conjugate(TtY);
    const double dual_norm = reg_.max_dual_norm(TtY);
    return (dual_norm > penalty_.lambda ? penalty_.lambda / dual_norm : 1.0) * off_mass;
  }

  /// The internal error of the restarts: the gap (F(x) − D(y)) relative to F(0) — the restart
  /// decisions, and so the iterates, are those of the F(0) scale.
  double scaled_gap(double F, double off_mass, ClassMatrix<Scalar>& TtY) {
    return (F - dual_value(off_mass, TtY)) / loss_scale_;
  }

  /// KKT residual of Algorithm 1 (intercept case): max of the stationarity violation
  /// dist(−Tᵀy, ∂g(x)) (with the intercept row, which must vanish) relative to ‖Tᵀy₀‖ and the
  /// Fenchel–Young gap L(x) − Σ_i⟨y_i, u_i + r_i⟩ ≥ 0 of the loss part relative to F(0), with
  /// L(x) = Σ_i ω_i h_i(u_i) (`loss`) and the inner products (`inner`).
  /// Algorithm 2: the loss-part multiplier ν̂ = max_i rᵀy_i/ω_i makes y_i ∈ ν̂ω_i·S_1 (the label
  /// entry is the slack); the conditions are then stationarity (relative to ν̂‖Tᵀy₀‖), the
  /// Fenchel–Young gap ν̂L(x) − Σ_i⟨y_i, u_i + r_i⟩ (relative to ν̂F(0)) and feasibility with
  /// complementarity, |L(x) − η| (or (L − η)₊ when ν̂ = 0), relative to F(0).
  double kkt_residual(ClassMatrix<Scalar>& Wm, ClassMatrix<Scalar>& TtY, const ClassVector<Scalar>& TtY_b, double loss,
                      double inner, double nu) {
    const double stationarity = std::hypot(reg_.violation(Wm, TtY), static_cast<double>(TtY_b.norm()));
    if constexpr (!constrained) {
      return std::max(stationarity / scale_P_.plain, (loss - inner) / loss_scale_);  // ν = 1
    } else {
      const double scale = nu > 0.0 ? nu : 1.0;
      const double feasibility = nu > 0.0 ? std::abs(loss - options_.eta) : std::max(loss - options_.eta, 0.0);
      return std::max({stationarity / (scale * scale_P_.plain), (nu * loss - inner) / (scale * loss_scale_),
                       feasibility / loss_scale_});
    }
  }

  [[nodiscard]] std::int64_t count_rows() const {
    const ClassMatrix<Scalar>& W = W_out();
    std::int64_t rows = 0;
    for (Eigen::Index j = 0; j < d_; ++j) rows += (W.row(j).array() != Scalar(0)).any() ? 1 : 0;
    return rows;
  }

  // ---- the certificate of (1) (Algorithm 1; see "Stopping" in the class comment) ------------

  /// The gap of (1) at the point measured (x̃, and ỹ or the loss gradient there), F its primal.
  /// Free at (x̃, ỹ) without an intercept: D from the pass's rᵀỹ (sums_.off_mass) and Tᵀỹ.
  DualityGap evaluate_gap(double F_here) {
    if constexpr (constrained) {
      return {};
    } else if constexpr (exact_hinge) {
      return gap_spent_.timed([&] {
        return DualityGap{F_here, free_gap_ ? dual_value(sums_.off_mass, G_out()) : dual_with_intercept()};
      });
    } else {
      return gap_spent_.timed([&] {
        return sparsemc::duality_gap(loss_, penalty_, problem_, W_out(), b_out(), intercept_, work_, sample_sums_);
      });
    }
  }

  /// With an intercept: ỹ = (y⁺ − (1 − ρ)y)/ρ, projected back onto ×_i S_{ω_i} (rounding),
  /// a_i = ỹ_i/ω_i − e_{z_i}, made to satisfy Σ_i c_i a_i = 0 by the intercept correction;
  /// D = −θ Σ_i ω_i ℓ*(a_i) − g*(−XᵀD̃) with g's own groups (ℓ* of Crammer–Singer is linear
  /// along a ↦ θa, so the μ = 0 rescaling θ multiplies it).
  double dual_with_intercept() {
    resize_advised(work_.A, n_, K_);
    resize_advised(work_.weighted, n_, K_);
    const auto inv_rho = static_cast<Scalar>(1.0 / static_cast<double>(rho_));
    for (Eigen::Index i = 0; i < n_; ++i) {
      const Scalar omega = st_.omega[static_cast<std::size_t>(i)];
      auto a = work_.A.row(i);
      if (!(omega > Scalar(0))) {
        a.setZero();
        continue;
      }
      if (relaxed_) a = (st_.Y.row(i) - (Scalar(1) - rho_) * st_.Y_prev.row(i)) * inv_rho;
      else a = st_.Y.row(i);
      prox::project_simplex(row_span(work_.A, i), omega, simplex_scratch_);
      a /= omega;
      a[static_cast<Eigen::Index>(label(i))] -= Scalar(1);
    }
    correct_for_intercept<Loss>(problem_, work_.A, work_, sample_sums_);
    // ℓ*(a_i) = −Σ_{k≠z_i} a_ik, in closed form: the projection and the correction keep a_i in
    // dom ℓ* in exact arithmetic, and the loss's own domain test would refuse float rounding.
    double conjugates = 0.0;
    for (Eigen::Index i = 0; i < n_; ++i) {
      const Scalar omega = st_.omega[static_cast<std::size_t>(i)];
      work_.weighted.row(i) = omega * work_.A.row(i);
      if (!(omega > Scalar(0))) continue;
      double off = 0.0;
      const std::size_t c = label(i);
      for (Eigen::Index k = 0; k < K_; ++k)
        if (static_cast<std::size_t>(k) != c) off += static_cast<double>(work_.A(i, k));
      conjugates -= static_cast<double>(omega) * off;
    }
    sample_sums_(conjugates);
    weight_gradient(problem_, work_.weighted, work_.G);
    sample_sums_(std::span<Scalar>(work_.G.data(), static_cast<std::size_t>(work_.G.size())));
    if (penalty_.mu > 0.0) return -conjugates - reg_.conjugate(work_.G);
    const double dual_norm = reg_.max_dual_norm(work_.G);
    const double theta = dual_norm > penalty_.lambda ? (std::isinf(dual_norm) ? 0.0 : penalty_.lambda / dual_norm) : 1.0;
    return -theta * conjugates;
  }

  // ---- restarts -----------------------------------------------------------------------------

  /// Running averages since the last restart (T x̄ = Ū, Tᵀȳ = Ḡ: linear).
  void update_averages() {
    const auto a = static_cast<Scalar>(1.0 / static_cast<double>(++averaged_));
    rs_.W += a * (st_.W - rs_.W);
    rs_.G += a * (st_.G - rs_.G);
    rs_.U += a * (st_.U - rs_.U);
    rs_.Y += a * (st_.Y - rs_.Y);
    if (intercept_) {
      rs_.b += a * (st_.b - rs_.b);
      rs_.g_b += a * (st_.g_b - rs_.g_b);
    }
    for (std::size_t i = 0; i < rs_.zeta.size(); ++i) {
      rs_.zeta[i] += a * (st_.zeta[i] - rs_.zeta[i]);
      rs_.xi[i] += a * (st_.xi[i] - rs_.xi[i]);
    }
  }

  /// F and the measure (gap or KKT residual) at the averages, from Ū and Ȳ.
  [[nodiscard]] PointError error_at_average() {
    std::array<double, 3> totals{};  // the hinge part, rᵀȳ and Σ_i ⟨ȳ_i, ū_i + r_i⟩
    auto& [hinge, off, inner_sum] = totals;
    double nu = 0.0;
    for (Eigen::Index i = 0; i < n_; ++i) {
      const Scalar omega = st_.omega[static_cast<std::size_t>(i)];
      if (omega == Scalar(0)) continue;
      const std::size_t c = label(i);
      Scalar top = Scalar(0);
      double sample_off = 0.0;
      for (std::size_t k = 0; k < static_cast<std::size_t>(K_); ++k) {
        if (k == c) continue;
        const auto kk = static_cast<Eigen::Index>(k);
        top = std::max(top, rs_.U(i, kk) + Scalar(1));
        sample_off += static_cast<double>(rs_.Y(i, kk));
        inner_sum += static_cast<double>(rs_.Y(i, kk)) * (static_cast<double>(rs_.U(i, kk)) + 1.0);
      }
      hinge += static_cast<double>(omega) * static_cast<double>(top);
      off += sample_off;
      nu = std::max(nu, sample_off / static_cast<double>(omega));
    }
    sample_sums_(std::span<double>(totals));
    nu = sample_sums_.max(nu);
    const double F_average = hinge + reg_.value(rs_.W);
    return {F_average, measure_kind_ == Measure::duality_gap ? scaled_gap(F_average, off, rs_.G)
                                                             : kkt_residual(rs_.W, rs_.G, rs_.g_b, hinge, inner_sum, nu)};
  }

  /// The averages become the iterate (and the measured point).
  void move_to_average() {
    st_.W = rs_.W;
    st_.G = rs_.G;
    st_.U = rs_.U;
    st_.Y = rs_.Y;
    st_.b = rs_.b;
    st_.g_b = rs_.g_b;
    st_.zeta = rs_.zeta;
    st_.xi = rs_.xi;
    if (relaxed_) {
      W_out() = rs_.W;
      G_out() = rs_.G;
      b_out() = rs_.b;
      g_b_out() = rs_.g_b;
    }
  }

  /// Primal weight: γ ← exp(θ log(Δx/Δy) + (1 − θ) log γ) = √(γ·Δx/Δy) (θ = primal_weight_smoothing),
  /// with Δx, Δy the moves since the last restart in the metric of 𝒯⁰, Σ⁰.
  void update_primal_weight() {
    std::array<double, 2> moves{};  // the samples' parts: Algorithm 2's ζ in Δx², and Δy²
    auto& [dz2, dy2] = moves;
    for (Eigen::Index i = 0; i < n_; ++i) {
      double move = static_cast<double>((st_.Y.row(i) - rs_.Y_last.row(i)).squaredNorm());
      if constexpr (constrained) {
        const auto ii = static_cast<std::size_t>(i);
        const double dz = static_cast<double>(st_.zeta[ii]) - static_cast<double>(rs_.zeta_last[ii]);
        const double dxi = static_cast<double>(st_.xi[ii]) - static_cast<double>(rs_.xi_last[ii]);
        dz2 += dz * dz * steps_.unit.sigma0[ii] * steps_.scale * steps_.scale;  // 𝒯⁰_ζ = 1/(s²σ⁰)
        move += dxi * dxi;
      }
      dy2 += move / steps_.unit.sigma0[static_cast<std::size_t>(i)];
    }
    sample_sums_(std::span<double>(moves));
    double dx2 = dz2 + static_cast<double>((st_.b - rs_.b_last).squaredNorm()) / steps_.unit.tau0_b;
    for (Eigen::Index j = 0; j < d_; ++j)
      dx2 += static_cast<double>((st_.W.row(j) - rs_.W_last.row(j)).squaredNorm()) / steps_.unit.tau0[static_cast<std::size_t>(j)];
    if (dx2 > 0.0 && dy2 > 0.0 && std::isfinite(dx2 / dy2))
      steps_.set_balance(std::exp(0.5 * primal_weight_smoothing * std::log(dx2 / dy2) +  // log(Δx/Δy) = ½ log(dx2/dy2)
                                  (1.0 - primal_weight_smoothing) * std::log(steps_.gamma)));
  }

  // PDLP's constants (Applegate et al., "Practical large-scale linear programming using
  // primal-dual hybrid gradient", NeurIPS 2021, §3), as published; FBPDOptions::restarts and
  // ::adaptive_steps document their use.
  /// Iterations between two checks of the restart criteria (PDLP checks every 64).
  static constexpr std::int64_t restart_period = 64;
  /// Restart when the error fell below this fraction of the error at the last restart (PDLP's β_sufficient).
  static constexpr double sufficient_decay = 0.2;
  /// Restart when below this fraction and rising since the last check (PDLP's β_necessary).
  static constexpr double necessary_decay = 0.8;
  /// Restart when the iterations since the last one are this fraction of all (PDLP's β_artificial).
  static constexpr double artificial_restart = 0.36;
  /// s̄ is damped by 1 − (k+1)^{step_shrink_exponent} (PDLP's adaptive step size).
  static constexpr double step_shrink_exponent = -0.3;
  /// s may grow by 1 + (k+1)^{step_growth_exponent} per iteration (PDLP's adaptive step size).
  static constexpr double step_growth_exponent = -0.6;
  /// θ of the primal weight update, the weight of the new estimate against the old γ (PDLP's 0.5).
  static constexpr double primal_weight_smoothing = 0.5;
  /// The power method stops once its estimate changes by less than this, relative (empirical;
  /// documented at FBPDOptions::power_iterations).
  static constexpr double power_tolerance = 1e-6;
  /// A smooth loss's step is τ = forward_step/β: the Vũ–Condat condition 1/τ − σ‖T‖² ≥ β/2
  /// without a dual block (class comment of FBPD, "Smooth losses").
  static constexpr double forward_step = 2.0;

  const Prob& problem_;
  const Loss& loss_;
  const Penalty& penalty_;
  const FBPDOptions& options_;
  Sums sample_sums_;             // completes the sums over samples (a part of a split problem)
  Eigen::Index n_, d_;
  ClassIndex K_;
  bool intercept_;
  SamplePass<Scalar> pass_;
  Regulariser<Penalty, Scalar> reg_;
  FbpdIterates<Scalar> st_;
  FbpdSteps<Scalar> steps_;
  FbpdRestartState<Scalar> rs_;
  PassSums sums_;  // of the last pass
  double loss_scale_ = 1.0;      // F(0) = Σ_i ω_i (or 1 if 0): the scale of gaps and Fenchel–Young terms
  Eigen::Index n_active_ = 0;    // samples with c_i > 0
  std::vector<Label> labels_;    // of the returned model: 0..K−1 or the warm start's
  double bias_ = -1.0;           // the warm start's bias feature
  Scalar rho_;                   // the relaxation ρ (1 for a smooth loss)
  bool relaxed_;                 // ρ ≠ 1: x̃ and Tᵀỹ are kept apart from x⁺ and Tᵀy⁺
  GradientNorms scale_P_{0.0, 0.0};  // ‖Tᵀy₀‖ (or ‖∇L(0)‖) and ‖𝒯⁰^{½}Tᵀy₀‖: the scale of P
  double scale_Q_ = 0.0;         // ‖r‖ = √(n_a(K−1)): the scale of Q
  Measure measure_kind_;
  bool free_gap_;                // the gap of (1) comes with every pass (no intercept)
  GapWorkspace<Scalar> work_;
  std::vector<Scalar> simplex_scratch_;
  // The loop.
  double F_ = 0.0;               // F at the measured point
  double measure_ = std::numeric_limits<double>::quiet_NaN();
  std::int64_t epoch_ = 0;
  GapCost gap_spent_;
  DualityGap certificate_;       // at the returned point once certificate_epoch_ == epoch_
  std::int64_t certificate_epoch_ = -1;
  GapSchedule schedule_;
  bool degenerate_ = false;      // the loss part does not depend on (W, b)
  // Adaptive restarts (PDLP): state kept since the last restart.
  bool restarts_;
  bool averages_;                // the averages are candidates (the measure is a gap or KKT residual)
  bool restarted_to_average_ = false;  // in this epoch
  std::int64_t restart_epoch_ = 0, averaged_ = 0;
  double error_at_restart_ = std::numeric_limits<double>::infinity();
  double error_at_check_ = std::numeric_limits<double>::infinity();
  // Adaptive steps (PDLP): passes taken (k, rejected ones included) and the safe scale.
  bool adaptive_;
  double safe_scale_ = 0.0;
  std::int64_t passes_ = 0;
};

}  // namespace sparsemc::detail
