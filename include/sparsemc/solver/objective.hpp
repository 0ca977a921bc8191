#pragma once
/// \file objective.hpp
/// The one evaluation of objective (1) that every solver, test and tool shares:
///
///     F(W, b) = L(W, b) + Σ_j P(W_j:),                                                  (1)
///     L(W, b) = (1/n) Σ_i c_i ℓ(s_i, y_i),   S = XW + 1bᵀ (row i of S is s_i ∈ R^K),
///     P(w)    = λR(w) + (μ/2)‖w‖²             (the penalty policy's `value`, per feature row).
///
/// The loss part is smooth in S for a `SmoothLoss`, and its gradients follow from the chain
/// rule through the linear map (W, b) ↦ XW + 1bᵀ:
///
///     D_i   = (c_i / n) ∇ℓ(s_i, y_i)      (n × K, "score gradient"; 1/n and c_i folded in)
///     ∇_W L = XᵀD                         (d × K)
///     ∇_b L = Dᵀ1                         (K)
///
/// The optimality conditions of (1) are, row by row, −∇_W L_j: ∈ λ∂R(W_j:) + μW_j: and, with an
/// unpenalised intercept, ∇_b L = 0; `optimality_violation` measures them exactly with the
/// penalty's `violation`. `lambda_max` is the smallest λ for which W = 0 satisfies them:
/// λ_max = max_j R°(∇_W L_j:) at W = 0 (and at the optimal intercept-only model when b is
/// fitted, see `optimal_intercept`).
///
/// Conventions: W, S and D are row-major `ClassMatrix` (one column per class, rows contiguous,
/// so a row is a `std::span` of K values for the policies); the intercept is a `ClassVector`
/// (empty = no intercept). Sums of per-sample losses and per-row penalties are accumulated in
/// double whatever the Scalar. Output matrices are resized only when their shape differs, so
/// calls with preallocated outputs do not allocate.
///
/// \code
///   using namespace sparsemc;
///   auto data = io::read_libsvm<double>("dna.scale");
///   auto problem = data.problem<Eigen::RowMajor>();
///   Logistic loss;  L1L2 penalty{.lambda = 1e-3, .mu = 0};
///   ClassMatrix<double> S, D, G;
///   compute_scores(problem, W, b, S);                     // S = XW + 1bᵀ
///   double L = loss_score_gradient(loss, problem, S, D);  // L(W, b) and D
///   weight_gradient(problem, D, G);                       // ∇_W L = XᵀD
///   double F = L + penalty_value(penalty, W);             // (1)
///   double lmax = lambda_max(loss, penalty, problem, /*fit_intercept=*/false);
/// \endcode

#include <Eigen/Core>
#include <Eigen/SparseCore>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <span>
#include <type_traits>
#include <vector>

#include "../core/class_matrix.hpp"
#include "../core/huge_pages.hpp"
#include "../core/parallel.hpp"
#include "../core/rng.hpp"
#include "../core/traits.hpp"
#include "../data/dense_problem.hpp"
#include "../data/labels.hpp"
#include "../data/problem.hpp"
#include "../loss/concepts.hpp"
#include "../model/linear_model.hpp"
#include "../penalty/concepts.hpp"
#include "sample_sums.hpp"

namespace sparsemc {

/// Read-only view of a ClassMatrix (or of a row-major block of one). The type_identity makes
/// it a non-deduced parameter: Scalar is deduced from the Problem only.
template <RealScalar Scalar>
using ClassMatrixRef = std::type_identity_t<Eigen::Ref<const ClassMatrix<Scalar>>>;

/// Read-only view of a ClassVector; an empty one means "no intercept".
template <RealScalar Scalar>
using ClassVectorRef = std::type_identity_t<Eigen::Ref<const ClassVector<Scalar>>>;

/// The two parts of (1) at one point, in double.
struct ObjectiveValue {
  double loss = 0.0;     ///< L(W, b) = (1/n) Σ_i c_i ℓ(s_i, y_i)
  double penalty = 0.0;  ///< Σ_j λR(W_j:) + (μ/2)‖W_j:‖²
  [[nodiscard]] double total() const noexcept { return loss + penalty; }
};

/// Exact optimality violation of (W, b) for (1) (0 iff optimal).
struct OptimalityViolation {
  double rows = 0.0;       ///< (Σ_j v_j²)^½, v_j = penalty.violation(W_j:, ∇_W L_j:)
  double max_row = 0.0;    ///< max_j v_j
  double intercept = 0.0;  ///< ‖∇_b L‖₂ when the intercept is fitted, else 0
  /// (rows² + intercept²)^½: the Euclidean distance of 0 to the subdifferential of (1).
  [[nodiscard]] double total() const noexcept { return std::hypot(rows, intercept); }
};

namespace detail {

/// Row r of a row-major matrix as the span the loss and penalty policies take.
template <class Matrix>
auto row_span(Matrix& M, Eigen::Index r) {
  using Scalar = std::remove_const_t<typename std::remove_reference_t<Matrix>::Scalar>;
  using Element = std::conditional_t<std::is_const_v<Matrix>, const Scalar, Scalar>;
  return std::span<Element>(M.row(r).data(), static_cast<std::size_t>(M.cols()));
}

template <class Matrix>
auto const_row_span(const Matrix& M, Eigen::Index r) {
  using Scalar = typename Matrix::Scalar;
  return std::span<const Scalar>(M.row(r).data(), static_cast<std::size_t>(M.cols()));
}

/// Lexicographic order on class sets, to group samples with identical labels.
struct ClassSetLess {
  bool operator()(ClassSet a, ClassSet b) const {
    return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end());
  }
};

/// Sums over the samples add the partial sums of at most `max_sample_chunks` contiguous
/// chunks of at least `min_chunk_samples` samples (their number a function of n only) in chunk
/// order: the same bits on any number of threads, and a single chunk (n < 2·min_chunk_samples)
/// is the plain loop. Design choices: 64 chunks keep two to 64 threads busy; a chunk under
/// 1024 samples costs more to hand out than to sum.
inline constexpr std::size_t max_sample_chunks = 64;
inline constexpr std::size_t min_chunk_samples = 1024;

/// Σ_{i<n} term(i) in double over the chunks above, on `team` threads, for a term that gives N
/// sums at once (std::array<double, N>); term(i) may also write item i's own state.
template <std::size_t N, class Term>
std::array<double, N> chunk_sums(int team, std::size_t n, Term&& term) {
  const std::size_t chunks = std::clamp<std::size_t>(n / min_chunk_samples, 1, max_sample_chunks);
  std::array<std::array<double, N>, max_sample_chunks> partial{};
  parallel_tasks(team, chunks, [&](std::size_t c) {
    std::array<double, N> sum{};
    for (std::size_t i = n * c / chunks, end = n * (c + 1) / chunks; i < end; ++i) {
      const std::array<double, N> terms = term(i);
      for (std::size_t k = 0; k < N; ++k) sum[k] += terms[k];
    }
    partial[c] = sum;
  });
  std::array<double, N> total{};
  for (std::size_t c = 0; c < chunks; ++c)
    for (std::size_t k = 0; k < N; ++k) total[k] += partial[c][k];
  return total;
}

/// Σ_{i<n} term(i) in double over the chunks above, on `team` threads; term(i) may also write
/// sample i's own state.
template <class Term>
double sample_sum(int team, std::size_t n, Term&& term) {
  return chunk_sums<1>(team, n, [&](std::size_t i) { return std::array<double, 1>{term(i)}; })[0];
}

/// C = AB (or AᵀB when `Transposed`) for the products that gather each row of C from rows of B
/// (A row-major, or column-major and transposed): C_o = Σ_{(o, i) ∈ A} a_oi B_i, in the order
/// of Eigen's serial product (which under OpenMP would take OpenMP's team, not the caller's),
/// the rows of C split into contiguous ranges, one per thread of `team` that the product's
/// nnz(A)·cols(B) multiply-adds keep busy (detail::team_for_work). The products that scatter rows of B into
/// rows of C stay Eigen's serial ones: split by classes on two cores they ran 1.4× slower than
/// on one thread, bound by the memory traffic of the scattered rows (docs/parallel.md).
template <bool Transposed, class SparseA, class Dense, class Out>
void gather_product(int team, const SparseA& A, const Dense& B, Out& C) {
  static_assert(bool(SparseA::IsRowMajor) != Transposed, "gather_product: a product that gathers rows");
  const int busy = team_for_work(team, static_cast<double>(A.nonZeros()) * static_cast<double>(B.cols()));
  const auto parts = static_cast<std::size_t>(std::max<Eigen::Index>(1, std::min<Eigen::Index>(busy, A.outerSize())));
  parallel_tasks(busy, parts, [&](std::size_t r) {
    const auto count = static_cast<std::size_t>(A.outerSize());
    for (auto o = static_cast<Eigen::Index>(count * r / parts); o < static_cast<Eigen::Index>(count * (r + 1) / parts); ++o) {
      C.row(o).setZero();
      for (typename SparseA::InnerIterator it(A, o); it; ++it) C.row(o) += it.value() * B.row(it.index());
    }
  });
}

/// Runs part(first, count) over contiguous ranges of rows 0..rows−1, one per thread of `team`
/// that `work` multiply-adds in all keep busy (one range, the whole, on one thread): the row
/// blocks of the dense products.
template <class Part>
void split_rows(int team, Eigen::Index rows, double work, Part&& part) {
  const int busy = team_for_work(team, work);
  const auto parts = static_cast<std::size_t>(std::max<Eigen::Index>(1, std::min<Eigen::Index>(busy, rows)));
  parallel_tasks(busy, parts, [&](std::size_t r) {
    const auto first = static_cast<Eigen::Index>(static_cast<std::size_t>(rows) * r / parts);
    const auto last = static_cast<Eigen::Index>(static_cast<std::size_t>(rows) * (r + 1) / parts);
    if (last > first) part(first, last - first);
  });
}

}  // namespace detail

// --- scores -------------------------------------------------------------------------------------

/// S = XW + 1bᵀ (n × K) with Eigen's sparse × dense product: for a CSC X it scatters column j
/// times row W_j: into the rows of S, for a CSR X it gathers row s_i = Σ_j x_ij W_j:, on `team`
/// threads split over the samples (detail::gather_product). An empty `b` means b = 0.
template <RealScalar Scalar, StorageIndex Index, int Order>
void compute_scores(const Problem<Scalar, Index, Order>& problem, ClassMatrixRef<Scalar> W,
                    ClassVectorRef<Scalar> b, ClassMatrix<Scalar>& S, int team = 1) {
  S.resize(problem.n_samples(), W.cols());
  if constexpr (Order == Eigen::RowMajor) detail::gather_product<false>(team, problem.X.eigen(), W, S);
  else S.noalias() = problem.X.eigen() * W;
  if (b.size() > 0) S.rowwise() += b.transpose();
}

/// S = XW + 1bᵀ for a dense X: Eigen's matrix product, the rows of S split into `team`
/// contiguous ranges (one product each; inside the parallel region Eigen's own product runs
/// serially, with one thread it may use OpenMP's default team in OpenMP builds).
template <RealScalar Scalar, int Order>
void compute_scores(const DenseProblem<Scalar, Order>& problem, ClassMatrixRef<Scalar> W, ClassVectorRef<Scalar> b,
                    ClassMatrix<Scalar>& S, int team = 1) {
  S.resize(problem.n_samples(), W.cols());
  detail::split_rows(team, S.rows(), static_cast<double>(problem.X.size()) * static_cast<double>(W.cols()),
                     [&](Eigen::Index first, Eigen::Index count) {
    S.middleRows(first, count).noalias() = problem.X.middleRows(first, count) * W;
  });
  if (b.size() > 0) S.rowwise() += b.transpose();
}

/// S = XW + 1bᵀ for a row-sparse LinearModel: only the stored rows of W are touched, so the
/// cost is the number of nonzeros of X in the model's support (times K). Features the model
/// does not know (j ≥ model.n_features()) contribute nothing, as in LIBLINEAR. A model made
/// with a bias feature (provenance().bias ≥ 0) expects X to contain that constant column
/// already, as it was during training.
template <RealScalar Scalar, StorageIndex Index, int Order>
void compute_scores(const Problem<Scalar, Index, Order>& problem, const LinearModel<Scalar>& model,
                    ClassMatrix<Scalar>& S) {
  const auto& X = problem.X;
  S.resize(X.rows(), model.n_classes());
  if (model.has_intercept()) S.rowwise() = model.intercept().transpose();
  else S.setZero();
  if constexpr (Order == Eigen::ColMajor) {
    const auto& support = model.support();
    for (std::size_t r = 0; r < support.size(); ++r) {
      if (support[r] >= static_cast<std::int64_t>(X.cols())) break;  // support is increasing
      const auto w = model.row(r);
      for (auto [i, x_ij] : X.outer(static_cast<Index>(support[r])))
        for (auto [k, w_k] : w) S(i, k) += x_ij * w_k;
    }
  } else {
    for (Index i = 0; i < X.rows(); ++i) {
      auto s = S.row(i);
      for (auto [j, x_ij] : X.outer(i)) {
        const std::int64_t r = model.row_of_feature(j);
        if (r < 0) continue;
        for (auto [k, w_k] : model.row(static_cast<std::size_t>(r))) s[k] += x_ij * w_k;
      }
    }
  }
}

/// The same for a dense X: the model's stored rows, each against its column of X.
template <RealScalar Scalar, int Order>
void compute_scores(const DenseProblem<Scalar, Order>& problem, const LinearModel<Scalar>& model,
                    ClassMatrix<Scalar>& S) {
  const auto& X = problem.X;
  S.resize(X.rows(), model.n_classes());
  if (model.has_intercept()) S.rowwise() = model.intercept().transpose();
  else S.setZero();
  const auto& support = model.support();
  for (std::size_t r = 0; r < support.size() && support[r] < static_cast<std::int64_t>(X.cols()); ++r) {
    const auto w = model.row(r);
    const auto x_j = X.col(static_cast<Eigen::Index>(support[r]));
    for (Eigen::Index i = 0; i < X.rows(); ++i)
      for (auto [k, w_k] : w) S(i, k) += x_j[i] * w_k;
  }
}

// --- the loss part ------------------------------------------------------------------------------

/// L = (1/n) Σ_i c_i ℓ(s_i, y_i) from the scores S. Samples with c_i = 0 are skipped (so an
/// infinite loss on a zero-weight sample does not poison the sum).
template <class Loss, TrainingProblem Prob>
  requires sparsemc::Loss<Loss, ProblemScalar<Prob>>
double loss_value(const Loss& loss, const Prob& problem,
                  ClassMatrixRef<ProblemScalar<Prob>> S, int team = 1) {
  using Scalar = ProblemScalar<Prob>;
  using Index = ProblemIndex<Prob>;
  const Index n = problem.n_samples();
  // Σ_i c_i ℓ_i in double whatever the Scalar, in chunks (detail::sample_sum).
  const double sum = detail::sample_sum(team, static_cast<std::size_t>(n), [&](std::size_t i) {
    const Scalar c = problem.weight(static_cast<Index>(i));
    if (c == Scalar(0)) return 0.0;
    const auto s = detail::const_row_span(S, static_cast<Eigen::Index>(i));
    return static_cast<double>(c) * static_cast<double>(loss.value(s, problem.y[i]));
  });
  return sum / problem.normaliser();
}

/// The loss part and its gradient with respect to the scores: writes D_i = (c_i/n) ∇ℓ(s_i, y_i)
/// (n × K) and returns L = (1/n) Σ_i c_i ℓ(s_i, y_i). Then ∇_W L = XᵀD (`weight_gradient`) and
/// ∇_b L = Dᵀ1 (`intercept_gradient`).
template <class Loss, TrainingProblem Prob>
  requires SmoothLoss<Loss, ProblemScalar<Prob>>
double loss_score_gradient(const Loss& loss, const Prob& problem,
                           ClassMatrixRef<ProblemScalar<Prob>> S, ClassMatrix<ProblemScalar<Prob>>& D, int team = 1) {
  using Scalar = ProblemScalar<Prob>;
  using Index = ProblemIndex<Prob>;
  const Index n = problem.n_samples();
  D.resize(S.rows(), S.cols());
  const auto inv_n = static_cast<Scalar>(1.0 / problem.normaliser());
  const double sum = detail::sample_sum(team, static_cast<std::size_t>(n), [&](std::size_t i) {
    const auto r = static_cast<Eigen::Index>(i);
    const Scalar c = problem.weight(static_cast<Index>(i));
    if (c == Scalar(0)) {
      D.row(r).setZero();
      return 0.0;
    }
    // The loss writes ∇ℓ(s_i) into row i of D and returns ℓ(s_i); then D_i ← (c_i/n) ∇ℓ.
    const Scalar value = loss.gradient(detail::const_row_span(S, r), problem.y[i], detail::row_span(D, r));
    D.row(r) *= c * inv_n;
    return static_cast<double>(c) * static_cast<double>(value);
  });
  return sum / problem.normaliser();
}

/// ∇_W L = XᵀD (d × K), D from `loss_score_gradient`. CSC X gathers each row of G from the
/// rows of D, on `team` threads split over the features (detail::gather_product); CSR X
/// scatters each sample's row of D into the rows of G.
template <RealScalar Scalar, StorageIndex Index, int Order>
void weight_gradient(const Problem<Scalar, Index, Order>& problem, ClassMatrixRef<Scalar> D,
                     ClassMatrix<Scalar>& G, int team = 1) {
  G.resize(problem.n_features(), D.cols());
  if constexpr (Order == Eigen::ColMajor) detail::gather_product<true>(team, problem.X.eigen(), D, G);
  else G.noalias() = problem.X.eigen().transpose() * D;
}

/// ∇_W L = XᵀD (d × K) for a dense X: the rows of G (column blocks of X) split into `team`
/// contiguous ranges, one matrix product each.
template <RealScalar Scalar, int Order>
void weight_gradient(const DenseProblem<Scalar, Order>& problem, ClassMatrixRef<Scalar> D, ClassMatrix<Scalar>& G,
                     int team = 1) {
  G.resize(problem.n_features(), D.cols());
  detail::split_rows(team, G.rows(), static_cast<double>(problem.X.size()) * static_cast<double>(D.cols()),
                     [&](Eigen::Index first, Eigen::Index count) {
    G.middleRows(first, count).noalias() = problem.X.middleCols(first, count).transpose() * D;
  });
}

/// ∇_b L = Dᵀ1 (K), D from `loss_score_gradient`.
template <RealScalar Scalar>
void intercept_gradient(const ClassMatrix<Scalar>& D, ClassVector<Scalar>& gradient) {
  gradient.resize(D.cols());
  gradient.noalias() = D.colwise().sum().transpose();
}

// --- the penalty part ---------------------------------------------------------------------------

/// Σ_j P(W_j:) = Σ_j λR(W_j:) + (μ/2)‖W_j:‖² over the rows of a dense W.
/// W may be any dense row-major expression (a ClassMatrix, a block of one, ...).
template <class Penalty, class Derived>
  requires sparsemc::Penalty<Penalty, typename Derived::Scalar>
double penalty_value(const Penalty& penalty, const Eigen::MatrixBase<Derived>& W_in) {
  const Eigen::Ref<const ClassMatrix<typename Derived::Scalar>> W(W_in.derived());
  double sum = 0.0;
  for (Eigen::Index j = 0; j < W.rows(); ++j) sum += static_cast<double>(penalty.value(detail::const_row_span(W, j)));
  return sum;
}

/// Σ_j P(W_j:) over the stored rows of a sparse model (P(0) = 0 for every penalty): each row
/// is laid into one K-buffer, which is cleared again entry by entry (O(nnz(W) + K) in all).
template <class Penalty, RealScalar Scalar>
  requires sparsemc::Penalty<Penalty, Scalar>
double penalty_value(const Penalty& penalty, const LinearModel<Scalar>& model) {
  std::vector<Scalar> w(static_cast<std::size_t>(model.n_classes()), Scalar(0));
  double sum = 0.0;
  for (std::size_t r = 0; r < model.support().size(); ++r) {
    const auto row = model.row(r);
    for (auto [k, w_k] : row) w[static_cast<std::size_t>(k)] = w_k;
    sum += static_cast<double>(penalty.value(std::span<const Scalar>(w)));
    for (auto [k, w_k] : row) w[static_cast<std::size_t>(k)] = Scalar(0);
  }
  return sum;
}

// --- objective (1) ------------------------------------------------------------------------------

/// F(W, b) of (1) for a dense W and intercept b (empty b = no intercept), as its two parts.
/// `S` is the caller's n × K work space (holds the scores on return).
template <class Loss, class Penalty, TrainingProblem Prob>
  requires sparsemc::Loss<Loss, ProblemScalar<Prob>> && sparsemc::Penalty<Penalty, ProblemScalar<Prob>>
ObjectiveValue objective(const Loss& loss, const Penalty& penalty, const Prob& problem,
                         ClassMatrixRef<ProblemScalar<Prob>> W, ClassVectorRef<ProblemScalar<Prob>> b, ClassMatrix<ProblemScalar<Prob>>& S) {
  compute_scores(problem, W, b, S);
  return {loss_value(loss, problem, S), penalty_value(penalty, W)};
}

/// F of (1) at a LinearModel (row-sparse W, its intercept if any), as its two parts.
template <class Loss, class Penalty, TrainingProblem Prob>
  requires sparsemc::Loss<Loss, ProblemScalar<Prob>> && sparsemc::Penalty<Penalty, ProblemScalar<Prob>>
ObjectiveValue objective(const Loss& loss, const Penalty& penalty, const Prob& problem,
                         const LinearModel<ProblemScalar<Prob>>& model) {
  using Scalar = ProblemScalar<Prob>;
  if (model.n_classes() != problem.n_classes())
    throw std::invalid_argument("objective: the model has " + std::to_string(model.n_classes()) +
                                " classes but the problem has " + std::to_string(problem.n_classes()));
  ClassMatrix<Scalar> S;
  compute_scores(problem, model, S);
  return {loss_value(loss, problem, S), penalty_value(penalty, model)};
}

// --- optimality -----------------------------------------------------------------------------------

/// The exact optimality violation of (W, b): each row's `penalty.violation(W_j:, ∇_W L_j:)`
/// (the distance of −∇_W L_j: to λ∂R(W_j:) + μW_j:) and, when `fit_intercept`, ‖∇_b L‖₂.
/// Costs one gradient evaluation (allocates its work space).
template <class Loss, class Penalty, TrainingProblem Prob>
  requires SmoothLoss<Loss, ProblemScalar<Prob>> && sparsemc::Penalty<Penalty, ProblemScalar<Prob>>
OptimalityViolation optimality_violation(const Loss& loss, const Penalty& penalty,
                                         const Prob& problem,
                                         ClassMatrixRef<ProblemScalar<Prob>> W, ClassVectorRef<ProblemScalar<Prob>> b,
                                         bool fit_intercept) {
  using Scalar = ProblemScalar<Prob>;
  // ∇_W L at (W, b), then each row's distance to optimality as the penalty defines it.
  ClassMatrix<Scalar> S, D, G;
  compute_scores(problem, W, b, S);
  loss_score_gradient(loss, problem, S, D);
  weight_gradient(problem, D, G);
  OptimalityViolation out;
  double sum = 0.0;
  for (Eigen::Index j = 0; j < W.rows(); ++j) {
    const double v = static_cast<double>(penalty.violation(detail::const_row_span(W, j), detail::const_row_span(G, j)));
    sum += v * v;
    out.max_row = std::max(out.max_row, v);
  }
  out.rows = std::sqrt(sum);
  if (fit_intercept) {
    ClassVector<Scalar> gb;
    intercept_gradient(D, gb);
    out.intercept = static_cast<double>(gb.norm());
  }
  return out;
}

// --- intercept-only model and λ_max ------------------------------------------------------------

/// The optimal intercept of the intercept-only model, argmin_b (1/n) Σ_i c_i ℓ(b, y_i).
///
/// All samples share the scores b, so the objective only depends on how much weight each
/// distinct class set carries: φ(b) = Σ_g w_g ℓ(b, Y_g), w_g = (1/n) Σ_{i: y_i = Y_g} c_i, a
/// smooth convex function of K variables evaluated in O(#sets · K). It is minimised from b = 0
/// by diagonally preconditioned gradient steps b ← b − α ∇φ(b) ⊘ h(b), h the diagonal of the
/// generalised Hessian (`curvature`, floored at 10⁻⁶ of the curvature bound), α from an Armijo
/// backtracking (α = 1, halved until φ decreases by 10⁻⁴ α ∇φᵀd; once the decrease is below
/// the rounding of φ, a step that keeps φ within rounding and shrinks ‖∇φ‖∞ is accepted).
/// Stops when ‖∇φ‖∞ ≤ 10³ ε ‖∇φ(0)‖∞ (ε the Scalar's machine epsilon), when no step is
/// accepted, or after `max_iterations`. For the logistic loss this is close to Newton's method (the optimum is
/// b_k = log(class frequency) + const); a class without samples drifts towards −∞ by about one
/// unit per step while its gradient, which is what λ_max uses, vanishes geometrically.
template <class Loss, TrainingProblem Prob>
  requires SmoothLoss<Loss, ProblemScalar<Prob>>
ClassVector<ProblemScalar<Prob>> optimal_intercept(const Loss& loss, const Prob& problem,
                                      int max_iterations = 200) {
  using Scalar = ProblemScalar<Prob>;
  using Index = ProblemIndex<Prob>;
  const ClassIndex K = problem.n_classes();
  const Index n = problem.n_samples();
  // Group the samples by class set; keys are spans into the problem's label storage.
  std::map<ClassSet, double, detail::ClassSetLess> groups;
  for (Index i = 0; i < n; ++i) groups[problem.y[static_cast<std::size_t>(i)]] += static_cast<double>(problem.weight(i));
  double total_weight = 0.0;
  for (auto& [set, w] : groups) total_weight += (w /= static_cast<double>(n));

  ClassVector<Scalar> b = ClassVector<Scalar>::Zero(K), trial(K), d(K), g_one(K), h_one(K);
  ClassVector<Scalar> g(K), h(K), g_trial(K), h_trial(K);
  // φ(at); writes ∇φ into grad and the curvature diagonal into curv.
  auto evaluate = [&](const ClassVector<Scalar>& at, ClassVector<Scalar>& grad, ClassVector<Scalar>& curv) {
    const std::span<const Scalar> s(at.data(), static_cast<std::size_t>(K));
    double value = 0.0;
    grad.setZero();
    curv.setZero();
    for (const auto& [set, w] : groups) {
      if (w == 0.0) continue;
      value += w * static_cast<double>(loss.gradient(s, set, std::span<Scalar>(g_one.data(), g_one.size())));
      loss.curvature(s, set, std::span<Scalar>(h_one.data(), h_one.size()));
      grad += static_cast<Scalar>(w) * g_one;
      curv += static_cast<Scalar>(w) * h_one;
    }
    return value;
  };

  // The curvature floor keeps the preconditioner positive where h vanishes (inactive hinge
  // terms, saturated softmax); 0 only when every sample has weight 0 (then b = 0 is optimal).
  const Scalar floor = Scalar(1e-6) * loss.template curvature_bound<Scalar>(K) * static_cast<Scalar>(total_weight);
  const double eps = static_cast<double>(std::numeric_limits<Scalar>::epsilon());
  double value = evaluate(b, g, h);
  const double g0 = static_cast<double>(g.template lpNorm<Eigen::Infinity>());
  for (int it = 0; it < max_iterations && floor > Scalar(0); ++it) {
    const double g_norm = static_cast<double>(g.template lpNorm<Eigen::Infinity>());
    if (g_norm <= 1e3 * eps * g0) break;
    d = -g.cwiseQuotient(h.cwiseMax(floor));
    const double slope = static_cast<double>(g.dot(d));  // < 0
    bool accepted = false;
    double step = 1.0;
    for (int half = 0; half < 60 && !accepted; ++half, step *= 0.5) {
      trial = b + static_cast<Scalar>(step) * d;
      const double v = evaluate(trial, g_trial, h_trial);
      // Armijo, or — once φ differences drown in rounding — a smaller gradient.
      accepted = v <= value + 1e-4 * step * slope ||
                 (v <= value + 8.0 * eps * std::abs(value) &&
                  static_cast<double>(g_trial.template lpNorm<Eigen::Infinity>()) < g_norm);
      if (accepted) value = v;
    }
    if (!accepted) break;  // rounding floor reached
    b.swap(trial);
    g.swap(g_trial);
    h.swap(h_trial);
  }
  return b;
}

/// λ_max for a penalty: the smallest λ for which W = 0 is optimal in (1),
///
///     λ_max = max_j R°(∇_W L_j:(0, b₀)),
///
/// R° the penalty's dual norm (`dual_norm`: max|·| for L1, ‖·‖₂ for L1L2, ‖·‖₁ for L1Linf), b₀
/// = 0 without intercept and b₀ = `optimal_intercept` with an unpenalised intercept (then W = 0
/// is optimal only together with the best intercept). μ plays no part: at W = 0 the ridge
/// term's gradient vanishes. Allocates its work space (one score and one gradient matrix).
template <class Loss, class Penalty, TrainingProblem Prob>
  requires SmoothLoss<Loss, ProblemScalar<Prob>> && sparsemc::Penalty<Penalty, ProblemScalar<Prob>>
double lambda_max(const Loss& loss, const Penalty& penalty, const Prob& problem,
                  bool fit_intercept) {
  using Scalar = ProblemScalar<Prob>;
  const ClassIndex K = problem.n_classes();
  // Scores of the model W = 0: every row is b₀.
  ClassMatrix<Scalar> S(problem.n_samples(), K), D, G;
  if (fit_intercept) S.rowwise() = optimal_intercept(loss, problem).transpose();
  else S.setZero();
  loss_score_gradient(loss, problem, S, D);
  weight_gradient(problem, D, G);
  double out = 0.0;
  for (Eigen::Index j = 0; j < G.rows(); ++j)
    out = std::max(out, static_cast<double>(penalty.dual_norm(detail::const_row_span(G, j))));
  return out;
}

/// Where a path of the Crammer–Singer loss can start: λ_start ≥ λ_max, a λ at which W = 0 is
/// proven optimal. The loss has no gradient at W = 0 (every pair of a wrong class k ∉ y_i and a
/// true class y ∈ y_i ties at margin 1), so λ_max = min over its subgradients g of max_j R°(g_j:),
/// a linear program. One subgradient gives a bound: p_i uniform over the wrong classes and q_i
/// uniform over the true ones,
///
///     g = (1/n) Σ_i c_i x_i (p_i − q_i)ᵀ,   λ_start = max_j R°(g_j:),
///
/// and 0 ∈ ∂L(0) + λ ∂R(0) through g for every λ ≥ λ_start. (A sample with no wrong or no true
/// class has loss 0 at W = 0 and adds nothing.) Without intercept; allocates its work space.
template <class Penalty, TrainingProblem Prob>
  requires sparsemc::Penalty<Penalty, ProblemScalar<Prob>>
double crammer_singer_lambda_start(const Penalty& penalty, const Prob& problem) {
  using Scalar = ProblemScalar<Prob>;
  using Index = ProblemIndex<Prob>;
  const ClassIndex K = problem.n_classes();
  const Index n = problem.n_samples();
  ClassMatrix<Scalar> D = detail::advised_zeros<ClassMatrix<Scalar>>(n, K), G;
  for (Index i = 0; i < n; ++i) {
    const auto truth = problem.y[static_cast<std::size_t>(i)];
    const auto n_true = static_cast<ClassIndex>(truth.size());
    if (n_true == 0 || n_true == K) continue;
    const Scalar scale = problem.weight(i) / static_cast<Scalar>(n);
    D.row(i).setConstant(scale / static_cast<Scalar>(K - n_true));
    for (const ClassIndex y : truth) D(i, y) = -scale / static_cast<Scalar>(n_true);
  }
  weight_gradient(problem, D, G);
  double out = 0.0;
  for (Eigen::Index j = 0; j < G.rows(); ++j)
    out = std::max(out, static_cast<double>(penalty.dual_norm(detail::const_row_span(G, j))));
  return out;
}

// --- the data part of Lipschitz constants -------------------------------------------------------

/// An estimate of ‖(1/n) X̃ᵀCX̃‖₂, C = diag(c_i), X̃ = [X 1] when `with_intercept` (else X), by
/// the power method on X̃ᵀCX̃ from a seeded positive random vector; stops when the Rayleigh
/// quotient changes by less than 10⁻⁴ relative, or after `max_iterations`. It approaches the
/// norm from below. The Hessian of the loss part is (1/n) Σ_i c_i (x̃_i x̃_iᵀ ⊗ ∇²ℓ(s_i)), so
/// curvature_bound(K) × this value is a Lipschitz constant of ∇L — never above the cruder
/// curvature_bound(K) ‖X̃‖₂² max_i c_i / n. Returns 0 for X = 0 without intercept. Over a
/// problem split by samples, `sums` completes X̃ᵀCX̃v and the quotient (sample_sums.hpp).
template <TrainingProblem Prob, class Sums = LocalSums>
double weighted_gram_norm(const Prob& problem, bool with_intercept,
                          std::uint64_t seed = 0, int max_iterations = 100, const Sums& sums = {}) {
  using Scalar = ProblemScalar<Prob>;
  using Index = ProblemIndex<Prob>;
  using Vec = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;
  const Index n = problem.n_samples();
  const Index d = problem.n_features();
  const auto& X = design(problem);
  Vec c(n);
  for (Index i = 0; i < n; ++i) c[i] = problem.weight(i);
  Rng rng(seed);
  Vec v(d), u(n);
  for (Index j = 0; j < d; ++j) v[j] = static_cast<Scalar>(0.5 + uniform_real(rng));
  Scalar v_b = with_intercept ? static_cast<Scalar>(0.5 + uniform_real(rng)) : Scalar(0);
  double estimate = 0.0;
  for (int it = 0; it < max_iterations; ++it) {
    const Scalar norm = std::sqrt(v.squaredNorm() + v_b * v_b);
    if (!(norm > Scalar(0))) return 0.0;
    v /= norm;
    v_b /= norm;
    u.noalias() = X * v;
    if (with_intercept) u.array() += v_b;
    // Rayleigh quotient vᵀ(X̃ᵀCX̃/n)v with ‖v‖ = 1.
    double rayleigh = static_cast<double>(u.dot(c.cwiseProduct(u))) / problem.normaliser();
    sums(rayleigh);
    u.array() *= c.array();
    v.noalias() = X.transpose() * u;
    v_b = with_intercept ? u.sum() : Scalar(0);
    sums(std::span<Scalar>(v.data(), static_cast<std::size_t>(d)));
    sums(v_b);
    const bool settled = it > 0 && std::abs(rayleigh - estimate) <= 1e-4 * rayleigh;
    estimate = std::max(estimate, rayleigh);
    if (settled) break;
  }
  return estimate;
}

}  // namespace sparsemc
