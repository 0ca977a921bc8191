#pragma once
/// \file block_cd.hpp
/// `BlockCD<Loss, Penalty, StepRule>`: block coordinate descent over the feature rows of W for
/// objective (1) (Blondel, Seki & Uehara, "Block coordinate descent algorithms for large-scale
/// sparse multiclass classification", Machine Learning 93, 2013), with the Tseng–Yun line-search
/// rule (tseng_yun.hpp, "bcd-ls") or the Richtárik–Takáč constant-step rule (richtarik_takac.hpp,
/// "bcd-cst").
///
/// The public class, its documentation and the loop over the steps are here; the state and
/// the steps are in detail/engine.hpp, the options in options.hpp.

#include <Eigen/Core>

#include <cmath>
#include <cstddef>
#include <iostream>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../../core/callbacks.hpp"
#include "../../core/parallel.hpp"
#include "../../core/status.hpp"
#include "../../core/stopwatch.hpp"
#include "../../core/traits.hpp"
#include "../../core/validate.hpp"
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
#include "richtarik_takac.hpp"
#include "tseng_yun.hpp"

namespace sparsemc {

/// What BlockCD solves (1) with: a smooth loss (its own block kernel makes it fast,
/// loss/kernels/block_kernel.hpp) and any row-separable penalty.
template <class Loss, class Penalty, class Scalar = double>
concept BlockCDAccepts = SmoothLoss<Loss, Scalar> && sparsemc::Penalty<Penalty, Scalar>;

/// Block coordinate descent for objective (1),
///
///     min_{W, b} F(W, b) = (1/n) Σ_i c_i ℓ(Wᵀx_i + b, y_i) + Σ_j P(W_j),   P = λR + (μ/2)‖·‖²,
///
/// over blocks W_j ∈ R^K, the K weights of feature j (one row of W), for any smooth loss and any
/// row-separable penalty (L1L2 as in the paper; L1, L1Linf, NoPenalty too). The paper's eq. (2)
/// is SquaredHinge + L1L2 with c_i = 1, μ = 0; its multitask eq. (11) is OvrSquaredHinge.
///
/// **Block step** (Algorithm 2, eqs. 3–4): with the block gradient of the loss part
/// G_j = (1/n) Σ_{i∈supp(x_j)} c_i x_ij ∇ℓ(s_i)  (eq. 5),
///
///     W_j* = prox_{P/L_j}(W_j − G_j/L_j),   W_j ← W_j + α(W_j* − W_j),
///
/// where the step rule chooses L_j and α: TsengYun takes L_j from the generalised second
/// derivatives (eq. 6) and α by Armijo backtracking on eq. (7); RichtarikTakac takes the block
/// Lipschitz constant L_j = K_j and α = 1 (Appendix A).
///
/// `converged` means the relative duality gap of (1) at the returned iterate is ≤ tol
/// (solver/duality_gap.hpp); info.duality_gap / relative_gap are filled for every status.
///
/// Threads (Options::threads): where (1) separates over the classes — a ClassSeparableLoss
/// (one-vs-rest, least squares) with an entrywise penalty — it is K problems, one per column
/// of W (eq. 11), solved over class ranges side by side (detail/class_ranges.hpp); otherwise
/// RichtarikTakac takes τ blocks at once (Richtárik & Takáč's parallel coordinate descent with
/// the ESO step, richtarik_takac.hpp) and TsengYun's cyclic sweep runs on one thread.
///
/// X is walked feature by feature: a CSC problem, or a column-major DenseProblem (a Fortran-
/// ordered array, read in place, its zeros walked as entries: data/feature_columns.hpp).
///
/// Implementation notes: docs/bcd.md; threads: docs/parallel.md.
///
/// \code
///   #include <sparsemc/sparsemc.hpp>
///   using namespace sparsemc;
///   auto train = io::read_libsvm<double>("dna.scale");
///   BlockCD<SquaredHinge, L1L2, TsengYun> solver({}, {.lambda = 1e-3});  // certified to 1e-3
///   Result<double> result = solver.fit(train.problem<Eigen::ColMajor>());
///   std::cout << result.info.objective << ' ' << result.model.nnz_rows() << '\n';
///   // a path step: warm start from the previous model at a smaller λ
///   BlockCD<SquaredHinge, L1L2, TsengYun> next({}, {.lambda = 5e-4});
///   auto refined = next.fit(train.problem<Eigen::ColMajor>(), result.model);
/// \endcode
template <class Loss, class Penalty, class StepRule = TsengYun>
class BlockCD : public detail::SolverBase<BlockCD<Loss, Penalty, StepRule>, Loss, Penalty, BlockCDOptions<StepRule>,
                                          LinearModel, Result, true, Eigen::ColMajor> {
  using Base = detail::SolverBase<BlockCD<Loss, Penalty, StepRule>, Loss, Penalty, BlockCDOptions<StepRule>, LinearModel,
                                  Result, true, Eigen::ColMajor>;
  friend Base;

 public:
  using Options = BlockCDOptions<StepRule>;
  using loss_type = Loss;
  using penalty_type = Penalty;
  using step_rule_type = StepRule;
  /// The registered solver name ("bcd-ls" or "bcd-cst"): provenance, tools.
  static constexpr std::string_view name = StepRule::name;

  BlockCD(Loss loss, Penalty penalty, Options options = {})
      : Base(std::move(loss), std::move(penalty), std::move(options)) {}


  /// Solves (1) for each λ of `lambdas` in turn (the penalty's λ replaced, its μ and every
  /// option kept), each solve warm-started from the previous one, from W = 0, b = 0 for the
  /// first: a regularisation path (solver/path.hpp's `regularization_path` calls this). Unlike
  /// a sequence of `fit` calls it shares the work between the λ values: the caches and the
  /// W = 0 normalisers of every λ are set up once, and the last full pass at λ_{k−1} gives the
  /// gradients of the sequential strong rule at λ_k (Options::screening). Result k is exactly
  /// what `fit` warm-started from result k−1 would have to reach: the same stopping test.
  /// Callbacks run once per epoch of every solve (core/callbacks.hpp; `notify_end` once per λ).
  template <TrainingProblem Prob, class... Callbacks>
  std::vector<Result<ProblemScalar<Prob>>> fit_path(const Prob& problem, std::span<const double> lambdas,
                                                    Callbacks&&... callbacks) const {
    using Scalar = ProblemScalar<Prob>;
    static_assert(FeatureColumnProblem<Prob>, "BlockCD::fit_path needs a CSC or a column-major dense problem");
    for (const double l : lambdas) detail::require_nonnegative("lambda", l);
    std::vector<Result<Scalar>> out;
    check_policies<Scalar>();
    solve(problem, static_cast<const LinearModel<Scalar>*>(nullptr), lambdas, out, callbacks...);
    return out;
  }

 private:
  template <RealScalar Scalar>
  static void check_policies() {
    static_assert(SmoothLoss<Loss, Scalar>,
                  "BlockCD needs a smooth loss: value, gradient, curvature and curvature_bound "
                  "(loss/concepts.hpp). Crammer-Singer is not smooth: use the FBPD or FCBCFW solver.");
    static_assert(sparsemc::Penalty<Penalty, Scalar>,
                  "BlockCD needs a row-separable penalty with value, prox, violation and dual_norm "
                  "(penalty/concepts.hpp).");
  }

  template <TrainingProblem Prob, class... Callbacks>
  Result<ProblemScalar<Prob>> run(const Prob& problem, const LinearModel<ProblemScalar<Prob>>* initial,
                                  Callbacks&... callbacks) const {
    using Scalar = ProblemScalar<Prob>;
    static_assert(FeatureColumnProblem<Prob>,
                  "BlockCD walks the data feature by feature: it needs a CSC problem "
                  "(Dataset::problem<Eigen::ColMajor>() or a CscView) or a column-major DenseProblem.");
    check_policies<Scalar>();
    const double lambda = static_cast<double>(penalty_.lambda);
    std::vector<Result<Scalar>> out;
    solve(problem, initial, std::span<const double>(&lambda, 1), out, callbacks...);
    return std::move(out.front());
  }

  /// Solves (1) for each λ of `lambdas` (in order, each warm-started from the previous),
  /// appending one result per λ to `out`: the engine's setup (detail/engine.hpp) — or, where (1)
  /// separates over the classes and Options::threads gives more than one thread, one engine
  /// per range of classes side by side (detail/class_ranges.hpp) — then the points.
  template <FeatureColumnProblem Prob, class... Callbacks>
  void solve(const Prob& problem, const LinearModel<ProblemScalar<Prob>>* initial, std::span<const double> lambdas,
             std::vector<Result<ProblemScalar<Prob>>>& out, Callbacks&... callbacks) const {
    using Scalar = ProblemScalar<Prob>;
    problem.validate();
    if (!Loss::supports_multilabel && problem.y.multilabel())
      throw std::invalid_argument("BlockCD::fit: the " + std::string(Loss::name) +
                                  " loss is multiclass but some sample has not exactly one class");
    Stopwatch clock;
    if constexpr (ClassSeparableLoss<Loss> && EntrywisePenalty<Penalty, Scalar>) {
      const int team = resolve_threads(options_.threads);
      if (team > 1 && problem.n_classes() > 1) {
        detail::ClassRanges<Loss, Penalty, StepRule, Prob> ranges(problem, loss_, penalty_, options_, lambdas, initial,
                                                                  team, ranges_per_thread * team);
        return solve_points(ranges, clock, lambdas.size(), out, callbacks...);
      }
    }
    detail::BcdEngine<Loss, Penalty, StepRule, Prob> engine(problem, loss_, penalty_, options_, lambdas, initial,
                                                            resolve_threads(options_.threads));
    solve_points(engine, clock, lambdas.size(), out, callbacks...);
  }

  /// The points of a solve: per λ the engine's start, then per epoch its named steps, the report
  /// to the callbacks and the verdict; then the certificate at the returned model and the shared
  /// epilogue.
  template <class Engine, RealScalar Scalar, class... Callbacks>
  void solve_points(Engine& engine, Stopwatch& clock, std::size_t points, std::vector<Result<Scalar>>& out,
                    Callbacks&... callbacks) const {
    auto make_model = [&] { return engine.model(); };
    for (std::size_t point = 0; point < points; ++point) {
      if (point > 0) clock.restart();
      Status status = Status::max_iter;
      if (const std::optional<Status> ended = engine.start_point(point)) {
        status = *ended;
      } else {
        notify_begin(callbacks...);
        while (engine.epoch() < options_.max_epochs) {
          const bool certified = engine.run_epoch();
          const EpochReport report = engine.report(clock.seconds());
          const bool stop = notify_end_epoch(report, make_model, callbacks...);
          const bool finite = std::isfinite(report.objective) && std::isfinite(report.measure);
          if (const auto verdict = detail::epoch_verdict(options_, finite, certified, stop, report.seconds)) {
            status = *verdict;
            break;
          }
          engine.plan_next_epoch();
        }
      }

      const DualityGap certificate = engine.returned_certificate(status);
      // The last point's model takes W over; earlier points keep it for the next warm start.
      LinearModel<Scalar> model = point + 1 == points ? engine.take_model() : engine.model();
      // A budget that ran out at a model the final evaluation certifies has converged.
      if (status == Status::max_iter && certificate.relative() <= options_.tol) status = Status::converged;
      SolverInfo info = engine.info(status);
      info.seconds = clock.seconds();
      engine.gap_spent().record_into(info);
      Result<Scalar> result = detail::finish_result<Loss>(std::move(model), name, engine.penalty(), engine.bias(),
                                                          certificate, std::move(info));
      notify_end(result.info, callbacks...);
      out.push_back(std::move(result));
      if (status == Status::numerical_issue) break;
    }
  }

  /// Class ranges per thread where (1) separates over the classes (detail/class_ranges.hpp):
  /// ranges stop one by one as each is certified, and with two per thread the threads stay
  /// busy as they do. Empirical: sector, one-vs-rest + ℓ1, C = 1, two threads: 7.3 s with one
  /// range per thread, 5.1 s with two, 5.5 s with four (docs/parallel.md).
  static constexpr int ranges_per_thread = 2;

  using Base::loss_;
  using Base::options_;
  using Base::penalty_;
};

}  // namespace sparsemc
