#pragma once
/// \file stagewise.hpp
/// `Stagewise<Link>`: stagewise regression (Agarwal et al., "Least Squares Revisited", ICML
/// 2014, Algorithm 3) — fit the residual block by block on features drawn from a generator
/// (sampled original features or random Fourier features), with Algorithm 1 (GLS) or
/// Algorithm 2 (calibrated least squares) on each block.

#include <Eigen/Core>
#include <Eigen/SparseCore>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "../../core/callbacks.hpp"
#include "../../core/rng.hpp"
#include "../../core/status.hpp"
#include "../../core/stopwatch.hpp"
#include "../../core/traits.hpp"
#include "../../core/validate.hpp"
#include "../../data/dense_problem.hpp"
#include "../../data/problem.hpp"
#include "../../loss/least_squares.hpp"
#include "../../loss/logistic.hpp"
#include "../../model/staged_model.hpp"
#include "../../penalty/none.hpp"
#include "../solver_base.hpp"
#include "detail/calibration.hpp"
#include "detail/core.hpp"
#include "detail/engine.hpp"
#include "detail/staged.hpp"
#include "detail/stagewise_engine.hpp"

namespace sparsemc {

/// The feature generator GEN of Algorithm 3.
enum class StagewiseFeatures {
  rff,                         ///< p fresh random Fourier features per stage (Gaussian kernel)
  sample_without_replacement,  ///< consecutive blocks of a random permutation of the features (reshuffled when used up)
  sample_with_replacement,     ///< every block p distinct features drawn independently of the others
  most_frequent_first,         ///< blocks in decreasing order of the features' nonzero counts (text), cycling;
                               ///< the last block of a pass over the features may be shorter
};

/// Options of `Stagewise`. Every field has a default; `validate()` names a bad field.
struct StagewiseOptions {
  /// Tolerance of each block's fit: its relative gradient norm ‖∇F_t‖/‖∇F_t(0)‖ (not a gap; see
  /// the class comment for what Stagewise's stop means).
  double tol = 1e-6;
  /// T: the number of stages (blocks); `--stages` in the tools.
  std::int64_t max_epochs = 8;
  /// Wall-clock budget in seconds (0 = none), checked after every stage.
  double time_limit = 0.0;
  /// Seed of the generator (permutations, random Fourier features).
  std::uint64_t seed = 0;
  /// Fit an unpenalised intercept in every block.
  bool fit_intercept = false;
  /// p: features per block (`--block-size`); the paper uses 512 or 1024.
  std::int64_t block_size = 512;
  /// GEN (see StagewiseFeatures).
  StagewiseFeatures features = StagewiseFeatures::rff;
  /// σ of the Gaussian kernel exp(−‖x − x'‖²/(2σ²)) of the random Fourier features; 0 picks
  /// σ² = (1/n) Σ_i ‖x_i − x̄‖², half the mean squared distance between two samples.
  double bandwidth = 0.0;
  /// GLS iterations per block with the softmax link (the paper uses 50); the identity link
  /// takes one (its exact solution).
  std::int64_t inner_epochs = 50;
  /// Identity link only: calibrate every stage (Algorithm 2's step (11)) after its residual fit.
  bool calibrate = false;
  /// m of the calibration basis [ỹ, ỹ², …, ỹ^m, 1].
  int calibration_degree = 3;
  /// See GLSOptions::gram_ridge.
  double gram_ridge = 1e-10;

  /// Throws std::invalid_argument naming the first field out of range.
  void validate() const {
    detail::require_stopping_rule(tol, max_epochs, time_limit);
    detail::require_positive("block_size", block_size);
    detail::require_nonnegative("bandwidth", bandwidth);
    detail::require_finite("bandwidth", bandwidth);
    detail::require_positive("inner_epochs", inner_epochs);
    detail::require_positive("calibration_degree", calibration_degree);
    detail::require_nonnegative("gram_ridge", gram_ridge);
    detail::require_finite("gram_ridge", gram_ridge);
  }
};

/// What Stagewise solves: a generalised linear loss (identity or softmax link) with the ridge.
template <class Loss, class Penalty>
concept StagewiseAccepts = GeneralizedLinearLoss<Loss> && std::same_as<Penalty, NoPenalty>;

/// Stagewise regression, Algorithm 3 of Agarwal et al. (2014). From Ŷ⁽⁰⁾ = 0, for t = 1..T:
///
///     x̃_i = GEN_t(x_i) ∈ R^p,
///     W_t = the fit of Algorithm 1 (or 2) on {(x̃_i, y_i)} with offset Ŷ⁽ᵗ⁻¹⁾,
///     ŷ_i⁽ᵗ⁾ = ŷ_i⁽ᵗ⁻¹⁾ + W_tᵀx̃_i (+ b_t)   [then clip(W̃_tᵀu(·)) when calibrating].
///
/// With the identity link (`Stagewise<LeastSquares>`) the fit is the ridge regression of the
/// residual Y − Ŷ on the block (one GLS step is exact): block coordinate descent on the square
/// loss with a d × d → p × p block-diagonal Σ̂. With the softmax link (`Stagewise<Logistic>`),
/// Ŷ are scores and each block runs `inner_epochs` GLS steps on the logistic loss of Ŷ + X̃W (+
/// ridge μ on W_t). With `calibrate` (identity link), each stage ends with the calibration fit
/// (11) of Algorithm 2 and the simplex projection. Every block's Σ̂ (p × p) is formed and
/// factorised once.
///
/// GEN: sampled original features (`sample_without_replacement`, `sample_with_replacement`,
/// `most_frequent_first` — the paper's advice for text) or random Fourier features (`rff`,
/// Rahimi–Recht, a fresh seed per stage). Original-feature blocks are column subsets of X (sparse
/// stays sparse). The returned `StagedModel` stores each stage's features — the support of W_t,
/// or the random features' (seed, p, σ) — so that predict regenerates them.
///
/// The reported objective is the training loss part at Ŷ⁽ᵀ⁾ (square loss or logistic loss);
/// the measure is the last stage's relative decrease of it. Callbacks run once per stage and
/// may take the current `StagedModel` (e.g. to plot test error against time).
///
/// **What its stop means.** Stagewise runs its T = max_epochs stages (status max_iter, or
/// time_limit / stopped_by_callback earlier); it never reports `converged`, since Algorithm 3
/// minimises no fixed objective over X (each stage adds new features). Every block's fit runs
/// Algorithm 1 until its relative gradient norm ‖∇F_t‖/‖∇F_t(0)‖ ≤ tol (the block's own
/// problem; default 10⁻⁶) or `inner_epochs` steps. info.duality_gap and info.relative_gap are
/// NaN (no certificate of (1) is claimed).
///
/// \code
///   #include <sparsemc/solver/gls/stagewise.hpp>
///   using namespace sparsemc;
///   Stagewise solver(LeastSquares{}, NoPenalty{.mu = 1e-6},
///                    StagewiseOptions{.max_epochs = 8, .block_size = 512, .bandwidth = 4.0});
///   StagedResult<double> result = solver.fit(train.problem<Eigen::RowMajor>());
///   auto yhat = result.model.predict(test.csr());
/// \endcode
template <class Link>
class Stagewise : public detail::SolverParts<Link, NoPenalty, StagewiseOptions> {
  using Base = detail::SolverParts<Link, NoPenalty, StagewiseOptions>;

  static_assert(GeneralizedLinearLoss<Link>,
                "Stagewise fits blocks with the identity link (LeastSquares) or the softmax link (Logistic).");

 public:
  using Options = StagewiseOptions;
  /// The registered solver name (provenance, tools).
  static constexpr std::string_view name = "stagewise";

  Stagewise(Link link, NoPenalty ridge, Options options = {}) : Base(std::move(link), ridge, std::move(options)) {
    detail::require_nonnegative("mu", penalty_.mu);
    detail::require_finite("mu", penalty_.mu);
    if (options_.calibrate && Link::inverse_link != InverseLink::identity)
      throw std::invalid_argument("calibrate needs the identity link (Stagewise<LeastSquares>)");
  }

  /// Runs Algorithm 3 on a sparse problem; callbacks run once per stage.
  template <RealScalar Scalar, StorageIndex Index, int Order, class... Callbacks>
  StagedResult<Scalar> fit(const Problem<Scalar, Index, Order>& problem, Callbacks&&... callbacks) const {
    return run(problem, callbacks...);
  }
  /// Runs Algorithm 3 on a dense problem.
  template <RealScalar Scalar, class... Callbacks>
  StagedResult<Scalar> fit(const DenseProblem<Scalar>& problem, Callbacks&&... callbacks) const {
    return run(problem, callbacks...);
  }

 private:
  /// The blocks of original features, one stage at a time (sorted indices).
  class FeatureSampler {
   public:
    template <class Prob>
    FeatureSampler(const Prob& problem, const Options& options)
        : d_(problem.n_features()), rng_(options.seed), kind_(options.features) {
      order_.resize(static_cast<std::size_t>(d_));
      std::iota(order_.begin(), order_.end(), std::int64_t{0});
      p_ = std::min<std::int64_t>(options.block_size, d_);
      if (kind_ == StagewiseFeatures::most_frequent_first) {
        std::vector<std::int64_t> count(static_cast<std::size_t>(d_), 0);
        if constexpr (detail::gls::is_dense_problem_v<Prob>) {
          for (Eigen::Index j = 0; j < d_; ++j) count[static_cast<std::size_t>(j)] = (problem.X.col(j).array() != 0).count();
        } else {
          const auto X = problem.X.eigen();
          for (Eigen::Index o = 0; o < X.outerSize(); ++o)
            for (typename std::remove_cvref_t<decltype(X)>::InnerIterator it(X, o); it; ++it) ++count[static_cast<std::size_t>(it.col())];
        }
        std::stable_sort(order_.begin(), order_.end(), [&](std::int64_t a, std::int64_t b) {
          return count[static_cast<std::size_t>(a)] > count[static_cast<std::size_t>(b)];
        });
      } else if (kind_ == StagewiseFeatures::sample_without_replacement) {
        shuffle(std::span<std::int64_t>(order_), rng_);
      }
    }
    std::vector<std::int64_t> next() {
      if (kind_ == StagewiseFeatures::sample_with_replacement) {
        std::vector<std::int64_t> block(static_cast<std::size_t>(p_));
        // p distinct features: a partial Fisher–Yates shuffle, independent of earlier blocks.
        for (std::int64_t k = 0; k < p_; ++k) {
          const auto j = k + static_cast<std::int64_t>(uniform_index(rng_, static_cast<std::uint64_t>(d_ - k)));
          std::swap(order_[static_cast<std::size_t>(k)], order_[static_cast<std::size_t>(j)]);
          block[static_cast<std::size_t>(k)] = order_[static_cast<std::size_t>(k)];
        }
        std::sort(block.begin(), block.end());
        return block;
      }
      // The next p features of the order; a block never straddles the end of the order (the
      // last one of a pass may be shorter), so its features are distinct.
      if (cursor_ == d_) {
        cursor_ = 0;
        if (kind_ == StagewiseFeatures::sample_without_replacement) shuffle(std::span<std::int64_t>(order_), rng_);
      }
      const std::int64_t take = std::min(p_, d_ - cursor_);
      std::vector<std::int64_t> block(order_.begin() + cursor_, order_.begin() + cursor_ + take);
      cursor_ += take;
      std::sort(block.begin(), block.end());
      return block;
    }

   private:
    std::int64_t d_, p_ = 0, cursor_ = 0;
    Rng rng_;
    StagewiseFeatures kind_;
    std::vector<std::int64_t> order_;
  };

  /// Algorithm 3: the shared chain state (detail/staged.hpp) and the stage engine
  /// (detail/stagewise_engine.hpp), then per stage its features and block fit, the
  /// calibration or the new predictions, the report and the verdict, then the shared epilogue.
  template <class Prob, class Scalar = typename Prob::scalar_type, class... Callbacks>
  StagedResult<Scalar> run(const Prob& problem, Callbacks&... callbacks) const {
    problem.validate();
    const Stopwatch clock;
    const bool random_features = options_.features == StagewiseFeatures::rff;
    detail::gls::StagedFit<Scalar> fit(problem, options_.calibration_degree);
    const detail::gls::StageSettings settings = stage_settings(problem);
    detail::gls::StagewiseEngine<Link, Prob> engine(loss_, problem, settings, fit, clock, random_features);
    const double E0 = engine.training_loss(fit.Yhat);
    fit.begin(E0, E0);
    FeatureSampler sampler(problem, options_);

    Status status = Status::max_iter;
    notify_begin(callbacks...);
    while (fit.epoch < options_.max_epochs) {
      ++fit.epoch;
      typename StagedModel<Scalar>::Stage stage =
          random_features ? engine.rff_stage(fit.epoch) : engine.original_stage(sampler.next());
      if (options_.calibrate) stage.calibration = fit.calibrate(options_.calibration_degree);
      else std::swap(fit.Yhat, fit.Ytilde);
      fit.model.add_stage(std::move(stage));
      const double E_next = engine.training_loss(fit.Yhat);
      if (!std::isfinite(E_next)) {
        status = Status::numerical_issue;
        break;
      }
      fit.advance(E_next);
      const EpochReport report = fit.report(clock.seconds());
      const bool stop = notify_end_epoch(report, [&]() -> const StagedModel<Scalar>& { return fit.model; }, callbacks...);
      if (const auto verdict = detail::epoch_verdict(options_, true, false, stop, report.seconds)) {
        status = *verdict;
        break;
      }
    }
    StagedResult<Scalar> result = fit.finish(Link::name, name, penalty_.mu, status, clock);
    notify_end(result.info, callbacks...);
    return result;
  }

  /// The options the stages use, resolved: σ (with random Fourier features; the default from
  /// the data when 0), L of the
  /// link, each block's run of Algorithm 1 (one step for the identity link: exact).
  template <class Prob>
  detail::gls::StageSettings stage_settings(const Prob& problem) const {
    using Scalar = typename Prob::scalar_type;
    constexpr bool identity = Link::inverse_link == InverseLink::identity;
    detail::gls::StageSettings s;
    s.block_size = options_.block_size;
    s.seed = options_.seed;
    // σ is used by the random Fourier features only (the default costs a pass over X).
    if (options_.features == StagewiseFeatures::rff)
      s.bandwidth = options_.bandwidth > 0.0 ? options_.bandwidth : rff_default_bandwidth(design(problem));
    s.intercept = options_.fit_intercept;
    s.mu = penalty_.mu;
    s.gram_ridge = options_.gram_ridge;
    s.lipschitz = static_cast<double>(loss_.template curvature_bound<Scalar>(problem.n_classes()));
    s.run = detail::gls::RunSettings{.tol = options_.tol, .max_epochs = identity ? 1 : options_.inner_epochs};
    return s;
  }

  using Base::loss_;
  using Base::options_;
  using Base::penalty_;
};

}  // namespace sparsemc
