#pragma once
/// \file solver_base.hpp
/// What the solvers of objective (1) share, written once (the pattern of Eigen's
/// SparseSolverBase): the loss and penalty policies, the options — validated on construction,
/// so that a bad field is named before any work — and the entry points
///
///     fit(problem, callbacks...)            from W = 0 (b = 0)
///     fit(problem, initial, callbacks...)   warm-started from `initial` (same d and K)
///
/// which forward to the solver's own `run(problem, const Model* initial, callbacks&...)`.
/// What a solver takes from a warm start is said in its class comment.

#include <cmath>
#include <concepts>
#include <cstdint>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "../core/traits.hpp"
#include "../data/dense_problem.hpp"
#include "../data/problem.hpp"
#include "../model/linear_model.hpp"
#include "duality_gap.hpp"

namespace sparsemc::detail {

/// Why an epoch ends a solve, checked in the same order by every solver: a non-finite value,
/// a certificate (the relative duality gap ≤ tol, `certified`), a callback, the time limit;
/// nullopt = go on (the epoch budget is the caller's loop condition). Options has `time_limit`.
template <class Options>
std::optional<Status> epoch_verdict(const Options& options, bool finite, bool certified, bool callback_stop,
                                    double seconds) noexcept {
  if (!finite) return Status::numerical_issue;
  if (certified) return Status::converged;
  if (callback_stop) return Status::stopped_by_callback;
  if (options.time_limit > 0.0 && seconds >= options.time_limit) return Status::time_limit;
  return std::nullopt;
}

/// The shared epilogue of a fit of (1): the model's provenance (loss, penalty, solver, λ, μ,
/// status, bias) and the certificate in the information block (`info` carries the rest:
/// status, epochs, measure, seconds); nnz counts come from the model.
template <class Loss, class Penalty, RealScalar Scalar>
Result<Scalar> finish_result(LinearModel<Scalar> model, std::string_view solver, const Penalty& penalty, double bias,
                             const DualityGap& certificate, SolverInfo info) {
  auto& provenance = model.provenance();
  provenance.loss = std::string(Loss::name);
  provenance.penalty = std::string(Penalty::name);
  provenance.solver = std::string(solver);
  provenance.lambda = static_cast<double>(penalty.lambda);
  provenance.mu = static_cast<double>(penalty.mu);
  provenance.status = std::string(to_string(info.status));
  provenance.bias = bias;
  if (!std::isnan(certificate.primal)) info.objective = certificate.primal;
  info.duality_gap = certificate.gap();
  info.relative_gap = certificate.relative();
  info.nnz = model.nnz();
  info.nnz_rows = model.nnz_rows();
  return {std::move(model), std::move(info)};
}

/// The labels of a model fitted from a cold start: the class indices 0..K−1 (the Problem carries
/// class indices only; callers with a LabelEncoder relabel).
[[nodiscard]] inline std::vector<Label> cold_start_labels(ClassIndex K) {
  std::vector<Label> labels(static_cast<std::size_t>(K));
  std::iota(labels.begin(), labels.end(), Label{0});
  return labels;
}

/// The warm start's shape check, written once: throws std::invalid_argument naming the solver.
template <RealScalar Scalar>
void check_warm_start(std::string_view solver, const LinearModel<Scalar>& initial, std::int64_t d, std::int64_t K) {
  if (initial.n_features() != d || initial.n_classes() != K)
    throw std::invalid_argument(std::string(solver) + "::fit: the initial model is " +
                                std::to_string(initial.n_features()) + " × " + std::to_string(initial.n_classes()) +
                                " but the problem is " + std::to_string(d) + " × " + std::to_string(K));
}

/// The policies and the validated options, with their accessors.
template <class Loss, class Penalty, class Options>
class SolverParts {
 public:
  [[nodiscard]] const Loss& loss() const noexcept { return loss_; }
  [[nodiscard]] const Penalty& penalty() const noexcept { return penalty_; }
  [[nodiscard]] const Options& options() const noexcept { return options_; }

 protected:
  /// Throws std::invalid_argument naming the first option out of range.
  SolverParts(Loss loss, Penalty penalty, Options options)
      : loss_(std::move(loss)), penalty_(std::move(penalty)), options_(std::move(options)) {
    options_.validate();
  }

  Loss loss_;
  Penalty penalty_;
  Options options_;
};

/// SolverParts plus the fit entry points of `Solver` (CRTP; Solver befriends its base). Model
/// is what a fit returns inside `Output` and what a warm start takes (LinearModel, or
/// StagedModel for the staged solvers); with `AcceptsDense` the same two entry points take a
/// DenseProblem too, in the layout `DenseOrder` (row-major for the solvers that read X by
/// samples or by products, column-major for the coordinate solvers).
template <class Solver, class Loss, class Penalty, class Options, template <class> class Model = LinearModel,
          template <class> class Output = Result, bool AcceptsDense = false, int DenseOrder = Eigen::RowMajor>
class SolverBase : public SolverParts<Loss, Penalty, Options> {
 public:
  /// Solves (1) from W = 0, b = 0; callbacks run once per epoch or iteration (core/callbacks.hpp).
  template <RealScalar Scalar, StorageIndex Index, int Order, class... Callbacks>
    requires(!(std::same_as<std::remove_cvref_t<Callbacks>, Model<Scalar>> || ...))
  Output<Scalar> fit(const Problem<Scalar, Index, Order>& problem, Callbacks&&... callbacks) const {
    return solver().run(problem, static_cast<const Model<Scalar>*>(nullptr), callbacks...);
  }

  /// Solves (1) warm-started from `initial` (same d and K).
  template <RealScalar Scalar, StorageIndex Index, int Order, class... Callbacks>
  Output<Scalar> fit(const Problem<Scalar, Index, Order>& problem, const Model<Scalar>& initial,
                     Callbacks&&... callbacks) const {
    return solver().run(problem, &initial, callbacks...);
  }

  /// The same on a dense problem (solvers that take one).
  template <RealScalar Scalar, class... Callbacks>
    requires(AcceptsDense && !(std::same_as<std::remove_cvref_t<Callbacks>, Model<Scalar>> || ...))
  Output<Scalar> fit(const DenseProblem<Scalar, DenseOrder>& problem, Callbacks&&... callbacks) const {
    return solver().run(problem, static_cast<const Model<Scalar>*>(nullptr), callbacks...);
  }
  template <RealScalar Scalar, class... Callbacks>
    requires AcceptsDense
  Output<Scalar> fit(const DenseProblem<Scalar, DenseOrder>& problem, const Model<Scalar>& initial,
                     Callbacks&&... callbacks) const {
    return solver().run(problem, &initial, callbacks...);
  }

 protected:
  using SolverParts<Loss, Penalty, Options>::SolverParts;

 private:
  [[nodiscard]] const Solver& solver() const noexcept { return static_cast<const Solver&>(*this); }
};

}  // namespace sparsemc::detail
