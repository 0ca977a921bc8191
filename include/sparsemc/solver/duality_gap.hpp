#pragma once
/// \file duality_gap.hpp
/// The one certificate of objective (1) that every solver stops on: the duality gap
///
///     gap(W, b; A) = F(W, b) − D(A) ≥ F(W, b) − F*          (weak duality, docs/math.md "Duality gap")
///
///     D(A) = −(1/n) Σ_i c_i ℓ*(a_i, y_i) − Ω*(−G(A)),   G(A) = (1/n) Σ_i c_i x_i a_iᵀ = XᵀD̃,
///     Ω = λR + (μ/2)‖·‖²,   with a fitted (unpenalised) intercept also Σ_i c_i a_i = 0,
///
/// for per-sample dual vectors a_i ∈ R^K (score space). Ω* is taken row by row through the
/// penalty's own `violation` at a zero row, which is dist(g, λB°) (B° the dual norm's unit ball):
///
///     μ > 0:  Ω*(−G) = Σ_j dist(G_j, λB°)² / (2μ)                                            (G1)
///     μ = 0:  Ω*(−G) = 0 if max_j R°(G_j) ≤ λ (else +∞): A is rescaled by
///             θ = min(1, λ / max_j R°(G_j)) ∈ [0, 1], which keeps ℓ* finite           (G2)
///             (per class when the problem separates over classes: one-vs-rest or least
///             squares with L1 or no penalty), after scaling down the samples under the
///             violating rows alone (G3, `dual_objective`)
///
/// A penalty without a dual norm (NoPenalty: R° = +∞ off 0) and μ = 0 gives θ = 0 and the gap
/// F − D(0) = F: the unregularised problem has no finite certificate (it may have no minimiser).
///
/// **Dual candidate** (`duality_gap`): a_i = ∇ℓ(s_i) (a subgradient for a nonsmooth loss); at the
/// optimum it is dual optimal and the gap is 0, and the gap shrinks with the primal error.
/// Solvers with a dual iterate of their own evaluate `dual_objective` at it instead.
///
/// **The intercept** (derived in docs/duality-gap.md): the candidate's Σ_i c_i a_i is
/// n ∇_b L, which is 0 only at an optimal b. The candidate is made feasible, keeping every ℓ*
/// finite, by the loss's `dual_domain`:
///   - whole_space (LeastSquares): a_i ← a_i − m, m = Σ c_i a_i / Σ c_i;
///   - signed_per_class (OvrSquaredHinge): per class, the side (a_ik > 0 or < 0) with the larger
///     weighted mass is scaled down to the other's;
///   - shifted_simplex (SquaredHinge, Logistic, multiclass CrammerSinger): the mixing
///     a_i ← (1 − τ) a_i + τ (q − t_i) with the targets t_i = 1_{y_i}/|y_i|, the class mass
///     π = Σ c_i t_i, C = Σ c_i, ḡ = Σ c_i a_i, and
///         τ = max_k ḡ_k / (π_k + ḡ_k) over ḡ_k > 0,   q = π/C − (1 − τ) ḡ / (τ C) ∈ simplex,
///     so that Σ c_i a_i = (1 − τ)ḡ + τ(Cq − π) = 0; τ → 0 as ∇_b L → 0.
///
/// Cost: one pass over the samples for the candidate (O(nK)), one product XᵀD̃ (O(nnz(X)·K)),
/// one pass over the d rows of G (O(dK)); plus S = XW + 1bᵀ when the caller has no scores.
/// Sums are accumulated in double. The work space is reused between calls (no allocation once
/// it has its shape).
///
/// \code
///   using namespace sparsemc;
///   GapWorkspace<double> work;
///   DualityGap g = duality_gap(Logistic{}, L1L2{.lambda = 1e-3}, problem, result.model,
///                              /*fit_intercept=*/false, work);
///   std::printf("F = %g, F - F* <= %g (%g relative)\n", g.primal, g.gap(), g.relative());
/// \endcode

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <functional>
#include <limits>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "../core/huge_pages.hpp"
#include "../core/parallel.hpp"
#include "../core/status.hpp"
#include "../core/stopwatch.hpp"
#include "../core/traits.hpp"
#include "../data/dense_problem.hpp"
#include "../data/problem.hpp"
#include "../loss/concepts.hpp"
#include "../model/linear_model.hpp"
#include "../penalty/concepts.hpp"
#include "objective.hpp"
#include "sample_sums.hpp"

namespace sparsemc {

/// The floor of the relative gap's denominator: relative = gap / max(|F|, relative_gap_floor).
inline constexpr double relative_gap_floor = 1e-12;

/// Rounds of the per-sample rescaling (G3) in `dual_objective`, at most (each one product XᵀD̃;
/// a round that does not raise D ends them): on sector (d = 55,197, λ = 1e-4) the first round
/// tightens the gap 10–40×, the second by a further third.
inline constexpr int per_sample_rounds = 2;

/// A round of (G3) that moves at most this share of the samples updates G = XᵀD̃ by the moved
/// samples' change instead of recomputing it: on sector the first round moves nearly every
/// sample, the second 1–25 % of them.
inline constexpr double update_share = 0.5;

/// gap / max(|F|, floor), with a gap below 0 (rounding) counted as 0.
[[nodiscard]] inline double relative_gap(double primal, double dual) noexcept {
  const double gap = primal - dual;
  if (std::isnan(gap)) return std::numeric_limits<double>::quiet_NaN();
  return std::max(0.0, gap) / std::max(std::abs(primal), relative_gap_floor);
}

/// A primal value F(W, b) of (1) and a dual value D(A) ≤ F*.
struct DualityGap {
  double primal = std::numeric_limits<double>::quiet_NaN();  ///< F(W, b)
  double dual = std::numeric_limits<double>::quiet_NaN();    ///< D(A)
  /// F − D ≥ F − F* (≥ 0 up to rounding; +∞ when D = −∞; NaN when either is unknown).
  [[nodiscard]] double gap() const noexcept {
    const double difference = primal - dual;
    return std::isnan(difference) ? difference : std::max(0.0, difference);
  }
  /// gap / max(|F|, 10⁻¹²): the quantity `tol` bounds for `converged`.
  [[nodiscard]] double relative() const noexcept { return sparsemc::relative_gap(primal, dual); }
};

/// What the certificate costs a solve: its evaluations and their wall-clock seconds, reported
/// as SolverInfo's gap_evaluations and gap_seconds. `timed` runs and counts one evaluation.
struct GapCost {
  std::int64_t evaluations = 0;
  double seconds = 0.0;

  template <class Evaluate>
  DualityGap timed(Evaluate&& evaluate) {
    const Stopwatch watch;
    const DualityGap gap = std::forward<Evaluate>(evaluate)();
    seconds += watch.seconds();
    ++evaluations;
    return gap;
  }
  void record_into(SolverInfo& info) const noexcept {
    info.gap_evaluations = evaluations;
    info.gap_seconds = seconds;
  }
};

namespace detail {

/// Whether (G1)'s Σ_j dist(G_j, λB°)² can take G row by row (`streamed_penalty_conjugate`): X
/// column-major, so that each row of G gathers from one column, and the samples all local, so
/// that no row has to wait for other processes' sums.
template <class Prob, class Sums>
inline constexpr bool streams_dual_gradient = false;
template <RealScalar Scalar, StorageIndex Index>
inline constexpr bool streams_dual_gradient<Problem<Scalar, Index, Eigen::ColMajor>, LocalSums> = true;

/// The threads of the streamed (G1) on `problem` over K classes: one buffer row of G each.
template <RealScalar Scalar, StorageIndex Index>
int streamed_team(int team, const Problem<Scalar, Index, Eigen::ColMajor>& problem, Eigen::Index K) {
  return team_for_work(team, static_cast<double>(problem.X.eigen().nonZeros()) * static_cast<double>(K));
}

}  // namespace detail

/// Work space of the gap: the scores S, the dual vectors A (n × K), the weighted D̃ and
/// G = XᵀD̃ (d × K), a K-row buffer and per-class sums and scales. Reused between calls: once
/// it has its shapes, an evaluation allocates nothing. With μ > 0 on a column-major X, G is
/// never held (`dual_objective`): G holds one gathered row per thread and D̃ stays empty.
template <RealScalar Scalar>
struct GapWorkspace {
  ClassMatrix<Scalar> S, A, weighted, G;
  ClassVector<Scalar> row;
  Eigen::VectorXd class_sum, class_other;          ///< per-class sums, in double
  ClassVector<Scalar> class_scale, class_scale_other;  ///< per-class factors
  Eigen::VectorXd row_dual;                        ///< R°(G_j) of every row (d)
  Eigen::VectorXd sample_scale;                    ///< φ_i of (G3) (n)
  /// Threads of the products XᵀD̃ (objective.hpp's weight_gradient); a solver sets its own.
  int team = 1;
  /// G = XᵀD̃ by the solver's own product (FISTA keeps X in the other storage order too, so
  /// that CSR data gathers on its threads instead of scattering on one); empty: weight_gradient.
  std::function<void(ClassMatrixRef<Scalar>, ClassMatrix<Scalar>&)> transposed_product;

  /// Sizes every buffer of the evaluations of (1) with `penalty` on `problem` over K classes
  /// (what a solver does once in its setup, after setting `team`, so that its epochs stay
  /// allocation-free); S only when the caller has no scores. `Sums` is the solver's policy
  /// over the samples (sample_sums.hpp).
  template <class Penalty, TrainingProblem Prob, class Sums = LocalSums>
  void reserve(const Penalty& penalty, const Prob& problem, Eigen::Index K, bool with_scores, const Sums& = {}) {
    const auto n = static_cast<Eigen::Index>(problem.n_samples());
    const auto d = static_cast<Eigen::Index>(problem.n_features());
    if (with_scores) detail::resize_advised(S, n, K);
    detail::resize_advised(A, n, K);
    bool streamed = false;
    if constexpr (detail::streams_dual_gradient<Prob, Sums>) {
      streamed = penalty.mu > 0;
      if (streamed) G.resize(detail::streamed_team(team, problem, K), K);
    }
    if (!streamed) {
      detail::resize_advised(weighted, n, K);
      detail::resize_advised(G, d, K);
    }
    row_dual.resize(d);
    sample_scale.resize(n);
    row.resize(K);
    class_sum.resize(K);
    class_other.resize(K);
    class_scale.resize(K);
    class_scale_other.resize(K);
  }
};

namespace detail {

/// Σ_i c_i a_i over the samples that carry a dual vector (c_i > 0; for shifted-simplex losses
/// also a nonempty class set).
template <class Loss, TrainingProblem Prob>
bool carries_dual(const Prob& problem, ProblemIndex<Prob> i) {
  using Scalar = ProblemScalar<Prob>;
  if (!(problem.weight(i) > Scalar(0))) return false;
  if constexpr (Loss::dual_domain == DualDomain::shifted_simplex)
    return !problem.y[static_cast<std::size_t>(i)].empty();
  return true;
}

/// Makes A satisfy Σ_i c_i a_i = 0 inside dom ℓ* (the three rules of the file comment); the
/// sums over the samples completed by `sums` (sample_sums.hpp).
template <class Loss, TrainingProblem Prob, class Sums = LocalSums>
void correct_for_intercept(const Prob& problem, ClassMatrix<ProblemScalar<Prob>>& A,
                           GapWorkspace<ProblemScalar<Prob>>& work, const Sums& sums = {}) {
  using Scalar = ProblemScalar<Prob>;
  using Index = ProblemIndex<Prob>;
  const Index n = problem.n_samples();
  const Eigen::Index K = A.cols();
  Eigen::VectorXd& sum = work.class_sum;  // ḡ = Σ c_i a_i
  sum.setZero(K);
  double C = 0.0;                                  // Σ c_i
  for (Index i = 0; i < n; ++i) {
    if (!carries_dual<Loss>(problem, i)) continue;
    const double c = static_cast<double>(problem.weight(i));
    sum += c * A.row(i).transpose().template cast<double>();
    C += c;
  }
  sums(std::span<double>(sum.data(), static_cast<std::size_t>(K)));
  sums(C);
  if (C == 0.0) return;
  if constexpr (Loss::dual_domain == DualDomain::whole_space) {
    ClassVector<Scalar>& mean = work.class_scale;
    mean = (sum / C).template cast<Scalar>();
    for (Index i = 0; i < n; ++i)
      if (carries_dual<Loss>(problem, i)) A.row(i) -= mean.transpose();
  } else if constexpr (Loss::dual_domain == DualDomain::signed_per_class) {
    // Per class: the positive entries' weighted mass P and the negative entries' N (sum = P − N).
    Eigen::VectorXd& positive = work.class_other;
    positive.setZero(K);
    for (Index i = 0; i < n; ++i) {
      if (!carries_dual<Loss>(problem, i)) continue;
      const double c = static_cast<double>(problem.weight(i));
      for (Eigen::Index k = 0; k < K; ++k) positive[k] += c * std::max(0.0, static_cast<double>(A(i, k)));
    }
    sums(std::span<double>(positive.data(), static_cast<std::size_t>(K)));
    ClassVector<Scalar>& scale_positive = work.class_scale;
    ClassVector<Scalar>& scale_negative = work.class_scale_other;
    scale_positive.resize(K);
    scale_negative.resize(K);
    for (Eigen::Index k = 0; k < K; ++k) {
      const double P = positive[k], N = P - sum[k];
      scale_positive[k] = static_cast<Scalar>(P > N ? N / P : 1.0);
      scale_negative[k] = static_cast<Scalar>(N > P ? P / N : 1.0);
    }
    for (Index i = 0; i < n; ++i)
      for (Eigen::Index k = 0; k < K; ++k) A(i, k) *= A(i, k) > Scalar(0) ? scale_positive[k] : scale_negative[k];
  } else {
    // Mixing with q − t_i; π = Σ c_i t_i.
    Eigen::VectorXd& pi = work.class_other;
    pi.setZero(K);
    for (Index i = 0; i < n; ++i) {
      if (!carries_dual<Loss>(problem, i)) continue;
      const auto y = problem.y[static_cast<std::size_t>(i)];
      const double share = static_cast<double>(problem.weight(i)) / static_cast<double>(y.size());
      for (const ClassIndex c : y) pi[c] += share;
    }
    sums(std::span<double>(pi.data(), static_cast<std::size_t>(K)));
    double tau = 0.0;
    for (Eigen::Index k = 0; k < K; ++k)
      if (sum[k] > 0.0) tau = std::max(tau, sum[k] / (pi[k] + sum[k]));
    if (tau == 0.0) return;
    ClassVector<Scalar>& q = work.class_scale;
    q.resize(K);
    for (Eigen::Index k = 0; k < K; ++k)
      q[k] = static_cast<Scalar>(std::max(0.0, pi[k] / C - (1.0 - tau) * sum[k] / (tau * C)));
    const auto keep = static_cast<Scalar>(1.0 - tau), mix = static_cast<Scalar>(tau);
    for (Index i = 0; i < n; ++i) {
      if (!carries_dual<Loss>(problem, i)) continue;
      const auto y = problem.y[static_cast<std::size_t>(i)];
      auto a = A.row(i);
      a = keep * a + mix * q.transpose();
      const auto t = static_cast<Scalar>(1.0 / static_cast<double>(y.size()));
      for (const ClassIndex c : y) a[c] -= mix * t;
    }
  }
}

/// G = XᵀD̃ with D̃_i = (c_i/n) a_i into work.G (and D̃ into work.weighted).
template <TrainingProblem Prob, class Sums = LocalSums>
void dual_gradient(const Prob& problem, const ClassMatrix<ProblemScalar<Prob>>& A,
                   GapWorkspace<ProblemScalar<Prob>>& work, const Sums& sums = {}) {
  using Scalar = ProblemScalar<Prob>;
  using Index = ProblemIndex<Prob>;
  const Index n = problem.n_samples();
  const double inv_n = 1.0 / problem.normaliser();
  work.weighted.resize(n, A.cols());
  for (Index i = 0; i < n; ++i) work.weighted.row(i) = (static_cast<Scalar>(inv_n) * problem.weight(i)) * A.row(i);
  if (work.transposed_product) work.transposed_product(work.weighted, work.G);
  else weight_gradient(problem, work.weighted, work.G, work.team);
  sums(std::span<Scalar>(work.G.data(), static_cast<std::size_t>(work.G.size())));
}

/// K zeros in the work space's row, the point (G1) measures each row's violation at.
template <RealScalar Scalar>
std::span<const Scalar> zero_row(GapWorkspace<Scalar>& work, Eigen::Index K) {
  work.row.setZero(K);
  return {work.row.data(), static_cast<std::size_t>(K)};
}

/// (G1)'s dist(G_j, λB°)²: the penalty's violation of row G_j at the zero row.
template <class Penalty, RealScalar Scalar>
double squared_dual_distance(const Penalty& penalty, std::span<const Scalar> zero, std::span<const Scalar> row) {
  const auto distance = static_cast<double>(penalty.violation(zero, row));
  return distance * distance;
}

/// (G1)'s Σ_j dist(G_j, λB°)² with each row G_j = Σ_i x_ij (c_i/n) a_i gathered from column j
/// of X and measured at once, in a buffer row per thread (work.G: team × K), so that neither
/// G (d × K) nor D̃ (n × K) is ever held. The rows go in fixed chunks of features, a chunk's
/// sum on one thread, the chunks added in order (detail::sample_sum): the same bits at every
/// thread count.
template <class Penalty, RealScalar Scalar, StorageIndex Index>
double streamed_penalty_conjugate(const Penalty& penalty, const Problem<Scalar, Index, Eigen::ColMajor>& problem,
                                  const ClassMatrix<Scalar>& A, GapWorkspace<Scalar>& work) {
  const Eigen::Index K = A.cols();
  const auto& X = problem.X.eigen();
  using InnerIterator = typename std::remove_cvref_t<decltype(X)>::InnerIterator;
  const double inv_n = 1.0 / problem.normaliser();
  const auto zero = zero_row(work, K);
  const int team = streamed_team(work.team, problem, K);
  work.G.resize(team, K);  // allocates only when not reserved
  return sample_sum(team, static_cast<std::size_t>(X.outerSize()), [&](std::size_t j) {
    // A loop run inline (one thread or one chunk) may sit inside another team's region.
    const Eigen::Index slot = std::min(thread_index(), team - 1);
    auto g = work.G.row(slot);
    g.setZero();
    for (InnerIterator it(X, static_cast<Eigen::Index>(j)); it; ++it) {
      const double weight = static_cast<double>(it.value()) * inv_n * static_cast<double>(problem.weight(it.index()));
      g += static_cast<Scalar>(weight) * A.row(it.index());
    }
    return squared_dual_distance(penalty, zero, const_row_span(work.G, slot));
  });
}

/// After the per-sample rescaling A ← φ ⊙ A (G3): G += Xᵀ((φ − 1) ⊙ D̃) and D̃ ← φ ⊙ D̃ over the
/// samples with φ_i < 1, a pass over X's indices and K multiply-adds per entry of a moved
/// sample, where dual_gradient makes K per entry of X. CSC X gathers each row of G on `team`
/// threads split over the features (as weight_gradient); CSR X scatters the moved samples' rows.
template <RealScalar Scalar, StorageIndex Index, int Order>
void update_dual_gradient(const Problem<Scalar, Index, Order>& problem, GapWorkspace<Scalar>& work, double moved) {
  const auto& X = problem.X.eigen();
  using InnerIterator = typename std::remove_cvref_t<decltype(X)>::InnerIterator;
  const Eigen::VectorXd& phi = work.sample_scale;
  const auto change = [&](Eigen::Index i) { return static_cast<Scalar>(phi[i] - 1.0); };
  if constexpr (Order == Eigen::ColMajor) {
    const double work_estimate = static_cast<double>(X.nonZeros()) * (1.0 + moved * static_cast<double>(work.G.cols()));
    split_rows(work.team, X.outerSize(), work_estimate, [&](Eigen::Index first, Eigen::Index count) {
      for (Eigen::Index j = first; j < first + count; ++j)
        for (InnerIterator it(X, j); it; ++it)
          if (phi[it.index()] < 1.0) work.G.row(j) += (it.value() * change(it.index())) * work.weighted.row(it.index());
    });
  } else {
    for (Eigen::Index i = 0; i < X.outerSize(); ++i)
      if (phi[i] < 1.0)
        for (InnerIterator it(X, i); it; ++it) work.G.row(it.index()) += (it.value() * change(i)) * work.weighted.row(i);
  }
  for (Eigen::Index i = 0; i < phi.size(); ++i)
    if (phi[i] < 1.0) work.weighted.row(i) *= static_cast<Scalar>(phi[i]);
}

/// update_dual_gradient for a dense X: a rank-one update of G per moved sample.
template <RealScalar Scalar, int Order>
void update_dual_gradient(const DenseProblem<Scalar, Order>& problem, GapWorkspace<Scalar>& work, double /*moved*/) {
  const Eigen::VectorXd& phi = work.sample_scale;
  for (Eigen::Index i = 0; i < phi.size(); ++i) {
    if (!(phi[i] < 1.0)) continue;
    work.G.noalias() += problem.X.row(i).transpose() * (static_cast<Scalar>(phi[i] - 1.0) * work.weighted.row(i));
    work.weighted.row(i) *= static_cast<Scalar>(phi[i]);
  }
}

/// θ of (G2) into work.class_sum (per class, all equal unless the problem separates over
/// classes), and R°(G_j) of every row into work.row_dual.
template <class Loss, class Penalty, RealScalar Scalar>
void rescaling(const Penalty& penalty, GapWorkspace<Scalar>& work) {
  const Eigen::Index K = work.G.cols();
  // When both the loss's dual domain and the penalty's dual constraint separate over classes
  // (one-vs-rest or least squares with L1 or no penalty: |G_jk| ≤ λ entry by entry, dom ℓ* a
  // product over classes), each class is rescaled by its own θ_k = min(1, λ / max_j R°(G_jk)):
  // one slow class no longer holds back the others.
  constexpr bool per_class = EntrywisePenalty<Penalty, Scalar> &&
                             (Loss::dual_domain == DualDomain::signed_per_class ||
                              Loss::dual_domain == DualDomain::whole_space);
  Eigen::VectorXd& dual_norm = work.class_other;
  dual_norm.setZero(K);
  work.row_dual.resize(work.G.rows());
  for (Eigen::Index j = 0; j < work.G.rows(); ++j) {
    const auto row = detail::const_row_span(work.G, j);
    work.row_dual[j] = static_cast<double>(penalty.dual_norm(row));
    if constexpr (per_class) {
      for (Eigen::Index k = 0; k < K; ++k)
        dual_norm[k] = std::max(dual_norm[k], static_cast<double>(penalty.dual_norm(row.subspan(k, 1))));
    } else {
      dual_norm[0] = std::max(dual_norm[0], work.row_dual[j]);
    }
  }
  if constexpr (!per_class) dual_norm.setConstant(dual_norm[0]);
  const double lambda = static_cast<double>(penalty.lambda);
  Eigen::VectorXd& theta = work.class_sum;
  theta.setOnes(K);
  for (Eigen::Index k = 0; k < K; ++k)
    if (dual_norm[k] > lambda) theta[k] = std::isinf(dual_norm[k]) ? 0.0 : lambda / dual_norm[k];
}

/// −(1/n) Σ_i c_i ℓ*(θ ⊙ a_i, y_i), θ = work.class_sum.
template <class Loss, TrainingProblem Prob, class Sums = LocalSums>
double conjugate_part(const Loss& loss, const Prob& problem, const ClassMatrix<ProblemScalar<Prob>>& A,
                      GapWorkspace<ProblemScalar<Prob>>& work, const Sums& sums = {}) {
  using Scalar = ProblemScalar<Prob>;
  using Index = ProblemIndex<Prob>;
  const Eigen::Index K = A.cols();
  ClassVector<Scalar>& theta = work.class_scale;
  theta = work.class_sum.template cast<Scalar>();
  const bool scaled = (theta.array() < Scalar(1)).any();
  double conjugates = 0.0;
  for (Index i = 0; i < problem.n_samples(); ++i) {
    const Scalar c = problem.weight(i);
    if (c == Scalar(0)) continue;
    std::span<const Scalar> a = detail::const_row_span(A, i);
    if (scaled) {
      work.row = theta.cwiseProduct(A.row(i).transpose());
      a = std::span<const Scalar>(work.row.data(), static_cast<std::size_t>(K));
    }
    conjugates += static_cast<double>(c) * loss.conjugate(a, problem.y[static_cast<std::size_t>(i)]);
  }
  sums(conjugates);
  return -conjugates / problem.normaliser();
}

/// The factors φ_i of (G3) into work.sample_scale from R°(G_j) = work.row_dual: the
/// smallest λ / R°(G_j) over the rows j with x_ij ≠ 0 and λ < R°(G_j) < ∞ (1 when there is
/// none), so that each violating row alone would be scaled back onto its constraint. Returns
/// the number of samples with φ_i < 1.
template <RealScalar Scalar, StorageIndex Index, int Order>
Eigen::Index sample_factors(const Problem<Scalar, Index, Order>& problem, double lambda, GapWorkspace<Scalar>& work) {
  const auto factor = [&](Eigen::Index j) {
    const double dual_norm = work.row_dual[j];
    return dual_norm > lambda && std::isfinite(dual_norm) ? lambda / dual_norm : 1.0;
  };
  work.sample_scale.setOnes(problem.n_samples());
  for (Index outer = 0; outer < problem.X.outer_size(); ++outer) {
    if constexpr (Order == Eigen::ColMajor) {
      const double f = factor(outer);
      if (f == 1.0) continue;
      for (const auto [i, x] : problem.X.outer(outer))
        if (x != Scalar(0)) work.sample_scale[i] = std::min(work.sample_scale[i], f);
    } else {
      for (const auto [j, x] : problem.X.outer(outer))
        if (x != Scalar(0)) work.sample_scale[outer] = std::min(work.sample_scale[outer], factor(j));
    }
  }
  return (work.sample_scale.array() < 1.0).count();
}

/// The factors φ_i of (G3) for a dense X: each sample's smallest factor over its nonzero
/// features.
template <RealScalar Scalar, int Order>
Eigen::Index sample_factors(const DenseProblem<Scalar, Order>& problem, double lambda, GapWorkspace<Scalar>& work) {
  const Eigen::Index n = problem.n_samples();
  work.sample_scale.setOnes(n);
  for (Eigen::Index j = 0; j < problem.n_features(); ++j) {
    const double dual_norm = work.row_dual[j];
    if (!(dual_norm > lambda && std::isfinite(dual_norm))) continue;
    const double f = lambda / dual_norm;
    for (Eigen::Index i = 0; i < n; ++i)
      if (problem.X(i, j) != Scalar(0)) work.sample_scale[i] = std::min(work.sample_scale[i], f);
  }
  return (work.sample_scale.array() < 1.0).count();
}

}  // namespace detail

/// D(A) of (1) at per-sample dual vectors A (n × K, row i = a_i, unweighted), which must
/// satisfy the intercept's constraint when `fit_intercept`. Applies (G1), or with μ = 0 the
/// rescaling (G2) and then, while rows still violate, the per-sample rescaling
///
///     a_i ← φ_i a_i,   φ_i = min(1, min_{j: x_ij ≠ 0} λ / R°(G_j))                          (G3)
///
/// (followed by the intercept's correction and (G2) again): a row of a rare feature that
/// violates its constraint shrinks only the few samples it touches instead of every a_i,
/// which is what makes the certificate of wide data (d ≫ n, many rare features) tight.
/// Every candidate is in dom ℓ* (0 is, and dom ℓ* is convex) and made feasible, so the
/// largest of their D is returned. A is overwritten by the last candidate. Over a problem split
/// by samples, `sums` completes the sums over the samples (sample_sums.hpp).
template <class Loss, class Penalty, TrainingProblem Prob, class Sums = LocalSums>
  requires ConjugateLoss<Loss, ProblemScalar<Prob>> && sparsemc::Penalty<Penalty, ProblemScalar<Prob>>
double dual_objective(const Loss& loss, const Penalty& penalty, const Prob& problem,
                      ClassMatrix<ProblemScalar<Prob>>& A, bool fit_intercept, GapWorkspace<ProblemScalar<Prob>>& work, const Sums& sums = {}) {
  using Scalar = ProblemScalar<Prob>;
  const double mu = static_cast<double>(penalty.mu);
  if (mu > 0.0) {  // (G1): dist(G_j, λB°) is the penalty's violation at a zero row.
    double penalty_conjugate = 0.0;
    if constexpr (detail::streams_dual_gradient<Prob, Sums>) {
      penalty_conjugate = detail::streamed_penalty_conjugate(penalty, problem, A, work);
    } else {
      detail::dual_gradient(problem, A, work, sums);
      const auto zero = detail::zero_row(work, A.cols());
      for (Eigen::Index j = 0; j < work.G.rows(); ++j)
        penalty_conjugate += detail::squared_dual_distance(penalty, zero, detail::const_row_span(work.G, j));
    }
    work.class_sum.setOnes(A.cols());
    return detail::conjugate_part(loss, problem, A, work, sums) - penalty_conjugate / (2.0 * mu);
  }
  detail::dual_gradient(problem, A, work, sums);
  detail::rescaling<Loss>(penalty, work);
  double best = detail::conjugate_part(loss, problem, A, work, sums);
  const double lambda = static_cast<double>(penalty.lambda);
  for (int round = 0; round < per_sample_rounds; ++round) {
    const Eigen::Index moved_samples = detail::sample_factors(problem, lambda, work);
    if (!sums.any(moved_samples > 0)) break;
    A.array().colwise() *= work.sample_scale.template cast<Scalar>().array();
    // Few moved samples update G, unless the intercept's correction moves them all or G holds
    // the sum over several processes' samples.
    const double moved = static_cast<double>(moved_samples) / static_cast<double>(std::max<Eigen::Index>(1, A.rows()));
    if (std::same_as<Sums, LocalSums> && !fit_intercept && moved <= update_share) {
      detail::update_dual_gradient(problem, work, moved);
    } else {
      if (fit_intercept) detail::correct_for_intercept<Loss>(problem, A, work, sums);
      detail::dual_gradient(problem, A, work, sums);
    }
    detail::rescaling<Loss>(penalty, work);
    const double raised = detail::conjugate_part(loss, problem, A, work, sums);
    if (!(raised > best)) break;  // a round that raises nothing ends them
    best = raised;
  }
  return best;
}

namespace detail {

/// Writes the candidate a_i ∈ ∂ℓ(s_i) of every sample into A; returns (1/n) Σ_i c_i ℓ(s_i).
template <class Loss, TrainingProblem Prob, class Sums = LocalSums>
double gradient_candidate(const Loss& loss, const Prob& problem, ClassMatrixRef<ProblemScalar<Prob>> S,
                          ClassMatrix<ProblemScalar<Prob>>& A, const Sums& sums = {}) {
  using Scalar = ProblemScalar<Prob>;
  using Index = ProblemIndex<Prob>;
  const Index n = problem.n_samples();
  A.resize(n, S.cols());
  double loss_sum = 0.0;
  for (Index i = 0; i < n; ++i) {
    const Scalar c = problem.weight(i);
    const auto s = const_row_span(S, i);
    const auto a = row_span(A, i);
    const ClassSet y = problem.y[static_cast<std::size_t>(i)];
    Scalar value;
    if constexpr (SmoothLoss<Loss, Scalar>) value = loss.gradient(s, y, a);
    else value = loss.subgradient(s, y, a);
    if (c != Scalar(0)) loss_sum += static_cast<double>(c) * static_cast<double>(value);
  }
  sums(loss_sum);
  return loss_sum / problem.normaliser();
}

}  // namespace detail

/// The gap at scores S = XW + 1bᵀ that the caller has (a solver's cached scores), with the
/// penalty part Σ_j P(W_j:) of F; the candidate a_i = ∇ℓ(s_i) (or a subgradient), made
/// feasible for the intercept when `fit_intercept`. Over a problem split by samples (S the
/// part's scores), `sums` completes the sums over the samples: every process gets the gap of
/// the whole.
template <class Loss, class Penalty, TrainingProblem Prob, class Sums = LocalSums>
  requires ConjugateLoss<Loss, ProblemScalar<Prob>> && sparsemc::Penalty<Penalty, ProblemScalar<Prob>>
DualityGap duality_gap_at_scores(const Loss& loss, const Penalty& penalty, const Prob& problem,
                                 ClassMatrixRef<ProblemScalar<Prob>> S, double penalty_part, bool fit_intercept,
                                 GapWorkspace<ProblemScalar<Prob>>& work, const Sums& sums = {}) {
  DualityGap out;
  out.primal = detail::gradient_candidate(loss, problem, S, work.A, sums) + penalty_part;
  if (fit_intercept) detail::correct_for_intercept<Loss>(problem, work.A, work, sums);
  out.dual = dual_objective(loss, penalty, problem, work.A, fit_intercept, work, sums);
  return out;
}

/// The gap at a dense W and intercept b (empty b = no intercept); over a problem split by
/// samples, `sums` completes the sums over the samples (duality_gap_at_scores).
template <class Loss, class Penalty, TrainingProblem Prob, class Sums = LocalSums>
  requires ConjugateLoss<Loss, ProblemScalar<Prob>> && sparsemc::Penalty<Penalty, ProblemScalar<Prob>>
DualityGap duality_gap(const Loss& loss, const Penalty& penalty, const Prob& problem,
                       ClassMatrixRef<ProblemScalar<Prob>> W, ClassVectorRef<ProblemScalar<Prob>> b, bool fit_intercept,
                       GapWorkspace<ProblemScalar<Prob>>& work, const Sums& sums = {}) {
  compute_scores(problem, W, b, work.S);
  return duality_gap_at_scores(loss, penalty, problem, work.S, penalty_value(penalty, W), fit_intercept, work, sums);
}

/// The gap at a LinearModel (row-sparse W, its intercept if any): what the tools and the tests
/// call on a returned model. `fit_intercept` defaults to whether the model has one.
template <class Loss, class Penalty, TrainingProblem Prob>
  requires ConjugateLoss<Loss, ProblemScalar<Prob>> && sparsemc::Penalty<Penalty, ProblemScalar<Prob>>
DualityGap duality_gap(const Loss& loss, const Penalty& penalty, const Prob& problem,
                       const LinearModel<ProblemScalar<Prob>>& model, GapWorkspace<ProblemScalar<Prob>>& work) {
  compute_scores(problem, model, work.S);
  return duality_gap_at_scores(loss, penalty, problem, work.S, penalty_value(penalty, model), model.has_intercept(),
                               work);
}

}  // namespace sparsemc
