#pragma once
// Shared by test_scd.cpp and test_scd_solvers.cpp: random problems and brute-force references
// (objective.hpp, whose gradients test_fista checks against finite differences).
#include <catch2/catch.hpp>

#include "random_problem.hpp"
#include "skip.hpp"

#include <sparsemc/core/callbacks.hpp>
#include <sparsemc/core/rng.hpp>
#include <sparsemc/data/dataset.hpp>
#include <sparsemc/io/liblinear_model.hpp>
#include <sparsemc/io/libsvm_reader.hpp>
#include <sparsemc/loss/losses.hpp>
#include <sparsemc/penalty/penalties.hpp>
#include <sparsemc/solver/fista/prox_gradient.hpp>
#include <sparsemc/solver/objective.hpp>
#include <sparsemc/solver/scd/scd.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include <unistd.h>

namespace sparsemc::scd_test {

using namespace sparsemc;

using sparsemc_test::sanitizer_run;

template <class Scalar>
constexpr double eps_of() {
  return std::is_same_v<Scalar, float> ? 1e-5 : 1e-12;
}

inline double rel(double a, double b) { return std::abs(a - b) / std::max({std::abs(a), std::abs(b), 1e-300}); }

using sparsemc_test::RandomLabels;
using sparsemc_test::RandomProblem;

/// A random W (d × K) with about a third of the rows zero and b (K).
template <class Scalar>
std::pair<ClassMatrix<Scalar>, ClassVector<Scalar>> random_point(Eigen::Index d, Eigen::Index K, std::uint64_t seed) {
  Rng rng(seed);
  ClassMatrix<Scalar> W(d, K);
  for (Eigen::Index j = 0; j < d; ++j)
    for (Eigen::Index k = 0; k < K; ++k)
      W(j, k) = j % 3 == 1 ? Scalar(0) : static_cast<Scalar>(1.6 * uniform_real(rng) - 0.8);
  ClassVector<Scalar> b(K);
  for (auto& v : b) v = static_cast<Scalar>(uniform_real(rng) - 0.5);
  return {W, b};
}

/// The loss part L of (1) at (W, b), from scratch.
template <class Loss, class Scalar, class Index>
double loss_at(const CscProblem<Scalar, Index>& problem, const ClassMatrix<Scalar>& W, const ClassVector<Scalar>& b) {
  ClassMatrix<Scalar> S;
  compute_scores(problem, W, b, S);
  return loss_value(Loss{}, problem, S);
}

/// ∂L/∂W (d × K) and ∂L/∂b (K) from scratch (objective.hpp; finite-difference checked by test_fista).
template <class Loss, class Scalar, class Index>
std::pair<ClassMatrix<Scalar>, ClassVector<Scalar>> gradient_at(const CscProblem<Scalar, Index>& problem,
                                                                const ClassMatrix<Scalar>& W, const ClassVector<Scalar>& b) {
  ClassMatrix<Scalar> S, D, G;
  ClassVector<Scalar> gb;
  compute_scores(problem, W, b, S);
  loss_score_gradient(Loss{}, problem, S, D);
  weight_gradient(problem, D, G);
  intercept_gradient(D, gb);
  return {G, gb};
}

/// Σ_i (c_i/n) x_ij² h_ir with h the loss's own generalised Hessian diagonal (or subgradient
/// component `which` = 1), from scratch.
template <class Loss, class Scalar, class Index>
double curvature_at(const CscProblem<Scalar, Index>& problem, const ClassMatrix<Scalar>& W, const ClassVector<Scalar>& b,
                    std::size_t j, ClassIndex r) {
  ClassMatrix<Scalar> S;
  compute_scores(problem, W, b, S);
  std::vector<Scalar> h(static_cast<std::size_t>(W.cols()));
  const double n = static_cast<double>(problem.n_samples());
  double sum = 0.0;
  auto one = [&](Index i, double x) {
    Loss{}.curvature(std::span<const Scalar>(S.row(i).data(), h.size()), problem.y[static_cast<std::size_t>(i)],
                     std::span<Scalar>(h));
    sum += static_cast<double>(problem.weight(i)) * x * x * static_cast<double>(h[static_cast<std::size_t>(r)]) / n;
  };
  if (j < static_cast<std::size_t>(W.rows())) {
    for (auto [i, x] : problem.X.outer(static_cast<Index>(j))) one(i, static_cast<double>(x));
  } else {
    for (Index i = 0; i < problem.n_samples(); ++i) one(i, 1.0);
  }
  return sum;
}

template <class Scalar, class Index>
SparseSlice<Scalar, Index> column_or_ones(const CscProblem<Scalar, Index>& problem, std::size_t j,
                                          const std::vector<Index>& rows, const std::vector<Scalar>& ones) {
  if (j < static_cast<std::size_t>(problem.n_features())) return problem.X.outer(static_cast<Index>(j));
  return {rows, ones};
}


/// Σ_jk violation_entry(w_jk, ∂L/∂w_jk) + Σ_r |∂L/∂b_r|: the measure SCD reports (unnormalised).
template <class Loss, class Penalty, class Scalar, class Index>
double summed_violation(const Loss&, const Penalty& penalty, const CscProblem<Scalar, Index>& problem,
                        const LinearModel<Scalar>& model, bool intercept) {
  ClassMatrix<Scalar> W = ClassMatrix<Scalar>::Zero(problem.n_features(), problem.n_classes());
  model.copy_to(W);
  ClassVector<Scalar> b = intercept ? model.intercept() : ClassVector<Scalar>();
  const auto [G, gb] = gradient_at<Loss>(problem, W, b);
  double sum = 0.0;
  for (Eigen::Index j = 0; j < W.rows(); ++j)
    for (Eigen::Index k = 0; k < W.cols(); ++k) sum += double(penalty.violation_entry(W(j, k), G(j, k)));
  if (intercept) sum += gb.template cast<double>().template lpNorm<1>();
  return sum;
}

/// The same at W = 0, b = 0: SCD's normalisation.
template <class Loss, class Penalty, class Scalar, class Index>
double summed_violation_at_zero(const Loss&, const Penalty& penalty, const CscProblem<Scalar, Index>& problem,
                                bool intercept) {
  const ClassMatrix<Scalar> W = ClassMatrix<Scalar>::Zero(problem.n_features(), problem.n_classes());
  const ClassVector<Scalar> b = intercept ? ClassVector<Scalar>::Zero(problem.n_classes()) : ClassVector<Scalar>();
  const auto [G, gb] = gradient_at<Loss>(problem, W, b);
  double sum = 0.0;
  for (Eigen::Index j = 0; j < W.rows(); ++j)
    for (Eigen::Index k = 0; k < W.cols(); ++k) sum += double(penalty.violation_entry(Scalar(0), G(j, k)));
  if (intercept) sum += gb.template cast<double>().template lpNorm<1>();
  return sum;
}

/// The reference optimum by FISTA at a tight tolerance (CSR copy of the data).
/// The reference optimum by FISTA at a tight tolerance, in double whatever the problem's Scalar.
template <class Loss, class Penalty, class Scalar>
double fista_optimum(const RandomProblem<Scalar>& rp, const Penalty& penalty, bool intercept) {
  const Eigen::SparseMatrix<double, Eigen::RowMajor, std::int32_t> R = rp.A.template cast<double>();
  const std::vector<double> weights(rp.weights.begin(), rp.weights.end());
  const CsrProblem<double> problem{CsrView<double>(R), rp.labels.view(), weights};
  ProxGradient<Loss, Penalty> solver(Loss{}, penalty, {.tol = 1e-10, .max_epochs = 200000, .fit_intercept = intercept});
  const auto result = solver.fit(problem);
  REQUIRE(result.info.status == Status::converged);
  return result.info.objective;
}

/// Both smooth variants on a random problem: converged with a certified relative gap ≤ tol, the
/// reported measure is the exact summed violation (recomputed here), and the objective equals
/// FISTA's optimum.
template <class Loss, class Penalty, class Scalar>
void check_smooth_variants(const Penalty& penalty, bool intercept, bool multilabel, CoordinateOrder order) {
  RandomProblem<Scalar> rp(60, 14, 3, 0.4, 31, true, multilabel ? RandomLabels::each_class : RandomLabels::multiclass);
  const auto problem = rp.problem();
  const double reference = fista_optimum<Loss>(rp, penalty, intercept);
  const double tol = std::is_same_v<Scalar, float> ? 1e-4 : 1e-9;
  const double v0 = summed_violation_at_zero(Loss{}, penalty, problem, intercept);
  auto one = [&]<class Variant>() {
    SCD<Loss, Penalty, Variant> solver(Loss{}, penalty,
                                       {.tol = tol, .max_epochs = 200000, .fit_intercept = intercept, .order = order});
    const auto result = solver.fit(problem);
    INFO(Loss::name << " + " << Penalty::name << " λ=" << penalty.lambda << " μ=" << penalty.mu << " via "
                    << Variant::name << (intercept ? " with intercept" : "") << (multilabel ? " multilabel" : "")
                    << (std::is_same_v<Scalar, float> ? " float" : " double"));
    REQUIRE(result.info.status == Status::converged);
    // Converged = certified: the relative duality gap at the returned model is ≤ tol, and the
    // reported gap bounds F − F* (F* from FISTA at 1e-10; the slack is its own error).
    CHECK(result.info.relative_gap <= tol);
    CHECK(result.info.duality_gap >= result.info.objective - reference - 1e-9 * std::abs(reference));
    // The cheap measure stays a diagnostic: the exact summed violation at the returned model.
    CHECK(result.info.measure_name == "kkt_violation");
    const double exact = summed_violation(Loss{}, penalty, problem, result.model, intercept) / v0;
    CHECK(std::abs(exact - result.info.measure) <= (std::is_same_v<Scalar, float> ? 1e-3 : 1e-8));
    CHECK(rel(result.info.objective, reference) <= (std::is_same_v<Scalar, float> ? 1e-4 : 1e-8));
    CHECK(result.model.provenance().solver == std::string(Variant::name));
    CHECK(result.model.provenance().loss == std::string(Loss::name));
    CHECK(result.model.has_intercept() == intercept);
  };
  one.template operator()<Smooth>();
  one.template operator()<Adaptive>();
}

}  // namespace sparsemc::scd_test
