#pragma once
/// \file prox_gradient.hpp
/// `ProxGradient<Loss, Penalty>`: accelerated proximal gradient (FISTA) with backtracking and
/// adaptive restart for objective (1) with any smooth loss and any penalty with a prox. It is
/// the reference solver: simple, exact in what it reports, and the referee of the cross-solver
/// tests. It stops on the duality gap of (1) (a certificate of F − F*, default tol 1e-3). It fits
/// a sparse `Problem` (CSR or CSC) or a dense `DenseProblem`.
///
/// The public class, its documentation and the loop over the steps are here; the state and
/// the steps are in detail/engine.hpp, the options in options.hpp.

#include <iostream>
#include <optional>
#include <string_view>
#include <utility>

#include "../../core/callbacks.hpp"
#include "../../core/status.hpp"
#include "../../core/stopwatch.hpp"
#include "../../core/traits.hpp"
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

/// What ProxGradient solves (1) with: a smooth loss and any penalty. The tools register it for
/// every loss × penalty of theirs that meets this (tools/registry/fista.hpp).
template <class Loss, class Penalty, class Scalar = double>
concept ProxGradientAccepts = SmoothLoss<Loss, Scalar> && sparsemc::Penalty<Penalty, Scalar>;

/// Accelerated proximal gradient for objective (1),
///
///     min_{W, b} F(W, b) = L(W, b) + Σ_j P(W_j:),   L = (1/n) Σ_i c_i ℓ(Wᵀx_i + b, y_i),
///     P(w) = λR(w) + (μ/2)‖w‖²,
///
/// with the smooth part L (any `SmoothLoss`) handled by gradient steps and the whole penalty —
/// ridge included — by its row-wise prox. b, when fitted, is unpenalised (its prox is the
/// identity).
///
/// **Iteration** (Beck & Teboulle, FISTA, SIAM J. Imaging Sci. 2(1), 2009, eqs. (4.1)–(4.3)),
/// from Y₁ = W₀, t₁ = 1 (b is carried along with W everywhere):
///
///     W_k     = prox_{P/L_k}(Y_k − ∇L(Y_k)/L_k)                                          (4.1)
///     t_{k+1} = (1 + √(1 + 4t_k²)) / 2                                                   (4.2)
///     Y_{k+1} = W_k + ((t_k − 1)/t_{k+1}) (W_k − W_{k−1})                                (4.3)
///
/// with L_k found by backtracking on the quadratic majorisation (3) of L at W_k, and t reset to
/// 1 after an uphill step (O'Donoghue–Candès adaptive restart).
///
/// `converged` means (F − D)/max(|F|, 10⁻¹²) ≤ tol at the returned (W, b): the relative duality
/// gap of (1) (solver/duality_gap.hpp), reported for every status.
///
/// Implementation notes: docs/fista.md.
///
/// \code
///   #include <sparsemc/solver/fista/prox_gradient.hpp>
///   using namespace sparsemc;
///   auto data = io::read_libsvm<double>("dna.scale");
///   ProxGradient solver(Logistic{}, L1L2{.lambda = 1e-3, .mu = 1e-4},
///                       ProxGradientOptions{.fit_intercept = true});
///   History history;
///   Result<double> result = solver.fit(data.problem<Eigen::RowMajor>(), history);
///   std::cout << result.info.objective << ' ' << result.model.nnz_rows() << '\n';
///   auto warm = solver.fit(data.problem<Eigen::RowMajor>(), result.model);   // stops at once
///   // A dense row-major n × d design Z (caller's memory, not copied): matrix products over row blocks.
///   DenseProblem<double> dense{.X = {Z.data(), Z.rows(), Z.cols()}, .y = data.labels().view()};
///   auto on_dense = solver.fit(dense);
/// \endcode
template <class Loss, class Penalty>
class ProxGradient : public detail::SolverBase<ProxGradient<Loss, Penalty>, Loss, Penalty, ProxGradientOptions,
                                               LinearModel, Result, /*AcceptsDense=*/true> {
  using Base = detail::SolverBase<ProxGradient<Loss, Penalty>, Loss, Penalty, ProxGradientOptions, LinearModel, Result,
                                  true>;
  friend Base;

 public:
  using Options = ProxGradientOptions;
  /// The registered solver name (provenance, tools).
  static constexpr std::string_view name = "fista";

  ProxGradient(Loss loss, Penalty penalty, Options options = {})
      : Base(std::move(loss), std::move(penalty), std::move(options)) {}

  /// Fits (1) over a problem split by samples among processes: `part` holds this process's
  /// samples (part.n_total the samples of the whole), `sums` completes every sum over the
  /// samples (sample_sums.hpp; mpi::SampleSums over MPI ranks), `initial` a warm start or
  /// null. Every process calls it with its part, the same options and the same `initial`;
  /// each returns the same model and information block — the serial solve's iterates up to
  /// the order of the sums, certified by the gap of the whole.
  template <RealScalar Scalar, StorageIndex Index, int Order, SampleSums Sums, class... Callbacks>
  Result<Scalar> fit_part(const Problem<Scalar, Index, Order>& part, const Sums& sums,
                          const LinearModel<Scalar>* initial, Callbacks&&... callbacks) const {
    return solve(part, initial, sums, callbacks...);
  }

 private:
  template <TrainingProblem Prob, class... Callbacks>
  Result<ProblemScalar<Prob>> run(const Prob& problem, const LinearModel<ProblemScalar<Prob>>* initial,
                                  Callbacks&... callbacks) const {
    return solve(problem, initial, LocalSums{}, callbacks...);
  }

  /// The solve: the engine's setup, then its start and per iteration its named steps
  /// (detail/engine.hpp), the report to the callbacks and the verdict; then the certificate and
  /// the exact gradient mapping at the returned W, and the shared epilogue. The verdict's
  /// inputs — the clock and the callbacks' stop — are agreed through `sums` over a split problem.
  template <TrainingProblem Prob, class Sums, class... Callbacks>
  Result<ProblemScalar<Prob>> solve(const Prob& problem, const LinearModel<ProblemScalar<Prob>>* initial,
                                    const Sums& sums, Callbacks&... callbacks) const {
    using Scalar = ProblemScalar<Prob>;
    static_assert(SmoothLoss<Loss, Scalar>,
                  "ProxGradient needs a smooth loss: value, gradient, curvature and curvature_bound "
                  "(loss/concepts.hpp). Crammer-Singer is not smooth: use the FBPD solver.");
    static_assert(sparsemc::Penalty<Penalty, Scalar>,
                  "ProxGradient needs a penalty with value, prox, violation and dual_norm (penalty/concepts.hpp).");
    problem.validate();
    if (initial != nullptr) detail::check_warm_start(name, *initial, problem.n_features(), problem.n_classes());
    const Stopwatch clock;
    detail::FistaEngine<Loss, Penalty, Prob, Sums> engine(problem, loss_, penalty_, options_, initial, sums);
    auto make_model = [&] { return engine.model(); };
    notify_begin(callbacks...);
    Status status = Status::max_iter;
    if (const std::optional<Status> ended = engine.start()) {
      status = *ended;
    } else {
      while (engine.epoch() < options_.max_epochs) {
        if (!engine.iterate()) {
          status = Status::numerical_issue;
          break;
        }
        const bool certified = engine.certify_if_due();
        const EpochReport report = engine.report(sums.max(clock.seconds()));
        const bool stop = sums.any(notify_end_epoch(report, make_model, callbacks...));
        if (const auto verdict = detail::epoch_verdict(options_, true, certified, stop, report.seconds)) {
          status = *verdict;
          break;
        }
      }
    }

    const DualityGap certificate = engine.returned_certificate();
    SolverInfo info = engine.info(status);
    info.seconds = sums.max(clock.seconds());
    engine.gap_spent().record_into(info);
    Result<Scalar> result = detail::finish_result<Loss, Penalty>(engine.take_model(), name, penalty_, engine.bias(),
                                                                 certificate, std::move(info));
    notify_end(result.info, callbacks...);
    return result;
  }

  using Base::loss_;
  using Base::options_;
  using Base::penalty_;
};

}  // namespace sparsemc
