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
#include "../../data/dense_problem.hpp"
#include "../../data/problem.hpp"
#include "../../loss/concepts.hpp"
#include "../../model/linear_model.hpp"
#include "../../penalty/concepts.hpp"
#include "../duality_gap.hpp"
#include "../sample_sums.hpp"
#include "../solver_base.hpp"
#include "detail/engine.hpp"
#include "options.hpp"

namespace sparsemc {

/// What FBPD<…, Formulation> solves: a separation ranking loss (Crammer–Singer) exactly through
/// its dual blocks, or — in the regularised form (1) only — a smooth loss by a forward step;
/// any penalty.
template <class Loss, class Penalty, class Formulation, class Scalar = double>
concept FBPDAccepts =
    sparsemc::Penalty<Penalty, Scalar> &&
    (SeparationRankingLoss<Loss> || (std::same_as<Formulation, Regularised> && SmoothLoss<Loss, Scalar>));

/// Forward–backward primal–dual solver for objective (1) with the exact Crammer–Singer hinge
/// (Chierchia et al. 2015, Algorithms 1 and 2) or, through a forward (gradient) step, with any
/// smooth loss; any penalty with a prox, on rows or on user-given feature blocks. The paper's
/// problem (7), g(x) + λ_p Σ_ℓ h_ℓ(T_ℓx) with the hinge h_ℓ of (6) and x = (W, b), is (1) with
/// g(x) = λR(W) + (μ/2)‖W‖² and λ_p replaced by ω_i = c_i/n; its constrained form (8) is
/// `Constrained` with η: (1/n) Σ c_i ℓ_i ≤ η.
///
/// **Algorithm 1** (regularised), with P_{S_ω} the projection onto the simplex S_ω = {v ≥ 0,
/// Σv = ω}, diagonal steps 𝒯 (per feature row) and Σ (per sample):
///     x⁺ = prox_{𝒯g}(x − 𝒯Tᵀy)
///     ŷ_i = y_i + σ_i T_i(2x⁺ − x)
///     y_i⁺ = P_{S_{ω_i}}(ŷ_i + σ_i r_i)       (Prop. 3.1: prox of the conjugate of ω_i h_i)
/// **Algorithm 2** (`Constrained`, eqs. (12)–(14)) splits (8) epigraphically and projects onto
/// epi h_i in closed form (Prop. 3.3). A smooth loss L is the forward step x⁺ = prox_{τg}(x −
/// τ∇L(x)), with no dual block.
///
/// `converged` means the relative duality gap of (1), (F − D)/max(|F|, 10⁻¹²), is ≤ tol (the
/// paper's dual (11) is D of (1)); `fbpd-epi` solves (8) and certifies its KKT residual instead.
///
/// `fit_part` solves one part of a problem split by samples among processes: the dual blocks
/// y_i, the scores and the steps σ_i are a process's own; the pass's Tᵀy (d × K) and its sums,
/// the preconditioner's column sums, and the sums of the restarts, the adaptive steps and the
/// certificate are completed over the processes (sparsemc/mpi/sample_partition.hpp).
///
/// X is a CSR or CSC `Problem`, or a `DenseProblem` whose rows the passes walk by their nonzeros
/// as they walk CSR rows (data/sample_entries.hpp): no copy of X.
///
/// Implementation notes: docs/fbpd.md.
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
template <class Loss, class Penalty, class Formulation = Regularised>
class FBPD : public detail::SolverBase<FBPD<Loss, Penalty, Formulation>, Loss, Penalty, FBPDOptions, LinearModel, Result,
                                      /*AcceptsDense=*/true> {
  using Base = detail::SolverBase<FBPD<Loss, Penalty, Formulation>, Loss, Penalty, FBPDOptions, LinearModel, Result,
                                  /*AcceptsDense=*/true>;
  friend Base;

  static_assert(std::same_as<Formulation, Regularised> || std::same_as<Formulation, Constrained>,
                "FBPD's third parameter is the formulation: sparsemc::Regularised (Algorithm 1) or "
                "sparsemc::Constrained (Algorithm 2)");

 public:
  using Options = FBPDOptions;
  /// The registered solver name (provenance, tools): "fbpd" or "fbpd-epi".
  static constexpr std::string_view name = Formulation::solver_name;
  /// Whether the loss is the Crammer–Singer hinge, solved exactly through its dual blocks.
  static constexpr bool exact_hinge = SeparationRankingLoss<Loss>;
  static constexpr bool constrained = std::same_as<Formulation, Constrained>;
  static_assert(!constrained || exact_hinge,
                "FBPD<Loss, Penalty, Constrained> needs the Crammer-Singer loss: the epigraph of a smooth loss "
                "has no closed-form projection (use the Regularised formulation)");

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

  /// Fits (1) over a problem split by samples among processes: `part` holds this process's
  /// samples (part.n_total the samples of the whole), `sums` completes every sum over the
  /// samples (sample_sums.hpp; mpi::SampleSums over MPI ranks), `initial` a warm start or
  /// null. Every process calls it with its part, the same options and the same `initial`;
  /// each returns the same model and information block — the serial solve's iterates up to
  /// the order of the sums, certified by the gap of the whole (Algorithm 2: its KKT residual).
  template <RealScalar Scalar, StorageIndex Index, int Order, SampleSums Sums, class... Callbacks>
  Result<Scalar> fit_part(const Problem<Scalar, Index, Order>& part, const Sums& sums,
                          const LinearModel<Scalar>* initial, Callbacks&&... callbacks) const {
    return solve(part, initial, sums, callbacks...);
  }

 private:
  /// A CSR, CSC or dense problem (a dense X's rows are walked by their nonzeros, no copy).
  template <TrainingProblem Prob, class... Callbacks>
  Result<ProblemScalar<Prob>> run(const Prob& problem, const LinearModel<ProblemScalar<Prob>>* initial,
                                  Callbacks&... callbacks) const {
    return solve(problem, initial, LocalSums{}, callbacks...);
  }

  /// The solve: the engine's start, then per iteration its named steps (detail/engine.hpp),
  /// the report to the callbacks and the verdict; then F and the certificate at the returned x̃.
  /// The verdict's inputs — the clock and the callbacks' stop — are agreed through `sums`.
  template <TrainingProblem Prob, class Sums, class... Callbacks>
  Result<ProblemScalar<Prob>> solve(const Prob& problem, const LinearModel<ProblemScalar<Prob>>* initial,
                                    const Sums& sums, Callbacks&... callbacks) const {
    using Scalar = ProblemScalar<Prob>;
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
    detail::FbpdEngine<Loss, Penalty, Formulation, Prob, Sums> engine(problem, loss_, penalty_, options_, sums);
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
        const EpochReport report = engine.report(sums.max(clock.seconds()));
        const bool stop = sums.any(notify_end_epoch(report, make_model, callbacks...));
        const bool finite = std::isfinite(report.measure);
        if (const auto verdict = detail::epoch_verdict(options_, finite, certified, stop, report.seconds)) {
          status = *verdict;
          break;
        }
      }
    }

    SolverInfo info = engine.info(status);
    const DualityGap certificate = engine.returned_certificate(info.objective);
    info.seconds = sums.max(clock.seconds());
    engine.gap_spent().record_into(info);
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
