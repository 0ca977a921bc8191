#pragma once
/// The generated sparse problem the solver tests share: X (n × d, each entry present with
/// probability `density`, values uniform in [−1, 1)), the first K samples in classes 0…K−1 so
/// that every class is present, and sample weights c_i uniform in [0.5, 2) when `weighted`.

#include <Eigen/SparseCore>

#include <cstdint>
#include <vector>

#include <sparsemc/core/rng.hpp>
#include <sparsemc/data/labels.hpp>
#include <sparsemc/data/problem.hpp>

namespace sparsemc_test {

using namespace sparsemc;

/// How the labels are drawn.
enum class RandomLabels {
  multiclass,     ///< one class per sample, uniform
  each_class,     ///< multilabel: each class with probability ½ (some samples get none, some all)
  up_to_three,    ///< multilabel: 0–3 uniform draws of a class (repeats merge)
};

template <class Scalar, class Index = std::int32_t, int Order = Eigen::ColMajor>
struct RandomProblem {
  Eigen::SparseMatrix<Scalar, Order, Index> A;
  LabelSets labels;
  std::vector<Scalar> weights;

  RandomProblem(Index n, Index d, ClassIndex K, double density, std::uint64_t seed, bool weighted = false,
                RandomLabels kind = RandomLabels::multiclass)
      : labels(K) {
    Rng rng(seed);
    std::vector<Eigen::Triplet<Scalar, Index>> triplets;
    for (Index i = 0; i < n; ++i)
      for (Index j = 0; j < d; ++j)
        if (uniform_real(rng) < density) triplets.emplace_back(i, j, static_cast<Scalar>(2 * uniform_real(rng) - 1));
    A.resize(n, d);
    A.setFromTriplets(triplets.begin(), triplets.end());
    A.makeCompressed();
    for (Index i = 0; i < n; ++i) labels.push_back(draw_classes(rng, i, K, kind));
    if (weighted)
      for (Index i = 0; i < n; ++i) weights.push_back(static_cast<Scalar>(0.5 + 1.5 * uniform_real(rng)));
  }

  [[nodiscard]] Problem<Scalar, Index, Order> problem() const {
    return {SparseView<Scalar, Index, Order>(A), labels.view(), weights};
  }

  /// X as a column-major dense matrix, and as the CSC matrix that stores all of its n·d entries,
  /// zeros too (the walk of a dense column: data/feature_columns.hpp).
  struct DenseX {
    Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic> X;
    Eigen::SparseMatrix<Scalar, Eigen::ColMajor, Index> stored;
  };
  [[nodiscard]] DenseX dense_columns() const {
    DenseX out{A.toDense(), {A.rows(), A.cols()}};
    std::vector<Eigen::Triplet<Scalar, Index>> every;
    for (Index j = 0; j < A.cols(); ++j)
      for (Index i = 0; i < A.rows(); ++i) every.emplace_back(i, j, out.X(i, j));
    out.stored.setFromTriplets(every.begin(), every.end());
    out.stored.makeCompressed();
    return out;
  }

 private:
  static std::vector<ClassIndex> draw_classes(Rng& rng, Index i, ClassIndex K, RandomLabels kind) {
    std::vector<ClassIndex> classes;
    switch (kind) {
      case RandomLabels::multiclass:
        classes.push_back(static_cast<ClassIndex>(i < K ? i : static_cast<Index>(uniform_index(rng, static_cast<std::uint64_t>(K)))));
        break;
      case RandomLabels::each_class:
        for (ClassIndex k = 0; k < K; ++k)
          if (uniform_real(rng) < 0.5 || (i < K && k == static_cast<ClassIndex>(i))) classes.push_back(k);
        break;
      case RandomLabels::up_to_three:
        for (std::uint64_t c = 0, count = uniform_index(rng, 4); c < count; ++c)
          classes.push_back(static_cast<ClassIndex>(uniform_index(rng, static_cast<std::uint64_t>(K))));
        break;
    }
    return classes;
  }
};

}  // namespace sparsemc_test
