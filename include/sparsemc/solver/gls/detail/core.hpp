#pragma once
/// \file core.hpp
/// Shared machinery of the generalized least squares family (GLS, CalibratedLS, Stagewise):
/// uniform access to sparse (`Problem`) and dense (`DenseProblem`) designs, the second moment
/// Σ̂ = X̃ᵀCX̃/n, its Cholesky factorisation with the ridge, the link evaluated over samples
/// (OpenMP-parallel with SPARSEMC_USE_OPENMP), scores, gradients and the stopping tests;
/// engine.hpp runs the iteration of Algorithm 1 on them. Users include gls.hpp,
/// calibrated_ls.hpp or stagewise.hpp instead.
///
/// A sparse problem may be one part of a problem split by samples among processes
/// (Problem::n_total, solver/sample_sums.hpp): the sums over samples — Σ̂, the loss part, the
/// gradient — then take a `Sums` policy that completes them, and every mean divides by the
/// samples of the whole (`normaliser`). Everything over W is the same on every process.

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <Eigen/SparseCore>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "../../../core/traits.hpp"
#include "../../../data/dense_problem.hpp"
#include "../../../data/problem.hpp"
#include "../../../loss/concepts.hpp"
#include "../../../penalty/none.hpp"
#include "../../duality_gap.hpp"
#include "../../gap_schedule.hpp"
#include "../../objective.hpp"
#include "../../sample_sums.hpp"

#ifdef SPARSEMC_USE_OPENMP
#include <omp.h>
#endif

namespace sparsemc::detail::gls {

/// Column-major square matrix: Σ̂ and its Cholesky factor.
template <class Scalar>
using SquareMatrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;

template <class T>
inline constexpr bool is_dense_problem_v = false;
template <class Scalar>
inline constexpr bool is_dense_problem_v<DenseProblem<Scalar>> = true;

/// The sample costs c_i as a vector (empty problem weights give ones).
template <class Prob>
Eigen::Matrix<typename Prob::scalar_type, Eigen::Dynamic, 1> costs(const Prob& problem) {
  using Scalar = typename Prob::scalar_type;
  Eigen::Matrix<Scalar, Eigen::Dynamic, 1> c(problem.n_samples());
  for (Eigen::Index i = 0; i < c.size(); ++i) c[i] = problem.weight(static_cast<typename Prob::index_type>(i));
  return c;
}

/// Column tiles of `lower_gram_tiled`: 256 columns (a 256 × 256 tile of Σ̂ is 512 KB in double).
inline constexpr Eigen::Index gram_tile = 256;

/// The lower triangle of out (p × p, a matrix or a block) ← AᵀA for a dense A (rows × p; other entries untouched),
/// in tiles of `gram_tile` columns: the diagonal tiles by symmetric rank updates, the others by
/// products, the tiles distributed over the threads with SPARSEMC_USE_OPENMP (Eigen's rank
/// update itself is single-threaded; inside the parallel loop its products run serially).
template <class Derived, class Out>
void lower_gram_tiled(const Eigen::MatrixBase<Derived>& A, Out& out) {
  const Eigen::Index p = A.cols();
  const Eigen::Index blocks = (p + gram_tile - 1) / gram_tile;
  const Eigen::Index tiles = blocks * (blocks + 1) / 2;
#ifdef SPARSEMC_USE_OPENMP
#pragma omp parallel for schedule(dynamic, 1)
#endif
  for (Eigen::Index t = 0; t < tiles; ++t) {
    // Tile t ↦ (block row i ≥ block column j), numbered column of tiles by column of tiles.
    Eigen::Index j = 0, r = t;
    while (r >= blocks - j) r -= blocks - j++;
    const Eigen::Index i = j + r;
    const Eigen::Index i0 = i * gram_tile, j0 = j * gram_tile;
    const Eigen::Index bi = std::min(gram_tile, p - i0), bj = std::min(gram_tile, p - j0);
    if (i == j) {
      out.block(i0, i0, bi, bi).template triangularView<Eigen::Lower>().setZero();
      out.block(i0, i0, bi, bi).template selfadjointView<Eigen::Lower>().rankUpdate(A.middleCols(i0, bi).transpose());
    } else {
      out.block(i0, j0, bi, bj).noalias() = A.middleCols(i0, bi).transpose() * A.middleCols(j0, bj);
    }
  }
}

/// The lower triangle of out ← AᵀA: one rank update on one thread, `lower_gram_tiled` when
/// OpenMP gives more than one thread (same values up to rounding).
template <class Derived, class Out>
void lower_gram(const Eigen::MatrixBase<Derived>& A, Out& out) {
#ifdef SPARSEMC_USE_OPENMP
  if (omp_get_max_threads() > 1) {
    lower_gram_tiled(A, out);
    return;
  }
#endif
  out.template triangularView<Eigen::Lower>().setZero();
  out.template selfadjointView<Eigen::Lower>().rankUpdate(A.transpose());
}

/// Rows of X per chunk of `lower_gram_single` (8 MB of float for d = 2,000).
inline constexpr Eigen::Index gram_single_chunk = 1024;

/// The lower triangle of out ← AᵀA computed in single precision (twice the speed of double:
/// twice the SIMD width and half the traffic): A is converted to float `gram_single_chunk` rows
/// at a time, each chunk's AᵀA formed in float (`lower_gram`) and accumulated in double, so the
/// rounding grows with the chunk's length, not with n (entries accurate to ~10⁻⁷ relative).
template <class Derived, class Out>
void lower_gram_single(const Eigen::MatrixBase<Derived>& A, Out& out,
                       const Eigen::Matrix<typename Derived::Scalar, Eigen::Dynamic, 1>* row_scale = nullptr) {
  const Eigen::Index n = A.rows();
  const Eigen::Index p = A.cols();
  Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> chunk(std::min(gram_single_chunk, n), p);
  SquareMatrix<float> part(p, p);
  out.template triangularView<Eigen::Lower>().setZero();
  for (Eigen::Index i = 0; i < n; i += gram_single_chunk) {
    const Eigen::Index b = std::min(gram_single_chunk, n - i);
    if (row_scale != nullptr)
      chunk.topRows(b) = (row_scale->segment(i, b).asDiagonal() * A.middleRows(i, b)).template cast<float>();
    else
      chunk.topRows(b) = A.middleRows(i, b).template cast<float>();
    lower_gram(chunk.topRows(b), part);
    out.template triangularView<Eigen::Lower>() += part.template cast<typename Out::Scalar>();
  }
}

/// Σ̂ = X̃ᵀCX̃/n ((d + 1) × (d + 1) with an intercept column X̃ = [X 1], else d × d), both
/// triangles filled. Dense X: symmetric rank updates (half the flops of a full product;
/// `lower_gram`: tiles over the OpenMP threads), in single precision accumulated in double when
/// `single_precision` and X is double (`lower_gram_single`; for a preconditioner only); sparse
/// X: the sparse product XᵀCX made dense. Over a part of a split problem, `sums` adds the
/// other parts' Σ̂ (p² numbers, once per factorisation).
template <class Prob, class Sums = LocalSums>
SquareMatrix<typename Prob::scalar_type> second_moment(
    const Prob& problem, bool intercept, bool single_precision = false,
    const Eigen::Matrix<typename Prob::scalar_type, Eigen::Dynamic, 1>* row_weights = nullptr,
    const Sums& sums = {}) {
  using Scalar = typename Prob::scalar_type;
  const Eigen::Index d = problem.n_features();
  const Eigen::Index p = d + (intercept ? 1 : 0);
  const Scalar inv_n = Scalar(1) / static_cast<Scalar>(problem.normaliser());
  auto c = costs(problem);
  if (row_weights != nullptr) c.array() *= row_weights->array();
  const bool weighted = !problem.sample_weights.empty() || row_weights != nullptr;
  const auto& X = design(problem);
  SquareMatrix<Scalar> sigma(p, p);
  if constexpr (is_dense_problem_v<Prob>) {
    auto top = sigma.topLeftCorner(d, d);
    if (single_precision && !std::is_same_v<Scalar, float>) {  // rows scaled by √c_i chunk by chunk
      const Eigen::Matrix<Scalar, Eigen::Dynamic, 1> root = weighted ? c.cwiseSqrt() : Eigen::Matrix<Scalar, Eigen::Dynamic, 1>();
      lower_gram_single(X, top, weighted ? &root : nullptr);
    } else if (!weighted) {
      lower_gram(X, top);
    } else {
      const Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> scaled = c.cwiseSqrt().asDiagonal() * X;
      lower_gram(scaled, top);
    }
    top.template triangularView<Eigen::Lower>() *= inv_n;
    top.template triangularView<Eigen::StrictlyUpper>() = top.transpose();
  } else {
    using Index = typename Prob::index_type;
    const Eigen::SparseMatrix<Scalar, Eigen::ColMajor, Index> CX = c.asDiagonal() * X;
    const Eigen::SparseMatrix<Scalar, Eigen::ColMajor, Index> XtCX = X.transpose() * CX;
    sigma.topLeftCorner(d, d) = inv_n * XtCX.toDense();
  }
  if (intercept) {
    const Eigen::Matrix<Scalar, Eigen::Dynamic, 1> m = inv_n * (X.transpose() * c);
    sigma.col(d).head(d) = m;
    sigma.row(d).head(d) = m.transpose();
    sigma(d, d) = inv_n * c.sum();
  }
  sums(std::span<Scalar>(sigma.data(), static_cast<std::size_t>(sigma.size())));
  return sigma;
}

/// The Cholesky factor of the preconditioner of Algorithm 1,
///
///     P = L Σ̂ + μ I_d (+ 0 on the intercept) + δ I,   δ = gram_ridge · tr(LΣ̂ + μI)/p,
///
/// computed in place (only the lower triangle is overwritten: Σ̂'s upper triangle and a saved
/// diagonal restore it if the factorisation fails, and δ grows ×100 — at least to 10ε of the
/// mean diagonal — up to 12 times). δ > 0 keeps P positive definite when Σ̂ is singular
/// (d > n, duplicated features) without visibly changing a well-posed problem.
template <class Scalar>
struct Preconditioner {
  SquareMatrix<Scalar> factor;  ///< lower triangle: the Cholesky factor of P
  double ridge = 0.0;           ///< δ actually added

  /// Z ← P⁻¹ Z (two triangular solves, K right-hand sides).
  template <class Rhs>
  void solve_in_place(Rhs& Z) const {
    factor.template triangularView<Eigen::Lower>().solveInPlace(Z);
    factor.template triangularView<Eigen::Lower>().adjoint().solveInPlace(Z);
  }
};

/// The ridge schedule of `factorise`: δ starts at gram_ridge times the mean diagonal and grows
/// ×`ridge_growth` after each failed factorisation, at least to `ridge_floor` ε times the mean
/// diagonal (the size of the rounding in LLᵀ), for `ridge_attempts` = 1 + 12 attempts: from the
/// default 10⁻¹⁰ that reaches 10¹⁴ times the mean diagonal, where only non-finite data fails.
inline constexpr int ridge_attempts = 13;
inline constexpr double ridge_growth = 100.0;
inline constexpr double ridge_floor = 10.0;

template <class Scalar>
Preconditioner<Scalar> factorise(SquareMatrix<Scalar> sigma, double L, double mu, Eigen::Index d, double gram_ridge) {
  const Eigen::Index p = sigma.rows();
  sigma *= static_cast<Scalar>(L);
  sigma.diagonal().head(d).array() += static_cast<Scalar>(mu);
  const Eigen::Matrix<Scalar, Eigen::Dynamic, 1> diagonal = sigma.diagonal();
  const double mean = p > 0 ? std::max(static_cast<double>(diagonal.sum()) / static_cast<double>(p), 0.0) : 0.0;
  const double scale = mean > 0.0 ? mean : 1.0;
  const double eps = static_cast<double>(std::numeric_limits<Scalar>::epsilon());
  double delta = gram_ridge * scale;
  for (int attempt = 0; attempt < ridge_attempts; ++attempt) {
    sigma.diagonal() = diagonal.array() + static_cast<Scalar>(delta);
    Eigen::LLT<Eigen::Ref<SquareMatrix<Scalar>>, Eigen::Lower> llt(sigma);
    if (llt.info() == Eigen::Success) return {std::move(sigma), delta};
    sigma.template triangularView<Eigen::StrictlyLower>() = sigma.transpose();  // restore from the upper triangle
    delta = std::max(delta * ridge_growth, ridge_floor * eps * scale);
  }
  throw std::runtime_error("GLS: the preconditioner L·Σ̂ + μI is not positive definite even with a ridge of " +
                           std::to_string(delta) + " (non-finite data?)");
}

/// Link residual of sample i: D_i = (c_i/n)∇ℓ(s_i, y_i); returns c_i ℓ(s_i, y_i) (0 when c_i = 0).
template <class Loss, class Prob, class Scalar>
double link_residual_row(const Loss& loss, const Prob& problem, const ClassMatrix<Scalar>& S, ClassMatrix<Scalar>& D,
                         Eigen::Index i) {
  const Scalar c = problem.weight(static_cast<typename Prob::index_type>(i));
  if (c == Scalar(0)) {
    D.row(i).setZero();
    return 0.0;
  }
  const Scalar value =
      loss.gradient(detail::const_row_span(S, i), problem.y[static_cast<std::size_t>(i)], detail::row_span(D, i));
  D.row(i) *= c / static_cast<Scalar>(problem.normaliser());
  return static_cast<double>(c) * static_cast<double>(value);
}

/// Link residuals for every sample: D_i = (c_i/n)(g(s_i) − y_i) = (c_i/n)∇ℓ(s_i, y_i) (n × K);
/// returns the loss part (1/n) Σ_i c_i ℓ(s_i, y_i), its sum completed by `sums`. Parallel over
/// fixed chunks of samples (objective.hpp's sample_sum): the same sum on any number of threads.
template <class Loss, class Prob, class Scalar, class Sums = LocalSums>
double link_residual(const Loss& loss, const Prob& problem, const ClassMatrix<Scalar>& S, ClassMatrix<Scalar>& D,
                     const Sums& sums = {}) {
  const auto n = static_cast<std::size_t>(problem.n_samples());
  double sum = sample_sum(available_threads(), n, [&](std::size_t i) {
    return link_residual_row(loss, problem, S, D, static_cast<Eigen::Index>(i));
  });
  sums(sum);
  return sum / problem.normaliser();
}

/// S = X W_top (+ 1 W_{d:} when W has the intercept row) (+ offset when not empty).
template <class Prob, class Scalar>
void scores(const Prob& problem, const ClassMatrix<Scalar>& W, const ClassMatrix<Scalar>& offset,
            ClassMatrix<Scalar>& S) {
  const Eigen::Index d = problem.n_features();
  S.noalias() = design(problem) * W.topRows(d);
  if (W.rows() > d) S.rowwise() += W.row(d);
  if (offset.size() > 0) S += offset;
}

/// ∇F = [XᵀD + μW_top; Dᵀ1] (the second block only with the intercept row), the sums over
/// samples XᵀD and Dᵀ1 completed by `sums` (one reduction of p × K numbers).
template <class Prob, class Scalar, class Sums = LocalSums>
void gradient(const Prob& problem, const ClassMatrix<Scalar>& D, const ClassMatrix<Scalar>& W, double mu,
              ClassMatrix<Scalar>& G, const Sums& sums = {}) {
  const Eigen::Index d = problem.n_features();
  G.topRows(d).noalias() = design(problem).transpose() * D;
  if (W.rows() > d) G.row(d) = D.colwise().sum();
  sums(std::span<Scalar>(G.data(), static_cast<std::size_t>(G.size())));
  G.topRows(d) += static_cast<Scalar>(mu) * W.topRows(d);
}

/// Dense X only: the trial point W + Δ of a step in one pass over the rows of X, in chunks small
/// enough to stay in cache: dS = X̃Δ, S_try = S + dS, the link residuals D_try at S_try and
/// G_try = [XᵀD_try; D_tryᵀ1] (the gradient at W + Δ without the ridge term). Separately these
/// are two passes over X (XΔ, then XᵀD); X is far larger than the caches, so the products are
/// bound by memory traffic and one pass saves about a third of an iteration's time. Returns the
/// loss part (1/n) Σ_i c_i ℓ(s_try_i, y_i).
/// Rows per chunk of `fused_trial`: about `fused_chunk_bytes` of X (measured on 8000 × 4000:
/// 16–256 rows all beat two full products), clamped to [fused_chunk_min_rows, fused_chunk_max_rows].
inline constexpr Eigen::Index fused_chunk_bytes = Eigen::Index{1} << 21;
inline constexpr Eigen::Index fused_chunk_min_rows = 8;
inline constexpr Eigen::Index fused_chunk_max_rows = 512;

template <class Loss, class Scalar>
double fused_trial(const Loss& loss, const DenseProblem<Scalar>& problem, const ClassMatrix<Scalar>& S,
                   const ClassMatrix<Scalar>& Delta, ClassMatrix<Scalar>& dS, ClassMatrix<Scalar>& S_try,
                   ClassMatrix<Scalar>& D_try, ClassMatrix<Scalar>& G_try) {
  const Eigen::Index n = problem.n_samples();
  const Eigen::Index d = problem.n_features();
  const auto& X = problem.X;
  const Eigen::Index chunk =
      std::clamp<Eigen::Index>(fused_chunk_bytes / std::max<Eigen::Index>(d * Eigen::Index{sizeof(Scalar)}, 1),
                               fused_chunk_min_rows, fused_chunk_max_rows);
  G_try.setZero();
  double sum = 0.0;
  for (Eigen::Index i = 0; i < n; i += chunk) {
    const Eigen::Index b = std::min(chunk, n - i);
    const auto rows = X.middleRows(i, b);
    dS.middleRows(i, b).noalias() = rows * Delta.topRows(d);
    if (Delta.rows() > d) dS.middleRows(i, b).rowwise() += Delta.row(d);
    S_try.middleRows(i, b) = S.middleRows(i, b) + dS.middleRows(i, b);
    for (Eigen::Index r = i; r < i + b; ++r) sum += link_residual_row(loss, problem, S_try, D_try, r);
    G_try.topRows(d).noalias() += rows.transpose() * D_try.middleRows(i, b);
    if (Delta.rows() > d) G_try.row(d) += D_try.middleRows(i, b).colwise().sum();
  }
  return sum / static_cast<double>(n);
}

/// The duality gap of (1) with ridge μ (NoPenalty) at W (p × K, the intercept in row d when
/// `intercept`) with its exact scores S: solver/duality_gap.hpp's certificate, the candidate
/// a_i = ∇ℓ(s_i) made feasible for the intercept, for a sparse or a dense X; over a part of a
/// split problem its sums are completed by `sums`.
template <class Loss, TrainingProblem Prob, class Sums = LocalSums>
DualityGap duality_gap(const Loss& loss, const Prob& problem, double mu, const ClassMatrix<ProblemScalar<Prob>>& W,
                       const ClassMatrix<ProblemScalar<Prob>>& S, bool intercept,
                       GapWorkspace<ProblemScalar<Prob>>& work, const Sums& sums = {}) {
  NoPenalty ridge;
  ridge.mu = mu;
  const double ridge_part = 0.5 * mu * static_cast<double>(W.topRows(problem.n_features()).squaredNorm());
  return duality_gap_at_scores(loss, ridge, problem, S, ridge_part, intercept, work, sums);
}

/// When the gap of (1) is due, for the GLS runs: `GapSchedule` driven by the estimate
/// ‖∇_W F‖²/(2μ|F|), which is the relative gap itself without an intercept (Fenchel–Young:
/// at the candidate a_i = ∇ℓ(s_i), F − D = ‖∇_W L + μW‖²/(2μ)) and a lower estimate with one;
/// so the trigger fires when the certificate can succeed, and the schedule's doubling
/// interval bounds the evaluations of a long run by O(log epochs).
template <class Loss, class Prob, class Scalar, class Sums = LocalSums>
class GapCertifier {
 public:
  GapCertifier(const Loss& loss, const Prob& problem, double mu, bool intercept, double tol, const Sums& sums = {})
      : loss_(loss), problem_(problem), mu_(mu), intercept_(intercept), tol_(tol), sums_(sums), schedule_(tol) {}

  /// Whether W (scores S, gradient G of F with the ridge, objective F) is certified at `epoch`;
  /// evaluates the gap when due or when `force`d, and stores its relative value in `relative`
  /// (NaN when not evaluated).
  bool operator()(std::int64_t epoch, double /*measure*/, bool force, const ClassMatrix<Scalar>& W,
                  const ClassMatrix<Scalar>& S, const ClassMatrix<Scalar>& G, double F, double& relative) {
    relative = std::numeric_limits<double>::quiet_NaN();
    const Eigen::Index d = problem_.n_features();
    const double estimate =
        mu_ > 0.0 ? static_cast<double>(G.topRows(d).squaredNorm()) / (2.0 * mu_ * std::max(std::abs(F), relative_gap_floor))
                  : std::numeric_limits<double>::infinity();
    if (!force && !schedule_.due(epoch, estimate)) return false;
    gap_ = gap_spent_.timed([&] { return duality_gap(loss_, problem_, mu_, W, S, intercept_, work_, sums_); });
    epoch_ = epoch;
    relative = gap_.relative();
    schedule_.evaluated(epoch, estimate, relative);
    return relative <= tol_;
  }

  /// The last certificate and the epoch of the W it is for (−1: none yet).
  [[nodiscard]] const DualityGap& last() const noexcept { return gap_; }
  [[nodiscard]] std::int64_t epoch() const noexcept { return epoch_; }
  /// The evaluations and their time (the epilogue's included).
  [[nodiscard]] const GapCost& gap_spent() const noexcept { return gap_spent_; }
  /// The certificate at a W whose scores the caller recomputes (the epilogue).
  DualityGap at(const ClassMatrix<Scalar>& W, const ClassMatrix<Scalar>& S) {
    return gap_spent_.timed([&] { return duality_gap(loss_, problem_, mu_, W, S, intercept_, work_, sums_); });
  }

 private:
  const Loss& loss_;
  const Prob& problem_;
  double mu_;
  bool intercept_;
  double tol_;
  Sums sums_;
  GapSchedule schedule_;
  GapWorkspace<Scalar> work_;
  DualityGap gap_;
  std::int64_t epoch_ = -1;
  GapCost gap_spent_;
};

/// The stop test of a Stagewise block (its own problem, not (1)): the relative gradient norm.
struct GradientNormTest {
  double tol;
  template <class Scalar>
  bool operator()(std::int64_t, double measure, bool, const ClassMatrix<Scalar>&, const ClassMatrix<Scalar>&,
                  const ClassMatrix<Scalar>&, double, double& relative) const {
    relative = std::numeric_limits<double>::quiet_NaN();
    return measure <= tol;
  }
};

}  // namespace sparsemc::detail::gls
