#pragma once
/// \file sequential_dual.hpp
/// `SequentialDual<CrammerSinger, Penalty>`: the sequential dual method of Keerthi, Sundararajan,
/// Chang, Hsieh & Lin ("A sequential dual method for large scale multi-class linear SVMs", KDD
/// 2008; LIBLINEAR's `-s 4`) for objective (1) with the Crammer–Singer loss and the ridge term
/// only (λ = 0, μ > 0): the case where W is dense and primal sparsity has nothing to exploit; and
/// its proximal form for the elastic net (`L1`, λ > 0), whose dual steps also certify a given
/// model (`sequential_dual_bound`).

#include <algorithm>
#include <array>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

#include "../../core/callbacks.hpp"
#include "../../core/status.hpp"
#include "../../core/traits.hpp"
#include "../../core/validate.hpp"
#include "../../data/dense_problem.hpp"
#include "../../data/problem.hpp"
#include "../../data/sample_entries.hpp"
#include "../../loss/crammer_singer.hpp"
#include "../../model/linear_model.hpp"
#include "../../penalty/concepts.hpp"
#include "../../penalty/l1.hpp"
#include "../../penalty/none.hpp"
#include "../duality_gap.hpp"
#include "../solver_base.hpp"
#include "detail/engine.hpp"
#include "options.hpp"

namespace sparsemc {

/// What SequentialDual solves: the Crammer–Singer SVM, a separation ranking loss, with the ridge
/// term (any penalty whose λ is 0, checked on construction; `NoPenalty` ignores its λ) or the
/// elastic net (`L1`, λ ≥ 0). At λ = 0 every penalty of (1) is the ridge term (μ/2)‖W‖² alone,
/// so `--penalty l1l2 --lambda 0` is the same problem as `--penalty none`, and takes the same
/// iterates.
template <class Loss, class P>
concept SequentialDualAccepts = SeparationRankingLoss<Loss> && Penalty<P, double>;

/// The sequential dual method for the Crammer–Singer SVM with the ridge term,
///
///     min_W F(W) = (1/n) Σ_i c_i ℓ(Wᵀx_i, y_i) + (μ/2)‖W‖²,  ℓ(s, y) = max_k (s_k + [k ≠ y]) − s_y,
///
/// i.e. objective (1) with λ = 0 (`NoPenalty`, or any penalty with λ = 0), no intercept (use a
/// bias feature). Dividing by μ gives LIBLINEAR's form ½‖W‖² + Σ_i C_i ℓ_i with C_i = c_i/(nμ),
/// whose dual (Keerthi et al. 2008, §2; Crammer & Singer 2001) is
///
///     min_α ½‖W(α)‖² + Σ_i Σ_m e_im α_im   s.t.  α_im ≤ C_i [m = y_i],  Σ_m α_im = 0,
///     W(α) = Σ_i x_i α_iᵀ,   e_im = [m ≠ y_i].
///
/// **Epoch**: the active samples in a random order; for sample i,
///   1. the gradient of the dual in α_i over the active classes, G_m = w_mᵀx_i + e_im;
///   2. class shrinking (Keerthi et al. §4): a class at its bound whose G_m is below every free
///      class's stays there;
///   3. the sub-problem min_{α_i} ½A_i‖α_i‖² + Bᵀα_i over the box and the hyperplane,
///      A_i = ‖x_i‖², B = G − A_i α_i, solved exactly (Crammer & Singer 2001, Fig. 3);
///   4. W ← W + x_i Δα_iᵀ on the classes that moved.
///
/// `converged` means the relative duality gap of (1) is ≤ tol, exact since the certificate first
/// sums W = W(α) afresh:
/// D(α) = μ (Σ_i α_{i,y_i} − ½‖W‖²) is the dual of (1) at a_i = −α_i/C_i.
///
/// **Elastic net** (`L1`, λ > 0): the dual's quadratic term becomes h*(V) = ½‖S_τ(V)‖², τ = λ/μ,
/// V = Σ_i x_i α_iᵀ, the conjugate of ½‖W‖² + τ‖W‖₁, and W(α) = S_τ(V) (PD-Sparse's (14)–(15),
/// Yen et al. 2016). h* has a 1-Lipschitz gradient, so h*(V + x_iΔᵀ) ≤ h*(V) + x_iᵀWΔ + ½A_i‖Δ‖²:
/// steps 1–3 unchanged minimise that upper bound over α_i and raise D(α) (the proximal dual
/// coordinate ascent step of Shalev-Shwartz & Zhang, "Accelerated proximal stochastic dual
/// coordinate ascent", Math. Prog. 2016), and step 4 updates V, then W = S_τ(V) on the entries
/// that moved. It holds V beside W (d × K more) and returns a sparse W. `auto` keeps FCBCFW for λ > 0:
/// its active sets exploit the sparsity this method does not.
///
/// X is a CSR `Problem` or a `DenseProblem`, whose rows are walked by their nonzeros in the same
/// order (data/sample_entries.hpp): no copy, and the same iterates as on the CSR matrix.
///
/// Implementation notes: docs/sdm.md.
///
/// \code
///   #include <sparsemc/sparsemc.hpp>
///   using namespace sparsemc;
///   auto train = io::read_libsvm<double>("sector.scale");
///   const double C = 1.0;  // LIBLINEAR's -c: μ = 1/(C n)
///   SequentialDual<CrammerSinger, NoPenalty> solver({}, {.mu = 1.0 / (C * train.n_samples())});
///   Result<double> result = solver.fit(train.problem<Eigen::RowMajor>());
///   std::cout << result.info.objective << ' ' << result.info.relative_gap << '\n';
/// \endcode
template <class Loss, class Penalty>
class SequentialDual
    : public detail::SolverBase<SequentialDual<Loss, Penalty>, Loss, Penalty, SequentialDualOptions, LinearModel,
                                Result, /*AcceptsDense=*/true> {
  using Base = detail::SolverBase<SequentialDual<Loss, Penalty>, Loss, Penalty, SequentialDualOptions, LinearModel,
                                  Result, /*AcceptsDense=*/true>;
  friend Base;
  static_assert(SeparationRankingLoss<Loss>, "SequentialDual solves the Crammer-Singer SVM (SeparationRankingLoss)");

 public:
  using Options = SequentialDualOptions;
  using loss_type = Loss;
  using penalty_type = Penalty;
  static constexpr std::string_view name = "sdm";

  /// Throws std::invalid_argument when the penalty has λ ≠ 0 (other than L1's λ ≥ 0 and
  /// NoPenalty), or μ ≤ 0, or an option is out of range.
  SequentialDual(Loss loss, Penalty penalty, Options options = {})
      : Base(std::move(loss), std::move(penalty), std::move(options)) {
    if constexpr (std::same_as<Penalty, L1>)
      detail::require_nonnegative("lambda", this->penalty_.lambda);
    else if (!std::same_as<Penalty, NoPenalty> && static_cast<double>(this->penalty_.lambda) != 0.0)
      throw std::invalid_argument("SequentialDual: lambda must be 0 with this penalty (the ridge-only Crammer-Singer "
                                  "SVM; the elastic net is penalty l1)");
    detail::require_positive("mu", static_cast<double>(this->penalty_.mu));
  }

  /// λ of the elastic net the engine sees: L1's, 0 for every other penalty (checked above).
  [[nodiscard]] double lambda() const noexcept {
    if constexpr (std::same_as<Penalty, L1>) return penalty_.lambda;
    return 0.0;
  }

 private:
  /// A CSR or a dense problem (a dense X walked by its rows' nonzeros, no copy).
  template <TrainingProblem Prob, class... Callbacks>
  Result<ProblemScalar<Prob>> run(const Prob& problem, const LinearModel<ProblemScalar<Prob>>* initial,
                                  Callbacks&... callbacks) const {
    static_assert(SampleRowProblem<Prob>,
                  "SequentialDual visits the data sample by sample: it needs a CSR problem "
                  "(Dataset::problem<Eigen::RowMajor>() or a CsrView) or a DenseProblem.");
    if constexpr (SampleRowProblem<Prob>) {
      problem.validate();
      if (problem.y.multilabel())
        throw std::invalid_argument("SequentialDual::fit: the data is multilabel; the sequential dual method "
                                    "solves the multiclass Crammer-Singer SVM (use FCBCFW)");
      std::vector<Label> labels = detail::cold_start_labels(problem.n_classes());
      if (initial != nullptr) {
        detail::check_warm_start("SequentialDual", *initial, static_cast<std::int64_t>(problem.n_features()),
                                 static_cast<std::int64_t>(problem.n_classes()));
        labels = initial->labels();
      }
      const double bias = initial ? initial->provenance().bias : -1.0;
      // The class lists (n × K entries) take two bytes an entry while K fits them.
      if (problem.n_classes() <= std::numeric_limits<std::uint16_t>::max())
        return solve_with<detail::SdmEngine<Prob, std::uint16_t>>(problem, std::move(labels), bias, callbacks...);
      return solve_with<detail::SdmEngine<Prob, ClassIndex>>(problem, std::move(labels), bias, callbacks...);
    } else {
      return {};
    }
  }

  /// The solve by `SolverEngine`, its certificate, and the model built once α is freed.
  template <class SolverEngine, class Prob, class... Callbacks>
  Result<ProblemScalar<Prob>> solve_with(const Prob& problem, std::vector<Label> labels, double bias,
                                         Callbacks&... callbacks) const {
    using Scalar = ProblemScalar<Prob>;
    SolverEngine engine(problem, lambda(), static_cast<double>(penalty_.mu), options_, labels);
    SolverInfo info = engine.solve(callbacks...);
    const DualityGap certificate = engine.final_certificate();
    engine.gap_spent().record_into(info);
    engine.release_dual();  // the model is built next: α and the class lists are done
    if (info.status == Status::max_iter && certificate.relative() <= options_.tol) info.status = Status::converged;
    Result<Scalar> result = detail::finish_result<Loss>(
        LinearModel<Scalar>::consuming(engine.take_weights(), ClassVector<Scalar>(), std::move(labels)), name, penalty_, bias,
        certificate, std::move(info));
    notify_end(result.info, callbacks...);
    return result;
  }

  using Base::loss_;
  using Base::options_;
  using Base::penalty_;
};

namespace detail {

/// The stop of `sequential_dual_bound`, a callback of the sequential dual method's epochs on
/// `engine`: once the method's own gap F(W(α)) − D(α) (≥ F* − D(α)), at an epoch that evaluated
/// it, is at most `share` of the model's F(W₀) − D(α); or once the last `window` epochs raised
/// D(α) by at most `stall` of that (this method's dual converges well before its primal W(α)
/// shows it, and D is read every epoch from the running W at O(n + dK)).
template <class Engine>
struct ModelGapStop {
  static constexpr std::size_t window = 4;
  const Engine& engine;
  double primal, share, stall;
  std::array<double, window> last_duals;

  ModelGapStop(const Engine& of, double model_objective, double own_gap_share, double stall_share)
      : engine(of), primal(model_objective), share(own_gap_share), stall(stall_share) {
    last_duals.fill(-std::numeric_limits<double>::infinity());
  }

  bool end_epoch(const EpochReport& r) {
    const double dual = engine.running_dual(), model_gap = primal - dual;
    double& window_ago = last_duals[static_cast<std::size_t>(r.epoch) % window];
    const bool stalled = dual - window_ago <= stall * model_gap;
    window_ago = dual;
    if (std::isnan(r.relative_gap)) return stalled;
    const double own_gap = r.relative_gap * std::max(std::abs(r.objective), 1e-12);
    return stalled || own_gap <= share * model_gap;
  }
};

}  // namespace detail

/// A lower bound D(α) ≤ F* for the Crammer–Singer SVM of `SequentialDual` with the elastic net
/// `penalty` (λ ≥ 0, μ > 0; λ = 0 is the ridge-only SVM), to certify a model W₀ made elsewhere
/// (LIBLINEAR's -s 4, PD-Sparse, a model file): F(W₀) − D(α) ≥ F(W₀) − F*.
///
/// The loss's subgradient at W₀'s scores is a dual point, but a loose one: at the optimum many
/// samples sit at a kink of ℓ, where the subgradient is an extreme point of ∂ℓ and the optimal
/// α_i lies inside it. So the sequential dual method's epochs start from that point
/// (`SdmEngine::start_from`) and raise D(α) until their own gap is at most `share` of F(W₀) −
/// D(α) (further epochs could then shrink the bound on W₀ by that share at most), or until D(α)
/// stalls (`detail::ModelGapStop`). `S` = XW₀ are the model's scores (n × K, no intercept) and
/// `primal` = F(W₀) on the same problem; `options` give the epoch budget, the seed and the
/// threads (its tol is not used). Multiclass only; holds the method's n × K dual and d × K W.
///
/// \code
///   ClassMatrix<double> S = data.matrix() * W0;   // the model's scores
///   const DualityGap bound = sequential_dual_bound(data.problem<Eigen::RowMajor>(), S, L1{.lambda = 0, .mu = mu},
///                                                  F_of_W0, {});
///   std::cout << "F(W0) - F* <= " << bound.gap() << '\n';
/// \endcode
template <SampleRowProblem Prob>
[[nodiscard]] DualityGap sequential_dual_bound(const Prob& problem, ClassMatrixRef<ProblemScalar<Prob>> S,
                                               const L1& penalty, double primal, SequentialDualOptions options,
                                               double share = 0.1, double stall = 0.003) {
  detail::require_nonnegative("lambda", penalty.lambda);
  detail::require_positive("mu", penalty.mu);
  options.validate();
  if (problem.y.multilabel())
    throw std::invalid_argument("sequential_dual_bound: the data is multilabel (the sequential dual method is "
                                "multiclass)");
  if (S.rows() != problem.n_samples() || S.cols() != problem.n_classes())
    throw std::invalid_argument("sequential_dual_bound: the scores must be n_samples x n_classes");
  options.tol = 1e-12;  // the stop is ModelGapStop's; the schedule still spaces the evaluations by work
  using Engine = detail::SdmEngine<Prob, ClassIndex>;
  Engine engine(problem, penalty.lambda, penalty.mu, options, detail::cold_start_labels(problem.n_classes()));
  engine.start_from(S);
  detail::ModelGapStop<Engine> stop(engine, primal, share, stall);
  (void)engine.solve(stop);
  return {primal, engine.final_certificate().dual};
}

}  // namespace sparsemc
