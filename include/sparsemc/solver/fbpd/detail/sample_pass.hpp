#pragma once
/// \file sample_pass.hpp
/// One pass over the samples (implementation detail of FBPD): the linear maps of Chierchia et
/// al.'s Algorithms 1–2 and the per-sample steps between them, fused.
///
/// For the current primal point x = (W, b) every active sample i (c_i > 0) gets its scores
///     s_i = Wᵀx_i + b                                        (the gather, "T" side)
/// then a per-sample step `step(i, s, thread)` rewrites s in place into a vector z_i ∈ R^K
/// (a dual block turned into score space, or a loss gradient) and returns whether z_i ≠ 0;
/// nonzero blocks are accumulated into
///     G = Σ_i x_i z_iᵀ  (d × K),   g_b = Σ_i z_i  (K, with an intercept)      (the "Tᵀ" side)
/// With a CSR X the gather and the scatter of a sample touch the same row while it is in cache,
/// so one pass costs one read of X (nnz(X)·K multiply-adds each way); a dense X is walked the
/// same way, by its rows' nonzeros (data/sample_entries.hpp), without a copy. A CSC X is served
/// by two Eigen products (S = XW, then G = XᵀZ) around the same per-sample loop.
///
/// OpenMP (SPARSEMC_USE_OPENMP): the samples are cut into one contiguous range per thread; each
/// thread accumulates into its own G, g_b and scalar sums, which are then added in thread order,
/// so a run is reproducible bit for bit for a given thread count. The per-sample steps write
/// only their own sample's rows of the solver's n × K state.

#include <Eigen/Core>

#include <algorithm>
#include <array>
#include <cstddef>
#include <span>
#include <utility>
#include <vector>

#ifdef SPARSEMC_USE_OPENMP
#include <omp.h>
#endif

#include "../../../core/traits.hpp"
#include "../../../data/dense_problem.hpp"
#include "../../../data/problem.hpp"
#include "../../../data/sample_entries.hpp"
#include "../../objective.hpp"

namespace sparsemc::detail {

/// What the per-sample steps of a pass accumulate, by name (a step writes the fields it
/// names and leaves the others at 0). x̃ = (W, b) is the pass's point, ũ_i = T_i x̃ its score
/// differences, y_i the dual block before the step and ỹ_i the one it computes, r the margins.
struct PassSums {
  double loss = 0.0;           ///< Σ_i ω_i h_i(ũ_i) (Crammer–Singer) or Σ_i ω_i ℓ_i(s_i): L(x̃)
  double off_mass = 0.0;       ///< rᵀỹ = Σ_i Σ_{k≠z_i} ỹ_ik (Algorithm 1 and its start)
  double dual_residual = 0.0;  ///< ‖Q‖², the dual residual (with Algorithm 2's ξ part)
  double inner = 0.0;          ///< Σ_i ⟨ỹ_i, ũ_i + r_i⟩ (the loss part's Fenchel–Young term)
  double cross = 0.0;          ///< ⟨ỹ − y, ũ − u⟩ (the adaptive step's test)
  double dual_move = 0.0;      ///< Σ_i ‖ỹ_i − y_i‖²/σ⁰_i (the adaptive step's test)
  double zeta_residual = 0.0;  ///< the ζ part of ‖P‖² (Algorithm 2)
  double multiplier = 0.0;     ///< ν̂ = max_i rᵀỹ_i/ω_i (Algorithm 2): a maximum, not a sum
  double squared_norm = 0.0;   ///< ‖Av‖² (the power method's pass)

  /// Adds the sums of `other` (another thread's, in thread order) and keeps the larger ν̂.
  void merge(const PassSums& other) noexcept {
    loss += other.loss;
    off_mass += other.off_mass;
    dual_residual += other.dual_residual;
    inner += other.inner;
    cross += other.cross;
    dual_move += other.dual_move;
    zeta_residual += other.zeta_residual;
    multiplier = std::max(multiplier, other.multiplier);
    squared_norm += other.squared_norm;
  }

  /// Completes the sums over the samples of every process (solver/sample_sums.hpp): one
  /// reduction of the sums, one of ν̂ (a maximum).
  template <class Sums>
  void complete(const Sums& sums) {
    static constexpr std::array summed{&PassSums::loss,  &PassSums::off_mass,  &PassSums::dual_residual,
                                       &PassSums::inner, &PassSums::cross,     &PassSums::dual_move,
                                       &PassSums::zeta_residual, &PassSums::squared_norm};
    std::array<double, summed.size()> values;
    for (std::size_t f = 0; f < summed.size(); ++f) values[f] = this->*summed[f];
    sums(std::span<double>(values));
    for (std::size_t f = 0; f < summed.size(); ++f) this->*summed[f] = values[f];
    multiplier = sums.max(multiplier);
  }
};

/// Per-thread work space of a pass: the scores s of the current sample (turned into z by the
/// step), two vectors of K entries for the step, scratch for the projections, the margins r
/// (all ones; a step zeroes r[y_i] while it works on sample i), the step's sums, and (threads
/// other than the first) partial G and g_b.
template <RealScalar Scalar>
struct PassThread {
  std::vector<Scalar> s, a, b, scratch, margins;
  PassSums sums;
  ClassMatrix<Scalar> G;
  ClassVector<Scalar> g_b;
};

template <RealScalar Scalar>
class SamplePass {
 public:
  SamplePass(Eigen::Index n, Eigen::Index d, Eigen::Index K, bool intercept, bool csc, int threads)
      : K_(K), intercept_(intercept), threads_(std::max(threads, 1)), threads_state_(static_cast<std::size_t>(threads_)) {
    for (std::size_t t = 0; t < threads_state_.size(); ++t) {
      auto& th = threads_state_[t];
      th.s.resize(static_cast<std::size_t>(K));
      th.a.resize(static_cast<std::size_t>(K));
      th.b.resize(static_cast<std::size_t>(K));
      th.scratch.resize(static_cast<std::size_t>(K));
      th.margins.assign(static_cast<std::size_t>(K), Scalar(1));
      if (t > 0) {
        th.G.resize(d, K);
        th.g_b.resize(intercept ? K : 0);
      }
    }
    if (csc) S_.resize(n, K);
  }

  [[nodiscard]] int threads() const noexcept { return threads_; }

  /// Runs the pass at (W, b) (b ignored without intercept): G, g_b and `sums` receive the
  /// accumulated z blocks and the steps' sums (thread-local, merged in thread order).
  template <class Prob, class Step>
  void run(const Prob& problem, const ClassMatrix<Scalar>& W, const ClassVector<Scalar>& b, Step&& step,
           ClassMatrix<Scalar>& G, ClassVector<Scalar>& g_b, PassSums& sums) {
    for (auto& th : threads_state_) th.sums = {};
    if constexpr (SampleRowProblem<Prob>) {  // CSR, dense: gather and scatter each sample's entries
      run_rows(problem, W, b, step, G, g_b);
    } else {
      run_csc(problem, W, b, step, G, g_b);
    }
    sums = {};
    for (const auto& th : threads_state_) sums.merge(th.sums);
  }

 private:
  /// Sample range of thread t: a contiguous, fixed share of [0, n).
  std::pair<Eigen::Index, Eigen::Index> range(Eigen::Index n, int t) const {
    const Eigen::Index begin = n * t / threads_, end = n * (t + 1) / threads_;
    return {begin, end};
  }

  /// s += Σ_j x_ij W_j: over the nonzeros of a row, W row-major with K columns. For K ≤ 10
  /// the class count is a compile-time constant (`KC`), so the K running sums stay in registers
  /// instead of going through memory once per nonzero; KC = 0 is the general loop.
  template <int KC, class Row>
  static void gather_fixed(const Row& row, const Scalar* W, Scalar* s, Eigen::Index K) {
    if constexpr (KC > 0) {
      std::array<Scalar, KC> acc;
      for (int k = 0; k < KC; ++k) acc[k] = s[k];
      for (auto [j, x_ij] : row) {
        const Scalar* w = W + static_cast<Eigen::Index>(j) * KC;
        for (int k = 0; k < KC; ++k) acc[k] += x_ij * w[k];
      }
      for (int k = 0; k < KC; ++k) s[k] = acc[k];
    } else {
      for (auto [j, x_ij] : row) {
        const Scalar* w = W + static_cast<Eigen::Index>(j) * K;
        for (Eigen::Index k = 0; k < K; ++k) s[k] += x_ij * w[k];
      }
    }
  }

  /// G_j += x_ij z for the nonzeros of a row (z = s, K entries), with the same dispatch.
  template <int KC, class Row>
  static void scatter_fixed(const Row& row, const Scalar* s, Scalar* G, Eigen::Index K) {
    if constexpr (KC > 0) {
      std::array<Scalar, KC> z;
      for (int k = 0; k < KC; ++k) z[k] = s[k];
      for (auto [j, x_ij] : row) {
        Scalar* g = G + static_cast<Eigen::Index>(j) * KC;
        for (int k = 0; k < KC; ++k) g[k] += x_ij * z[k];
      }
    } else {
      for (auto [j, x_ij] : row) {
        Scalar* g = G + static_cast<Eigen::Index>(j) * K;
        for (Eigen::Index k = 0; k < K; ++k) g[k] += x_ij * s[k];
      }
    }
  }

  /// Calls f.template operator()<KC>() with KC = K for 2 ≤ K ≤ 10, else KC = 0.
  template <class F>
  static void with_classes(Eigen::Index K, F&& f) {
    switch (K) {
      case 2: f.template operator()<2>(); break;
      case 3: f.template operator()<3>(); break;
      case 4: f.template operator()<4>(); break;
      case 5: f.template operator()<5>(); break;
      case 6: f.template operator()<6>(); break;
      case 7: f.template operator()<7>(); break;
      case 8: f.template operator()<8>(); break;
      case 9: f.template operator()<9>(); break;
      case 10: f.template operator()<10>(); break;
      default: f.template operator()<0>();
    }
  }

  template <class Row>
  static void gather(const Row& row, const Scalar* W, Scalar* s, Eigen::Index K) {
    with_classes(K, [&]<int KC>() { gather_fixed<KC>(row, W, s, K); });
  }

  template <class Row>
  static void scatter(const Row& row, const Scalar* s, Scalar* G, Eigen::Index K) {
    with_classes(K, [&]<int KC>() { scatter_fixed<KC>(row, s, G, K); });
  }

  template <class Prob, class Step>
  void run_rows(const Prob& problem, const ClassMatrix<Scalar>& W, const ClassVector<Scalar>& b, Step& step,
                ClassMatrix<Scalar>& G, ClassVector<Scalar>& g_b) {
    using Index = ProblemIndex<Prob>;
    const Eigen::Index n = problem.n_samples(), K = K_;
    auto body = [&](int t) {
      PassThread<Scalar>& th = threads_state_[static_cast<std::size_t>(t)];
      ClassMatrix<Scalar>& Gt = t == 0 ? G : th.G;
      ClassVector<Scalar>& gt = t == 0 ? g_b : th.g_b;
      Gt.setZero();
      if (intercept_) gt.setZero();
      std::vector<Scalar>& s = th.s;
      const auto [begin, end] = range(n, t);
      for (Eigen::Index i = begin; i < end; ++i) {
        if (problem.weight(static_cast<Index>(i)) == Scalar(0)) continue;
        const auto row = sample_entries(problem, static_cast<Index>(i));
        if (intercept_) {
          for (Eigen::Index k = 0; k < K; ++k) s[static_cast<std::size_t>(k)] = b[k];
        } else {
          std::fill(s.begin(), s.end(), Scalar(0));
        }
        gather(row, W.data(), s.data(), K);
        if (!step(i, std::span<Scalar>(s), th)) continue;
        scatter(row, s.data(), Gt.data(), K);
        if (intercept_)
          for (Eigen::Index k = 0; k < K; ++k) gt[k] += s[static_cast<std::size_t>(k)];
      }
    };
    if (threads_ == 1) {
      body(0);
      return;
    }
#ifdef SPARSEMC_USE_OPENMP
#pragma omp parallel num_threads(threads_)
    body(omp_get_thread_num());
    // Ordered reduction of the partial sums, parallel over rows of G.
    const Eigen::Index d = G.rows();
#pragma omp parallel for schedule(static) num_threads(threads_)
    for (Eigen::Index j = 0; j < d; ++j)
      for (int t = 1; t < threads_; ++t) G.row(j) += threads_state_[static_cast<std::size_t>(t)].G.row(j);
    if (intercept_)
      for (int t = 1; t < threads_; ++t) g_b += threads_state_[static_cast<std::size_t>(t)].g_b;
#endif
  }

  template <StorageIndex Index, class Step>
  void run_csc(const Problem<Scalar, Index, Eigen::ColMajor>& problem, const ClassMatrix<Scalar>& W,
               const ClassVector<Scalar>& b, Step& step, ClassMatrix<Scalar>& G, ClassVector<Scalar>& g_b) {
    const Eigen::Index n = problem.n_samples();
    S_.noalias() = problem.X.eigen() * W;
    if (intercept_) S_.rowwise() += b.transpose();
    auto body = [&](int t) {
      PassThread<Scalar>& th = threads_state_[static_cast<std::size_t>(t)];
      const auto [begin, end] = range(n, t);
      for (Eigen::Index i = begin; i < end; ++i) {
        if (problem.weight(static_cast<Index>(i)) == Scalar(0) || !step(i, row_span(S_, i), th)) S_.row(i).setZero();
      }
    };
    if (threads_ == 1) {
      body(0);
    } else {
#ifdef SPARSEMC_USE_OPENMP
#pragma omp parallel num_threads(threads_)
      body(omp_get_thread_num());
#endif
    }
    G.noalias() = problem.X.eigen().transpose() * S_;
    if (intercept_) g_b.noalias() = S_.colwise().sum().transpose();
  }

  Eigen::Index K_;
  bool intercept_;
  int threads_;
  std::vector<PassThread<Scalar>> threads_state_;
  ClassMatrix<Scalar> S_;  // scores, then z blocks (CSC only)
};

}  // namespace sparsemc::detail
