#pragma once
/// \file scd.hpp
/// `SCD<Loss, Penalty, Variant>`: stochastic coordinate descent over the single weights w_jr of
/// W for objective (1), after Tao, Kong, Chu & Wu, "Stochastic coordinate descent methods for
/// regularized smooth and nonsmooth losses" (ECML PKDD 2012): Algorithm 1 (`Smooth`, "scd"),
/// Algorithm 2 (`Adaptive`, "scd-ls") and Algorithm 4 (`NonsmoothRDA`, "scd-rda"), see
/// variants.hpp. The cheapest iteration of the library, and its only primal coordinate method
/// for the nonsmooth Crammer–Singer hinge.
///
/// The public class, its documentation and the loop over the steps are here; the state and
/// the steps are in detail/engine.hpp, the options in options.hpp.

#include <Eigen/Core>

#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "../../core/callbacks.hpp"
#include "../../core/parallel.hpp"
#include "../../core/status.hpp"
#include "../../core/stopwatch.hpp"
#include "../../core/traits.hpp"
#include "../../data/feature_columns.hpp"
#include "../../data/problem.hpp"
#include "../../loss/concepts.hpp"
#include "../../model/linear_model.hpp"
#include "../../penalty/concepts.hpp"
#include "../duality_gap.hpp"
#include "../solver_base.hpp"
#include "detail/class_ranges.hpp"
#include "detail/engine.hpp"
#include "options.hpp"
#include "variants.hpp"

namespace sparsemc {

/// What SCD<…, Variant> solves (1) with: an entrywise penalty and a loss with a conjugate (the
/// certificate) that is smooth (Algorithms 1, 2) or has subgradients bounded by 1 (Algorithm 4,
/// whose steps assume the bound). Its own coordinate kernel makes it fast
/// (loss/kernels/coordinate_kernel.hpp).
template <class Loss, class Penalty, class Variant, class Scalar = double>
concept SCDAccepts = ConjugateLoss<Loss, Scalar> && EntrywisePenalty<Penalty, Scalar> &&
                     (Variant::dual_averaging ? BoundedSubgradientLoss<Loss, Scalar> : SmoothLoss<Loss, Scalar>);

/// Stochastic coordinate descent for objective (1),
///
///     min_{W, b} F(W, b) = (1/n) Σ_i c_i ℓ(Wᵀx_i + b, y_i) + Σ_{j,r} p(w_jr),   p(ω) = λ|ω| + (μ/2)ω²,
///
/// over the N = dK coordinates w_jr (+ K intercepts b_r, unpenalised), for an entrywise penalty
/// (`L1`, `NoPenalty` = ridge, their sum through μ) and any smooth loss (Smooth, Adaptive) or any
/// loss with a subgradient (NonsmoothRDA; Crammer–Singer is the case the paper was written
/// for). The paper's (1), F = λP(w) + Σ_i f_i(w) over m samples, is ours divided by m: λ_paper =
/// mλ, f_i = c_i ℓ_i.
///
/// **Iteration**: draw k = (j, r) uniformly at random (Algorithm 1 step 1; `order` offers a
/// permuted-cyclic sweep instead), compute the coordinate derivative of the loss part from the
/// cached scores of the samples in supp(x_j), and take the variant's step (variants.hpp: eq. 6
/// with the coordinate Lipschitz constant; eqs. 8–10 with backtracking from the generalised
/// second derivative; eq. 12, dual averaging). The scores of column r move on supp(x_j) only.
///
/// `converged` means the relative duality gap of (1) at the returned iterate is ≤ tol (default
/// 1e-3); NonsmoothRDA + CrammerSinger cannot certify 1e-3 in practice (it ends with max_iter).
///
/// **Threads** (`threads`, 0 = every core): Algorithms 1 and 2 on a one-vs-rest loss with K > 2
/// solve ranges of classes side by side, (1) being one problem per class (the BlockCD
/// counterpart's eq. 11 of Blondel et al.); the certified optimum is the serial one
/// (detail/class_ranges.hpp, docs/parallel.md).
///
/// X is walked feature by feature: a CSC problem, or a column-major DenseProblem (a Fortran-
/// ordered array, read in place, its zeros walked as entries: data/feature_columns.hpp).
///
/// Implementation notes: docs/scd.md.
///
/// \code
///   #include <sparsemc/sparsemc.hpp>
///   using namespace sparsemc;
///   auto train = io::read_libsvm<double>("dna.scale");
///   const auto problem = train.problem<Eigen::ColMajor>();
///   // LIBLINEAR -s 5 -c 1 in (1): λ = 1/(Cn)
///   SCD<OvrSquaredHinge, L1, Adaptive> scd({}, {.lambda = 1.0 / 2000}, {.tol = 1e-4});
///   Result<double> fit = scd.fit(problem);
///   // the nonsmooth Crammer–Singer hinge with ℓ1, averaged RDA iterate
///   SCD<CrammerSinger, L1, NonsmoothRDA> rda({}, {.lambda = 1e-3}, {.max_epochs = 200});
///   History history;                                   // F(w̄) per epoch
///   auto averaged = rda.fit(problem, history);
/// \endcode
template <class Loss, class Penalty, class Variant = Adaptive>
class SCD : public detail::SolverBase<SCD<Loss, Penalty, Variant>, Loss, Penalty, SCDOptions<Variant>, LinearModel,
                                      Result, true, Eigen::ColMajor> {
  using Base = detail::SolverBase<SCD<Loss, Penalty, Variant>, Loss, Penalty, SCDOptions<Variant>, LinearModel, Result,
                                  true, Eigen::ColMajor>;
  friend Base;

 public:
  using Options = SCDOptions<Variant>;
  using loss_type = Loss;
  using penalty_type = Penalty;
  using variant_type = Variant;
  /// The registered solver name ("scd", "scd-ls" or "scd-rda"): provenance, tools.
  static constexpr std::string_view name = Variant::name;

  SCD(Loss loss, Penalty penalty, Options options = {}) : Base(std::move(loss), std::move(penalty), std::move(options)) {}

 private:
  template <TrainingProblem Prob, class... Callbacks>
  Result<ProblemScalar<Prob>> run(const Prob& problem, const LinearModel<ProblemScalar<Prob>>* initial,
                                  Callbacks&... callbacks) const {
    using Scalar = ProblemScalar<Prob>;
    static_assert(FeatureColumnProblem<Prob>,
                  "SCD walks the data feature by feature: it needs a CSC problem "
                  "(Dataset::problem<Eigen::ColMajor>() or a CscView) or a column-major DenseProblem.");
    if constexpr (Variant::dual_averaging)
      static_assert(BoundedSubgradientLoss<Loss, Scalar>,
                    "SCD<…, NonsmoothRDA> needs a loss whose subgradients are bounded by 1 (BoundedSubgradientLoss, "
                    "loss/concepts.hpp: crammer-singer, logistic); its steps diverge on the squared losses: use "
                    "SCD<…, Adaptive> for those.");
    else
      static_assert(SmoothLoss<Loss, Scalar>,
                    "SCD<…, Smooth/Adaptive> needs a smooth loss: value, gradient, curvature and curvature_bound "
                    "(loss/concepts.hpp). Crammer-Singer is not smooth: use SCD<…, NonsmoothRDA>.");
    static_assert(ConjugateLoss<Loss, Scalar>,
                  "SCD stops on the duality gap of (1): the loss needs conjugate() and dual_domain "
                  "(ConjugateLoss, loss/concepts.hpp; examples/custom_loss.cpp shows one).");
    static_assert(EntrywisePenalty<Penalty, Scalar>,
                  "SCD updates single weights: it needs an entrywise penalty with prox_entry and violation_entry "
                  "(penalty/concepts.hpp): L1 or NoPenalty. Row penalties (L1L2, L1Linf) need BlockCD.");
    problem.validate();
    const auto coordinates =
        static_cast<std::uint64_t>(problem.n_features() + 1) * static_cast<std::uint64_t>(problem.n_classes());
    if (coordinates <= std::numeric_limits<std::uint32_t>::max())
      return solve<std::uint32_t>(problem, initial, callbacks...);
    return solve<std::uint64_t>(problem, initial, callbacks...);
  }

  /// The solve: the engine (or, on several threads for a one-vs-rest loss with K > 2, the
  /// class ranges of detail/class_ranges.hpp) set up, then run(). `Coord` is the integer type of
  /// coordinate ids k = j·K' + slot.
  template <class Coord, FeatureColumnProblem Prob, class... Callbacks>
  Result<ProblemScalar<Prob>> solve(const Prob& problem, const LinearModel<ProblemScalar<Prob>>* initial,
                                    Callbacks&... callbacks) const {
    using Scalar = ProblemScalar<Prob>;
    if (!Loss::supports_multilabel && problem.y.multilabel())
      throw std::invalid_argument("SCD::fit: the " + std::string(Loss::name) +
                                  " loss is multiclass but some sample has not exactly one class");
    // All timings (time_limit, reports, info.seconds) count from here: setup included.
    const Stopwatch clock;
    if constexpr (ClassSeparableLoss<Loss> && !Variant::dual_averaging) {
      const int team = resolve_threads(options_.threads);
      if (team > 1 && problem.n_classes() > 2) {
        detail::ScdClassRanges<Loss, Penalty, Variant, Prob, Coord> ranges(
            problem, loss_, penalty_, options_, initial, team, ranges_per_thread * team);
        return run<Scalar>(ranges, clock, callbacks...);
      }
    }
    detail::ScdEngine<Loss, Penalty, Variant, Prob, Coord> engine(problem, loss_, penalty_, options_, initial);
    return run<Scalar>(engine, clock, callbacks...);
  }

  /// The engine's start, then per epoch its named steps (detail/engine.hpp), the report to the
  /// callbacks and the verdict; then the measure and the certificate at the returned point.
  template <RealScalar Scalar, class Engine, class... Callbacks>
  Result<Scalar> run(Engine& engine, const Stopwatch& clock, Callbacks&... callbacks) const {
    auto make_model = [&] { return engine.model(); };
    notify_begin(callbacks...);
    Status status = Status::max_iter;
    if (const std::optional<Status> ended = engine.start()) {
      status = *ended;
    } else {
      while (engine.epoch() < options_.max_epochs) {
        engine.sweep();
        const bool finite = engine.evaluate();
        const bool certified = finite && engine.certify_if_due();
        const EpochReport report = engine.report(clock.seconds());
        const bool stop = notify_end_epoch(report, make_model, callbacks...);
        if (const auto verdict = detail::epoch_verdict(options_, finite, certified, stop, report.seconds)) {
          status = *verdict;
          break;
        }
      }
    }
    engine.finish(status);

    // --- the result: the shared epilogue, the certificate at the returned model ---------------
    // A budget that ran out at a certified iterate (the last evaluation was before it) is a
    // certified result.
    const DualityGap certificate = engine.certificate();
    if (status == Status::max_iter && certificate.relative() <= options_.tol) status = Status::converged;
    SolverInfo info = engine.info(status);
    info.seconds = clock.seconds();
    engine.gap_spent().record_into(info);
    Result<Scalar> result =
        detail::finish_result<Loss>(engine.take_model(), name, penalty_, engine.bias(), certificate, std::move(info));
    notify_end(result.info, callbacks...);
    return result;
  }

  /// Class ranges per thread: two let a thread whose first range certifies early take another.
  static constexpr int ranges_per_thread = 2;

  using Base::loss_;
  using Base::options_;
  using Base::penalty_;
};

}  // namespace sparsemc
