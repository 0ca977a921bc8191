#pragma once
/// \file fbpd.hpp
/// `FBPD<Loss, Penalty, Formulation>`: the forward–backward primal–dual method (Vũ 2013, Condat
/// 2013) as Chierchia, Pustelnik, Pesquet & Pesquet-Popescu use it for the exact sparse
/// multiclass SVM ("A proximal approach for sparse multiclass SVM", 2015): Algorithm 1 for the
/// regularised form and Algorithm 2, with epigraphical splitting, for the constrained form.

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <iostream>
#include <limits>
#include <numeric>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#ifdef SPARSEMC_USE_OPENMP
#include <omp.h>
#endif

#include "../../core/callbacks.hpp"
#include "../../core/rng.hpp"
#include "../../core/status.hpp"
#include "../../core/stopwatch.hpp"
#include "../../core/traits.hpp"
#include "../../core/validate.hpp"
#include "../../data/problem.hpp"
#include "../../loss/concepts.hpp"
#include "../../model/linear_model.hpp"
#include "../../penalty/concepts.hpp"
#include "../../prox/epigraph_max.hpp"
#include "../../prox/simplex.hpp"
#include "../duality_gap.hpp"
#include "../objective.hpp"
#include "../solver_base.hpp"
#include "detail/preconditioner.hpp"
#include "detail/regulariser.hpp"
#include "detail/sample_pass.hpp"
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
  static constexpr bool exact_hinge = Loss::name == std::string_view("crammer-singer");
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
  /// The iterates and what is kept between iterations.
  template <RealScalar Scalar>
  struct State {
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
  struct Steps {
    detail::DiagonalSteps unit;   // 𝒯⁰, Σ⁰
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
  struct RestartState {
    ClassMatrix<Scalar> W, G, U, Y;  // x̄, Tᵀȳ, T x̄, ȳ
    ClassVector<Scalar> b, g_b;      // b̄ and the intercept row of Tᵀȳ
    std::vector<Scalar> zeta, xi;    // ζ̄, ξ̄ (Algorithm 2)
    ClassMatrix<Scalar> W_last, Y_last;
    ClassVector<Scalar> b_last;
    std::vector<Scalar> zeta_last, xi_last;
  };

  /// Power method on AᵀA, A = Σ⁰^{½} T 𝒯⁰^{½}: an estimate of ‖A‖ (from below). W, b, G, g_b of
  /// `st` are work space.
  template <RealScalar Scalar, StorageIndex Index, int Order>
  double operator_norm(const Problem<Scalar, Index, Order>& problem, detail::SamplePass<Scalar>& pass,
                       const detail::DiagonalSteps& unit, State<Scalar>& st) const {
    Rng rng(options_.seed);
    ClassMatrix<Scalar> V(st.W.rows(), st.W.cols());
    ClassVector<Scalar> v_b(st.b.size());
    for (Eigen::Index j = 0; j < V.rows(); ++j)
      for (Eigen::Index k = 0; k < V.cols(); ++k) V(j, k) = static_cast<Scalar>(uniform_real(rng) - 0.5);
    for (Eigen::Index k = 0; k < v_b.size(); ++k) v_b[k] = static_cast<Scalar>(uniform_real(rng) - 0.5);
    std::vector<Scalar> root_tau(unit.tau0.size());
    for (std::size_t j = 0; j < root_tau.size(); ++j) root_tau[j] = static_cast<Scalar>(std::sqrt(unit.tau0[j]));
    const auto root_tau_b = static_cast<Scalar>(std::sqrt(unit.tau0_b));
    // Sample i: u = T_i(𝒯⁰^{½}v) = s − s_c·1, ‖Av‖² += σ⁰_i‖u‖², z = σ⁰_i (u − (Σu) e_c).
    auto step = [&](Eigen::Index i, std::span<Scalar> s, detail::PassThread<Scalar>& th) {
      const auto c = static_cast<std::size_t>(problem.y.single(static_cast<std::size_t>(i)));
      const double sigma0 = unit.sigma0[static_cast<std::size_t>(i)];
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
    };
    detail::PassSums sums;
    double estimate = 0.0;
    for (int it = 0; it < options_.power_iterations; ++it) {
      const double norm = std::sqrt(static_cast<double>(V.squaredNorm() + v_b.squaredNorm()));
      if (!(norm > 0.0)) return 0.0;
      V /= static_cast<Scalar>(norm);
      v_b /= static_cast<Scalar>(norm);
      for (Eigen::Index j = 0; j < V.rows(); ++j) st.W.row(j) = root_tau[static_cast<std::size_t>(j)] * V.row(j);
      st.b = root_tau_b * v_b;
      pass.run(problem, st.W, st.b, step, st.G, st.g_b, sums);  // G = TᵀΣ⁰T𝒯⁰^{½}v
      const double rayleigh = sums.squared_norm;
      const bool settled = it > 0 && std::abs(rayleigh - estimate) <= 1e-6 * rayleigh;
      estimate = std::max(estimate, rayleigh);
      if (settled) break;
      for (Eigen::Index j = 0; j < V.rows(); ++j) V.row(j) = root_tau[static_cast<std::size_t>(j)] * st.G.row(j);
      v_b = root_tau_b * st.g_b;
    }
    return std::sqrt(estimate);
  }

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
    const Eigen::Index n = problem.n_samples();
    const Eigen::Index d = problem.n_features();
    const ClassIndex K = problem.n_classes();
    const bool intercept = options_.fit_intercept;
    const Eigen::Index K_b = intercept ? K : 0;
#ifdef SPARSEMC_USE_OPENMP
    const int threads = options_.threads > 0 ? options_.threads : omp_get_max_threads();
#else
    const int threads = 1;
#endif
    detail::SamplePass<Scalar> pass(n, d, K, intercept, Order == Eigen::ColMajor, threads);
    detail::Regulariser<Penalty, Scalar> reg(penalty_, options_.feature_groups, options_.groups_per_class, d, K);

    State<Scalar> st;
    st.W = ClassMatrix<Scalar>::Zero(d, K);
    st.W_prev = ClassMatrix<Scalar>::Zero(d, K);
    st.G.resize(d, K);
    st.G_prev.resize(d, K);
    st.b = ClassVector<Scalar>::Zero(K_b);
    st.b_prev = ClassVector<Scalar>::Zero(K_b);
    st.g_b.resize(K_b);
    st.g_b_prev.resize(K_b);
    st.omega.resize(static_cast<std::size_t>(n));
    double F0 = 0.0;
    Eigen::Index n_active = 0;
    for (Eigen::Index i = 0; i < n; ++i) {
      const double w = static_cast<double>(problem.weight(static_cast<Index>(i))) / static_cast<double>(n);
      st.omega[static_cast<std::size_t>(i)] = static_cast<Scalar>(w);
      F0 += w;  // ℓ_CS(0) = 1 for every sample when K ≥ 2
      n_active += w > 0.0 ? 1 : 0;
    }
    if constexpr (exact_hinge) {  // zero: the rows of samples without weight are never written
      st.U = ClassMatrix<Scalar>::Zero(n, K);
      st.Y = ClassMatrix<Scalar>::Zero(n, K);
      st.U_prev = ClassMatrix<Scalar>::Zero(n, K);
      st.Y_prev = ClassMatrix<Scalar>::Zero(n, K);
      if constexpr (constrained) {
        st.zeta.assign(static_cast<std::size_t>(n), Scalar(0));
        st.zeta_prev.assign(static_cast<std::size_t>(n), Scalar(0));
        st.xi.assign(static_cast<std::size_t>(n), Scalar(0));
        st.xi_prev.assign(static_cast<std::size_t>(n), Scalar(0));
      }
    }

    // ---- step sizes ------------------------------------------------------------------------
    Steps<Scalar> steps;
    steps.tau_row.resize(static_cast<std::size_t>(d));
    if constexpr (exact_hinge) {
      steps.unit = detail::diagonal_steps(problem, intercept, options_.preconditioning);
      reg.equalise(steps.unit.tau0);
      steps.norm_A = options_.norm_safety * operator_norm(problem, pass, steps.unit, st);
    } else {  // forward step: τ = 2/β, no dual
      steps.unit.tau0.assign(static_cast<std::size_t>(d), 1.0);
      steps.norm_A = static_cast<double>(Loss::template curvature_bound<Scalar>(K)) *
                     weighted_gram_norm(problem, intercept, options_.seed, options_.power_iterations) *
                     options_.norm_safety * options_.norm_safety;
      if (steps.norm_A > 0.0) steps.set(2.0, 1.0 / steps.norm_A);  // 𝒯 = 2/β
    }

    // ---- start: the warm-start point, the dual at it, and the scale of P at W = 0 ----------
    std::vector<Label> labels(static_cast<std::size_t>(K));
    std::iota(labels.begin(), labels.end(), Label{0});
    double bias = -1.0;
    // The point measured and returned: x̃, the last prox output (x itself when ρ = 1), and Tᵀỹ.
    const auto rho = static_cast<Scalar>(exact_hinge ? options_.relaxation : 1.0);
    const bool relaxed = rho != Scalar(1);
    ClassMatrix<Scalar>& W_out = relaxed ? st.W_step : st.W;
    ClassVector<Scalar>& b_out = relaxed ? st.b_step : st.b;
    ClassMatrix<Scalar>& G_out = relaxed ? st.G_step : st.G;
    ClassVector<Scalar>& g_b_out = relaxed ? st.g_b_step : st.g_b;
    auto make_model = [&] { return LinearModel<Scalar>(W_out, intercept ? b_out : ClassVector<Scalar>(), labels); };
    st.W.setZero();
    st.b.setZero();

    using Thread = detail::PassThread<Scalar>;
    auto label = [&](Eigen::Index i) { return static_cast<std::size_t>(problem.y.single(static_cast<std::size_t>(i))); };
    // z_i from a dual block y_i: z = y − (Σy) e_c, i.e. y off the label and −Σ_{k≠c} y_k on it.
    auto dual_to_z = [](std::span<Scalar> s, const Scalar* y, std::size_t c, double off_mass) {
      for (std::size_t k = 0; k < s.size(); ++k) s[k] = y[k];
      s[c] = static_cast<Scalar>(-off_mass);
    };
    // Algorithm 1 start (and the scale at W = 0): y_i = ω_i uniform over argmax_k (u_k + r_k),
    // the loss subgradient of (1) at the current point. Sums: loss, off_mass.
    auto init_regularized = [&](bool store) {
      return [&, store](Eigen::Index i, std::span<Scalar> s, Thread& th) {
        const std::size_t c = label(i);
        const Scalar omega = st.omega[static_cast<std::size_t>(i)];
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
        if (store) {
          for (std::size_t k = 0; k < s.size(); ++k) {
            st.U(i, static_cast<Eigen::Index>(k)) = s[k];
            st.Y(i, static_cast<Eigen::Index>(k)) = y[k];
          }
        }
        th.sums.loss += static_cast<double>(omega) * static_cast<double>(top);
        th.sums.off_mass += off;
        if (!(off > 0.0)) return false;
        dual_to_z(s, y, c, off);
        return true;
      };
    };
    // Algorithm 2 start: U = Tx, y = 0, ξ = 0, ζ_i = h_i(T_i x).
    auto init_constrained = [&](Eigen::Index i, std::span<Scalar> s, Thread& th) {
      const std::size_t c = label(i);
      const Scalar sc = s[c];
      Scalar top = Scalar(0);
      for (std::size_t k = 0; k < s.size(); ++k) {
        const Scalar u = k == c ? Scalar(0) : s[k] - sc;
        st.U(i, static_cast<Eigen::Index>(k)) = u;
        st.Y(i, static_cast<Eigen::Index>(k)) = Scalar(0);
        if (k != c) top = std::max(top, u + Scalar(1));
      }
      st.zeta[static_cast<std::size_t>(i)] = top;
      th.sums.loss += static_cast<double>(st.omega[static_cast<std::size_t>(i)]) * static_cast<double>(top);
      return false;
    };
    // Algorithm 1 iteration, sample i (s = scores of x̃): ũ = T_i x̃, ỹ = P_S(y + σ_i(2ũ − u) + σ_i r),
    // then (u, y) ← ρ(ũ, ỹ) + (1 − ρ)(u, y) (read from U_prev, Y_prev, written to U, Y); z_i from
    // the new y. Sums: loss, off_mass, dual_residual, inner (the Fenchel–Young gap of the sample
    // is ω h(ũ) minus its term), cross, dual_move.
    auto step_regularized = [&](Eigen::Index i, std::span<Scalar> s, Thread& th) {
      const std::size_t c = label(i), K_ = s.size();
      const Scalar omega = st.omega[static_cast<std::size_t>(i)];
      const double sigma = steps.sigma(i), inv_sigma = 1.0 / sigma;
      const auto sig = static_cast<Scalar>(sigma);
      const Scalar* u0 = st.U_prev.row(i).data();
      const Scalar* y0 = st.Y_prev.row(i).data();
      Scalar* u = st.U.row(i).data();
      Scalar* y = st.Y.row(i).data();
      Scalar* v = th.a.data();
      const Scalar sc = s[c];
      Scalar top = Scalar(0);
      for (std::size_t k = 0; k < K_; ++k) {
        const Scalar up = k == c ? Scalar(0) : s[k] - sc;
        const Scalar r = k == c ? Scalar(0) : Scalar(1);
        top = std::max(top, up + r);
        v[k] = y0[k] + sig * (Scalar(2) * up - u0[k] + r);
        s[k] = up;
      }
      prox::project_simplex(std::span<Scalar>(v, K_), omega, th.scratch);
      double off_step = 0.0, off = 0.0, q2 = 0.0, inner = 0.0, cross = 0.0, dy2 = 0.0;
      for (std::size_t k = 0; k < K_; ++k) {
        const double dy = static_cast<double>(v[k]) - static_cast<double>(y0[k]);
        const double du = static_cast<double>(s[k]) - static_cast<double>(u0[k]);
        const double q = du - dy * inv_sigma;
        q2 += q * q;
        cross += dy * du;
        dy2 += dy * dy;
        if (k != c) inner += static_cast<double>(v[k]) * (static_cast<double>(s[k]) + 1.0);
        u[k] = rho * s[k] + (Scalar(1) - rho) * u0[k];
        y[k] = rho * v[k] + (Scalar(1) - rho) * y0[k];
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
      th.sums.dual_move += dy2 / steps.unit.sigma0[static_cast<std::size_t>(i)];
      if (!(off > 0.0)) return false;
      dual_to_z(s, y, c, off);
      return true;
    };
    // Algorithm 2 iteration, sample i: (ŷ, ξ̂), the epigraph projection (Prop. 3.3), (ỹ, ξ̃), then
    // the relaxation of (u, y, ζ, ξ) (read from the _prev buffers, written to the current ones);
    // st.zeta holds ζ̃ on entry. Sums: loss, inner, dual_residual (y and ξ parts), zeta_residual,
    // cross, dual_move, multiplier.
    auto step_constrained = [&](Eigen::Index i, std::span<Scalar> s, Thread& th) {
      const std::size_t c = label(i), K_ = s.size(), ii = static_cast<std::size_t>(i);
      const double sigma = steps.sigma(i), inv_sigma = 1.0 / sigma;
      const auto sig = static_cast<Scalar>(sigma);
      const Scalar* u0 = st.U_prev.row(i).data();
      const Scalar* y0 = st.Y_prev.row(i).data();
      Scalar* u = st.U.row(i).data();
      Scalar* y = st.Y.row(i).data();
      Scalar* y_hat = th.a.data();
      Scalar* p = th.b.data();
      const Scalar sc = s[c];
      Scalar top = Scalar(0);
      for (std::size_t k = 0; k < K_; ++k) {
        const Scalar up = k == c ? Scalar(0) : s[k] - sc;
        if (k != c) top = std::max(top, up + Scalar(1));
        y_hat[k] = y0[k] + sig * (Scalar(2) * up - u0[k]);
        p[k] = y_hat[k] / sig;
        s[k] = up;
      }
      const Scalar zeta_step = st.zeta[ii], zeta = st.zeta_prev[ii], xi = st.xi_prev[ii];
      const Scalar xi_hat = xi + sig * (Scalar(2) * zeta_step - zeta);
      Scalar theta = xi_hat / sig;
      th.margins[c] = Scalar(0);
      prox::project_epigraph_max(std::span<Scalar>(p, K_), theta, th.margins, th.scratch);
      th.margins[c] = Scalar(1);
      const Scalar xi_step = xi_hat - sig * theta;
      double off = 0.0, off_step = 0.0, inner = 0.0, q2 = 0.0, cross = 0.0, dy2 = 0.0;
      for (std::size_t k = 0; k < K_; ++k) {
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
        u[k] = rho * s[k] + (Scalar(1) - rho) * u0[k];
        y[k] = rho * y_step + (Scalar(1) - rho) * y0[k];
        if (k != c) off += static_cast<double>(y[k]);
      }
      // ζ residuals with τ_ζ,i = 1/σ_i: P_ζ = σ_iΔζ − Δξ, Q_ξ = Δξ/σ_i − Δζ.
      const double dzeta = static_cast<double>(zeta) - static_cast<double>(zeta_step);
      const double dxi = static_cast<double>(xi) - static_cast<double>(xi_step);
      const double q_xi = dxi / sigma - dzeta, p_zeta = sigma * dzeta - dxi;
      st.zeta[ii] = rho * zeta_step + (Scalar(1) - rho) * zeta;
      st.xi[ii] = rho * xi_step + (Scalar(1) - rho) * xi;
      th.sums.loss += static_cast<double>(st.omega[ii]) * static_cast<double>(top);
      th.sums.inner += inner;
      th.sums.dual_residual += q2 + q_xi * q_xi;
      th.sums.zeta_residual += p_zeta * p_zeta;
      th.sums.cross += cross;
      th.sums.dual_move += dy2 / steps.unit.sigma0[ii];
      th.sums.multiplier = std::max(th.sums.multiplier, off_step / static_cast<double>(st.omega[ii]));
      if (!(off > 0.0)) return false;
      dual_to_z(s, y, c, off);
      return true;
    };
    // Smooth loss: z_i = ω_i ∇ℓ(s_i). Sums: loss.
    auto step_smooth = [&](Eigen::Index i, std::span<Scalar> s, Thread& th) {
      bool nonzero = false;
      if constexpr (!exact_hinge) {
        const Scalar omega = st.omega[static_cast<std::size_t>(i)];
        const std::span<Scalar> g(th.a.data(), s.size());
        const Scalar value = loss_.gradient(std::span<const Scalar>(s), problem.y[static_cast<std::size_t>(i)], g);
        th.sums.loss += static_cast<double>(omega) * static_cast<double>(value);
        for (std::size_t k = 0; k < s.size(); ++k) {
          s[k] = omega * g[k];
          nonzero = nonzero || s[k] != Scalar(0);
        }
      }
      return nonzero;
    };

    detail::PassSums sums;
    // ‖G‖ (Euclidean, for the relative residual) and ‖𝒯⁰^{½}G‖ (for the primal weight).
    auto gradient_norms = [&] {
      double plain = static_cast<double>(st.g_b.squaredNorm()), weighted = steps.unit.tau0_b * plain;
      for (Eigen::Index j = 0; j < d; ++j) {
        const double row = static_cast<double>(st.G.row(j).squaredNorm());
        plain += row;
        weighted += steps.unit.tau0[static_cast<std::size_t>(j)] * row;
      }
      return std::pair{std::sqrt(plain), std::sqrt(weighted)};
    };
    std::pair<double, double> scale_P{0.0, 0.0};
    const bool cold = initial == nullptr;
    if (!cold || constrained) {  // one pass at W = 0 just for the scale
      if constexpr (exact_hinge) pass.run(problem, st.W, st.b, init_regularized(false), st.G, st.g_b, sums);
      else pass.run(problem, st.W, st.b, step_smooth, st.G, st.g_b, sums);
      scale_P = gradient_norms();
    }
    if (!cold) {
      detail::check_warm_start("FBPD", *initial, static_cast<std::int64_t>(d), static_cast<std::int64_t>(K));
      initial->copy_to(st.W);
      if (intercept && initial->has_intercept()) st.b = initial->intercept();
      labels = initial->labels();
      bias = initial->provenance().bias;
    }
    if constexpr (constrained) pass.run(problem, st.W, st.b, init_constrained, st.G, st.g_b, sums);
    else if constexpr (exact_hinge) pass.run(problem, st.W, st.b, init_regularized(true), st.G, st.g_b, sums);
    else pass.run(problem, st.W, st.b, step_smooth, st.G, st.g_b, sums);
    if (cold && !constrained) scale_P = gradient_norms();
    if (!(scale_P.first > 0.0)) scale_P = {1.0, 1.0};
    const double scale_Q = std::sqrt(static_cast<double>(n_active) * std::max(K - 1, 1));
    if (exact_hinge && steps.norm_A > 0.0) {  // PDLP's primal weight in the metric of 𝒯⁰, Σ⁰
      double margins = 0.0;
      for (Eigen::Index i = 0; i < n; ++i)
        if (st.omega[static_cast<std::size_t>(i)] > Scalar(0)) margins += steps.unit.sigma0[static_cast<std::size_t>(i)];
      const double automatic = std::sqrt(margins * std::max(K - 1, 1)) / scale_P.second;
      steps.set(options_.step_balance > 0.0 ? options_.step_balance : automatic, 1.0 / steps.norm_A);
    }

    const bool automatic = options_.stopping == FbpdStopping::automatic;
    const bool use_gap = automatic && exact_hinge && !constrained && !intercept;
    const bool use_kkt = automatic && exact_hinge && (constrained || intercept);
    const bool use_residuals = options_.stopping == FbpdStopping::residuals || (automatic && !use_gap && !use_kkt);
    const std::string measure_name = use_gap ? "duality_gap"
                                     : use_kkt ? "kkt_residual"
                                     : use_residuals ? (exact_hinge ? "primal_dual_residual" : "primal_residual")
                                                     : "relative_change";
    // D(y) of (11) = D of (1) (see the class comment); off_mass = rᵀy, TtY = Tᵀy.
    auto dual_value = [&](double off_mass, ClassMatrix<Scalar>& TtY) {
      if (penalty_.mu > 0.0) return off_mass - reg.conjugate(TtY);
      const double dual_norm = reg.max_dual_norm(TtY);
      return (dual_norm > penalty_.lambda ? penalty_.lambda / dual_norm : 1.0) * off_mass;
    };
    // The internal error of the restarts: the gap (F(x) − D(y)) relative to F(0) — the restart
    // decisions, and so the iterates, are those of the F(0) scale.
    const double gap_scale = F0 > 0.0 ? F0 : 1.0;
    auto scaled_gap = [&](double F, double off_mass, ClassMatrix<Scalar>& TtY) {
      return (F - dual_value(off_mass, TtY)) / gap_scale;
    };
    // KKT residual of Algorithm 1 (intercept case): max of the stationarity violation
    // dist(−Tᵀy, ∂g(x)) (with the intercept row, which must vanish) relative to ‖Tᵀy₀‖ and the
    // Fenchel–Young gap L(x) − Σ_i⟨y_i, u_i + r_i⟩ ≥ 0 of the loss part relative to F(0), with
    // L(x) = Σ_i ω_i h_i(u_i) (`loss`) and the inner products (`inner`).
    // Algorithm 2: the loss-part multiplier ν̂ = max_i rᵀy_i/ω_i makes y_i ∈ ν̂ω_i·S_1 (the label
    // entry is the slack); the conditions are then stationarity (relative to ν̂‖Tᵀy₀‖), the
    // Fenchel–Young gap ν̂L(x) − Σ_i⟨y_i, u_i + r_i⟩ (relative to ν̂F(0)) and feasibility with
    // complementarity, |L(x) − η| (or (L − η)₊ when ν̂ = 0), relative to F(0).
    auto kkt_residual = [&](ClassMatrix<Scalar>& Wm, ClassMatrix<Scalar>& TtY, const ClassVector<Scalar>& TtY_b,
                            double loss, double inner, double nu) {
      const double stationarity = std::hypot(reg.violation(Wm, TtY), static_cast<double>(TtY_b.norm()));
      const double f0 = F0 > 0.0 ? F0 : 1.0;
      if constexpr (!constrained) {
        return std::max(stationarity / scale_P.first, (loss - inner) / f0);  // ν = 1
      } else {
        const double scale = nu > 0.0 ? nu : 1.0;
        const double feasibility = nu > 0.0 ? std::abs(loss - options_.eta) : std::max(loss - options_.eta, 0.0);
        return std::max({stationarity / (scale * scale_P.first), (nu * loss - inner) / (scale * f0), feasibility / f0});
      }
    };
    auto count_rows = [&] {
      std::int64_t rows = 0;
      for (Eigen::Index j = 0; j < d; ++j) rows += (W_out.row(j).array() != Scalar(0)).any() ? 1 : 0;
      return rows;
    };

    // ---- the certificate of (1) (Algorithm 1; see "Stopping" in the class comment) ---------
    // Free at (x̃, ỹ) without an intercept: D from the pass's rᵀỹ (sums.off_mass) and Tᵀỹ.
    const bool free_gap = exact_hinge && !constrained && !intercept;
    GapWorkspace<Scalar> work;
    std::vector<Scalar> simplex_scratch;
    // With an intercept: ỹ = (y⁺ − (1 − ρ)y)/ρ, projected back onto ×_i S_{ω_i} (rounding),
    // a_i = ỹ_i/ω_i − e_{z_i}, made to satisfy Σ_i c_i a_i = 0 by the intercept correction;
    // D = −θ Σ_i ω_i ℓ*(a_i) − g*(−XᵀD̃) with g's own groups (ℓ* of Crammer–Singer is linear
    // along a ↦ θa, so the μ = 0 rescaling θ multiplies it).
    auto dual_with_intercept = [&]() -> double {
      work.A.resize(n, K);
      work.weighted.resize(n, K);
      const auto inv_rho = static_cast<Scalar>(1.0 / static_cast<double>(rho));
      for (Eigen::Index i = 0; i < n; ++i) {
        const Scalar omega = st.omega[static_cast<std::size_t>(i)];
        auto a = work.A.row(i);
        if (!(omega > Scalar(0))) {
          a.setZero();
          continue;
        }
        if (relaxed) a = (st.Y.row(i) - (Scalar(1) - rho) * st.Y_prev.row(i)) * inv_rho;
        else a = st.Y.row(i);
        prox::project_simplex(detail::row_span(work.A, i), omega, simplex_scratch);
        a /= omega;
        a[static_cast<Eigen::Index>(label(i))] -= Scalar(1);
      }
      detail::correct_for_intercept<Loss>(problem, work.A, work);
      // ℓ*(a_i) = −Σ_{k≠z_i} a_ik, in closed form: the projection and the correction keep a_i in
      // dom ℓ* in exact arithmetic, and the loss's own domain test would refuse float rounding.
      double conjugates = 0.0;
      for (Eigen::Index i = 0; i < n; ++i) {
        const Scalar omega = st.omega[static_cast<std::size_t>(i)];
        work.weighted.row(i) = omega * work.A.row(i);
        if (!(omega > Scalar(0))) continue;
        double off = 0.0;
        const std::size_t c = label(i);
        for (Eigen::Index k = 0; k < K; ++k)
          if (static_cast<std::size_t>(k) != c) off += static_cast<double>(work.A(i, k));
        conjugates -= static_cast<double>(omega) * off;
      }
      weight_gradient(problem, work.weighted, work.G);
      if (penalty_.mu > 0.0) return -conjugates - reg.conjugate(work.G);
      const double dual_norm = reg.max_dual_norm(work.G);
      const double theta = dual_norm > penalty_.lambda ? (std::isinf(dual_norm) ? 0.0 : penalty_.lambda / dual_norm) : 1.0;
      return -theta * conjugates;
    };
    // The gap of (1) at the point measured (x̃, and ỹ or the loss gradient there), F its primal.
    auto evaluate_gap = [&](double F_here) -> DualityGap {
      if constexpr (constrained) {
        return {};
      } else if constexpr (exact_hinge) {
        return {F_here, free_gap ? dual_value(sums.off_mass, G_out) : dual_with_intercept()};
      } else {
        return sparsemc::duality_gap(loss_, penalty_, problem, W_out, b_out, intercept, work);
      }
    };

    if (relaxed) {
      st.W_step = st.W;
      st.b_step = st.b;
      st.G_step = st.G;
      st.g_b_step = st.g_b;
    }
    Status status = Status::max_iter;
    DualityGap certificate;  // at the returned point once certificate_epoch == epoch
    std::int64_t certificate_epoch = -1;
    GapSchedule schedule(options_.tol);
    bool degenerate = false;
    double F = sums.loss + reg.value(st.W);
    double measure = std::numeric_limits<double>::quiet_NaN();
    std::int64_t epoch = 0;
    if (!std::isfinite(F)) {
      status = Status::numerical_issue;
    } else if (!(steps.norm_A > 0.0)) {
      // The loss part does not depend on (W, b) (K = 1, X̃ = 0 or no weight): W = 0 minimises g,
      // and F(0) = F* (a gap of 0, exact).
      W_out.setZero();
      status = Status::converged;
      measure = 0.0;
      degenerate = true;
    } else {
      notify_begin(callbacks...);
      // Adaptive restarts (PDLP): state kept since the last restart.
      const bool restarts = exact_hinge && options_.restarts;
      constexpr std::int64_t restart_period = 64;
      RestartState<Scalar> rs;
      const bool averages = restarts && (use_gap || use_kkt);
      if (restarts) {
        if (averages) {
          rs.W = st.W;
          rs.G = st.G;
          rs.U = st.U;
          rs.Y = st.Y;
          rs.b = st.b;
          rs.g_b = st.g_b;
          rs.zeta = st.zeta;
          rs.xi = st.xi;
        }
        rs.W_last = st.W;
        rs.b_last = st.b;
        rs.Y_last = st.Y;
        rs.zeta_last = st.zeta;
        rs.xi_last = st.xi;
      }
      std::int64_t restart_epoch = 0, averaged = 0;
      double error_at_restart = std::numeric_limits<double>::infinity();
      if (use_gap) error_at_restart = scaled_gap(F, sums.off_mass, st.G);
      double error_at_check = error_at_restart;

      // Adaptive steps (PDLP): passes taken (k, rejected ones included) and the safe scale.
      const bool adaptive = exact_hinge && options_.adaptive_steps;
      const double safe_scale = steps.norm_A > 0.0 ? 1.0 / steps.norm_A : 0.0;
      std::int64_t passes = 0;
      // Undoes the swaps of a step (the one taken with a scale above s̄).
      auto swap_iterates = [&] {
        st.W.swap(st.W_prev);
        st.G.swap(st.G_prev);
        st.b.swap(st.b_prev);
        st.g_b.swap(st.g_b_prev);
        st.U.swap(st.U_prev);
        st.Y.swap(st.Y_prev);
        st.zeta.swap(st.zeta_prev);
        st.xi.swap(st.xi_prev);
      };

      while (epoch < options_.max_epochs) {
        ++epoch;
        for (bool accepted = false; !accepted;) {
          // x̃ = prox_{𝒯g}(x − 𝒯G): forward (Tᵀy or ∇L) and backward (prox) steps. After the
          // swaps the _prev members hold the current iterate.
          swap_iterates();
          for (Eigen::Index j = 0; j < d; ++j)
            W_out.row(j) = st.W_prev.row(j) - steps.tau_row[static_cast<std::size_t>(j)] * st.G_prev.row(j);
          reg.prox(W_out, steps.tau_row);
          if (intercept) b_out.noalias() = st.b_prev - steps.tau_b * st.g_b_prev;
          if constexpr (constrained) {  // ζ̃ = P_{V_η}(ζ − 𝒯_ζξ) in the metric of 𝒯_ζ = Σ⁻¹
            double excess = -options_.eta, weight = 0.0;
            for (std::size_t i = 0; i < st.zeta.size(); ++i) {
              if (st.omega[i] == Scalar(0)) continue;
              const double tau_zeta = 1.0 / steps.sigma(static_cast<Eigen::Index>(i));
              st.zeta[i] = st.zeta_prev[i] - static_cast<Scalar>(tau_zeta) * st.xi_prev[i];
              excess += static_cast<double>(st.omega[i]) * static_cast<double>(st.zeta[i]);
              weight += static_cast<double>(st.omega[i]) * static_cast<double>(st.omega[i]) * tau_zeta;
            }
            if (excess > 0.0) {
              const double shift = excess / weight;
              for (std::size_t i = 0; i < st.zeta.size(); ++i)
                st.zeta[i] -= static_cast<Scalar>(shift * static_cast<double>(st.omega[i]) / steps.sigma(static_cast<Eigen::Index>(i)));
            }
          }
          // The dual step fused with T x̃ and Tᵀy⁺ (or the gradient at x̃): one pass over X.
          if constexpr (constrained) pass.run(problem, W_out, b_out, step_constrained, st.G, st.g_b, sums);
          else if constexpr (exact_hinge) pass.run(problem, W_out, b_out, step_regularized, st.G, st.g_b, sums);
          else pass.run(problem, W_out, b_out, step_smooth, st.G, st.g_b, sums);
          accepted = true;
          if (adaptive) {  // s̄ of the step just taken (the ζ block's condition τ_ζσ = 1 always holds)
            ++passes;
            double dx2 = intercept ? static_cast<double>((b_out - st.b_prev).squaredNorm()) / steps.unit.tau0_b : 0.0;
            for (Eigen::Index j = 0; j < d; ++j)
              dx2 += static_cast<double>((W_out.row(j) - st.W_prev.row(j)).squaredNorm()) / steps.unit.tau0[static_cast<std::size_t>(j)];
            const double cross = std::abs(sums.cross);
            const double limit = cross > 0.0 ? (dx2 / steps.gamma + steps.gamma * sums.dual_move) / (2.0 * cross)
                                             : std::numeric_limits<double>::infinity();
            const double k1 = static_cast<double>(passes + 1);
            const double next = std::max(safe_scale, std::min((1.0 - std::pow(k1, -0.3)) * limit, (1.0 + std::pow(k1, -0.6)) * steps.scale));
            accepted = steps.scale <= limit || steps.scale <= safe_scale;
            if (!accepted) swap_iterates();
            if (std::isfinite(next)) steps.set(steps.gamma, next);
          }
        }
        if (relaxed) {  // x⁺ = ρx̃ + (1 − ρ)x; Tᵀỹ from Tᵀy⁺ = ρTᵀỹ + (1 − ρ)Tᵀy
          st.W.noalias() = rho * W_out + (Scalar(1) - rho) * st.W_prev;
          G_out.noalias() = (st.G - (Scalar(1) - rho) * st.G_prev) / rho;
          if (intercept) {
            st.b.noalias() = rho * b_out + (Scalar(1) - rho) * st.b_prev;
            g_b_out.noalias() = (st.g_b - (Scalar(1) - rho) * st.g_b_prev) / rho;
          }
        }
        F = sums.loss + reg.value(W_out);
        if (!std::isfinite(F)) {
          status = Status::numerical_issue;
          break;
        }
        // The stopping measure at (x̃, ỹ).
        if (use_gap) {
          measure = scaled_gap(F, sums.off_mass, G_out);
        } else if (use_kkt) {
          measure = kkt_residual(W_out, G_out, g_b_out, sums.loss, sums.inner, constrained ? sums.multiplier : 1.0);
        } else if (use_residuals) {
          double p2 = sums.zeta_residual;  // the ζ part (0 for Algorithm 1)
          for (Eigen::Index j = 0; j < d; ++j)
            p2 += static_cast<double>(((st.W_prev.row(j) - W_out.row(j)) / steps.tau_row[static_cast<std::size_t>(j)] -
                                       (st.G_prev.row(j) - G_out.row(j)))
                                          .squaredNorm());
          if (intercept) p2 += static_cast<double>(((st.b_prev - b_out) / steps.tau_b - (st.g_b_prev - g_b_out)).squaredNorm());
          const double rho_P = std::sqrt(p2) / scale_P.first;
          measure = exact_hinge ? std::max(rho_P, std::sqrt(sums.dual_residual) / scale_Q) : rho_P;
        } else {
          const double change = std::sqrt(static_cast<double>((W_out - st.W_prev).squaredNorm() + (b_out - st.b_prev).squaredNorm()));
          const double size = std::sqrt(static_cast<double>(W_out.squaredNorm() + b_out.squaredNorm()));
          measure = size > 0.0 ? change / size : change;
        }
        bool restarted_to_average = false;
        if (restarts) {
          if (averages) {  // running averages since the last restart (T x̄ = Ū, Tᵀȳ = Ḡ: linear)
            const auto a = static_cast<Scalar>(1.0 / static_cast<double>(++averaged));
            rs.W += a * (st.W - rs.W);
            rs.G += a * (st.G - rs.G);
            rs.U += a * (st.U - rs.U);
            rs.Y += a * (st.Y - rs.Y);
            if (intercept) {
              rs.b += a * (st.b - rs.b);
              rs.g_b += a * (st.g_b - rs.g_b);
            }
            for (std::size_t i = 0; i < rs.zeta.size(); ++i) {
              rs.zeta[i] += a * (st.zeta[i] - rs.zeta[i]);
              rs.xi[i] += a * (st.xi[i] - rs.xi[i]);
            }
          }
          if ((epoch - restart_epoch) % restart_period == 0) {
            double candidate = measure, F_average = 0.0;
            if (averages) {  // the measure at the averages, from Ū and Ȳ
              double hinge = 0.0, off = 0.0, inner_sum = 0.0, nu = 0.0;
              for (Eigen::Index i = 0; i < n; ++i) {
                const Scalar omega = st.omega[static_cast<std::size_t>(i)];
                if (omega == Scalar(0)) continue;
                const std::size_t c = label(i);
                Scalar top = Scalar(0);
                double sample_off = 0.0;
                for (std::size_t k = 0; k < static_cast<std::size_t>(K); ++k) {
                  if (k == c) continue;
                  const auto kk = static_cast<Eigen::Index>(k);
                  top = std::max(top, rs.U(i, kk) + Scalar(1));
                  sample_off += static_cast<double>(rs.Y(i, kk));
                  inner_sum += static_cast<double>(rs.Y(i, kk)) * (static_cast<double>(rs.U(i, kk)) + 1.0);
                }
                hinge += static_cast<double>(omega) * static_cast<double>(top);
                off += sample_off;
                nu = std::max(nu, sample_off / static_cast<double>(omega));
              }
              F_average = hinge + reg.value(rs.W);
              const double error_average =
                  use_gap ? scaled_gap(F_average, off, rs.G) : kkt_residual(rs.W, rs.G, rs.g_b, hinge, inner_sum, nu);
              restarted_to_average = error_average < candidate;
              candidate = std::min(candidate, error_average);
            }
            const bool restart = candidate <= 0.2 * error_at_restart ||
                                 (candidate <= 0.8 * error_at_restart && candidate > error_at_check) ||
                                 static_cast<double>(epoch - restart_epoch) >= 0.36 * static_cast<double>(epoch);
            error_at_check = candidate;
            restarted_to_average = restarted_to_average && restart;
            if (restart) {
              if (restarted_to_average) {  // reported, but not a stopping point: x̄ is not sparse
                st.W = rs.W;
                st.G = rs.G;
                st.U = rs.U;
                st.Y = rs.Y;
                st.b = rs.b;
                st.g_b = rs.g_b;
                st.zeta = rs.zeta;
                st.xi = rs.xi;
                if (relaxed) {
                  W_out = rs.W;
                  G_out = rs.G;
                  b_out = rs.b;
                  g_b_out = rs.g_b;
                }
                F = F_average;
                measure = candidate;
              }
              // Primal weight: γ ← √(γ·Δx/Δy), moves since the last restart in the metric of 𝒯⁰, Σ⁰.
              double dx2 = static_cast<double>((st.b - rs.b_last).squaredNorm()) / steps.unit.tau0_b, dy2 = 0.0;
              for (Eigen::Index j = 0; j < d; ++j)
                dx2 += static_cast<double>((st.W.row(j) - rs.W_last.row(j)).squaredNorm()) / steps.unit.tau0[static_cast<std::size_t>(j)];
              for (Eigen::Index i = 0; i < n; ++i) {
                double move = static_cast<double>((st.Y.row(i) - rs.Y_last.row(i)).squaredNorm());
                if constexpr (constrained) {
                  const auto ii = static_cast<std::size_t>(i);
                  const double dz = static_cast<double>(st.zeta[ii]) - static_cast<double>(rs.zeta_last[ii]);
                  const double dxi = static_cast<double>(st.xi[ii]) - static_cast<double>(rs.xi_last[ii]);
                  dx2 += dz * dz * steps.unit.sigma0[ii] * steps.scale * steps.scale;  // 𝒯⁰_ζ = 1/(s²σ⁰)
                  move += dxi * dxi;
                }
                dy2 += move / steps.unit.sigma0[static_cast<std::size_t>(i)];
              }
              if (dx2 > 0.0 && dy2 > 0.0 && std::isfinite(dx2 / dy2))
                steps.set_balance(std::exp(0.25 * std::log(dx2 / dy2) + 0.5 * std::log(steps.gamma)));
              rs.W_last = st.W;
              rs.b_last = st.b;
              rs.Y_last = st.Y;
              rs.zeta_last = st.zeta;
              rs.xi_last = st.xi;
              error_at_restart = candidate;
              restart_epoch = epoch;
              averaged = 0;
            }
          }
        }
        // The certificate of (1): every pass when free, else when the schedule says so (the
        // cheap measure falls to its trigger, or epochs doubling) and at the last epoch. After
        // a restart to the averages (not a stopping point) it is the gap there, (F − D)/F(0).
        bool certified = false;
        if constexpr (!constrained) {
          if (free_gap && restarted_to_average) {
            certificate = {F, F - measure * gap_scale};
            certificate_epoch = epoch;
          } else if (free_gap || (!restarted_to_average && schedule.due(epoch, measure)) ||
                     epoch == options_.max_epochs) {  // a restart to the averages is no stopping point: wait a pass
            certificate = evaluate_gap(F);
            certificate_epoch = epoch;
            certified = certificate.relative() <= options_.tol && !restarted_to_average;
            if (!free_gap) schedule.evaluated(epoch, measure, certified);
          }
        } else {
          certified = measure <= options_.tol && !restarted_to_average;  // (8)'s KKT residual
        }
        const bool evaluated = certificate_epoch == epoch;
        if (use_gap) measure = evaluated ? certificate.relative() : measure;  // reported in (1)'s scale
        const std::int64_t nnz_rows = count_rows();
        EpochReport report{epoch, F, measure, nnz_rows, clock.seconds()};
        if (evaluated) report.relative_gap = certificate.relative();
        if (options_.verbose) ProgressPrinter{std::cerr}.end_epoch(report);
        const bool stop = notify_end_epoch(report, make_model, callbacks...);
        if (const auto verdict = detail::epoch_verdict(options_, std::isfinite(measure), certified, stop, report.seconds)) {
          status = *verdict;
          break;
        }
      }
    }

    // F of (1) at the returned model: the loss part through the shared evaluation, then g.
    ClassMatrix<Scalar> S;
    compute_scores(problem, W_out, b_out, S);
    SolverInfo info;
    info.status = status;
    info.epochs = epoch;
    info.objective = loss_value(loss_, problem, S) + reg.value(W_out);
    info.measure_name = measure_name;
    info.measure = measure;
    // The certificate at the returned model, evaluated now if the last epoch did not.
    if (degenerate) certificate = {info.objective, info.objective};
    else if (!constrained && certificate_epoch != epoch && epoch > 0) certificate = evaluate_gap(F);
    else if (!constrained && epoch == 0) certificate = {};
    info.seconds = clock.seconds();
    Result<Scalar> result = detail::finish_result<Loss, Penalty, Scalar>(make_model(), name, penalty_, bias, certificate, info);
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
