#pragma once
/// \file stagewise_engine.hpp
/// The steps of one Stagewise solve (implementation detail): Algorithm 3 of Agarwal et al.
/// (2014) — a stage's features x̃ = GEN_t(x) (random Fourier features, or a block of the
/// original columns), the fit of Algorithm 1 on them from the offset Ŷ⁽ᵗ⁻¹⁾, and the stage of
/// the model that predict replays. stagewise.hpp holds the public class, the mathematics (its
/// class comment), the feature sampler and the loop over these steps; staged.hpp the chain state.

#include <Eigen/Core>
#include <Eigen/SparseCore>

#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "../../../core/callbacks.hpp"
#include "../../../core/stopwatch.hpp"
#include "../../../core/traits.hpp"
#include "../../../data/dense_problem.hpp"
#include "../../../data/problem.hpp"
#include "../../../loss/least_squares.hpp"
#include "../../../model/linear_model.hpp"
#include "../../../model/staged_model.hpp"
#include "core.hpp"
#include "engine.hpp"
#include "staged.hpp"

namespace sparsemc::detail::gls {

/// The step between the seeds of consecutive random-feature stages: 2⁶⁴/φ (φ the golden ratio),
/// the increment of SplitMix64 and of Fibonacci hashing, so stage seeds are far apart.
inline constexpr std::uint64_t stage_seed_step = 0x9E3779B97F4A7C15ULL;

/// What the stages need from StagewiseOptions and the problem, resolved.
struct StageSettings {
  std::int64_t block_size = 512;  ///< p
  std::uint64_t seed = 0;
  double bandwidth = 0.0;         ///< σ of the random Fourier features, resolved (> 0)
  bool intercept = false;
  double mu = 0.0;                ///< the ridge of every block's fit
  double gram_ridge = 1e-10;
  double lipschitz = 1.0;         ///< L of the link
  RunSettings run;                ///< each block's run of Algorithm 1
};

/// The stages of one Stagewise solve on `problem`: rff_stage(t) and original_stage(columns)
/// fit a block from fit.Yhat into fit.Ytilde and return the stage; training_loss(Ŷ) is E_t.
template <class Loss, class Prob>
class StagewiseEngine {
  using Scalar = typename Prob::scalar_type;
  using Index = typename Prob::index_type;
  using Model = StagedModel<Scalar>;
  static constexpr bool dense = is_dense_problem_v<Prob>;
  static constexpr bool identity = Loss::inverse_link == InverseLink::identity;
  using Csc = Eigen::SparseMatrix<Scalar, Eigen::ColMajor, std::conditional_t<dense, int, Index>>;

 public:
  StagewiseEngine(const Loss& loss, const Prob& problem, const StageSettings& settings, StagedFit<Scalar>& fit,
                  const Stopwatch& clock, bool random_features)
      : loss_(loss), problem_(problem), settings_(settings), fit_(fit), clock_(clock), D_(fit.Y.rows(), fit.Y.cols()) {
    // Original-feature blocks are column subsets: a CSC copy of sparse X makes them cheap.
    if constexpr (!dense)
      if (!random_features) X_csc_ = design(problem);
  }

  /// The training loss part at Ŷ: the square loss of predictions or the logistic loss of scores.
  double training_loss(const ClassMatrix<Scalar>& V) {
    if constexpr (identity) return square_loss(V, fit_.Y, fit_.c);
    else return link_residual(loss_, problem_, V, D_);
  }

  /// Stage t on p fresh random Fourier features, their generator seeded from (seed, t) so that
  /// predict regenerates them.
  typename Model::Stage rff_stage(std::int64_t t) {
    const std::uint64_t stage_seed = settings_.seed + stage_seed_step * static_cast<std::uint64_t>(t);
    const Eigen::Index p = settings_.block_size;
    typename Model::Stage stage;
    stage.features = Model::Features::rff;
    stage.rff = RandomFourierFeatures<Scalar>(stage_seed, problem_.n_features(), p, settings_.bandwidth);
    const auto Z = stage.rff.transform(design(problem_));
    const ClassMatrix<Scalar> W =
        fit_block(DenseProblem<Scalar>{{Z.data(), Z.rows(), Z.cols()}, problem_.y, problem_.sample_weights});
    stage.linear = LinearModel<Scalar>(W.topRows(p), stage_intercept(W, p, settings_.intercept), fit_.labels);
    return stage;
  }

  /// A stage on the original features `columns` (sorted): a dense copy of the columns, or a
  /// CSC view of them.
  typename Model::Stage original_stage(const std::vector<std::int64_t>& columns) {
    const auto p = static_cast<Eigen::Index>(columns.size());
    ClassMatrix<Scalar> W;
    if constexpr (dense) {
      const Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> Z = problem_.X(Eigen::all, columns);
      W = fit_block(DenseProblem<Scalar>{{Z.data(), Z.rows(), Z.cols()}, problem_.y, problem_.sample_weights});
    } else {
      std::vector<Index> outer(1, 0), inner;
      std::vector<Scalar> values;
      for (const std::int64_t j : columns) {
        for (typename Csc::InnerIterator it(X_csc_, static_cast<Eigen::Index>(j)); it; ++it) {
          inner.push_back(static_cast<Index>(it.row()));
          values.push_back(it.value());
        }
        outer.push_back(static_cast<Index>(inner.size()));
      }
      W = fit_block(Problem<Scalar, Index, Eigen::ColMajor>{
          CscView<Scalar, Index>(static_cast<Index>(problem_.n_samples()), static_cast<Index>(p), outer.data(),
                                 inner.data(), values.data(), false),
          problem_.y, problem_.sample_weights});
    }
    typename Model::Stage stage;
    stage.features = Model::Features::original;
    stage.linear = LinearModel<Scalar>(problem_.n_features(), columns, W.topRows(p),
                                       stage_intercept(W, p, settings_.intercept), fit_.labels);
    return stage;
  }

 private:
  /// Algorithm 1 on one block (a Problem or DenseProblem over x̃) from the offset Ŷ, with its
  /// own Σ̂ factorised once; returns [W_t; b_t] and leaves Ỹ = Ŷ + X̃W_t in fit.Ytilde.
  template <class Block>
  ClassMatrix<Scalar> fit_block(const Block& block) {
    const Eigen::Index p = block.n_features() + (settings_.intercept ? 1 : 0);
    ClassMatrix<Scalar> W = ClassMatrix<Scalar>::Zero(p, fit_.Y.cols());
    const auto P = factorise(second_moment(block, settings_.intercept), settings_.lipschitz, settings_.mu,
                             block.n_features(), settings_.gram_ridge);
    const auto no_callback = [](const EpochReport&, const ClassMatrix<Scalar>&) { return false; };
    run(loss_, block, P, settings_.mu, settings_.run, W, fit_.Yhat, clock_, no_callback,
        GradientNormTest{settings_.run.tol});
    scores(block, W, fit_.Yhat, fit_.Ytilde);
    return W;
  }

  const Loss& loss_;
  const Prob& problem_;
  const StageSettings& settings_;
  StagedFit<Scalar>& fit_;
  const Stopwatch& clock_;
  ClassMatrix<Scalar> D_;  ///< the link residuals of training_loss (softmax)
  Csc X_csc_;
};

}  // namespace sparsemc::detail::gls
