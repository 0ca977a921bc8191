// FBPD (Chierchia et al. 2015): the block regulariser against brute force; Algorithm 1 on the
// Crammer–Singer hinge certified by its duality gap / KKT residual and by directional
// derivatives of the objective recomputed densely; Algorithm 2 with η = L(W₁) recovering W₁;
// agreement with LIBLINEAR -s 4 (λ = 0), FCBCFW (ℓ1 + ridge) and ProxGradient (smooth losses);
// feature blocks, warm start, determinism, float/double, CSR/CSC, int32/int64, options.
// The LP comparison with cvxopt is tests/scripts/fbpd_lp_check.py (registered in fbpd.cmake).

#include <catch2/catch.hpp>

#include "skip.hpp"
#include "test_scalars.hpp"

#include <sparsemc/core/rng.hpp>
#include <sparsemc/data/dataset.hpp>
#include <sparsemc/io/liblinear_model.hpp>
#include <sparsemc/io/libsvm_reader.hpp>
#include <sparsemc/loss/losses.hpp>
#include <sparsemc/penalty/penalties.hpp>
#include <sparsemc/solver/fbpd/fbpd.hpp>
#include <sparsemc/solver/fcbcfw/fcbcfw.hpp>
#include <sparsemc/solver/fista/prox_gradient.hpp>
#include <sparsemc/solver/objective.hpp>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

using namespace sparsemc;

namespace {

using Dense = Eigen::MatrixXd;

using sparsemc_test::sanitizer_run;

/// An owning random multiclass problem: X (n × d, about `density` filled, entries in [−1, 1)),
/// every class present, optional weights c_i in [0.5, 2).
template <class Scalar, class Index = std::int32_t>
Dataset<Scalar, Index> make_data(Index n, Index d, ClassIndex K, double density, std::uint64_t seed,
                                   bool weighted = false) {
  Rng rng(seed);
  std::vector<Eigen::Triplet<Scalar, Index>> triplets;
  std::vector<ClassIndex> y(static_cast<std::size_t>(n));
  for (Index i = 0; i < n; ++i) {
    y[static_cast<std::size_t>(i)] = static_cast<ClassIndex>(i < K ? i : static_cast<Index>(uniform_index(rng, static_cast<std::uint64_t>(K))));
    for (Index j = 0; j < d; ++j)
      if (uniform_real(rng) < density) {
        // A class-dependent shift makes the problem learnable (a nonzero solution).
        const double shift = (j % K == y[static_cast<std::size_t>(i)]) ? 0.7 : 0.0;
        triplets.emplace_back(i, j, static_cast<Scalar>(2 * uniform_real(rng) - 1 + shift));
      }
  }
  CsrMatrix<Scalar, Index> X(n, d);
  X.setFromTriplets(triplets.begin(), triplets.end());
  std::vector<Label> labels(static_cast<std::size_t>(K));
  for (ClassIndex k = 0; k < K; ++k) labels[static_cast<std::size_t>(k)] = k;
  Dataset<Scalar, Index> data(std::move(X), LabelSets::multiclass(y, K), LabelEncoder(labels));
  if (weighted) {
    std::vector<Scalar> w;
    for (Index i = 0; i < n; ++i) w.push_back(static_cast<Scalar>(0.5 + 1.5 * uniform_real(rng)));
    data.set_sample_weights(std::move(w));
  }
  return data;
}

/// Rows [0, rows) of a dataset (same label table).
template <class Scalar>
Dataset<Scalar> head(const Dataset<Scalar>& data, std::int32_t rows) {
  CsrMatrix<Scalar> X = data.matrix().topRows(rows);
  X.makeCompressed();
  std::vector<ClassIndex> y;
  for (std::int32_t i = 0; i < rows; ++i) y.push_back(data.labels().view().single(static_cast<std::size_t>(i)));
  return Dataset<Scalar>(std::move(X), LabelSets::multiclass(y, data.n_classes()), data.encoder());
}

/// Dense, double: F of (1) for the Crammer–Singer hinge with a row penalty, from scratch.
template <class Scalar, class Index, class Penalty>
double dense_objective(const Dataset<Scalar, Index>& data, const Penalty& penalty, const Dense& W,
                       const Eigen::VectorXd& b) {
  const Dense X = Dense(data.matrix().template cast<double>());
  Dense S = X * W;
  if (b.size() > 0) S.rowwise() += b.transpose();
  const auto y = data.labels().view();
  const auto costs = data.costs();
  double loss = 0.0;
  for (Eigen::Index i = 0; i < S.rows(); ++i) {
    const auto c = y.single(static_cast<std::size_t>(i));
    double rival = -std::numeric_limits<double>::infinity();
    for (Eigen::Index k = 0; k < S.cols(); ++k)
      if (k != c) rival = std::max(rival, S(i, k));
    const double weight = costs.empty() ? 1.0 : static_cast<double>(costs[static_cast<std::size_t>(i)]);
    loss += weight * std::max(0.0, 1.0 + rival - S(i, c));
  }
  double pen = 0.0;
  for (Eigen::Index j = 0; j < W.rows(); ++j) {
    const Eigen::VectorXd row = W.row(j).transpose();
    pen += static_cast<double>(penalty.value(std::span<const double>(row.data(), static_cast<std::size_t>(row.size()))));
  }
  return loss / static_cast<double>(S.rows()) + pen;
}

/// min over random unit directions D (and intercept directions) of (F(W + εD) − F(W))/ε. At a
/// point with F(W) − F* ≤ δ it is ≥ −δ/ε (F(W + εD) ≥ F*), whatever the direction.
template <class Scalar, class Index, class Penalty>
double worst_slope(const Dataset<Scalar, Index>& data, const Penalty& penalty, const Dense& W, const Eigen::VectorXd& b,
                   double step, std::uint64_t seed) {
  Rng rng(seed);
  const double F = dense_objective(data, penalty, W, b);
  double worst = std::numeric_limits<double>::infinity();
  for (int r = 0; r < 300; ++r) {
    Dense D(W.rows(), W.cols());
    Eigen::VectorXd e(b.size());
    for (Eigen::Index j = 0; j < D.rows(); ++j)
      for (Eigen::Index k = 0; k < D.cols(); ++k) D(j, k) = (r % 3 == 0 && W(j, k) == 0) ? 0.0 : uniform_real(rng) - 0.5;
    for (Eigen::Index k = 0; k < e.size(); ++k) e[k] = uniform_real(rng) - 0.5;
    const double norm = std::sqrt(D.squaredNorm() + e.squaredNorm());
    worst = std::min(worst, (dense_objective(data, penalty, W + step * D / norm, b + step * e / norm) - F) / step);
  }
  return worst;
}

template <class Scalar>
Dense dense_W(const Result<Scalar>& r) {
  return r.model.dense().template cast<double>();
}
template <class Scalar>
Eigen::VectorXd dense_b(const Result<Scalar>& r) {
  return r.model.intercept().template cast<double>();
}

double relative(double a, double b) { return std::abs(a - b) / std::max({std::abs(a), std::abs(b), 1e-300}); }

bool have_liblinear() { return std::system("command -v liblinear-train > /dev/null 2>&1") == 0; }

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / (name + "_" + std::to_string(::getpid()))).string();
}

template <class Scalar>
Dataset<Scalar> dna() {
  return io::read_libsvm_plain<Scalar>((sparsemc_test::repo_data() / "dna.scale").string());
}

}  // namespace

// ------------------------------------------------------------------------------------------------
// Options and argument checks.
// ------------------------------------------------------------------------------------------------

TEST_CASE("fbpd: options and arguments are validated, naming the field", "[fbpd]") {
  auto throws_naming = [](auto&& make, const std::string& field) {
    try {
      make();
      FAIL("no exception for " << field);
    } catch (const std::invalid_argument& e) {
      CHECK_THAT(e.what(), Catch::Contains(field));
    }
  };
  throws_naming([] { FBPDOptions{.tol = -1}.validate(); }, "tol");
  throws_naming([] { FBPDOptions{.max_epochs = 0}.validate(); }, "max_epochs");
  throws_naming([] { FBPDOptions{.eta = -1}.validate(); }, "eta");
  throws_naming([] { FBPDOptions{.feature_groups = {0, -2}}.validate(); }, "feature_groups");
  throws_naming([] { FBPDOptions{.norm_safety = 0.5}.validate(); }, "norm_safety");
  throws_naming([] { FBPDOptions{.relaxation = 2.0}.validate(); }, "relaxation");
  throws_naming([] { FBPD<CrammerSinger, L1>({}, {.lambda = -1}); }, "lambda");
  throws_naming([] { FBPD<CrammerSinger, L1L2>({}, {.lambda = 1, .mu = -1}); }, "mu");
  throws_naming([] { FBPD<CrammerSinger, L1, Constrained>({}, {.lambda = 1}); }, "eta");
  throws_naming([] { feature_blocks(10, 0); }, "block_size");

  const auto data = make_data<double>(20, 6, 3, 0.5, 1);
  throws_naming([&] { FBPD<CrammerSinger, L1L2>({}, {.lambda = 0.01}, {.feature_groups = {0, 1}}).fit(data.problem<Eigen::RowMajor>()); },
                "feature_groups");
  LabelSets sets(3);
  for (int i = 0; i < 20; ++i) sets.push_back(std::vector<ClassIndex>{ClassIndex(i % 3), ClassIndex((i + 1) % 3)});
  const Dataset<double> multilabel(data.matrix(), sets, data.encoder());
  throws_naming([&] { FBPD<CrammerSinger, L1>({}, {.lambda = 0.01}).fit(multilabel.problem<Eigen::RowMajor>()); }, "multilabel");

  CHECK(feature_blocks(7, 3) == std::vector<std::int64_t>{0, 0, 0, 1, 1, 1, 2});
  CHECK(FBPD<CrammerSinger, L1>::name == "fbpd");
  CHECK(FBPD<CrammerSinger, L1, Constrained>::name == "fbpd-epi");
}

// ------------------------------------------------------------------------------------------------
// The block regulariser.
// ------------------------------------------------------------------------------------------------

TEST_CASE("fbpd: block regulariser — prox, value, conjugate and violation against brute force", "[fbpd][regulariser]") {
  const Eigen::Index d = 11, K = 3;
  Rng rng(7);
  ClassMatrix<double> V(d, K);
  for (Eigen::Index j = 0; j < d; ++j)
    for (Eigen::Index k = 0; k < K; ++k) V(j, k) = 2 * uniform_real(rng) - 1;
  const std::vector<std::int64_t> groups{0, 0, 1, 1, 1, 2, 3, 3, 3, 3, 0};  // non-contiguous group 0
  const L1L2 penalty{.lambda = 0.4, .mu = 0.3};
  const double step = 0.7;

  for (const bool per_class : {false, true}) {
    INFO("per_class " << per_class);
    detail::Regulariser<L1L2, double> reg(penalty, groups, per_class, d, K);
    // The vectors of the groups: joint = all entries of the rows, per class = one column each.
    auto vectors = [&](const ClassMatrix<double>& M) {
      std::vector<Eigen::VectorXd> out;
      for (std::int64_t g = 0; g < 4; ++g) {
        for (Eigen::Index k = 0; k < (per_class ? K : 1); ++k) {
          std::vector<double> v;
          for (Eigen::Index j = 0; j < d; ++j) {
            if (groups[static_cast<std::size_t>(j)] != g) continue;
            if (per_class) v.push_back(M(j, k));
            else
              for (Eigen::Index kk = 0; kk < K; ++kk) v.push_back(M(j, kk));
          }
          out.push_back(Eigen::Map<Eigen::VectorXd>(v.data(), static_cast<Eigen::Index>(v.size())));
        }
      }
      return out;
    };
    // value = Σ_groups λ‖v‖ + μ/2‖v‖².
    ClassMatrix<double> copy = V;
    double expected = 0.0;
    for (const auto& v : vectors(V)) expected += penalty.lambda * v.norm() + 0.5 * penalty.mu * v.squaredNorm();
    CHECK(reg.value(copy) == Approx(expected).epsilon(1e-14));
    CHECK(copy == V);
    // prox: each group vector shrinks by max(0, 1 − tλ/‖v‖)/(1 + tμ).
    ClassMatrix<double> W = V;
    const std::vector<double> steps(static_cast<std::size_t>(d), step);
    reg.prox(W, steps);
    const auto before = vectors(V), after = vectors(W);
    for (std::size_t g = 0; g < before.size(); ++g) {
      const double factor = std::max(0.0, 1.0 - step * penalty.lambda / before[g].norm()) / (1.0 + step * penalty.mu);
      CHECK((after[g] - factor * before[g]).norm() <= 1e-14);
    }
    // violation at a prox point with the matching gradient, G = −(V − W)/t: 0.
    ClassMatrix<double> G = -(V - W) / step;
    CHECK(reg.violation(W, G) <= 1e-12);
    ClassMatrix<double> G_off = G.array() + 0.05;
    CHECK(reg.violation(W, G_off) > 1e-3);
    // conjugate: Fenchel–Young equality at w* = prox_{(λ/μ)R}(v/μ), inequality elsewhere.
    ClassMatrix<double> Vc = V;
    const double conj = reg.conjugate(Vc);
    for (int r = 0; r < 50; ++r) {
      ClassMatrix<double> Wr(d, K);
      for (Eigen::Index j = 0; j < d; ++j)
        for (Eigen::Index k = 0; k < K; ++k) Wr(j, k) = 3 * uniform_real(rng) - 1.5;
      CHECK(conj >= (V.cwiseProduct(Wr)).sum() - reg.value(Wr) - 1e-12);
    }
    ClassMatrix<double> W_star = V / penalty.mu;
    detail::Regulariser<L1L2, double> inner({.lambda = penalty.lambda / penalty.mu, .mu = 0.0}, groups, per_class, d, K);
    inner.prox(W_star, std::vector<double>(static_cast<std::size_t>(d), 1.0));
    CHECK(conj == Approx(V.cwiseProduct(W_star).sum() - reg.value(W_star)).epsilon(1e-12));
    // dual norm: max over groups of ‖v‖₂.
    double largest = 0.0;
    for (const auto& v : vectors(V)) largest = std::max(largest, v.norm());
    CHECK(reg.max_dual_norm(Vc) == Approx(largest).epsilon(1e-14));
  }
}

// ------------------------------------------------------------------------------------------------
// Algorithm 1 on the Crammer–Singer hinge: certified optimum.
// ------------------------------------------------------------------------------------------------

using Layouts = sparsemc_test::SolverTestTypes<
    std::tuple<std::tuple<float, std::int32_t, std::integral_constant<int, Eigen::RowMajor>>,
               std::tuple<float, std::int64_t, std::integral_constant<int, Eigen::ColMajor>>,
               std::tuple<double, std::int32_t, std::integral_constant<int, Eigen::ColMajor>>,
               std::tuple<double, std::int64_t, std::integral_constant<int, Eigen::RowMajor>>>>;

TEMPLATE_LIST_TEST_CASE("fbpd: Crammer-Singer, Algorithm 1 — gap or KKT certified, no descent direction", "[fbpd]", Layouts) {
  using Scalar = std::tuple_element_t<0, TestType>;
  using Index = std::tuple_element_t<1, TestType>;
  constexpr int Order = std::tuple_element_t<2, TestType>::value;
  constexpr bool is_double = std::is_same_v<Scalar, double>;
  const auto data = make_data<Scalar, Index>(60, 12, 4, 0.5, 3, /*weighted=*/true);
  const auto problem = data.template problem<Order>();
  const double tol = is_double ? 1e-7 : 2e-4;
  // F(W) − F* ≤ tol·F (gap of (1); F < 1), so slopes over a step ε are ≥ −tol/ε; float W is rounded.
  const double step = is_double ? 1e-3 : 1e-2, slope_slack = 2 * tol / step + (is_double ? 0.0 : 1e-3);

  auto check = [&](auto penalty, bool intercept) {
    using Penalty = decltype(penalty);
    INFO(Penalty::name << " lambda " << penalty.lambda << " mu " << penalty.mu << " intercept " << intercept);
    const FBPD<CrammerSinger, Penalty> solver({}, penalty, {.tol = tol, .max_epochs = 200000, .fit_intercept = intercept});
    const Result<Scalar> r = solver.fit(problem);
    INFO("epochs " << r.info.epochs << " measure " << r.info.measure << " gap " << r.info.duality_gap << " relative "
                   << r.info.relative_gap << " F " << r.info.objective);
    REQUIRE(r.info.status == Status::converged);
    CHECK(r.info.relative_gap <= tol);  // converged: the gap of (1), whatever the measure
    if (!intercept) CHECK(r.info.measure == r.info.relative_gap);
    CHECK(r.info.measure_name == (intercept ? "kkt_residual" : "duality_gap"));
    const Dense W = dense_W(r);
    const Eigen::VectorXd b = intercept ? dense_b(r) : Eigen::VectorXd();
    CHECK(relative(r.info.objective, dense_objective(data, penalty, W, b)) <= (is_double ? 1e-12 : 1e-5));
    CHECK(worst_slope(data, penalty, W, b, step, 5) >= -slope_slack);
    CHECK(r.info.nnz == r.model.nnz());
    CHECK(r.model.provenance().solver == "fbpd");
    CHECK(r.model.provenance().loss == "crammer-singer");
    CHECK(r.model.provenance().penalty == Penalty::name);
    CHECK(r.model.provenance().status == "converged");
    CHECK(r.model.has_intercept() == intercept);
  };
  check(L1{.lambda = 0.01, .mu = 0.0}, false);
  if (sanitizer_run()) {
    SPARSEMC_SKIP_PART("the sanitizer run checks the first combination only");
    return;
  }
  check(L1{.lambda = 0.01, .mu = 0.0}, true);
  check(L1L2{.lambda = 0.02, .mu = 0.01}, false);
  check(L1Linf{.lambda = 0.02, .mu = 0.0}, true);
}

// A default fit (only the penalty set) is certified — converged, relative gap of (1) ≤ 1e-3 —,
// its reported gap bounds F − F*, and it is within 1e-3 of F*. F* is bracketed by a tight
// solve (tol 1e-9) of FBPD, [F_t − gap_t, F_t], narrowed by FCBCFW's tight solve where it
// applies (Crammer–Singer with L1 or ridge only), which must agree to 2e-9.
template <class Loss, class Penalty>
void check_default_fit(const Dataset<double>& data, const Loss& loss, const Penalty& penalty, bool intercept) {
  const auto problem = data.problem<Eigen::RowMajor>();
  FBPDOptions defaults;
  defaults.fit_intercept = intercept;
  const auto r = FBPD<Loss, Penalty>(loss, penalty, defaults).fit(problem);
  INFO(Loss::name << " + " << Penalty::name << " lambda " << penalty.lambda << " mu " << penalty.mu << " intercept "
                  << intercept << " n " << problem.n_samples() << " d " << problem.n_features() << ": "
                  << to_string(r.info.status) << " after " << r.info.epochs << ", F " << r.info.objective << " gap "
                  << r.info.duality_gap << " relative " << r.info.relative_gap);
  REQUIRE(r.info.status == Status::converged);
  CHECK(r.info.relative_gap <= 1e-3);
  FBPDOptions tight_options;
  tight_options.tol = 1e-9;
  tight_options.max_epochs = 1000000;
  tight_options.fit_intercept = intercept;
  const auto tight = FBPD<Loss, Penalty>(loss, penalty, tight_options).fit(problem);
  REQUIRE(tight.info.status == Status::converged);
  double high = tight.info.objective, low = tight.info.objective - tight.info.duality_gap;
  if constexpr (Loss::name == std::string_view("crammer-singer") &&
                (std::same_as<Penalty, L1> || std::same_as<Penalty, NoPenalty>)) {
    if (!intercept && penalty.mu > 0.0) {
      const auto other = FCBCFW<Loss, Penalty>({}, penalty, {.tol = 1e-9, .max_epochs = 1000000}).fit(problem);
      REQUIRE(other.info.status == Status::converged);
      CHECK(std::abs(other.info.objective - tight.info.objective) <= 2e-9 * high);
      high = std::min(high, other.info.objective);
      low = std::max(low, other.info.objective - other.info.duality_gap);
    }
  }
  INFO("F* in [" << low << ", " << high << "]");
  REQUIRE(low <= high * (1 + 1e-12));
  const Dense W = dense_W(r);
  const Eigen::VectorXd b = intercept ? dense_b(r) : Eigen::VectorXd();
  double F = 0.0;  // recomputed: densely from scratch for the hinge, else by objective.hpp
  if constexpr (Loss::name == std::string_view("crammer-singer")) {
    F = dense_objective(data, penalty, W, b);
  } else {
    const ClassMatrix<double> Wc = W;
    const ClassVector<double> bc = b;
    ClassMatrix<double> S;
    F = objective(loss, penalty, problem, Wc, bc, S).total();
  }
  CHECK(std::abs(F - r.info.objective) <= 1e-10 * F);
  CHECK(r.info.duality_gap >= F - high);
  CHECK((F - low) / low <= 1e-3);
}

TEST_CASE("fbpd: default options certify a fit within 1e-3 of the optimum (wide and tall)", "[fbpd][defaults]") {
  const auto wide = make_data<double>(40, 400, 4, 0.05, 31);
  const auto tall = make_data<double>(400, 12, 4, 0.5, 32);
  if (sanitizer_run())
    SPARSEMC_SKIP_PART("the sanitizer run fits the wide problem without intercept, the tall one with it");
  for (const auto* data : {&wide, &tall}) {
    const double mu = 1.0 / static_cast<double>(data->n_samples());
    for (const bool intercept : {false, true}) {
      if (sanitizer_run() && intercept != (data == &tall)) continue;
      check_default_fit(*data, CrammerSinger{}, L1{.lambda = 0.01}, intercept);
      check_default_fit(*data, CrammerSinger{}, L1{.lambda = 0.005, .mu = mu}, intercept);
      check_default_fit(*data, CrammerSinger{}, L1L2{.lambda = 0.02}, intercept);
      check_default_fit(*data, CrammerSinger{}, L1Linf{.lambda = 0.02, .mu = mu}, intercept);
      check_default_fit(*data, CrammerSinger{}, NoPenalty{.mu = mu}, intercept);
      check_default_fit(*data, Logistic{}, L1L2{.lambda = 0.01}, intercept);
      check_default_fit(*data, SquaredHinge{}, L1{.lambda = 0.01, .mu = mu}, intercept);
    }
  }
}

TEST_CASE("fbpd: with no penalty and mu = 0 there is no certificate: max_iter, gap = F", "[fbpd][defaults]") {
  const auto data = make_data<double>(40, 12, 3, 0.5, 33);
  const auto r = FBPD<CrammerSinger, NoPenalty>({}, {}, {.max_epochs = 50}).fit(data.problem<Eigen::RowMajor>());
  CHECK(r.info.status == Status::max_iter);
  CHECK(r.info.duality_gap == Approx(r.info.objective).epsilon(1e-12));
  CHECK(r.info.relative_gap == Approx(1.0).epsilon(1e-12));
}

TEST_CASE("fbpd: step residuals and the relative change are available as stopping rules", "[fbpd]") {
  const auto data = make_data<double>(50, 10, 3, 0.5, 9);
  const auto problem = data.problem<Eigen::RowMajor>();
  const L1 penalty{.lambda = 0.01};
  const auto exact = FBPD<CrammerSinger, L1>({}, penalty, {.tol = 1e-9}).fit(problem);
  REQUIRE(exact.info.status == Status::converged);
  for (const auto rule : {FBPDStopping::residuals, FBPDStopping::relative_change}) {
    // The step residuals fall slowly (they are not the default); the relative change is the paper's.
    const bool residuals = rule == FBPDStopping::residuals;
    const auto r = FBPD<CrammerSinger, L1>({}, penalty, {.tol = residuals ? 1e-3 : 1e-6, .stopping = rule}).fit(problem);
    INFO(r.info.measure_name << " " << r.info.measure << " after " << r.info.epochs);
    REQUIRE(r.info.status == Status::converged);
    CHECK(r.info.measure_name == (residuals ? "primal_dual_residual" : "relative_change"));
    // The measure is a diagnostic: converged means the gap of (1) is within tol, and it bounds
    // the distance to the tight solve's objective (F* ≤ F_exact ≤ F* + 1e-9 F*).
    CHECK(r.info.relative_gap <= (residuals ? 1e-3 : 1e-6));
    CHECK(r.info.objective - exact.info.objective <= r.info.duality_gap + 1e-12);
    CHECK(relative(r.info.objective, exact.info.objective) <= (residuals ? 1e-3 : 1e-6));
  }
}

TEST_CASE("fbpd: adaptive and fixed steps reach the same certified optimum (Algorithms 1 and 2)", "[fbpd][adaptive]") {
  const auto data = make_data<double>(sanitizer_run() ? 30 : 60, 12, 4, 0.5, 17, /*weighted=*/true);
  const auto problem = data.problem<Eigen::RowMajor>();
  const L1L2 penalty{.lambda = 0.02, .mu = 0.0};
  for (const bool intercept : {false, true}) {
    INFO("intercept " << intercept);
    const FBPDOptions fixed{.tol = 1e-8, .fit_intercept = intercept, .adaptive_steps = false};
    FBPDOptions adaptive = fixed;
    adaptive.adaptive_steps = true;
    const auto a = FBPD<CrammerSinger, L1L2>({}, penalty, adaptive).fit(problem);
    const auto f = FBPD<CrammerSinger, L1L2>({}, penalty, fixed).fit(problem);
    REQUIRE(a.info.status == Status::converged);
    REQUIRE(f.info.status == Status::converged);
    CHECK(relative(a.info.objective, f.info.objective) <= 1e-7);
    CHECK(relative(a.info.objective, dense_objective(data, penalty, dense_W(a), intercept ? dense_b(a) : Eigen::VectorXd())) <= 1e-12);
    // Algorithm 2 at the loss of that solution: the same objective with either step rule.
    const double eta = a.info.objective - penalty_value(penalty, a.model);
    FBPDOptions epi = fixed;
    epi.eta = eta;
    epi.tol = 1e-7;
    const auto ef = FBPD<CrammerSinger, L1L2, Constrained>({}, penalty, epi).fit(problem);
    epi.adaptive_steps = true;
    const auto ea = FBPD<CrammerSinger, L1L2, Constrained>({}, penalty, epi).fit(problem);
    REQUIRE(ef.info.status == Status::converged);
    REQUIRE(ea.info.status == Status::converged);
    CHECK(relative(ea.info.objective, ef.info.objective) <= 1e-5);
    CHECK(relative(ea.info.objective, a.info.objective) <= 1e-5);
    if (sanitizer_run()) {
      SPARSEMC_SKIP_PART("the sanitizer run checks the first problem only");
      break;
    }
  }
}

// ------------------------------------------------------------------------------------------------
// Algorithm 2: the Lagrangian equivalence of (7) and (8).
// ------------------------------------------------------------------------------------------------

TEST_CASE("fbpd: Algorithm 2 with eta = loss of Algorithm 1's solution recovers the same W", "[fbpd][constrained]") {
  const auto data = make_data<double>(sanitizer_run() ? 30 : 60, 12, 3, 0.5, 11, /*weighted=*/true);
  const auto problem = data.problem<Eigen::RowMajor>();
  for (const bool intercept : {false, true}) {
    const L1L2 penalty{.lambda = 0.02, .mu = 0.02};  // μ > 0: a unique solution
    INFO("intercept " << intercept);
    const auto r1 = FBPD<CrammerSinger, L1L2>({}, penalty, {.tol = 1e-9, .fit_intercept = intercept}).fit(problem);
    REQUIRE(r1.info.status == Status::converged);
    const double eta = r1.info.objective - penalty_value(penalty, r1.model);
    REQUIRE(eta > 0.0);
    const auto r2 = FBPD<CrammerSinger, L1L2, Constrained>({}, penalty, {.tol = 1e-8, .fit_intercept = intercept, .eta = eta})
                        .fit(problem);
    REQUIRE(r2.info.status == Status::converged);
    CHECK(r2.info.measure_name == "kkt_residual");
    CHECK(r2.model.provenance().solver == "fbpd-epi");
    const Dense W1 = dense_W(r1), W2 = dense_W(r2);
    CHECK((W2 - W1).norm() <= 1e-3 * W1.norm());
    CHECK(relative(r2.info.objective, r1.info.objective) <= 1e-5);
    // The constraint holds (to the tolerance) at Algorithm 2's solution.
    const double eta2 = r2.info.objective - penalty_value(penalty, r2.model);
    CHECK(eta2 <= eta * (1 + 1e-5));
    if (sanitizer_run()) {
      SPARSEMC_SKIP_PART("the sanitizer run checks the first problem only");
      break;
    }
  }
}

TEST_CASE("fbpd: Algorithm 2 with a loose eta returns W = 0, with a tight one a feasible model", "[fbpd][constrained]") {
  const auto data = make_data<double>(40, 8, 3, 0.6, 13);
  const auto problem = data.problem<Eigen::RowMajor>();
  const L1 penalty{.lambda = 1.0};
  const auto loose = FBPD<CrammerSinger, L1, Constrained>({}, penalty, {.tol = 1e-7, .eta = 1.5}).fit(problem);
  REQUIRE(loose.info.status == Status::converged);
  CHECK(loose.model.nnz() == 0);  // L(0) = 1 ≤ η: the minimiser of g is feasible
  const auto tight = FBPD<CrammerSinger, L1, Constrained>({}, penalty, {.tol = 1e-7, .eta = 0.5}).fit(problem);
  REQUIRE(tight.info.status == Status::converged);
  const double loss = tight.info.objective - penalty_value(penalty, tight.model);
  CHECK(loss == Approx(0.5).epsilon(1e-5));
}

// ------------------------------------------------------------------------------------------------
// Agreement with other solvers.
// ------------------------------------------------------------------------------------------------

TEST_CASE("fbpd: with lambda = 0 the objective equals LIBLINEAR -s 4 on dna", "[fbpd][liblinear][external]") {
  if (sanitizer_run()) SPARSEMC_SKIP("the LIBLINEAR comparison is too long for a sanitizer run");
  if (!have_liblinear()) SPARSEMC_SKIP("liblinear-train is not installed (Debian package liblinear-tools)");
  const std::string train = (sparsemc_test::repo_data() / "dna.scale").string();
  const auto data = dna<double>();
  const double C = 0.1, n = static_cast<double>(data.n_samples()), mu = 1.0 / (C * n);
  const std::string model_file = temp_path("fbpd_dna_liblinear");
  REQUIRE(std::system(("liblinear-train -q -s 4 -c 0.1 -e 1e-6 " + train + " " + model_file).c_str()) == 0);
  const auto imported = io::load_liblinear_model<double>(model_file);
  std::filesystem::remove(model_file);
  // LIBLINEAR's classes are in its own label order: reorder its columns to ours.
  Dense W_liblinear = Dense::Zero(data.n_features(), data.n_classes());
  const Dense W_imported = imported.dense();
  for (ClassIndex k = 0; k < data.n_classes(); ++k)
    W_liblinear.col(data.encoder().index_of(imported.labels()[static_cast<std::size_t>(k)])) = W_imported.col(k);
  const NoPenalty ridge{.mu = mu};
  const double F_liblinear = dense_objective(data, ridge, W_liblinear, Eigen::VectorXd());

  const auto r = FBPD<CrammerSinger, NoPenalty>({}, ridge, {.tol = 1e-7}).fit(data.problem<Eigen::RowMajor>());
  REQUIRE(r.info.status == Status::converged);
  INFO("F fbpd " << r.info.objective << "  F liblinear " << F_liblinear);
  CHECK(relative(r.info.objective, F_liblinear) <= 1e-5);
  CHECK(r.info.objective <= F_liblinear + 1e-7);  // F − F* ≤ gap ≤ tol·F(0), F(0) = 1
}

TEST_CASE("fbpd: l1 + ridge matches FCBCFW (PD-Sparse) on dna", "[fbpd][fcbcfw]") {
  const auto full = dna<double>();
  const auto data = sanitizer_run() ? head(full, 200) : full;
  const auto problem = data.problem<Eigen::RowMajor>();
  const L1 penalty{.lambda = 1e-3, .mu = 5e-3};
  const auto r = FBPD<CrammerSinger, L1>({}, penalty, {.tol = 1e-7}).fit(problem);
  REQUIRE(r.info.status == Status::converged);
  const auto s = FCBCFW<CrammerSinger, L1>({}, penalty, {.tol = 1e-7, .max_epochs = 20000}).fit(problem);
  REQUIRE(s.info.status == Status::converged);
  INFO("F fbpd " << r.info.objective << "  F fcbcfw " << s.info.objective);
  CHECK(relative(r.info.objective, s.info.objective) <= 1e-5);
  // F is μ-strongly convex, so ‖W − W*‖² ≤ 2(F(W) − F*)/μ ≤ 2·gap/μ for each model: the two
  // are within the sum of those radii of each other, whatever the scale of W.
  const double radius = std::sqrt(2 * r.info.duality_gap / penalty.mu) + std::sqrt(2 * s.info.duality_gap / penalty.mu);
  CHECK((dense_W(r) - dense_W(s)).norm() <= radius);
}

TEMPLATE_TEST_CASE("fbpd: smooth losses through the forward step agree with ProxGradient", "[fbpd][smooth]",
                   SPARSEMC_TEST_SCALARS) {
  constexpr bool is_double = std::is_same_v<TestType, double>;
  const auto data = make_data<TestType>(sanitizer_run() ? 30 : 80, 10, 3, 0.5, 17, /*weighted=*/true);
  const auto problem = data.template problem<Eigen::RowMajor>();
  const double tol = is_double ? 1e-9 : 1e-5, agree = is_double ? 1e-8 : 1e-4;
  auto compare = [&](auto loss, auto penalty, bool intercept) {
    using Loss = decltype(loss);
    using Penalty = decltype(penalty);
    INFO(Loss::name << " × " << Penalty::name << " intercept " << intercept);
    const auto a = FBPD<Loss, Penalty>(loss, penalty, {.tol = tol, .max_epochs = 200000, .fit_intercept = intercept}).fit(problem);
    const auto b = ProxGradient<Loss, Penalty>(loss, penalty, {.tol = tol, .fit_intercept = intercept}).fit(problem);
    REQUIRE(a.info.status == Status::converged);
    REQUIRE(b.info.status == Status::converged);
    CHECK(a.info.measure_name == "primal_residual");
    CHECK(relative(a.info.objective, b.info.objective) <= agree);
    // The exact optimality violation of (1) at FBPD's model is small too.
    const ClassMatrix<TestType> W = a.model.dense();
    const ClassVector<TestType> bb = intercept ? ClassVector<TestType>(a.model.intercept()) : ClassVector<TestType>();
    CHECK(optimality_violation(loss, penalty, problem, W, bb, intercept).total() <= (is_double ? 1e-6 : 1e-3));
  };
  compare(SquaredHinge{}, L1L2{.lambda = 0.01, .mu = 0.001}, false);
  if (sanitizer_run()) {
    SPARSEMC_SKIP_PART("the sanitizer run checks the first combination only");
    return;
  }
  compare(Logistic{}, L1{.lambda = 0.005}, true);
  compare(OvrSquaredHinge{}, L1Linf{.lambda = 0.01}, false);
}

// ------------------------------------------------------------------------------------------------
// Feature blocks, warm start, determinism.
// ------------------------------------------------------------------------------------------------

TEST_CASE("fbpd: feature blocks — size-1 blocks are the rows, per-class size-1 l1l2 blocks are l1, blocks stay whole",
          "[fbpd][groups]") {
  const auto data = make_data<double>(50, 15, 3, 0.5, 19);
  const auto problem = data.problem<Eigen::RowMajor>();
  const FBPDOptions base{.tol = 1e-8};
  auto with_groups = [&](std::vector<std::int64_t> groups, bool per_class) {
    FBPDOptions o = base;
    o.feature_groups = std::move(groups);
    o.groups_per_class = per_class;
    return o;
  };
  const L1L2 group{.lambda = 0.03};
  const auto rows = FBPD<CrammerSinger, L1L2>({}, group, base).fit(problem);
  const auto singletons = FBPD<CrammerSinger, L1L2>({}, group, with_groups(feature_blocks(15, 1), false)).fit(problem);
  REQUIRE(rows.info.status == Status::converged);
  CHECK(dense_W(rows) == dense_W(singletons));  // the same arithmetic
  CHECK(rows.info.epochs == singletons.info.epochs);

  const auto entries = FBPD<CrammerSinger, L1L2>({}, group, with_groups(feature_blocks(15, 1), true)).fit(problem);
  const auto lasso = FBPD<CrammerSinger, L1>({}, {.lambda = 0.03}, base).fit(problem);
  REQUIRE(entries.info.status == Status::converged);
  REQUIRE(lasso.info.status == Status::converged);
  CHECK(relative(entries.info.objective, lasso.info.objective) <= 1e-6);

  for (const bool per_class : {false, true}) {
    INFO("per_class " << per_class);
    const auto blocks = FBPD<CrammerSinger, L1L2>({}, {.lambda = 0.05}, with_groups(feature_blocks(15, 5), per_class)).fit(problem);
    REQUIRE(blocks.info.status == Status::converged);
    const Dense W = dense_W(blocks);
    CHECK(blocks.model.nnz() > 0);
    for (Eigen::Index start = 0; start < 15; start += 5) {
      for (Eigen::Index k = 0; k < (per_class ? 3 : 1); ++k) {
        const Dense part = per_class ? Dense(W.block(start, k, 5, 1)) : Dense(W.block(start, 0, 5, 3));
        const auto zeros = (part.array() == 0.0).count();
        CHECK((zeros == 0 || zeros == part.size()));
      }
    }
  }
}

TEST_CASE("fbpd: warm start at the solution starts there and converges; runs are bit-identical", "[fbpd]") {
  const auto data = make_data<double>(60, 12, 3, 0.5, 23);
  const auto problem = data.problem<Eigen::RowMajor>();
  // One thread: the first-iterate figures below are the serial pass's (test_parallel.cpp
  // checks the threaded passes).
  const FBPD<CrammerSinger, L1> solver({}, {.lambda = 0.01}, {.tol = 1e-6, .threads = 1});
  const auto r = solver.fit(problem);
  REQUIRE(r.info.status == Status::converged);
  const auto again = solver.fit(problem);
  CHECK(dense_W(again) == dense_W(r));
  CHECK(again.info.epochs == r.info.epochs);
  const auto warm = solver.fit(problem, r.model);
  REQUIRE(warm.info.status == Status::converged);
  // The primal starts at the solution but the dual restarts from the loss subgradient there
  // (not the optimal dual), so the gap takes about as long to close as from W = 0.
  CHECK(static_cast<double>(warm.info.epochs) <= 1.25 * static_cast<double>(r.info.epochs));
  History cold_trace, warm_trace;  // it did start there: the first iterate is far closer
  (void)solver.fit(problem, cold_trace);
  (void)solver.fit(problem, r.model, warm_trace);
  CHECK(relative(warm_trace.epochs.front().objective, r.info.objective) <=
        0.1 * relative(cold_trace.epochs.front().objective, r.info.objective));
  CHECK(relative(warm.info.objective, r.info.objective) <= 1e-5);
  // A warm start with other labels keeps them.
  LinearModel<double> relabelled = r.model;
  relabelled.set_labels({10, 20, 30});
  CHECK(solver.fit(problem, relabelled).model.labels() == std::vector<Label>{10, 20, 30});
  CHECK_THROWS_AS(solver.fit(problem, LinearModel<double>(ClassMatrix<double>::Zero(5, 3), {}, {0, 1, 2})), std::invalid_argument);
}

TEST_CASE("fbpd: a dense X gives the CSR fit, on one thread and two", "[fbpd][dense]") {
  // A dense X is walked by its rows' nonzeros in the CSR order, so the passes are the CSR
  // passes; only the power method's and the certificate's products (matrix products on dense
  // X) round differently.
  const auto data = make_data<double>(150, 24, 4, 0.4, 31, true);
  const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> X = data.matrix().toDense();
  const auto csr = data.problem<Eigen::RowMajor>();
  const DenseProblem<double> dense{{X.data(), X.rows(), X.cols()}, csr.y, csr.sample_weights};
  auto agree = [&](const auto& solver, const char* what) {
    const auto a = solver.fit(csr), b = solver.fit(dense);
    INFO(what << ": status " << to_string(b.info.status) << ", epochs " << b.info.epochs << " against "
              << a.info.epochs << ", F " << b.info.objective << " against " << a.info.objective);
    REQUIRE(b.info.status == Status::converged);
    CHECK(relative(a.info.objective, b.info.objective) <= 1e-9);
    CHECK((dense_W(a) - dense_W(b)).cwiseAbs().maxCoeff() <= 1e-6);
    const auto warm = solver.fit(dense, b.model);
    CHECK(warm.info.status == Status::converged);
  };
  for (const int threads : {1, 2}) {
    INFO(threads << " threads");
    agree(FBPD<CrammerSinger, L1>({}, {.lambda = 0.01, .mu = 0.001}, {.tol = 1e-9, .threads = threads}),
          "Crammer-Singer + l1 (Algorithm 1)");
    agree(FBPD<CrammerSinger, L1>({}, {.lambda = 0.01}, {.tol = 1e-9, .fit_intercept = true, .threads = threads}),
          "Crammer-Singer + l1, intercept");
    agree(FBPD<SquaredHinge, L1L2>({}, {.lambda = 0.01, .mu = 0.001}, {.tol = 1e-9, .threads = threads}),
          "squared hinge + l1l2 (forward step)");
  }
  const auto exact = FBPD<CrammerSinger, L1>({}, {.lambda = 0.01}, {.tol = 1e-9}).fit(dense);
  const double eta = exact.info.objective - penalty_value(L1{.lambda = 0.01}, exact.model);
  const auto epi = FBPD<CrammerSinger, L1, Constrained>({}, {.lambda = 0.01}, {.tol = 1e-8, .eta = eta});
  const auto a = epi.fit(csr), b = epi.fit(dense);
  REQUIRE(b.info.status == Status::converged);
  CHECK(relative(a.info.objective, b.info.objective) <= 1e-7);
}

TEST_CASE("fbpd: callbacks, time and epoch budgets, degenerate problems", "[fbpd]") {
  const auto data = make_data<double>(40, 8, 3, 0.5, 29);
  const auto problem = data.problem<Eigen::RowMajor>();
  History history;
  const auto capped = FBPD<CrammerSinger, L1>({}, {.lambda = 0.01}, {.tol = 1e-12, .max_epochs = 37}).fit(problem, history);
  CHECK(capped.info.status == Status::max_iter);
  CHECK(capped.info.epochs == 37);
  CHECK(history.epochs.size() == 37);
  CHECK(std::isfinite(history.epochs.back().objective));
  struct StopAt5 {
    bool end_epoch(const EpochReport& r, const LinearModel<double>& m) { return r.epoch == 5 && m.n_classes() == 3; }
  };
  CHECK(FBPD<CrammerSinger, L1>({}, {.lambda = 0.01}, {.tol = 1e-12}).fit(problem, StopAt5{}).info.status ==
        Status::stopped_by_callback);
  // One class: the hinge is 0 everywhere, W = 0 at once.
  const auto one = make_data<double>(10, 4, 1, 0.5, 31);
  const auto r1 = FBPD<CrammerSinger, L1>({}, {.lambda = 0.01}).fit(one.problem<Eigen::RowMajor>());
  CHECK(r1.info.status == Status::converged);
  CHECK(r1.model.nnz() == 0);
  // Zero-weight samples do not count.
  auto weighted = make_data<double>(40, 8, 3, 0.5, 29);
  std::vector<double> w(40, 1.0);
  for (int i = 0; i < 40; i += 2) w[static_cast<std::size_t>(i)] = 0.0;
  weighted.set_sample_weights(w);
  const auto half = FBPD<CrammerSinger, L1>({}, {.lambda = 0.01}, {.tol = 1e-8}).fit(weighted.problem<Eigen::RowMajor>());
  REQUIRE(half.info.status == Status::converged);
  CHECK(relative(half.info.objective, dense_objective(weighted, L1{.lambda = 0.01}, dense_W(half), Eigen::VectorXd())) <= 1e-12);
}
