#pragma once
/// \file engine.hpp
/// The state and the steps of one ProxGradient solve (implementation detail): Beck & Teboulle's
/// FISTA with backtracking, O'Donoghue & Candès's adaptive restart, and the duality gap of (1)
/// when GapSchedule asks for it. prox_gradient.hpp holds the public class, the mathematics (its
/// class comment) and the loop over these steps.
///
/// Notation as in prox_gradient.hpp: W_k the iterate and Y_k the extrapolated point (b_k, b_Y
/// with an intercept), S their scores, D the score gradient, L_k the curvature of the step's
/// quadratic model (3), t_k the momentum weight (4.2), G_L the gradient mapping (2).

#include <Eigen/Core>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "../../../core/callbacks.hpp"
#include "../../../core/huge_pages.hpp"
#include "../../../core/parallel.hpp"
#include "../../../core/status.hpp"
#include "../../../core/traits.hpp"
#include "../../../data/dense_problem.hpp"
#include "../../../data/problem.hpp"
#include "../../../model/linear_model.hpp"
#include "../../duality_gap.hpp"
#include "../../gap_schedule.hpp"
#include "../../objective.hpp"
#include "../../solver_base.hpp"
#include "../options.hpp"
#include "products.hpp"

namespace sparsemc::detail {

/// The preallocated iterates of one solve: W_k, W_{k−1}, Y_k, the trial point and the gradient
/// (d × K); their scores and the score gradient D (n × K); the intercept counterparts (K, or
/// empty).
template <RealScalar Scalar>
struct FistaState {
  ClassMatrix<Scalar> W, W_prev, Y, W_next, G;
  ClassMatrix<Scalar> S, S_prev, S_Y, S_next, D;
  ClassVector<Scalar> b, b_prev, b_Y, b_next, g_b;
  FistaState(Eigen::Index d, Eigen::Index n, Eigen::Index K, Eigen::Index K_b)
      : b(ClassVector<Scalar>::Zero(K_b)), b_prev(ClassVector<Scalar>::Zero(K_b)), b_Y(K_b), b_next(K_b), g_b(K_b) {
    for (ClassMatrix<Scalar>* M : {&W, &W_prev, &Y, &W_next, &G}) resize_advised(*M, d, K);
    for (ClassMatrix<Scalar>* M : {&S, &S_prev, &S_Y, &S_next, &D}) resize_advised(*M, n, K);
    for (ClassMatrix<Scalar>* M : {&W, &W_prev, &S, &S_prev}) M->setZero();
  }
};

/// One ProxGradient solve of `problem`: the constructor sets up L₀, the scale ‖G_{L₀}(0)‖ of the
/// measure and the warm start; ProxGradient::run then calls start(), per iteration iterate(),
/// certify_if_due() and report(), and at the end returned_certificate() and info(). The
/// problem, the policies and the options are held by reference: the engine lives inside one
/// solve. Over a problem split by samples among processes (`problem` one part), `Sums`
/// completes every sum over the samples — the loss, the gradient, the test (3), L₀ and the
/// gap — so that every process holds the same W_k, Y_k, L_k and takes the same decisions
/// (sample_sums.hpp); the scores S stay the part's.
template <class Loss, class Penalty, TrainingProblem Prob, class Sums = LocalSums>
class FistaEngine {
  using Scalar = ProblemScalar<Prob>;

 public:
  /// The iterates at W = 0, b = 0, L₀ and ‖G_{L₀}(0)‖ there, then the warm start (`initial`, of
  /// the problem's d and K) if any, and F at W₀.
  FistaEngine(const Prob& problem, const Loss& loss, const Penalty& penalty,
              const ProxGradientOptions& options, const LinearModel<Scalar>* initial, const Sums& sums = {})
      : problem_(problem),
        loss_(loss),
        penalty_(penalty),
        options_(options),
        sums_(sums),
        team_(resolve_threads(options.threads)),
        products_(problem, team_),
        K_(problem.n_classes()),
        st_(problem.n_features(), problem.n_samples(), K_, options.fit_intercept ? K_ : 0),
        labels_(initial != nullptr ? initial->labels() : cold_start_labels(K_)),
        bias_(initial != nullptr ? initial->provenance().bias : -1.0),
        warm_(initial != nullptr),
        schedule_(options.tol) {
    // The certificate's work space is sized here, so iterations stay allocation-free; its XᵀD̃
    // is the iterations' product (on CSR data it gathers on every thread, in the serial order).
    work_.team = team_;
    work_.reserve(penalty, problem, K_, /*with_scores=*/false, sums);
    work_.transposed_product = [this](ClassMatrixRef<Scalar> D, ClassMatrix<Scalar>& G) {
      products_.weight_gradient(D, G);
    };
    set_initial_step();
    measure_reference();
    if (initial != nullptr) load_warm_start(*initial);
    F_ = f_Y_ + penalty_value(penalty_, st_.W);
    nnz_rows_ = nonzero_rows(st_.W);
  }
  // work_'s product is bound to this engine's products_.
  FistaEngine(const FistaEngine&) = delete;
  FistaEngine& operator=(const FistaEngine&) = delete;

  /// Y₁ = W₀, t₁ = 1 (Beck–Teboulle's Step 0; the gradient at W₀ is already in the state), after
  /// the certificate of W₀ when it may already be optimal: a warm start, or a zero gradient
  /// mapping at W = 0. Returns the status when the solve ends before its first iteration: a
  /// non-finite F or ‖G_{L₀}(0)‖, or W₀ certified.
  std::optional<Status> start() {
    if (!std::isfinite(F_) || !std::isfinite(reference_)) return Status::numerical_issue;
    if (warm_ || reference_ == 0.0) {
      gap_ = certificate();
      gap_epoch_ = 0;
      if (gap_.relative() <= options_.tol) return Status::converged;
    }
    st_.Y = st_.W;
    st_.S_Y = st_.S;
    st_.b_Y = st_.b;
    have_gradient_ = true;
    return std::nullopt;
  }

  /// One iteration (4.1)–(4.3) from Y_k: backtracking on L until (3) holds, the restart test,
  /// W_{k−1} ← W_k ← W_{k+1} (buffer swaps) and the next Y; then F and the measure, the free
  /// proxy ‖G_{L_k}(Y_k)‖/‖G_{L₀}(0)‖ = L_k‖W_{k+1} − Y_k‖/‖G_{L₀}(0)‖. Returns false when no
  /// step was accepted or F is not finite (W_k stays the iterate).
  bool iterate() {
    ++epoch_;
    if (!have_gradient_) f_Y_ = gradient(st_.S_Y);
    have_gradient_ = false;
    if (!std::isfinite(f_Y_)) return false;
    const double slack = rounding_allowance();
    const Step step = backtrack(slack);
    if (!step.accepted) return false;
    const double F_next = step.loss + step.penalty;
    if (!std::isfinite(F_next)) return false;
    const bool restart = restart_due(F_next, slack);  // on the step just taken, before the buffers move
    accept_step();
    measure_ = L_ * std::sqrt(step.distance2) / scale_;
    extrapolate(restart);
    // Lower L only when (3) held beyond rounding: a test decided by rounding noise must not
    // shrink L (steps too long for the true curvature would stall the method).
    if (step.clear_margin) L_ = std::max(L_ * options_.step_decrease, L_min_);
    F_ = F_next;
    return true;
  }

  /// Whether the duality gap of (1), evaluated when GapSchedule asks for it, certifies W_k
  /// (relative gap ≤ tol); the schedule learns the outcome. It is driven by the proxy itself:
  /// the gap's ratio to the gradient mapping drifts far less than its ratio to the mapping's
  /// square (dna, squared hinge, λ = 0.01: from 36 to 110 against 5·10³ to 2·10⁷ over the solve).
  bool certify_if_due() {
    if (!schedule_.due(epoch_, measure_)) return false;
    gap_ = certificate();
    gap_epoch_ = epoch_;
    schedule_.evaluated(epoch_, measure_, gap_.relative());
    return gap_.relative() <= options_.tol;
  }

  /// This iteration's report (the relative gap of (1) when it was evaluated).
  [[nodiscard]] EpochReport report(double seconds) const {
    EpochReport report{epoch_, F_, measure_, nnz_rows_, seconds};
    if (gap_epoch_ == epoch_) report.relative_gap = gap_.relative();
    return report;
  }

  /// The current iterate as a model with the start's labels.
  [[nodiscard]] LinearModel<Scalar> model() const {
    return LinearModel<Scalar>(st_.W, options_.fit_intercept ? st_.b : ClassVector<Scalar>(), labels_);
  }

  /// The returned model: the other iterates freed, W handed over and consumed as the model is
  /// built instead of copied beside them. The engine has no iterate afterwards.
  [[nodiscard]] LinearModel<Scalar> take_model() {
    for (ClassMatrix<Scalar>* done :
         {&st_.W_prev, &st_.Y, &st_.W_next, &st_.G, &st_.S_prev, &st_.S_Y, &st_.S_next, &st_.D})
      *done = ClassMatrix<Scalar>();
    return LinearModel<Scalar>::consuming(std::move(st_.W), options_.fit_intercept ? st_.b : ClassVector<Scalar>(),
                                          labels_);
  }

  /// The certificate at the returned W: the last one when it is for W_k, else evaluated now.
  DualityGap returned_certificate() {
    if (gap_epoch_ != epoch_) gap_ = certificate();
    return gap_;
  }

  /// The gap evaluations and their time.
  [[nodiscard]] const GapCost& gap_spent() const noexcept { return gap_spent_; }

  /// The information block: the iterations, F and, as the measure, the exact gradient mapping
  /// ‖G_L(W)‖/‖G_{L₀}(0)‖ (2) at the returned W with the last L (NaN when F is not finite).
  SolverInfo info(Status status) {
    double measure = std::numeric_limits<double>::quiet_NaN();
    if (std::isfinite(F_)) {
      gradient(st_.S);
      measure = gradient_mapping(L_) / scale_;
    }
    return {.status = status,
            .epochs = epoch_,
            .objective = F_,
            .measure_name = "gradient_mapping",
            .measure = measure};
  }

  [[nodiscard]] std::int64_t epoch() const noexcept { return epoch_; }
  /// The warm start's bias feature (−1 without a warm start), for the model's provenance.
  [[nodiscard]] double bias() const noexcept { return bias_; }

 private:
  // The iteration's constants; none is Beck–Teboulle's (η, the step decrease and L₀'s scale are
  // options, options.hpp).
  /// Backtracking trials per iteration before the step is declared a numerical issue (a design
  /// bound: at the default η = 2 they raise L by 2²⁰⁰ ≈ 10⁶⁰, past any misestimate of L₀).
  static constexpr int max_backtracking = 200;
  /// The rounding allowance δ of test (3) and of the function restart, in units of
  /// ε(|L(Y_k)| + Σ_i |D_i|·|s_i|): the size of the rounding error of L(Y_k), evaluated at
  /// extrapolated scores, and of its linearisation (a margin on rounding, sparsemc's).
  static constexpr double rounding_allowance_ulps = 10.0;
  /// The floor of L as a fraction of L₀, the 10⁻¹² of ProxGradientOptions::step_decrease (a
  /// design choice far below any curvature met: it keeps the step 1/L finite where the loss is
  /// locally linear, e.g. a squared hinge with every margin met, and (3) holds with a margin at
  /// every step).
  static constexpr double lipschitz_floor_fraction = 1e-12;

  /// What the backtracking ends with: L(W_{k+1}), P(W_{k+1}) and ‖W_{k+1} − Y_k‖² at the last
  /// trial, whether (3) held there, and whether it held beyond rounding.
  struct Step {
    double loss = 0.0;
    double penalty = 0.0;  // P(W_next)
    double distance2 = 0.0;
    bool accepted = false;
    bool clear_margin = false;
  };

  /// What the forward–backward step sums over the rows of W_out as it writes them.
  struct StepSums {
    std::int64_t nnz_rows = 0;  // nonzero rows of W_out
    double distance2 = 0.0;     // ‖W_out − W_in‖²
    double linear = 0.0;        // ⟨G, W_out − W_in⟩
    double penalty = 0.0;       // P(W_out)
  };

  [[nodiscard]] static std::int64_t nonzero_rows(const ClassMatrix<Scalar>& W) {
    std::int64_t count = 0;
    for (Eigen::Index j = 0; j < W.rows(); ++j) count += (W.row(j).array() != Scalar(0)).any() ? 1 : 0;
    return count;
  }

  // ---- the setup ------------------------------------------------------------------------------

  /// L₀ = lipschitz_scale · curvature_bound(K) · ‖X̃ᵀCX̃/n‖₂ (power method) and the floor of L;
  /// X̃ = 0 makes ∇L constant: then any L works.
  void set_initial_step() {
    double L0 = options_.lipschitz_scale * static_cast<double>(loss_.template curvature_bound<Scalar>(K_)) *
                weighted_gram_norm(problem_, options_.fit_intercept, options_.seed, options_.power_iterations, sums_);
    if (!(L0 > 0.0) || !std::isfinite(L0)) L0 = 1.0;
    L_ = L0;
    L_min_ = lipschitz_floor_fraction * L0;
  }

  /// ‖G_{L₀}(0, 0)‖, the scale of the measure (st_.W, st_.b and st_.S are zero here); leaves
  /// L(0) in f_Y_ and the gradient at 0 in the state.
  void measure_reference() {
    f_Y_ = gradient(st_.S);
    reference_ = gradient_mapping(L_);
    scale_ = reference_ > 0.0 ? reference_ : 1.0;
  }

  /// W₀ (and b₀ with an intercept) from the initial model, with its scores, L(W₀) in f_Y_ and
  /// the gradient at W₀ in the state.
  void load_warm_start(const LinearModel<Scalar>& initial) {
    initial.copy_to(st_.W);
    if (options_.fit_intercept && initial.has_intercept()) st_.b = initial.intercept();
    products_.scores(st_.W, st_.b, st_.S);
    f_Y_ = gradient(st_.S);
  }

  // ---- the iteration --------------------------------------------------------------------------

  /// The rounding allowance δ = rounding_allowance_ulps·ε(|L(Y_k)| + Σ_i |D_i|·|s_i|) of test (3)
  /// and of the function restart, at Y_k.
  [[nodiscard]] double rounding_allowance() const {
    const double eps = static_cast<double>(std::numeric_limits<Scalar>::epsilon());
    double terms = sample_sum(team_, static_cast<std::size_t>(st_.D.rows()), [&](std::size_t i) {
      const auto r = static_cast<Eigen::Index>(i);
      return static_cast<double>(st_.D.row(r).cwiseAbs().dot(st_.S_Y.row(r).cwiseAbs()));
    });
    sums_(terms);
    return rounding_allowance_ulps * eps * (std::abs(f_Y_) + terms);
  }

  /// Backtracking on L (Beck–Teboulle's (2.5)): the forward–backward step (4.1) from Y_k into
  /// W_next with its scores, L ← ηL until (3) holds within `slack`.
  Step backtrack(double slack) {
    Step step;
    for (int trial = 0; trial < max_backtracking && std::isfinite(L_); ++trial) {
      const StepSums sums = forward_backward(st_.Y, st_.b_Y, static_cast<Scalar>(1.0 / L_), st_.W_next, st_.b_next);
      nnz_rows_ = sums.nnz_rows;
      products_.scores(st_.W_next, st_.b_next, st_.S_next);
      step.loss = loss_value(loss_, problem_, st_.S_next, team_);
      sums_(step.loss);
      step.penalty = sums.penalty;
      step.distance2 = sums.distance2 + static_cast<double>((st_.b_next - st_.b_Y).squaredNorm());
      const double linear = sums.linear + static_cast<double>(st_.g_b.dot(st_.b_next - st_.b_Y));
      const double model = f_Y_ + linear + 0.5 * L_ * step.distance2;
      if (step.distance2 == 0.0 || step.loss <= model + slack) {
        step.accepted = true;
        step.clear_margin = step.loss <= model - slack;
        return step;
      }
      L_ *= options_.step_increase;
    }
    return step;
  }

  /// O'Donoghue–Candès's restart test on the step Y_k → W_next from W_k: F rose beyond
  /// rounding (function scheme), or the step opposes the momentum (gradient scheme).
  [[nodiscard]] bool restart_due(double F_next, double slack) const {
    if (options_.restart == RestartScheme::function) {
      return F_next > F_ + slack;  // an increase within rounding is noise, not overshoot
    }
    if (options_.restart == RestartScheme::gradient) {
      return (st_.Y - st_.W_next).cwiseProduct(st_.W_next - st_.W).sum() +
                 (st_.b_Y - st_.b_next).dot(st_.b_next - st_.b) > Scalar(0);
    }
    return false;
  }

  /// W_{k−1} ← W_k ← W_next with their scores and intercepts (buffer swaps, no copies).
  void accept_step() {
    std::swap(st_.W_prev, st_.W);
    std::swap(st_.W, st_.W_next);
    std::swap(st_.S_prev, st_.S);
    std::swap(st_.S, st_.S_next);
    std::swap(st_.b_prev, st_.b);
    std::swap(st_.b, st_.b_next);
  }

  /// The momentum step (4.2)–(4.3) to the next Y, scores extrapolated alike; or, on a restart,
  /// t = 1 and Y = W_k.
  void extrapolate(bool restart) {
    if (restart) {
      t_ = 1.0;
      st_.Y = st_.W;
      st_.S_Y = st_.S;
      st_.b_Y = st_.b;
      return;
    }
    const double t_next = 0.5 * (1.0 + std::sqrt(1.0 + 4.0 * t_ * t_));
    const auto beta = static_cast<Scalar>((t_ - 1.0) / t_next);
    const auto momentum = [&](ClassMatrix<Scalar>& out, const ClassMatrix<Scalar>& now, const ClassMatrix<Scalar>& before) {
      // Entrywise: the same bits at any split.
      split_rows(team_, out.rows(), static_cast<double>(out.size()), [&](Eigen::Index first, Eigen::Index count) {
        out.middleRows(first, count).noalias() =
            (Scalar(1) + beta) * now.middleRows(first, count) - beta * before.middleRows(first, count);
      });
    };
    momentum(st_.Y, st_.W, st_.W_prev);
    momentum(st_.S_Y, st_.S, st_.S_prev);
    if (st_.b.size() > 0) st_.b_Y.noalias() = (Scalar(1) + beta) * st_.b - beta * st_.b_prev;
    t_ = t_next;
  }

  // ---- the pieces -----------------------------------------------------------------------------

  /// The forward–backward step (4.1) from (W_in, b_in) with the gradient in st_.G, st_.g_b:
  /// W_out = prox_{step·P}(W_in − step·G) row by row, b_out = b_in − step·g_b; with the sums
  /// over W_out's rows that test (3) and F need, taken as each row is written (fixed chunks of
  /// rows: the same bits at any thread count).
  StepSums forward_backward(const ClassMatrix<Scalar>& W_in, const ClassVector<Scalar>& b_in, Scalar step,
                            ClassMatrix<Scalar>& W_out, ClassVector<Scalar>& b_out) const {
    const auto sums = chunk_sums<4>(team_, static_cast<std::size_t>(W_in.rows()), [&](std::size_t row) {
      const auto j = static_cast<Eigen::Index>(row);
      W_out.row(j) = W_in.row(j) - step * st_.G.row(j);
      penalty_.prox(row_span(W_out, j), step);
      const auto moved = W_out.row(j) - W_in.row(j);
      return std::array<double, 4>{(W_out.row(j).array() != Scalar(0)).any() ? 1.0 : 0.0,
                                   static_cast<double>(moved.squaredNorm()),
                                   static_cast<double>(st_.G.row(j).dot(moved)),
                                   static_cast<double>(penalty_.value(const_row_span(W_out, j)))};
    });
    if (b_out.size() > 0) b_out.noalias() = b_in - step * st_.g_b;
    return {static_cast<std::int64_t>(sums[0]), sums[1], sums[2], sums[3]};
  }

  /// D, G and g_b at the scores S; returns the loss part there.
  double gradient(const ClassMatrix<Scalar>& S) {
    double value = loss_score_gradient(loss_, problem_, S, st_.D, team_);
    products_.weight_gradient(st_.D, st_.G);
    if (st_.g_b.size() > 0) intercept_gradient(st_.D, st_.g_b);
    sums_(std::span<Scalar>(st_.G.data(), static_cast<std::size_t>(st_.G.size())));
    sums_(std::span<Scalar>(st_.g_b.data(), static_cast<std::size_t>(st_.g_b.size())));
    sums_(value);
    return value;
  }

  /// ‖G_L(W, b)‖ of (2) at the current W (gradient in the state), with st_.W_next, st_.b_next as
  /// scratch.
  double gradient_mapping(double L) {
    forward_backward(st_.W, st_.b, static_cast<Scalar>(1.0 / L), st_.W_next, st_.b_next);
    return L * std::sqrt(static_cast<double>((st_.W_next - st_.W).squaredNorm() + (st_.b_next - st_.b).squaredNorm()));
  }

  /// The duality gap of (1) at W_k with its exact scores st_.S (solver/duality_gap.hpp).
  DualityGap certificate() {
    return gap_spent_.timed([&] {
      return duality_gap_at_scores(loss_, penalty_, problem_, st_.S, penalty_value(penalty_, st_.W),
                                   options_.fit_intercept, work_, sums_);
    });
  }

  const Prob& problem_;
  const Loss& loss_;
  const Penalty& penalty_;
  const ProxGradientOptions& options_;
  Sums sums_;
  int team_;  // threads of the passes over X
  FistaProducts<Prob> products_;
  ClassIndex K_;
  FistaState<Scalar> st_;
  std::vector<Label> labels_;  // of the returned model: 0..K−1 or the warm start's
  double bias_;                // the warm start's bias feature (−1 without one)
  bool warm_;
  // The step and the momentum: L_k and its floor, t_k, L(Y_k) and whether st_.D, st_.G and
  // st_.g_b hold the gradient at Y_k.
  double L_ = 1.0;
  double L_min_ = 0.0;
  double t_ = 1.0;
  double f_Y_ = 0.0;
  bool have_gradient_ = false;
  // ‖G_{L₀}(0)‖ and the measure's scale (1 when it is 0).
  double reference_ = 0.0;
  double scale_ = 1.0;
  std::int64_t epoch_ = 0;
  GapCost gap_spent_;
  double F_ = 0.0;
  double measure_ = std::numeric_limits<double>::quiet_NaN();  // of the last iteration
  std::int64_t nnz_rows_ = 0;
  // The certificate decides `converged`; the measure decides when it is evaluated.
  GapSchedule schedule_;
  GapWorkspace<Scalar> work_;
  DualityGap gap_;
  std::int64_t gap_epoch_ = -1;  // the iteration whose W gap_ is for (−1: none yet)
};

}  // namespace sparsemc::detail
