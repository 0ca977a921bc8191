#pragma once
/// \file preconditioner.hpp
/// Diagonal step sizes for FBPD's operator T (implementation detail), after Pock & Chambolle,
/// "Diagonal preconditioning for first order primal-dual algorithms in convex optimization"
/// (ICCV 2011), Lemma 2 with α = 1: τ_c = 1/Σ_r |T_rc| per primal coordinate and
/// σ_r = 1/Σ_c |T_rc| per dual coordinate give ‖Σ^{½} T 𝒯^{½}‖ ≤ 1.
///
/// Chierchia's T maps W to the score differences u_ik = x̃_iᵀ(w_k − w_{c_i}) (c_i the label of
/// sample i, x̃_i = [x_i, 1] with an intercept). Its absolute row and column sums are
///   row (i, k ≠ c_i):  2‖x̃_i‖₁        (w_k and w_{c_i} both enter; the row k = c_i is zero)
///   column (j, k):     Σ_{i: c_i ≠ k} |x_ij| + (K − 1) Σ_{i: c_i = k} |x_ij|
///                    = A_j + (K − 2) B_jk,   A_j = Σ_i |x_ij|,  B_jk = Σ_{i: c_i = k} |x_ij|.
/// The prox of a penalty row (or group) needs one step for the whole row, and a dual block
/// (y_i, the simplex or epigraph projection) one step for the whole block, so
///   τ⁰_j = 1 / max_k (A_j + (K − 2) B_jk),   σ⁰_i = 1 / (2‖x̃_i‖₁),
/// which still satisfies the lemma (a smaller step per coordinate only lowers the norm).
/// Samples with c_i = 0 do not enter T. An all-zero feature or sample gets 1 (its part of T
/// vanishes, so any step is admissible). Over a part of a problem split by samples, A, B and
/// the class counts are completed by a `Sums` policy (solver/sample_sums.hpp); σ⁰ is per sample.

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <span>
#include <vector>

#include "../../../core/traits.hpp"
#include "../../../data/dense_problem.hpp"
#include "../../../data/problem.hpp"
#include "../../../data/sample_entries.hpp"
#include "../../sample_sums.hpp"

namespace sparsemc::detail {

/// τ⁰ (d feature rows, then the intercept in `tau0_b`) and σ⁰ (n samples) of the file comment;
/// all ones when `enabled` is false (plain scalar steps).
struct DiagonalSteps {
  std::vector<double> tau0;    ///< per feature row
  double tau0_b = 1.0;         ///< the intercept row
  std::vector<double> sigma0;  ///< per sample
};

template <TrainingProblem Prob, class Sums = LocalSums>
DiagonalSteps diagonal_steps(const Prob& problem, bool intercept, bool enabled, const Sums& sums = {}) {
  using Scalar = ProblemScalar<Prob>;
  using Index = ProblemIndex<Prob>;
  const Eigen::Index n = problem.n_samples(), d = problem.n_features();
  const ClassIndex K = problem.n_classes();
  DiagonalSteps steps{std::vector<double>(static_cast<std::size_t>(d), 1.0), 1.0,
                      std::vector<double>(static_cast<std::size_t>(n), 1.0)};
  if (!enabled || K < 2) return steps;
  Eigen::VectorXd A = Eigen::VectorXd::Zero(d);
  Eigen::MatrixXd B = Eigen::MatrixXd::Zero(d, K);
  std::vector<double> row_l1(static_cast<std::size_t>(n), intercept ? 1.0 : 0.0);
  Eigen::VectorXd class_count = Eigen::VectorXd::Zero(K);
  auto add = [&](Eigen::Index i, Eigen::Index j, Scalar value) {
    const double a = std::abs(static_cast<double>(value));
    A[j] += a;
    B(j, problem.y.single(static_cast<std::size_t>(i))) += a;
    row_l1[static_cast<std::size_t>(i)] += a;
  };
  if constexpr (std::same_as<Prob, DenseProblem<Scalar>>) {
    for (Eigen::Index i = 0; i < n; ++i)
      if (problem.weight(i) != Scalar(0))
        for (auto [j, value] : sample_entries(problem, i)) add(i, j, value);
  } else {
    constexpr bool rows = !Prob::View::is_csc;
    const auto& X = problem.X;
    for (Index outer = 0; outer < X.outer_size(); ++outer) {
      for (auto [inner, value] : X.outer(outer)) {
        const Eigen::Index i = rows ? outer : inner;
        const Eigen::Index j = rows ? inner : outer;
        if (problem.weight(static_cast<Index>(i)) != Scalar(0)) add(i, j, value);
      }
    }
  }
  double active = 0.0;
  for (Eigen::Index i = 0; i < n; ++i) {
    if (problem.weight(static_cast<Index>(i)) == Scalar(0)) continue;
    active += 1.0;
    class_count[problem.y.single(static_cast<std::size_t>(i))] += 1.0;
    const double sum = 2.0 * row_l1[static_cast<std::size_t>(i)];
    if (sum > 0.0) steps.sigma0[static_cast<std::size_t>(i)] = 1.0 / sum;
  }
  sums(std::span<double>(A.data(), static_cast<std::size_t>(A.size())));
  sums(std::span<double>(B.data(), static_cast<std::size_t>(B.size())));
  sums(std::span<double>(class_count.data(), static_cast<std::size_t>(class_count.size())));
  sums(active);
  const double K2 = static_cast<double>(K - 2);
  for (Eigen::Index j = 0; j < d; ++j) {
    const double sum = A[j] + K2 * B.row(j).maxCoeff();
    if (sum > 0.0) steps.tau0[static_cast<std::size_t>(j)] = 1.0 / sum;
  }
  if (intercept) {
    const double sum = active + K2 * class_count.maxCoeff();
    if (sum > 0.0) steps.tau0_b = 1.0 / sum;
  }
  return steps;
}

}  // namespace sparsemc::detail
