#pragma once
/// \file fbpd.hpp
/// `FBPD<Loss, Penalty, Formulation>`: the forward–backward primal–dual method (Vũ 2013, Condat
/// 2013) as Chierchia, Pustelnik, Pesquet & Pesquet-Popescu use it for the exact sparse
/// multiclass SVM ("A proximal approach for sparse multiclass SVM", 2015): Algorithm 1 for the
/// regularised form and Algorithm 2, with epigraphical splitting, for the constrained form.
///
/// The public class, its documentation and the loop over the steps are here; the state and
/// the steps are in detail/engine.hpp, the options in options.hpp.

#include <cmath>
#include <concepts>
#include <iostream>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "../../core/callbacks.hpp"
#include "../../core/status.hpp"
#include "../../core/stopwatch.hpp"
#include "../../core/traits.hpp"
#include "../../core/validate.hpp"
#include "../../data/problem.hpp"
#include "../../loss/concepts.hpp"
#include "../../model/linear_model.hpp"
#include "../../penalty/concepts.hpp"
#include "../duality_gap.hpp"
#include "../solver_base.hpp"
#include "detail/engine.hpp"
#include "options.hpp"

namespace sparsemc {

/// Forward–backward primal–dual solver for objective (1) with the exact Crammer–Singer hinge
/// (Chierchia et al. 2015, Algorithms 1 and 2) or, through a forward (gradient) step, with any
/// smooth loss; any penalty with a prox, on rows or on user-given feature blocks.
///
/// **The paper's problem in (1).** Chierchia et al. write the hinge of sample ℓ as h_ℓ(T_ℓx)
/// with x = (W, b), T_ℓx = [x̃_ℓᵀ(x^{(k)} − x^{(z_ℓ)})]_k the score differences (x̃ = [x, 1] with
/// an intercept, the paper's φ(u) = [u, 1]; the label's own entry is 0) and
///     h_ℓ(u) = max_k (u_k + r_ℓk),   r_ℓk = 1 (k ≠ z_ℓ), 0 (k = z_ℓ)                     (6)
/// so that h_ℓ(T_ℓx) = max(0, 1 + max_{k≠z} s_k − s_z) = ℓ_CS(s_ℓ). Their problem (7),
/// g(x) + λ_p Σ_ℓ h_ℓ(T_ℓx), is (1) with g(x) = λR(W) + (μ/2)‖W‖² (b unpenalised) and the weight
/// λ_p replaced by ω_i = c_i/n per sample: with the paper's g = ‖·‖_{1,p}, λ_p = 1/α and L
/// samples, their minimiser is ours for λ = α/L, μ = 0. Their (8), Σ_ℓ h_ℓ ≤ η_p = αL, is
/// `Constrained` with η = α: (1/n) Σ c_i ℓ_i ≤ η.
///
/// **Algorithm 1** (regularised), with P_{S_ω} the projection onto the simplex S_ω = {v ≥ 0,
/// Σv = ω} (prox/simplex.hpp), diagonal steps 𝒯 (per feature row) and Σ (per sample):
///     x⁺ = prox_{𝒯g}(x − 𝒯Tᵀy)
///     ŷ_i = y_i + σ_i T_i(2x⁺ − x)
///     y_i⁺ = P_{S_{ω_i}}(ŷ_i + σ_i r_i)       (Prop. 3.1: prox of the conjugate of ω_i h_i)
/// Its dual (11) is max_{y ∈ ×_i S_{ω_i}} Σ_i r_iᵀy_i − g*(−Tᵀy), which is D(A) of (1) at
/// a_i = y_i/ω_i − e_{z_i} (solver/duality_gap.hpp): g* is finite for μ > 0 (computed through
/// the prox of (λ/μ)R), and for μ = 0 the dual point is made feasible by scaling its off-label
/// entries by θ = min(1, λ / max_J R°((Tᵀy)_J)) (the label entry of y_i is the slack of S_ω and
/// enters neither Tᵀy nor rᵀy).
///
/// **Stopping** (`fbpd`): `converged` means the relative duality gap of (1), (F − D)/max(|F|,
/// 10⁻¹²), is ≤ tol; `info.duality_gap` (≥ F − F*) and `info.relative_gap` are filled at the
/// returned model for every status. Without an intercept the gap at (x̃, ỹ) comes free with
/// every pass. With an intercept, Tᵀy must also have a zero intercept row, which iterates do not
/// satisfy: ỹ is made feasible by the intercept correction of duality_gap.hpp (a_i mixed
/// towards a common point) and D costs one product Xᵀ; a smooth loss has no dual block and uses
/// the gradient candidate a_i = ∇ℓ(s_i) (one pass). These are evaluated on a GapSchedule driven
/// by the cheap measure (KKT or primal residual). With no penalty and μ = 0 there is no finite
/// certificate (gap = F): the solve runs to max_epochs.
///
/// **Algorithm 2** (constrained, epigraphical splitting, eqs. (12)–(14)): auxiliary ζ ∈ R^n,
/// (T_ix, ζ_i) ∈ epi h_i and ζ ∈ V_η = {Σ_i ω_i ζ_i ≤ η}; with duals (y, ξ):
///     x⁺ = prox_{𝒯g}(x − 𝒯Tᵀy),      ζ⁺ = P_{V_η}(ζ − 𝒯_ζ ξ)
///     ŷ_i = y_i + σ_iT_i(2x⁺ − x),    ξ̂_i = ξ_i + σ_i(2ζ_i⁺ − ζ_i)
///     (p_i, θ_i) = P_{epi h_i}(ŷ_i/σ_i, ξ̂_i/σ_i),   y_i⁺ = ŷ_i − σ_ip_i,  ξ_i⁺ = ξ̂_i − σ_iθ_i
/// with the closed-form epigraph projection of Prop. 3.3 (prox/epigraph_max.hpp) for P_E (14),
/// and P_{V_η} taken in the metric of 𝒯_ζ (it moves ζ along 𝒯_ζω: still closed form). The
/// operator (x, ζ) ↦ (Tx, ζ) is block diagonal, so its step condition splits into the one of T
/// and τ_ζ,iσ_i ≤ 1 for the identity block: τ_ζ,i = 1/σ_i here (the paper takes τ_ζ = τ with
/// τσ max(‖T‖², 1) ≤ 1, which for ‖T‖ ≫ 1 leaves ζ with a step ‖T‖² times too short).
/// **What fbpd-epi's stop means**: it solves the constrained problem (8), not (1), so it
/// certifies (8): `converged` means its KKT residual — stationarity, the Fenchel–Young gap of
/// the loss part at the multiplier estimate ν̂ and feasibility |L − η| (see `kkt_residual`),
/// each relative — is ≤ tol (or the measure chosen by `stopping`). `duality_gap` and
/// `relative_gap` are NaN: (1)'s gap does not apply to (8).
///
/// **Smooth losses** (SquaredHinge, OvrSquaredHinge, Logistic, …): the loss part L of (1) is
/// the smooth term of the Vũ–Condat iteration, x⁺ = prox_{τg}(x − τ∇L(x)), with no dual block;
/// the condition 1/τ − σ‖T‖² ≥ β/2 becomes τ = 2/β, β = curvature_bound(K)·‖X̃ᵀCX̃/n‖ (times
/// norm_safety²). This is the paper's §4.1 comparison (square, logit, one-vs-all) in the same
/// solver; the primal residual schedules its gap evaluations. `restarts`, `adaptive_steps` and
/// `relaxation` do not apply (no dual block) and are ignored. `feature_groups` needs the
/// Crammer–Singer loss (a smooth loss's certificate is taken row by row).
///
/// **Steps.** τσ‖T‖² ≤ 1, generalised to diagonal steps (`preconditioning`): 𝒯 = γ𝒯⁰/‖A‖,
/// Σ = Σ⁰/(γ‖A‖) with ‖A‖ = ‖Σ⁰^{½}T𝒯⁰^{½}‖ from the power method (times `norm_safety`), so
/// ‖Σ^{½}T𝒯^{½}‖ ≤ 1 (Pock & Chambolle's condition; scalar steps when 𝒯⁰ = Σ⁰ = I). The
/// balance γ starts at PDLP's primal weight and is updated at adaptive restarts (`restarts`);
/// the scale 1/‖A‖ is the start of PDLP's adaptive steps (`adaptive_steps`), which keep the
/// step condition along the iterates only and take steps several times longer.
///
/// **Residuals**: with x → x⁺, y → y⁺ one iteration,
///     P = 𝒯⁻¹(x − x⁺) − Tᵀ(y − y⁺)   ∈ ∂g(x⁺) + Tᵀy⁺  (primal optimality: 0 ∈ ∂g(x) + Tᵀy),
///     Q = Σ⁻¹(y − y⁺) − T(x − x⁺)    ∈ ∂h*(y⁺) − Tx⁺  (dual optimality),
/// (for a smooth loss P = (x − x⁺)/τ − ∇L(x) + ∇L(x⁺) ∈ ∂F(x⁺)); ‖P‖ is relative to ‖Tᵀy₀‖ (or
/// ‖∇L(0)‖), the loss subgradient of (1) at W = 0, and ‖Q‖ relative to ‖r‖ = √(n_a(K−1)), the
/// margins at W = 0 (n_a the samples with c_i > 0). Both are free: Tx and Tᵀy of consecutive
/// iterates are kept.
///
/// **Cost.** One pass over X per iteration: for each sample the scores of x⁺ (gather), the
/// dual step, and the scatter of the new dual block into Tᵀy⁺ (samples whose block is zero —
/// beyond the margin — skip the scatter); O((n + d)K) dense work besides (the adaptive step's
/// test included; a rejected step costs one more pass). Memory: four d × K and four n × K dense
/// matrices (Tx and y twice, so that a rejected step can be undone; plus three of each for the
/// restarts, and n-vectors for Algorithm 2); nothing is allocated inside iterations. OpenMP over samples when
/// SPARSEMC_USE_OPENMP is defined (deterministic for a thread count, see `threads`).
///
/// Layout: CSR problems (fused pass) or CSC (two Eigen products per iteration). Float and
/// double, int32 and int64 indices; sums in double. Crammer–Singer needs multiclass data; the
/// constrained form needs Crammer–Singer. A warm start (`fit(problem, initial)`, same d and K)
/// starts W at initial's weights, b at its intercept when fit_intercept is set, and the dual at
/// the loss subgradient there (Algorithm 1) or at 0. The returned model's labels are 0..K−1 (or
/// the warm start's); `objective` is F of (1) at the returned model with the penalty's λ, μ (also for
/// `Constrained`, where it equals η + g(W) when the constraint is active).
///
/// The iteration's state and its named steps are in detail/engine.hpp (`FbpdEngine`).
///
/// \code
///   #include <sparsemc/solver/fbpd/fbpd.hpp>
///   using namespace sparsemc;
///   auto data = io::read_libsvm<double>("dna.scale");
///   const auto problem = data.problem<Eigen::RowMajor>();
///   const L1 penalty{.lambda = 1e-3, .mu = 1e-4};
///   FBPD<CrammerSinger, L1> exact({}, penalty, {.tol = 1e-6});
///   Result<double> r = exact.fit(problem);                       // Algorithm 1, stops on the gap
///   const double eta = r.info.objective - penalty_value(penalty, r.model);   // its loss part
///   FBPD<CrammerSinger, L1, Constrained> epi({}, penalty, {.tol = 1e-6, .eta = eta});
///   Result<double> same = epi.fit(problem);                      // Algorithm 2: the same W
/// \endcode
template <class Loss, class Penalty, class Formulation = Regularized>
class FBPD : public detail::SolverBase<FBPD<Loss, Penalty, Formulation>, Loss, Penalty, FbpdOptions> {
  using Base = detail::SolverBase<FBPD<Loss, Penalty, Formulation>, Loss, Penalty, FbpdOptions>;
  friend Base;

  static_assert(std::same_as<Formulation, Regularized> || std::same_as<Formulation, Constrained>,
                "FBPD's third parameter is the formulation: sparsemc::Regularized (Algorithm 1) or "
                "sparsemc::Constrained (Algorithm 2)");

 public:
  using Options = FbpdOptions;
  /// The registered solver name (provenance, tools): "fbpd" or "fbpd-epi".
  static constexpr std::string_view name = Formulation::solver_name;
  /// Whether the loss is the Crammer–Singer hinge, solved exactly through its dual blocks.
  static constexpr bool exact_hinge = detail::fbpd_exact_hinge<Loss>;
  static constexpr bool constrained = std::same_as<Formulation, Constrained>;
  static_assert(!constrained || exact_hinge,
                "FBPD<Loss, Penalty, Constrained> needs the Crammer-Singer loss: the epigraph of a smooth loss "
                "has no closed-form projection (use the Regularized formulation)");

  /// Validates the options, λ, μ ≥ 0 finite and, for `Constrained`, η.
  FBPD(Loss loss, Penalty penalty, Options options = {})
      : Base(std::move(loss), std::move(penalty), std::move(options)) {
    if (!(penalty_.lambda >= 0.0) || !std::isfinite(penalty_.lambda)) detail::fail_option("lambda", "finite and >= 0", penalty_.lambda);
    if (!(penalty_.mu >= 0.0) || !std::isfinite(penalty_.mu)) detail::fail_option("mu", "finite and >= 0", penalty_.mu);
    if (constrained && std::isnan(options_.eta))
      detail::fail_option("eta", "set (finite and >= 0) for the constrained formulation", options_.eta);
    if (!exact_hinge && !options_.feature_groups.empty())
      detail::fail_option("feature_groups", "empty with a smooth loss (its duality gap is taken row by row)",
                          "a grouping");
  }

 private:
  /// The solve: the engine's start, then per iteration its named steps (detail/engine.hpp),
  /// the report to the callbacks and the verdict; then F and the certificate at the returned x̃.
  template <RealScalar Scalar, StorageIndex Index, int Order, class... Callbacks>
  Result<Scalar> run(const Problem<Scalar, Index, Order>& problem, const LinearModel<Scalar>* initial,
                     Callbacks&... callbacks) const {
    static_assert(exact_hinge || SmoothLoss<Loss, Scalar>,
                  "FBPD needs the Crammer-Singer loss (solved exactly through its dual) or a smooth loss "
                  "(value, gradient, curvature, curvature_bound: loss/concepts.hpp)");
    static_assert(sparsemc::Penalty<Penalty, Scalar>,
                  "FBPD needs a penalty with value, prox, violation and dual_norm (penalty/concepts.hpp)");
    problem.validate();
    if (exact_hinge && problem.y.multilabel())
      throw std::invalid_argument("FBPD: the Crammer-Singer hinge is solved for multiclass data (one class per "
                                  "sample); this problem is multilabel");
    const Stopwatch clock;
    detail::FbpdEngine<Loss, Penalty, Formulation, Scalar, Index, Order> engine(problem, loss_, penalty_, options_);
    auto make_model = [&] { return engine.model(); };
    Status status = Status::max_iter;
    if (const std::optional<Status> ended = engine.start(initial)) {
      status = *ended;
    } else {
      notify_begin(callbacks...);
      while (engine.epoch() < options_.max_epochs) {
        engine.iterate();
        if (!engine.evaluate_objective()) {
          status = Status::numerical_issue;
          break;
        }
        engine.evaluate_measure();
        engine.restart_if_due();
        const bool certified = engine.certify();
        const EpochReport report = engine.report(clock.seconds());
        if (options_.verbose) ProgressPrinter{std::cerr}.end_epoch(report);
        const bool stop = notify_end_epoch(report, make_model, callbacks...);
        const bool finite = std::isfinite(report.measure);
        if (const auto verdict = detail::epoch_verdict(options_, finite, certified, stop, report.seconds)) {
          status = *verdict;
          break;
        }
      }
    }

    SolverInfo info = engine.info(status);
    const DualityGap certificate = engine.returned_certificate(info.objective);
    info.seconds = clock.seconds();
    Result<Scalar> result =
        detail::finish_result<Loss, Penalty, Scalar>(make_model(), name, penalty_, engine.bias(), certificate, info);
    if (constrained || std::isnan(certificate.primal)) {  // (8) is certified by its KKT residual; (1)'s gap does not apply
      result.info.duality_gap = std::numeric_limits<double>::quiet_NaN();
      result.info.relative_gap = std::numeric_limits<double>::quiet_NaN();
    }
    notify_end(result.info, callbacks...);
    return result;
  }

  using Base::loss_;
  using Base::options_;
  using Base::penalty_;
};

}  // namespace sparsemc
