#pragma once
/// \file core.hpp
/// Shared machinery of the generalized least squares family (GLS, CalibratedLS, Stagewise):
/// uniform access to sparse (`Problem`) and dense (`DenseProblem`) designs, the second moment
/// Σ̂ = X̃ᵀCX̃/n, its Cholesky factorisation with the ridge, the link evaluated over samples
/// (OpenMP-parallel with SPARSEMC_USE_OPENMP), and the iteration of Algorithm 1 itself.
/// Users include gls.hpp, calibrated_ls.hpp or stagewise.hpp instead.

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <Eigen/SparseCore>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "../../../core/callbacks.hpp"
#include "../../../core/status.hpp"
#include "../../../core/stopwatch.hpp"
#include "../../../core/traits.hpp"
#include "../../../data/dense_problem.hpp"
#include "../../../data/problem.hpp"
#include "../../../loss/concepts.hpp"
#include "../../../penalty/none.hpp"
#include "../../duality_gap.hpp"
#include "../../objective.hpp"

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

/// X as an Eigen expression usable in `X * W` and `X.transpose() * D` (sparse map or dense map).
template <class Scalar, class Index, int Order>
auto design(const Problem<Scalar, Index, Order>& problem) {
  return problem.X.eigen();
}
template <class Scalar>
const DenseRowView<Scalar>& design(const DenseProblem<Scalar>& problem) {
  return problem.X;
}

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
/// X: the sparse product XᵀCX made dense.
template <class Prob>
SquareMatrix<typename Prob::scalar_type> second_moment(
    const Prob& problem, bool intercept, bool single_precision = false,
    const Eigen::Matrix<typename Prob::scalar_type, Eigen::Dynamic, 1>* row_weights = nullptr) {
  using Scalar = typename Prob::scalar_type;
  const Eigen::Index n = problem.n_samples();
  const Eigen::Index d = problem.n_features();
  const Eigen::Index p = d + (intercept ? 1 : 0);
  const Scalar inv_n = Scalar(1) / static_cast<Scalar>(n);
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
  for (int attempt = 0; attempt < 13; ++attempt) {
    sigma.diagonal() = diagonal.array() + static_cast<Scalar>(delta);
    Eigen::LLT<Eigen::Ref<SquareMatrix<Scalar>>, Eigen::Lower> llt(sigma);
    if (llt.info() == Eigen::Success) return {std::move(sigma), delta};
    sigma.template triangularView<Eigen::StrictlyLower>() = sigma.transpose();  // restore from the upper triangle
    delta = std::max(delta * 100.0, 10.0 * eps * scale);
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
  D.row(i) *= c / static_cast<Scalar>(problem.n_samples());
  return static_cast<double>(c) * static_cast<double>(value);
}

/// Link residuals for every sample: D_i = (c_i/n)(g(s_i) − y_i) = (c_i/n)∇ℓ(s_i, y_i) (n × K);
/// returns the loss part (1/n) Σ_i c_i ℓ(s_i, y_i). Parallel over samples with OpenMP.
template <class Loss, class Prob, class Scalar>
double link_residual(const Loss& loss, const Prob& problem, const ClassMatrix<Scalar>& S, ClassMatrix<Scalar>& D) {
  const Eigen::Index n = problem.n_samples();
  double sum = 0.0;
#ifdef SPARSEMC_USE_OPENMP
#pragma omp parallel for schedule(static) reduction(+ : sum)
#endif
  for (Eigen::Index i = 0; i < n; ++i) sum += link_residual_row(loss, problem, S, D, i);
  return sum / static_cast<double>(n);
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

/// ∇F = [XᵀD + μW_top; Dᵀ1] (the second block only with the intercept row).
template <class Prob, class Scalar>
void gradient(const Prob& problem, const ClassMatrix<Scalar>& D, const ClassMatrix<Scalar>& W, double mu,
              ClassMatrix<Scalar>& G) {
  const Eigen::Index d = problem.n_features();
  G.topRows(d).noalias() = design(problem).transpose() * D;
  G.topRows(d) += static_cast<Scalar>(mu) * W.topRows(d);
  if (W.rows() > d) G.row(d) = D.colwise().sum();
}

/// Dense X only: the trial point W + Δ of a step in one pass over the rows of X, in chunks small
/// enough to stay in cache: dS = X̃Δ, S_try = S + dS, the link residuals D_try at S_try and
/// G_try = [XᵀD_try; D_tryᵀ1] (the gradient at W + Δ without the ridge term). Separately these
/// are two passes over X (XΔ, then XᵀD); X is far larger than the caches, so the products are
/// bound by memory traffic and one pass saves about a third of an iteration's time. Returns the
/// loss part (1/n) Σ_i c_i ℓ(s_try_i, y_i).
template <class Loss, class Scalar>
double fused_trial(const Loss& loss, const DenseProblem<Scalar>& problem, const ClassMatrix<Scalar>& S,
                   const ClassMatrix<Scalar>& Delta, ClassMatrix<Scalar>& dS, ClassMatrix<Scalar>& S_try,
                   ClassMatrix<Scalar>& D_try, ClassMatrix<Scalar>& G_try) {
  const Eigen::Index n = problem.n_samples();
  const Eigen::Index d = problem.n_features();
  const auto& X = problem.X;
  // About 2 MB of X per chunk (measured on 8000 × 4000: 16–256 rows all beat two full products).
  const Eigen::Index chunk =
      std::clamp<Eigen::Index>((Eigen::Index{1} << 21) / std::max<Eigen::Index>(d * Eigen::Index{sizeof(Scalar)}, 1),
                               8, 512);
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
/// a_i = ∇ℓ(s_i) made feasible for the intercept. Sparse X: `duality_gap_at_scores` itself.
template <class Loss, class Scalar, class Index, int Order>
DualityGap duality_gap(const Loss& loss, const Problem<Scalar, Index, Order>& problem, double mu,
                       const ClassMatrix<Scalar>& W, const ClassMatrix<Scalar>& S, bool intercept,
                       GapWorkspace<Scalar>& work) {
  NoPenalty ridge;
  ridge.mu = mu;
  const double ridge_part = 0.5 * mu * static_cast<double>(W.topRows(problem.n_features()).squaredNorm());
  return duality_gap_at_scores(loss, ridge, problem, S, ridge_part, intercept, work);
}

/// Dense X: the shared certificate on the samples without their features (an n × 0 CSC view:
/// its candidate, intercept correction and conjugates), plus the part of D(A) that needs X,
/// −Ω*(−G(A)) = −‖XᵀD̃‖²/(2μ) (MATH.md (G1) for NoPenalty; with μ = 0 the rescaling (G2)
/// takes θ = 0 unless G(A) = 0, so D = −(1/n) Σ_i c_i ℓ*(0, y_i)). Same value as the sparse
/// overload on the same data (tested).
template <class Loss, class Scalar>
DualityGap duality_gap(const Loss& loss, const DenseProblem<Scalar>& problem, double mu, const ClassMatrix<Scalar>& W,
                       const ClassMatrix<Scalar>& S, bool intercept, GapWorkspace<Scalar>& work) {
  const Eigen::Index n = problem.n_samples();
  const Eigen::Index d = problem.n_features();
  static constexpr std::int64_t no_columns[1] = {0};
  const Problem<Scalar, std::int64_t, Eigen::ColMajor> samples{
      CscView<Scalar, std::int64_t>(static_cast<std::int64_t>(n), 0, no_columns, nullptr, nullptr, false), problem.y,
      problem.sample_weights};
  NoPenalty ridge;
  ridge.mu = mu;
  const double ridge_part = 0.5 * mu * static_cast<double>(W.topRows(d).squaredNorm());
  DualityGap out = duality_gap_at_scores(loss, ridge, samples, S, ridge_part, intercept, work);
  // work.weighted holds D̃ = (c_i/n) a_i of the feasible candidate: G(A) = XᵀD̃.
  work.G.resize(d, S.cols());
  work.G.noalias() = problem.X.transpose() * work.weighted;
  if (mu > 0.0) {
    out.dual -= static_cast<double>(work.G.squaredNorm()) / (2.0 * mu);
  } else if (!work.G.isZero(0)) {
    work.A.setZero();
    out.dual = dual_objective(loss, ridge, samples, work.A, work);
  }
  return out;
}

/// When the gap of (1) is due, for the GLS runs: `GapSchedule` driven by the estimate
/// ‖∇_W F‖²/(2μ|F|), which is the relative gap itself without an intercept (Fenchel–Young:
/// at the candidate a_i = ∇ℓ(s_i), F − D = ‖∇_W L + μW‖²/(2μ)) and a lower estimate with one;
/// so the trigger fires when the certificate can succeed, and the schedule's doubling
/// interval bounds the evaluations of a long run by O(log epochs).
template <class Loss, class Prob, class Scalar>
class GapCertifier {
 public:
  GapCertifier(const Loss& loss, const Prob& problem, double mu, bool intercept, double tol)
      : loss_(loss), problem_(problem), mu_(mu), intercept_(intercept), tol_(tol), schedule_(tol) {}

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
    gap_ = duality_gap(loss_, problem_, mu_, W, S, intercept_, work_);
    epoch_ = epoch;
    relative = gap_.relative();
    const bool certified = relative <= tol_;
    schedule_.evaluated(epoch, estimate, certified);
    ++evaluations_;
    return certified;
  }

  /// The last certificate and the epoch of the W it is for (−1: none yet).
  [[nodiscard]] const DualityGap& last() const noexcept { return gap_; }
  [[nodiscard]] std::int64_t epoch() const noexcept { return epoch_; }
  [[nodiscard]] std::int64_t evaluations() const noexcept { return evaluations_; }
  /// The certificate at a W whose scores the caller recomputes (the epilogue).
  DualityGap at(const ClassMatrix<Scalar>& W, const ClassMatrix<Scalar>& S) {
    return duality_gap(loss_, problem_, mu_, W, S, intercept_, work_);
  }

 private:
  const Loss& loss_;
  const Prob& problem_;
  double mu_;
  bool intercept_;
  double tol_;
  GapSchedule schedule_;
  GapWorkspace<Scalar> work_;
  DualityGap gap_;
  std::int64_t epoch_ = -1;
  std::int64_t evaluations_ = 0;
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

/// Settings of one run of Algorithm 1 (a subset of GLSOptions, shared with Stagewise).
struct RunSettings {
  double tol = 1e-6;
  std::int64_t max_epochs = 1000;
  double time_limit = 0.0;
  bool accelerated = false;
  bool verbose = false;
  int memory = 0;  ///< > 0: the quasi-Newton scheme (run_quasi_newton) with this many pairs
  std::int64_t refresh = 0;  ///< quasi-Newton: rebuild the preconditioner every this many iterations (0: never)
};

/// What one run of Algorithm 1 returns.
struct RunOutcome {
  Status status = Status::max_iter;
  std::int64_t epochs = 0;
  double objective = std::numeric_limits<double>::quiet_NaN();
  double measure = std::numeric_limits<double>::quiet_NaN();
};

/// Algorithm 1 (eq. 6) with ridge μ, optionally with Nesterov momentum, from W (p × K, p = d
/// or d + 1 with the intercept row; updated in place) on the scores X̃W + offset. Converged
/// when `certify(epoch, measure, force, W, S, ∇F, F, relative&)` says so at a point W with its
/// exact gradient (GapCertifier: the duality gap of (1); GradientNormTest: measure ≤ tol), the
/// measure being ‖∇F(W)‖_F/‖∇F(0)‖_F; with momentum, a measure ≤ tol at the extrapolated point
/// moves the next step to W. `on_epoch(report, W)` runs after every step and returns true to
/// stop. See GLS's class comment for the math.
template <class Loss, class Prob, class Scalar, class OnEpoch, class Certify>
RunOutcome run(const Loss& loss, const Prob& problem, const Preconditioner<Scalar>& P, double mu,
               const RunSettings& settings, ClassMatrix<Scalar>& W, const ClassMatrix<Scalar>& offset,
               const Stopwatch& clock, OnEpoch&& on_epoch, Certify&& certify) {
  const Eigen::Index n = problem.n_samples();
  const Eigen::Index d = problem.n_features();
  const Eigen::Index p = W.rows();
  const Eigen::Index K = W.cols();
  ClassMatrix<Scalar> S(n, K), S_prev(n, K), S_Y(n, K), S_next(n, K), D(n, K), D_Y(n, K);
  ClassMatrix<Scalar> W_prev = W, Y(p, K), W_next(p, K), G(p, K);
  SquareMatrix<Scalar> Z(p, K);
  const auto ridge_value = [&](const ClassMatrix<Scalar>& V) {
    return 0.5 * mu * static_cast<double>(V.topRows(d).squaredNorm());
  };

  // ‖∇F(0)‖: the scale of the stopping test, whatever the start.
  const bool cold = W.isZero(0);
  if (offset.size() > 0) S = offset;
  else S.setZero();
  double f = link_residual(loss, problem, S, D);
  {
    ClassMatrix<Scalar> zero = ClassMatrix<Scalar>::Zero(p, K);
    gradient(problem, D, zero, 0.0, G);
  }
  const double reference = static_cast<double>(G.norm());
  const double scale = reference > 0.0 ? reference : 1.0;
  if (!cold) {
    scores(problem, W, offset, S);
    f = link_residual(loss, problem, S, D);
  }
  RunOutcome out;
  double F = f + ridge_value(W);
  if (!std::isfinite(F) || !std::isfinite(reference)) {
    out.status = Status::numerical_issue;
    out.objective = F;
    return out;
  }
  S_prev = S;
  double t = 1.0;
  bool restart = true;  // the first step has no momentum
  while (true) {
    // The point Y of the step: W itself, or W + β(W − W_prev) with its extrapolated scores.
    double beta = 0.0, t_next = 1.0;
    if (settings.accelerated && !restart) {
      t_next = 0.5 * (1.0 + std::sqrt(1.0 + 4.0 * t * t));
      beta = (t - 1.0) / t_next;
    }
    const bool at_W = beta == 0.0;
    if (at_W) {
      gradient(problem, D, W, mu, G);
    } else {
      const auto b = static_cast<Scalar>(beta);
      Y.noalias() = (Scalar(1) + b) * W - b * W_prev;
      S_Y.noalias() = (Scalar(1) + b) * S - b * S_prev;
      link_residual(loss, problem, S_Y, D_Y);
      gradient(problem, D_Y, Y, mu, G);
    }
    const double measure = static_cast<double>(G.norm()) / scale;
    if (!std::isfinite(measure)) {
      out.status = Status::numerical_issue;
      break;
    }
    if (at_W) out.measure = measure;  // exact at the current W
    double relative = 0.0;
    if (at_W && certify(out.epochs, measure, false, W, S, G, F, relative)) {
      out.status = Status::converged;
      break;
    }
    if (out.epochs >= settings.max_epochs) {
      out.status = Status::max_iter;
      break;
    }
    if (!at_W && measure <= settings.tol) {  // confirm at W itself on the next pass
      restart = true;
      continue;
    }
    // The step (6): W_next = Y − P⁻¹∇F(Y), P = LΣ̂ + μI.
    Z = G;
    P.solve_in_place(Z);
    W_next.noalias() = (at_W ? W : Y) - Z;
    scores(problem, W_next, offset, S_next);
    const double f_next = link_residual(loss, problem, S_next, D);
    const double F_next = f_next + ridge_value(W_next);
    ++out.epochs;
    if (!std::isfinite(F_next)) {
      out.status = Status::numerical_issue;
      break;
    }
    restart = !settings.accelerated || F_next > F;  // O'Donoghue–Candès function restart
    t = restart ? 1.0 : t_next;
    std::swap(W_prev, W);
    std::swap(W, W_next);
    std::swap(S_prev, S);
    std::swap(S, S_next);
    F = F_next;
    const EpochReport report{out.epochs, F, measure, -1, clock.seconds()};
    if (settings.verbose) ProgressPrinter{std::cerr}.end_epoch(report);
    if (on_epoch(report, static_cast<const ClassMatrix<Scalar>&>(W))) {
      out.status = Status::stopped_by_callback;
      gradient(problem, D, W, mu, G);
      out.measure = static_cast<double>(G.norm()) / scale;
      break;
    }
    if (settings.time_limit > 0.0 && report.seconds >= settings.time_limit) {
      out.status = Status::time_limit;
      gradient(problem, D, W, mu, G);
      out.measure = static_cast<double>(G.norm()) / scale;
      break;
    }
  }
  out.objective = F;
  return out;
}

/// Algorithm 1's step with a learned metric: L-BFGS (Nocedal & Wright, Alg. 7.4) whose initial
/// inverse Hessian is γ P⁻¹, P = LΣ̂ + μI the preconditioner of (6), γ = ⟨s, y⟩ / ⟨y, P⁻¹y⟩
/// from the newest pair. P removes the ill-conditioning of X (as in Algorithm 1); the pairs
/// and γ learn the softmax's actual curvature, which near the optimum is far below the global
/// bound L (most samples are fitted with probabilities near 0 or 1) — the reason Algorithm 1,
/// accelerated or not, slows down there. The first step is exactly (6).
///
/// Cost per iteration as (6): one X̃Δ and one X̃ᵀD product and one solve with P's factor (for
/// dense X both products in one pass over X when the full step is taken: `fused_trial`) —
/// P⁻¹y_i are kept with the pairs (P⁻¹y = P⁻¹g_new − P⁻¹g_old), so the recursion needs no other
/// solve. Scores are linear in W, so the backtracking (Armijo, sufficient decrease 10⁻⁴, halving)
/// re-evaluates only the link on S + αX̃Δ. A pair with ⟨s, y⟩ ≤ 0 (rounding; F is convex) is
/// skipped; if the direction is not a descent direction the memory is cleared and (6) taken.
/// Stopping as `run` (`certify` at the start and after every step, its relative gap in the
/// report); when even the smallest step fails to lower F (its rounding floor), the gap is
/// evaluated at once: certified → converged, else numerical_issue.
template <class Loss, class Prob, class Scalar, class OnEpoch, class Refresh, class Certify>
RunOutcome run_quasi_newton(const Loss& loss, const Prob& problem, Preconditioner<Scalar>& P, double mu,
                            const RunSettings& settings, ClassMatrix<Scalar>& W, const ClassMatrix<Scalar>& offset,
                            const Stopwatch& clock, OnEpoch&& on_epoch, Refresh&& refresh, Certify&& certify) {
  const Eigen::Index n = problem.n_samples();
  const Eigen::Index d = problem.n_features();
  const Eigen::Index p = W.rows();
  const Eigen::Index K = W.cols();
  const auto m = static_cast<std::size_t>(settings.memory);
  ClassMatrix<Scalar> S(n, K), dS(n, K), S_try(n, K), D(n, K), D_try(n, K);
  ClassMatrix<Scalar> G(p, K), G_prev(p, K), G_try(p, K), H(p, K), H_prev(p, K), R(p, K), Q(p, K), Delta(p, K),
      W_try(p, K);
  // The pairs (s_i, y_i, P⁻¹y_i) in a ring, ρ_i = 1/⟨s_i, y_i⟩.
  std::vector<ClassMatrix<Scalar>> s_hist(m, ClassMatrix<Scalar>(p, K)), y_hist(m, ClassMatrix<Scalar>(p, K)),
      z_hist(m, ClassMatrix<Scalar>(p, K));
  std::vector<double> rho(m), alpha(m);
  std::size_t stored = 0, newest = 0;
  double gamma = 1.0;
  const auto dot = [](const ClassMatrix<Scalar>& A, const ClassMatrix<Scalar>& B) {
    return static_cast<double>((A.array() * B.array()).sum());
  };
  const auto ridge_value = [&](const ClassMatrix<Scalar>& V) {
    return 0.5 * mu * static_cast<double>(V.topRows(d).squaredNorm());
  };
  const auto solve = [&](const ClassMatrix<Scalar>& rhs, ClassMatrix<Scalar>& out) {
    out = rhs;
    P.solve_in_place(out);
  };

  // ‖∇F(0)‖: the scale of the stopping test, whatever the start.
  if (offset.size() > 0) S = offset;
  else S.setZero();
  double f = link_residual(loss, problem, S, D);
  {
    const ClassMatrix<Scalar> zero = ClassMatrix<Scalar>::Zero(p, K);
    gradient(problem, D, zero, 0.0, G);
  }
  const double reference = static_cast<double>(G.norm());
  const double scale = reference > 0.0 ? reference : 1.0;
  if (!W.isZero(0)) {
    scores(problem, W, offset, S);
    f = link_residual(loss, problem, S, D);
  }
  gradient(problem, D, W, mu, G);
  RunOutcome out;
  double F = f + ridge_value(W);
  if (!std::isfinite(F) || !std::isfinite(reference)) {
    out.status = Status::numerical_issue;
    out.objective = F;
    return out;
  }
  solve(G, H);
  out.measure = static_cast<double>(G.norm()) / scale;
  double relative = 0.0;
  if (std::isfinite(out.measure) && certify(out.epochs, out.measure, false, W, S, G, F, relative)) {
    out.status = Status::converged;
    out.objective = F;
    return out;
  }
  while (true) {
    if (!std::isfinite(out.measure)) {
      out.status = Status::numerical_issue;
      break;
    }
    if (out.epochs >= settings.max_epochs) {
      out.status = Status::max_iter;
      break;
    }
    // The two-loop recursion: R = H_k G with H_0 = γ P⁻¹ (P⁻¹G = H, P⁻¹y_i = z_i).
    Q = G;
    R = H;
    for (std::size_t j = 0; j < stored; ++j) {
      const std::size_t i = (newest + m - j) % m;
      alpha[i] = rho[i] * dot(s_hist[i], Q);
      Q -= static_cast<Scalar>(alpha[i]) * y_hist[i];
      R -= static_cast<Scalar>(alpha[i]) * z_hist[i];
    }
    R *= static_cast<Scalar>(gamma);
    for (std::size_t j = stored; j-- > 0;) {
      const std::size_t i = (newest + m - j) % m;
      const double beta = rho[i] * dot(y_hist[i], R);
      R += static_cast<Scalar>(alpha[i] - beta) * s_hist[i];
    }
    double slope = -dot(G, R);
    if (!(slope < 0.0)) {  // not a descent direction (rounding): forget the pairs, take (6)
      stored = 0;
      gamma = 1.0;
      R = H;
      slope = -dot(G, R);
    }
    Delta = -R;
    // The full step first: X̃Δ once (the line search moves along it); with dense X the same
    // pass over X also gives the gradient at W + Δ (`fused`), kept if the full step is taken.
    double step = 1.0, F_try = 0.0;
    bool fused = false;
    W_try = W + Delta;
    if constexpr (is_dense_problem_v<Prob>) {
      F_try = fused_trial(loss, problem, S, Delta, dS, S_try, D_try, G_try) + ridge_value(W_try);
      fused = true;
    } else {
      dS.noalias() = design(problem) * Delta.topRows(d);
      if (p > d) dS.rowwise() += Delta.row(d);
      S_try = S + dS;
      F_try = link_residual(loss, problem, S_try, D_try) + ridge_value(W_try);
    }
    for (int trial = 1; trial < 40 && !(F_try <= F + 1e-4 * step * slope); ++trial) {  // Armijo, halving
      step *= 0.5;
      S_try = S + static_cast<Scalar>(step) * dS;
      W_try = W + static_cast<Scalar>(step) * Delta;
      F_try = link_residual(loss, problem, S_try, D_try) + ridge_value(W_try);
      fused = false;
    }
    ++out.epochs;
    if (!std::isfinite(F_try)) {
      out.status = Status::numerical_issue;
      break;
    }
    if (!(F_try <= F)) {  // no decrease even at the smallest step: F is at its rounding floor
      out.status = certify(out.epochs, out.measure, true, W, S, G, F, relative) ? Status::converged
                                                                                 : Status::numerical_issue;
      break;
    }
    std::swap(W, W_try);
    std::swap(S, S_try);
    std::swap(D, D_try);
    std::swap(G, G_prev);
    std::swap(H, H_prev);
    F = F_try;
    if (fused) {
      std::swap(G, G_try);
      G.topRows(d) += static_cast<Scalar>(mu) * W.topRows(d);
    } else {
      gradient(problem, D, W, mu, G);
    }
    solve(G, H);
    // The new pair: s = W − W_prev = stepΔ, y = G − G_prev, P⁻¹y = H − H_prev.
    if (m > 0) {
      const std::size_t slot = stored == 0 ? newest : (newest + 1) % m;
      ClassMatrix<Scalar>& s_new = s_hist[slot];
      ClassMatrix<Scalar>& y_new = y_hist[slot];
      ClassMatrix<Scalar>& z_new = z_hist[slot];
      s_new = static_cast<Scalar>(step) * Delta;
      y_new = G - G_prev;
      const double sy = dot(s_new, y_new);
      if (sy > 0.0) {
        z_new = H - H_prev;
        const double yz = dot(y_new, z_new);
        rho[slot] = 1.0 / sy;
        if (yz > 0.0) gamma = sy / yz;
        newest = slot;
        stored = std::min(stored + 1, m);
      } else if (stored == m) {
        --stored;  // the slot held the oldest pair, now overwritten
      }
    }
    if (settings.refresh > 0 && out.epochs % settings.refresh == 0) {
      refresh(static_cast<const ClassMatrix<Scalar>&>(D), P);
      solve(G, H);
      for (std::size_t j = 0; j < stored; ++j) {
        const std::size_t i = (newest + m - j) % m;
        solve(y_hist[i], z_hist[i]);
      }
      if (stored > 0) {
        const double yz = dot(y_hist[newest], z_hist[newest]);
        if (yz > 0.0) gamma = 1.0 / (rho[newest] * yz);
      }
    }
    out.measure = static_cast<double>(G.norm()) / scale;
    const bool certified =
        std::isfinite(out.measure) && certify(out.epochs, out.measure, false, W, S, G, F, relative);
    const EpochReport report{out.epochs, F, out.measure, -1, clock.seconds(), relative};
    if (settings.verbose) ProgressPrinter{std::cerr}.end_epoch(report);
    const bool stop = on_epoch(report, static_cast<const ClassMatrix<Scalar>&>(W));
    if (certified) {
      out.status = Status::converged;
      break;
    }
    if (stop) {
      out.status = Status::stopped_by_callback;
      break;
    }
    if (settings.time_limit > 0.0 && report.seconds >= settings.time_limit) {
      out.status = Status::time_limit;
      break;
    }
  }
  out.objective = F;
  return out;
}

}  // namespace sparsemc::detail::gls
