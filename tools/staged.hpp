#pragma once
/// \file staged.hpp
/// The tools' side of staged models (model/staged_model.hpp: calibrated least squares,
/// stagewise regression, fits on random Fourier features): recognising the file, saving and
/// loading it, ranking and scoring its predictions ŷ⁽ᵀ⁾, and the objective sparsemc-eval prints.

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <string>
#include <system_error>
#include <vector>

#include <sparsemc/io/staged_model_io.hpp>
#include <sparsemc/model/staged_model.hpp>
#include <sparsemc/solver/gls/detail/core.hpp>

#include "cli.hpp"
#include "data.hpp"

namespace sparsemc::tools {

/// Saves a staged model (the only format it has).
template <class Scalar>
void save_staged(const StagedModel<Scalar>& model, const std::string& path) {
  try {
    if (path == "-") {  // stdout
      io::save_staged_model(model, std::cout);
      std::cout.flush();
      if (!std::cout) throw InputError("<stdout>: write error");
    } else {
      io::save_staged_model(model, path);
    }
  } catch (const std::runtime_error& e) {
    throw InputError(e.what());
  }
}

/// A weightless LinearModel carrying the staged model's labels: what the label-matching helpers
/// of data.hpp (score_ranking, the test label table) need.
template <class Scalar>
LinearModel<Scalar> label_carrier(const StagedModel<Scalar>& model) {
  using Linear = LinearModel<Scalar>;
  return Linear(model.n_features(), std::vector<std::int64_t>{}, typename Linear::RowMatrix(0, model.n_classes()), typename Linear::Vector(),
                model.labels());
}

/// The k best classes of every row of the scores Y, best first (ties to the smaller class index,
/// NaN last): LinearModel::top_k's order.
template <class Scalar>
ClassRanking rank_scores(const typename StagedModel<Scalar>::RowMatrix& Y, ClassIndex k) {
  const auto K = static_cast<ClassIndex>(Y.cols());
  const ClassIndex kept = std::min(k, K);
  ClassRanking ranking(Y.rows(), kept);
  std::vector<ClassIndex> order(static_cast<std::size_t>(K));
  for (Eigen::Index i = 0; i < Y.rows(); ++i) {
    std::iota(order.begin(), order.end(), ClassIndex{0});
    const auto key = [&](ClassIndex c) {
      const Scalar v = Y(i, c);
      return std::isnan(v) ? -std::numeric_limits<Scalar>::infinity() : v;
    };
    const auto better = [&](ClassIndex a, ClassIndex b) {
      const Scalar sa = key(a), sb = key(b);
      return sa > sb || (sa == sb && a < b);
    };
    if (kept < K) std::nth_element(order.begin(), order.begin() + kept - 1, order.end(), better);
    std::sort(order.begin(), order.begin() + kept, better);
    std::copy(order.begin(), order.begin() + kept, ranking.row(i).data());
  }
  return ranking;
}

/// Accuracy (or precision@1) of a staged model on test data.
template <class Scalar>
TestScore score_staged(const StagedModel<Scalar>& model, const Dataset<Scalar>& test, ClassIndex k = 1) {
  const ClassRanking top = rank_scores<Scalar>(model.decision_function(test.csr()), k);
  return score_ranking(label_carrier(model), test, top);
}

/// What sparsemc-eval prints for a staged model: the loss part at its predictions ŷ⁽ᵀ⁾ (scores
/// for the logistic loss), (1/n) Σ c_i ℓ(ŷ_i, y_i), and — for a single uncalibrated stage, where
/// the model is objective (1)'s linear model on the stage's features — the ridge (μ/2)‖W‖²
/// (0 otherwise: the solvers of a chain report the loss part only).
template <class Loss, class Scalar>
ObjectiveValue staged_objective(const StagedModel<Scalar>& model, const Dataset<Scalar>& data, double mu) {
  const auto problem = data.template problem<Eigen::RowMajor>();
  const ClassMatrix<Scalar> S = model.decision_function(data.csr());
  ClassMatrix<Scalar> D(S.rows(), S.cols());
  ObjectiveValue value;
  value.loss = sparsemc::detail::gls::link_residual(Loss{}, problem, S, D);
  value.penalty = 0.0;
  if (model.stages().size() == 1 && model.stages()[0].calibration.size() == 0)
    value.penalty = 0.5 * mu * static_cast<double>(model.stages()[0].linear.weights().squaredNorm());
  return value;
}

}  // namespace sparsemc::tools
