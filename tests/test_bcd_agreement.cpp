// BlockCD against the reference solver ProxGradient (FISTA) on the same problem: for every loss
// × penalty × step rule, the returned model is a KKT point of (1) (exact optimality violation
// from objective.hpp) and both solvers reach the same objective to 1e-6 relative. Generated
// data (multiclass and multilabel, float and double), the bundled dna, and — in the hidden
// [shared] case — the first rows of the real data sets of ../shared/data.

#include <catch2/catch.hpp>

#include "skip.hpp"
#include "test_scalars.hpp"

#include <sparsemc/core/rng.hpp>
#include <sparsemc/io/libsvm.hpp>
#include <sparsemc/io/liblinear_model.hpp>
#include <sparsemc/loss/losses.hpp>
#include <sparsemc/penalty/penalties.hpp>
#include <sparsemc/solver/bcd/block_cd.hpp>
#include <sparsemc/solver/fista/prox_gradient.hpp>
#include <sparsemc/solver/objective.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <numeric>
#include <span>
#include <string>
#include <type_traits>
#include <unistd.h>
#include <vector>

using namespace sparsemc;

namespace {

using sparsemc_test::sanitizer_run;

double rel(double a, double b) { return std::abs(a - b) / std::max({std::abs(a), std::abs(b), 1e-300}); }

/// F of (1) at a model, computed apart from objective.hpp: S = XW + 1bᵀ as a dense product in
/// double, (1/n) Σ_i c_i ℓ(s_i, y_i) with the loss's value, plus the penalty's value row by row.
template <class Loss, class Penalty, class Scalar>
double dense_objective(const Loss& loss, const Penalty& penalty, const CscProblem<Scalar>& problem,
                       const LinearModel<Scalar>& model) {
  const Eigen::MatrixXd W = model.dense().template cast<double>();
  Eigen::MatrixXd S = Eigen::MatrixXd(problem.X.eigen().template cast<double>()) * W;
  if (model.has_intercept()) S.rowwise() += model.intercept().template cast<double>().transpose();
  double L = 0.0;
  std::vector<Scalar> s(static_cast<std::size_t>(S.cols()));
  for (Eigen::Index i = 0; i < S.rows(); ++i) {
    for (Eigen::Index k = 0; k < S.cols(); ++k) s[static_cast<std::size_t>(k)] = static_cast<Scalar>(S(i, k));
    L += static_cast<double>(problem.weight(static_cast<std::int32_t>(i))) *
         static_cast<double>(loss.value(std::span<const Scalar>(s), problem.y[static_cast<std::size_t>(i)]));
  }
  double R = 0.0;
  for (Eigen::Index j = 0; j < W.rows(); ++j) {
    const Eigen::VectorXd row = W.row(j).transpose();
    R += penalty.value(std::span<const double>(row.data(), static_cast<std::size_t>(row.size())));
  }
  return L / static_cast<double>(S.rows()) + R;
}

/// A random problem whose labels depend on the features (a planted sparse W), so that the
/// optimum has structure: X n × d with about `density` filled, entries in [−1, 1).
template <class Scalar>
struct PlantedProblem {
  CscMatrix<Scalar> A;
  LabelSets labels;

  PlantedProblem(std::int32_t n, std::int32_t d, ClassIndex K, double density, std::uint64_t seed, bool multilabel)
      : labels(K) {
    Rng rng(seed);
    std::vector<Eigen::Triplet<Scalar>> triplets;
    for (std::int32_t i = 0; i < n; ++i)
      for (std::int32_t j = 0; j < d; ++j)
        if (uniform_real(rng) < density) triplets.emplace_back(i, j, static_cast<Scalar>(2 * uniform_real(rng) - 1));
    A.resize(n, d);
    A.setFromTriplets(triplets.begin(), triplets.end());
    A.makeCompressed();
    Eigen::MatrixXd W = Eigen::MatrixXd::Zero(d, K);
    for (std::int32_t j = 0; j < d; j += 3)
      for (ClassIndex k = 0; k < K; ++k) W(j, k) = 4 * (uniform_real(rng) - 0.5);
    const Eigen::MatrixXd S = Eigen::MatrixXd(A.template cast<double>()) * W;
    for (std::int32_t i = 0; i < n; ++i) {
      std::vector<ClassIndex> classes;
      Eigen::Index best = 0;
      S.row(i).maxCoeff(&best);
      classes.push_back(static_cast<ClassIndex>(uniform_real(rng) < 0.8 ? best : uniform_index(rng, K)));
      if (multilabel)
        for (ClassIndex k = 0; k < K; ++k)
          if (S(i, k) > 0.5) classes.push_back(k);
      labels.push_back(classes);
    }
  }
  [[nodiscard]] CscProblem<Scalar> problem() const { return {CscView<Scalar>(A), labels.view(), {}}; }
};

template <class Scalar>
std::vector<Label> iota_labels(ClassIndex K) {
  std::vector<Label> out(static_cast<std::size_t>(K));
  for (ClassIndex k = 0; k < K; ++k) out[static_cast<std::size_t>(k)] = k;
  return out;
}

/// Fits BlockCD with both step rules and ProxGradient, checks the KKT violation of each
/// BlockCD model (relative to W = 0) and the agreement of the objectives.
template <class Loss, class Penalty, class Scalar>
void agree(const CscProblem<Scalar>& problem, const Penalty& penalty, bool fit_intercept, double bcd_tol,
           double kkt_factor, double agreement, double reference_tol = -1, bool constant_step = true) {
  INFO("loss " << Loss::name << ", penalty " << Penalty::name << ", lambda " << penalty.lambda << ", mu "
               << penalty.mu << (fit_intercept ? ", intercept" : ""));
  const Loss loss;
  const auto d = problem.n_features();
  const auto K = problem.n_classes();
  const ProxGradient reference(loss, penalty,
                               ProxGradientOptions{.tol = reference_tol > 0 ? reference_tol
                                                                   : std::is_same_v<Scalar, float> ? 1e-6 : 1e-10,
                                                   .max_epochs = 200000, .fit_intercept = fit_intercept});
  const auto ref = reference.fit(problem);
  REQUIRE(ref.info.status == Status::converged);  // the reference is certified, or it proves nothing
  const auto zero = optimality_violation(loss, penalty, problem, ClassMatrix<Scalar>::Zero(d, K),
                                         ClassVector<Scalar>::Zero(fit_intercept ? K : 0), fit_intercept);
  auto one = [&](auto rule) {
    using Rule = decltype(rule);
    INFO("step rule " << Rule::name);
    const BlockCD<Loss, Penalty, Rule> solver(loss, penalty,
                                              {.tol = bcd_tol, .max_epochs = 200000, .fit_intercept = fit_intercept});
    const auto result = solver.fit(problem);
    CHECK(result.info.status == Status::converged);
    // tol bounds the relative duality gap (certified); the KKT violation at a point of
    // relative gap g is O(√g), hence the tenfold margin on the KKT factors calibrated for the
    // old measure (relative KKT ≤ tol).
    CHECK(result.info.relative_gap <= bcd_tol);
    const auto kkt = optimality_violation(loss, penalty, problem, result.model.dense(),
                                          fit_intercept ? result.model.intercept() : ClassVector<Scalar>(), fit_intercept);
    CHECK(kkt.total() <= 10 * kkt_factor * zero.total());
    CHECK(rel(result.info.objective, ref.info.objective) <= agreement);
    // The reported objective is (1) at the returned model, recomputed here without objective.hpp
    // (which filled it): dense scores, the loss per sample, the weighted mean, the penalty per row.
    CHECK(rel(result.info.objective, dense_objective(loss, penalty, problem, result.model)) <=
          (std::is_same_v<Scalar, float> ? 1e-5 : 1e-12));  // summation orders differ
  };
  one(TsengYun{});
  if (constant_step) one(RichtarikTakac{});
}

/// Every penalty at one λ (a fraction of λ_max) and a small ridge term.
template <class Loss, class Scalar>
void agree_all_penalties(const CscProblem<Scalar>& problem, double fraction, double mu, bool fit_intercept,
                         double bcd_tol, double kkt_factor, double agreement) {
  const Loss loss;
  auto at = [&](auto penalty) {
    penalty.lambda = fraction * lambda_max(loss, penalty, problem, fit_intercept);
    penalty.mu = mu;
    agree<Loss>(problem, penalty, fit_intercept, bcd_tol, kkt_factor, agreement);
  };
  at(L1L2{});
  at(L1{});
  at(L1Linf{});
}

}  // namespace

TEMPLATE_TEST_CASE("BlockCD agrees with ProxGradient for every loss x penalty x step rule", "[bcd][agreement]",
                   SPARSEMC_TEST_SCALARS) {
  using Scalar = TestType;
  const bool single = std::is_same_v<Scalar, float>;
  const PlantedProblem<Scalar> multiclass(240, 36, 4, 0.3, 1, false);
  const auto problem = multiclass.problem();
  const double tol = single ? 1e-5 : 1e-8;
  const double kkt = single ? 1e-2 : 1e-5;
  const double agreement = single ? 2e-5 : 1e-6;
  for (const double fraction : {0.3, 0.05}) {
    agree_all_penalties<SquaredHinge>(problem, fraction, 0.0, false, tol, kkt, agreement);
    agree_all_penalties<OvrSquaredHinge>(problem, fraction, 0.0, false, tol, kkt, agreement);
    agree_all_penalties<Logistic>(problem, fraction, 0.0, false, tol, kkt, agreement);
  }
  // Ridge and intercept together.
  agree_all_penalties<SquaredHinge>(problem, 0.1, 1e-2, true, tol, kkt, agreement);
  agree_all_penalties<Logistic>(problem, 0.1, 1e-2, true, tol, kkt, agreement);
}

TEST_CASE("BlockCD agrees with ProxGradient on multilabel data", "[bcd][agreement]") {
  const PlantedProblem<double> multilabel(200, 30, 5, 0.3, 2, true);
  const auto problem = multilabel.problem();
  REQUIRE(problem.y.multilabel());
  agree_all_penalties<OvrSquaredHinge>(problem, 0.1, 0.0, false, 1e-8, 1e-5, 1e-6);
  agree_all_penalties<Logistic>(problem, 0.1, 1e-3, true, 1e-8, 1e-5, 1e-6);
}

TEST_CASE("BlockCD agrees with ProxGradient on dna", "[bcd][agreement][data]") {
  const std::filesystem::path path = sparsemc_test::repo_data() / "dna.scale";
  REQUIRE(std::filesystem::exists(path));  // data/dna.scale ships with the repository
  const auto data = io::read_libsvm<double>(path);
  const auto problem = data.problem<Eigen::ColMajor>();
  const double tol = sanitizer_run() ? 1e-5 : 1e-6;  // 1e-6 of v_0 puts F within ~1e-9 here
  const double agreement = sanitizer_run() ? 1e-3 : 1e-6;
  agree<SquaredHinge>(problem, L1L2{.lambda = 1e-2}, false, tol, 1e-4, agreement, 1e-8);
  if (sanitizer_run()) {
    SPARSEMC_SKIP_PART("the sanitizer run checks the first loss only");
    return;
  }
  agree<OvrSquaredHinge>(problem, L1{.lambda = 1e-2}, false, tol, 1e-4, agreement, 1e-8);
  agree<Logistic>(problem, L1Linf{.lambda = 1e-2}, false, tol, 1e-4, agreement, 1e-8, false);  // bcd-cst: 600 epochs
  // (Ridge and intercept are checked on the generated problems above: on dna's uncentred binary
  // features the intercept block is strongly coupled to every row and needs ~10⁴ epochs.)
}

// ------------------------------------------------------------------------------------------------
// LIBLINEAR -s 5 -c C solves OvrSquaredHinge + L1 with λ = 1/(Cn), μ = 0 (one binary problem
// per class).
// ------------------------------------------------------------------------------------------------

namespace {

/// F of (1) (OvrSquaredHinge + L1) at a LIBLINEAR -s 5 model file, columns in the data's class order.
double liblinear_objective(const std::string& model_file, const Dataset<double>& data, const L1& penalty) {
  const auto imported = io::load_liblinear_model<double>(model_file);
  ClassMatrix<double> dense = ClassMatrix<double>::Zero(data.n_features(), imported.n_classes());
  for (std::size_t s = 0; s < imported.support().size(); ++s)
    if (imported.support()[s] < data.n_features())
      for (auto [k, w] : imported.row(s)) dense(imported.support()[s], k) = w;
  ClassMatrix<double> W(data.n_features(), data.n_classes());
  for (Eigen::Index k = 0; k < W.cols(); ++k)
    W.col(k) = dense.col(imported.class_of(data.encoder().labels()[static_cast<std::size_t>(k)]));
  ClassMatrix<double> S;
  return objective(OvrSquaredHinge{}, penalty, data.problem<Eigen::ColMajor>(), W, ClassVector<double>(), S).total();
}

}  // namespace

TEST_CASE("BlockCD reaches LIBLINEAR -s 5's objective at -e 0.001 on dna", "[bcd][liblinear][external]") {
  if (std::system("command -v liblinear-train > /dev/null 2>&1") != 0)
    SPARSEMC_SKIP("liblinear-train is not installed (Debian package liblinear-tools)");
  if (sanitizer_run()) SPARSEMC_SKIP("under the sanitizer run (hundreds of epochs; the Release run checks it)");
  const std::filesystem::path file = sparsemc_test::repo_data() / "dna.scale";
  REQUIRE(std::filesystem::exists(file));
  const auto data = io::read_libsvm<double>(file);
  const L1 penalty{.lambda = 1.0 / static_cast<double>(data.n_samples()), .mu = 0};  // C = 1
  const std::string model =
      (std::filesystem::temp_directory_path() / ("bcd_liblinear_" + std::to_string(::getpid()) + ".model")).string();
  REQUIRE(std::system(("liblinear-train -q -s 5 -c 1 -e 0.001 " + file.string() + " " + model).c_str()) == 0);
  const double F_liblinear = liblinear_objective(model, data, penalty);
  std::filesystem::remove(model);
  // LIBLINEAR's -e 0.001 ends near 5e-5 of BlockCD's measure here (see block_cd.hpp): tol 1e-5.
  const auto result =
      BlockCD<OvrSquaredHinge, L1, TsengYun>({}, penalty, {.tol = 1e-5, .max_epochs = 100000}).fit(data.problem<Eigen::ColMajor>());
  INFO("bcd-ls " << result.info.objective << " after " << result.info.epochs << " epochs; liblinear " << F_liblinear);
  CHECK(result.info.status == Status::converged);
  CHECK(result.info.objective <= F_liblinear);
}

// ------------------------------------------------------------------------------------------------
// The real data sets of ../shared/data (hidden: run with `test_bcd "[shared]"`). The first rows of
// each set (wide once compacted: sector's first 400 rows use 13 706 of its 55 197 features), two
// λ per loss × penalty pair. Not registered with ctest: on sector's rows BlockCD takes minutes per
// fit to certify 1e-6 — CD moves weight slowly between near-proportional rare columns (features
// of one or two samples with almost equal values), docs/bcd.md "The slow tail".
// ------------------------------------------------------------------------------------------------

namespace {

/// The first `rows` samples of a data set, on the features they use (empty columns dropped).
Dataset<double> head_of(const Dataset<double>& data, std::int32_t rows) {
  std::vector<std::int64_t> first(static_cast<std::size_t>(std::min<std::int32_t>(rows, data.n_samples())));
  std::iota(first.begin(), first.end(), std::int64_t{0});
  Dataset<double> head = data.subset(first);
  head.compact_features();
  return head;
}

}  // namespace

TEST_CASE("BlockCD agrees with ProxGradient on the shared real data sets", "[.][shared][bcd]") {
  struct Set {
    const char* file;
    std::int32_t rows;
  };
  const std::filesystem::path root = sparsemc_test::shared_data() / "multiclass";
  int fitted = 0;
  for (const Set set : {Set{"dna.scale", 1000}, Set{"sector.scale.bz2", 400}, Set{"news20.t", 400},
                        Set{"mnist10k_npm.bz2", 600}}) {
    const auto path = root / set.file;
    if (!std::filesystem::exists(path)) {
      SPARSEMC_SKIP_PART(path << " not found");
      continue;
    }
    INFO("data " << set.file);
    const auto data = head_of(io::read_libsvm<double>(path), set.rows);
    const auto problem = data.problem<Eigen::ColMajor>();
    for (const double fraction : {0.2, 0.05}) {
      auto at = [&](auto loss, auto penalty) {
        using Loss = decltype(loss);
        penalty.lambda = fraction * lambda_max(loss, penalty, problem, false);
        // BlockCD certified to 1e-6 (relative gap), the reference to 1e-9: F agrees to 2e-6.
        agree<Loss>(problem, penalty, false, 1e-6, 1e-3, 2e-6, 1e-9);
      };
      at(SquaredHinge{}, L1L2{});
      at(OvrSquaredHinge{}, L1{});
      at(Logistic{}, L1Linf{});
    }
    ++fitted;
  }
  if (fitted == 0) SPARSEMC_SKIP(root << " holds none of the sets (the shared data is absent)");
}

// ------------------------------------------------------------------------------------------------
// Stopping you can trust (issue 15): at DEFAULT options (tol = 1e-3, the relative duality gap),
// every loss × penalty × step rule × intercept on a wide (d ≫ n) and a tall (n ≫ d) problem is
// converged, certified (relative gap ≤ 1e-3), and its reported gap bounds F − F*, with F* from a
// BlockCD solve certified to 1e-10 by the same gap (so F* ≥ F_ref − gap_ref, F_ref ≥ F*).
// ------------------------------------------------------------------------------------------------

namespace {

template <class Loss, class Penalty, class Rule>
void certified_at_defaults(const CscProblem<double>& problem, Penalty penalty, double fraction, bool intercept) {
  const Loss loss;
  if (penalty.lambda == 0 && fraction > 0) penalty.lambda = fraction * lambda_max(loss, penalty, problem, intercept);
  INFO("loss " << Loss::name << ", penalty " << Penalty::name << ", rule " << Rule::name << ", lambda "
               << penalty.lambda << ", mu " << penalty.mu << (intercept ? ", intercept" : ""));
  const auto tight = BlockCD<Loss, Penalty, Rule>(loss, penalty, {.tol = 1e-10, .max_epochs = 200000, .fit_intercept = intercept})
                         .fit(problem);
  REQUIRE(tight.info.status == Status::converged);
  const double F_star = tight.info.objective;  // within 1e-10 relative of F*, certified
  // On one thread: on several, a one-vs-rest fit with an entrywise penalty reports the sum of its
  // class ranges' gaps (test_parallel.cpp checks those), not the whole problem's.
  const auto fit = BlockCD<Loss, Penalty, Rule>(loss, penalty, {.fit_intercept = intercept, .threads = 1}).fit(problem);
  REQUIRE(fit.info.status == Status::converged);
  CHECK(fit.info.relative_gap <= 1e-3);
  const double F = fit.info.objective;
  // F is (1) at the returned model (recomputed independently of the solver's caches).
  CHECK(rel(F, objective(loss, penalty, problem, fit.model).total()) <= 1e-10);
  CHECK(fit.info.duality_gap >= F - F_star - 1e-10 * std::abs(F_star));
  CHECK((F - F_star) / std::abs(F_star) <= 1e-3);
  // The reported gap is the gap at the returned model.
  GapWorkspace<double> work;
  CHECK(rel(duality_gap(loss, penalty, problem, fit.model, work).gap(), fit.info.duality_gap) <= 1e-8);
}

template <class Loss, class Rule>
void certified_all_penalties(const CscProblem<double>& problem, bool intercept) {
  certified_at_defaults<Loss, L1L2, Rule>(problem, L1L2{}, 0.1, intercept);
  certified_at_defaults<Loss, L1, Rule>(problem, L1{}, 0.1, intercept);
  certified_at_defaults<Loss, L1Linf, Rule>(problem, L1Linf{}, 0.1, intercept);
  certified_at_defaults<Loss, NoPenalty, Rule>(problem, NoPenalty{.mu = 1e-2}, 0.0, intercept);
  certified_at_defaults<Loss, L1, Rule>(problem, L1{.mu = 1e-2}, 0.1, intercept);
}

template <class Loss>
void certified_all(const CscProblem<double>& problem, bool intercept) {
  certified_all_penalties<Loss, TsengYun>(problem, intercept);
  certified_all_penalties<Loss, RichtarikTakac>(problem, intercept);
}

}  // namespace

TEST_CASE("BlockCD at default options: converged means certified within 1e-3 of F*", "[bcd][gap]") {
  const PlantedProblem<double> wide(30, 240, 3, 0.2, 41, false);
  const PlantedProblem<double> tall(400, 12, 3, 0.5, 43, false);
  if (sanitizer_run())
    SPARSEMC_SKIP_PART("the sanitizer run fits the wide problem without intercept, the tall one with it");
  for (const auto* shape : {&wide, &tall}) {
    const auto problem = shape->problem();
    for (const bool intercept : {false, true}) {
      if (sanitizer_run() && intercept != (shape == &tall)) continue;
      certified_all<SquaredHinge>(problem, intercept);
      certified_all<HuberHinge>(problem, intercept);
      certified_all<OvrSquaredHinge>(problem, intercept);
      certified_all<Logistic>(problem, intercept);
      certified_all<LeastSquares>(problem, intercept);
    }
  }
}
