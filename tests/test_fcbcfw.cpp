// FCBCFW (PD-Sparse Algorithm 1): optimality of the returned model, checked independently of
// the solver — dense primal and dual recomputed here, a brute-force dual solver, directional
// derivatives of the primal, LIBLINEAR -s 4 on dna, multilabel data, reproducibility, options.
// The sequential dual method (SequentialDual, "sdm") for the ridge-only Crammer–Singer SVM is
// checked here too, against FCBCFW's tight solves and LIBLINEAR -s 4.
#include <catch2/catch.hpp>

#include "skip.hpp"
#include "test_scalars.hpp"

#include <sparsemc/core/callbacks.hpp>
#include <sparsemc/core/rng.hpp>
#include <sparsemc/data/dataset.hpp>
#include <sparsemc/loss/crammer_singer.hpp>
#include <sparsemc/model/early_stopping.hpp>
#include <sparsemc/penalty/l1.hpp>
#include <sparsemc/penalty/l1l2.hpp>
#include <sparsemc/penalty/l1linf.hpp>
#include <sparsemc/penalty/none.hpp>
#include <sparsemc/solver/fbpd/fbpd.hpp>
#include <sparsemc/solver/fcbcfw/fcbcfw.hpp>
#include <sparsemc/solver/sdm/sequential_dual.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numeric>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <unistd.h>

using namespace sparsemc;

namespace {

using Solver = FCBCFW<CrammerSinger, L1>;
using Dense = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

using sparsemc_test::sanitizer_run;

// ---------------------------------------------------------------------------------------------
// Data: a minimal LIBSVM text reader (labels "l" or "l1,l2"), and generators.

template <class Scalar, class Index = std::int32_t>
Dataset<Scalar, Index> read_text(const std::string& path, std::int64_t n_features = 0,
                                 const LabelEncoder* labels = nullptr) {
  std::ifstream in(path);
  REQUIRE(in.good());
  std::vector<Eigen::Triplet<Scalar, Index>> triplets;
  std::vector<std::vector<Label>> label_lists;
  std::string line;
  Index row = 0;
  std::int64_t d = n_features;
  while (std::getline(in, line)) {
    std::istringstream tokens(line);
    std::vector<Label> ys;
    if (!line.empty() && line[0] != ' ') {
      std::string field;
      tokens >> field;
      std::istringstream parts(field);
      for (std::string part; std::getline(parts, part, ',');) ys.push_back(std::stoll(part));
    }
    for (std::string pair; tokens >> pair;) {
      const auto colon = pair.find(':');
      const std::int64_t j = std::stoll(pair.substr(0, colon)) - 1;
      if (n_features > 0 && j >= n_features) continue;
      d = std::max(d, j + 1);
      triplets.emplace_back(row, static_cast<Index>(j), static_cast<Scalar>(std::stod(pair.substr(colon + 1))));
    }
    label_lists.push_back(std::move(ys));
    ++row;
  }
  CsrMatrix<Scalar, Index> X(row, static_cast<Index>(d));
  X.setFromTriplets(triplets.begin(), triplets.end());
  X.makeCompressed();
  LabelEncoder encoder = labels ? *labels : LabelEncoder{};
  if (!labels)
    for (const auto& ys : label_lists) encoder.fit(ys);
  LabelSets sets(encoder.size());
  for (const auto& ys : label_lists) {
    std::vector<ClassIndex> classes;
    for (Label l : ys)
      if (encoder.contains(l)) classes.push_back(encoder.index_of(l));
    sets.push_back(classes);
  }
  return Dataset<Scalar, Index>(std::move(X), std::move(sets), std::move(encoder));
}

// n samples, d features, K classes; each class has a few prototype features, each sample draws
// most of its `per_row` features from its classes' prototypes (plus noise features). With
// `labels_per_sample` > 1 a multilabel problem.
template <class Scalar, class Index = std::int32_t>
Dataset<Scalar, Index> generate(Index n, Index d, ClassIndex K, int per_row, int labels_per_sample,
                                std::uint64_t seed) {
  Rng rng(seed);
  const int proto = 4;
  std::vector<Index> prototypes(static_cast<std::size_t>(K) * proto);
  for (auto& j : prototypes) j = static_cast<Index>(uniform_index(rng, static_cast<std::uint64_t>(d)));
  std::vector<Eigen::Triplet<Scalar, Index>> triplets;
  LabelSets sets(K);
  std::vector<Label> all(static_cast<std::size_t>(K));
  std::iota(all.begin(), all.end(), Label{0});
  for (Index i = 0; i < n; ++i) {
    std::vector<ClassIndex> classes;
    const int m = labels_per_sample == 1 ? 1 : 1 + static_cast<int>(uniform_index(rng, static_cast<std::uint64_t>(labels_per_sample)));
    for (int r = 0; r < m; ++r) classes.push_back(static_cast<ClassIndex>(uniform_index(rng, static_cast<std::uint64_t>(K))));
    std::vector<Index> cols;
    for (int f = 0; f < per_row; ++f) {
      if (uniform_real(rng) < 0.7) {
        const ClassIndex k = classes[uniform_index(rng, classes.size())];
        cols.push_back(prototypes[static_cast<std::size_t>(k) * proto + uniform_index(rng, proto)]);
      } else {
        cols.push_back(static_cast<Index>(uniform_index(rng, static_cast<std::uint64_t>(d))));
      }
    }
    std::sort(cols.begin(), cols.end());
    cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
    for (Index j : cols) triplets.emplace_back(i, j, static_cast<Scalar>(0.2 + uniform_real(rng)));
    sets.push_back(classes);
  }
  CsrMatrix<Scalar, Index> X(n, d);
  X.setFromTriplets(triplets.begin(), triplets.end());
  X.makeCompressed();
  return Dataset<Scalar, Index>(std::move(X), std::move(sets), LabelEncoder(all));
}

// ---------------------------------------------------------------------------------------------
// Independent dense evaluation of objective (1) and of the dual (14) in (1)'s scale.

template <class Scalar, class Index>
Dense dense_X(const CsrView<Scalar, Index>& X) {
  Dense D = Dense::Zero(X.rows(), X.cols());
  for (Index i = 0; i < X.rows(); ++i)
    for (auto [j, v] : X.outer(i)) D(i, j) = static_cast<double>(v);
  return D;
}

// ℓ_i = (1 + max_{n∉Y} s_n − min_{p∈Y} s_p)_+, 0 for an empty or full Y.
double separation_loss(const Eigen::Ref<const Eigen::RowVectorXd>& s, std::span<const ClassIndex> Y) {
  const auto K = static_cast<std::size_t>(s.size());
  if (Y.empty() || Y.size() == K) return 0.0;
  double hi = -std::numeric_limits<double>::infinity(), lo = std::numeric_limits<double>::infinity();
  for (std::size_t k = 0; k < K; ++k) {
    const bool positive = std::find(Y.begin(), Y.end(), static_cast<ClassIndex>(k)) != Y.end();
    if (positive) lo = std::min(lo, s[static_cast<Eigen::Index>(k)]);
    else hi = std::max(hi, s[static_cast<Eigen::Index>(k)]);
  }
  return std::max(0.0, 1.0 + hi - lo);
}

struct Instance {
  Dense X;                      // n × d
  LabelView y;
  std::vector<double> cost;     // c_i
  double lambda = 0, mu = 1;
  [[nodiscard]] std::size_t n() const { return static_cast<std::size_t>(X.rows()); }
  [[nodiscard]] Eigen::Index K() const { return y.n_classes(); }

  [[nodiscard]] double primal(const Dense& W) const {
    const Dense S = X * W;
    double loss = 0;
    for (std::size_t i = 0; i < n(); ++i) loss += cost[i] * separation_loss(S.row(static_cast<Eigen::Index>(i)), y[i]);
    return loss / static_cast<double>(n()) + lambda * W.cwiseAbs().sum() + 0.5 * mu * W.squaredNorm();
  }
  [[nodiscard]] double f0() const { return primal(Dense::Zero(X.cols(), K())); }
  [[nodiscard]] Dense prox_of(const Dense& V) const {  // S_{λ/μ}(V)
    const double tau = lambda / mu;
    return V.unaryExpr([tau](double v) { return v > tau ? v - tau : (v < -tau ? v + tau : 0.0); });
  }
  // D(α) = −μ(½‖S(Xᵀα)‖² + Σ_i Σ_{k∉Y_i} α_ik) for a dense n × K α (PD-Sparse's scale).
  [[nodiscard]] double dual(const Dense& A) const {
    const Dense W = prox_of(X.transpose() * A);
    double linear = 0;
    for (std::size_t i = 0; i < n(); ++i)
      for (Eigen::Index k = 0; k < K(); ++k)
        if (std::find(y[i].begin(), y[i].end(), static_cast<ClassIndex>(k)) == y[i].end())
          linear += A(static_cast<Eigen::Index>(i), k);
    return -mu * (0.5 * W.squaredNorm() + linear);
  }
  // Largest violation of α^i ∈ 𝒞_i (16), bound C_i = c_i/(μn); 0 when feasible.
  [[nodiscard]] double infeasibility(const Dense& A) const {
    double worst = 0;
    for (std::size_t i = 0; i < n(); ++i) {
      const double bound = (y[i].empty() || static_cast<Eigen::Index>(y[i].size()) == K())
                               ? 0.0 : cost[i] / (mu * static_cast<double>(n()));
      double pos = 0, neg = 0;
      for (Eigen::Index k = 0; k < K(); ++k) {
        const double a = A(static_cast<Eigen::Index>(i), k);
        const bool positive = std::find(y[i].begin(), y[i].end(), static_cast<ClassIndex>(k)) != y[i].end();
        if (positive) { worst = std::max(worst, -a); pos += a; }
        else { worst = std::max(worst, a); neg -= a; }
      }
      worst = std::max({worst, std::abs(pos - neg), pos - bound});
    }
    return worst;
  }
};

template <class Scalar, class Index>
Instance instance(const Dataset<Scalar, Index>& data, double lambda, double mu) {
  Instance in{dense_X(data.csr()), data.labels().view(), {}, lambda, mu};
  in.cost.assign(in.n(), 1.0);
  for (std::size_t i = 0; i < data.costs().size(); ++i) in.cost[i] = static_cast<double>(data.costs()[i]);
  return in;
}

template <class Scalar>
Dense dense_W(const FCBCFWSolution<Scalar>& s) {
  Dense W = Dense::Zero(s.n_features, s.n_classes);
  for (std::int64_t j = 0; j < s.n_features; ++j)
    for (auto p = s.weight_ptr[static_cast<std::size_t>(j)]; p < s.weight_ptr[static_cast<std::size_t>(j) + 1]; ++p)
      W(j, s.weight_class[static_cast<std::size_t>(p)]) = static_cast<double>(s.weight[static_cast<std::size_t>(p)]);
  return W;
}

template <class Scalar>
Dense dense_alpha(const FCBCFWSolution<Scalar>& s, std::size_t n) {
  Dense A = Dense::Zero(static_cast<Eigen::Index>(n), s.n_classes);
  for (std::size_t i = 0; i < n; ++i)
    for (auto p = s.dual_ptr[i]; p < s.dual_ptr[i + 1]; ++p)
      A(static_cast<Eigen::Index>(i), s.dual_class[static_cast<std::size_t>(p)]) = s.dual[static_cast<std::size_t>(p)];
  return A;
}

// The gap of a solve, recomputed here: dense primal at W, dense dual at α, feasibility of α.
template <class Scalar>
void check_solution(const Instance& in, const FCBCFWSolution<Scalar>& s, double tol, double objective_rel) {
  const Dense W = dense_W(s);
  const Dense A = dense_alpha(s, in.n());
  const double F = in.primal(W), D = in.dual(A), f0 = in.f0();
  INFO("F " << F << " D " << D << " F0 " << f0 << " reported F " << s.info.objective << " gap " << s.info.measure);
  CHECK(in.infeasibility(A) <= 1e-9 * (1.0 + A.cwiseAbs().maxCoeff()));
  CHECK(std::abs(F - s.info.objective) <= objective_rel * std::max(F, 1e-12));
  // The relative gap of (1): normalised by |F|, not by F(0) (which is larger and flattered it).
  const double scale = std::max(std::abs(F), 1e-12);
  CHECK((F - D) / scale <= tol * 1.01 + objective_rel * f0 / scale);
  CHECK((F - D) / scale >= -objective_rel * f0 / scale);  // weak duality
  CHECK(s.info.measure <= tol);
  CHECK(s.info.relative_gap <= tol);
  CHECK(s.info.relative_gap == Approx(s.info.duality_gap / std::max(std::abs(s.info.objective), 1e-12)).epsilon(1e-12));
  CHECK(std::abs(s.info.duality_gap - (F - D)) <= objective_rel * f0 + 1e-12);
}

// ---------------------------------------------------------------------------------------------
// Brute force: accelerated projected gradient on the dual (14) with projections by sorting.

std::vector<double> simplex_by_sorting(std::vector<double> v, double mass) {
  if (mass <= 0) return std::vector<double>(v.size(), 0.0);
  std::vector<double> u = v;
  std::sort(u.begin(), u.end(), std::greater<>());
  double sum = 0, theta = 0;
  for (std::size_t k = 0; k < u.size(); ++k) {
    sum += u[k];
    const double t = (sum - mass) / static_cast<double>(k + 1);
    if (u[k] - t > 0) theta = t;
  }
  for (double& x : v) x = std::max(x - theta, 0.0);
  return v;
}

// Projection of a (one sample's K values) onto 𝒞_i: for a fixed mass t the negatives and the
// positives project separately onto simplices of mass t; t ∈ [0, C] by golden-section search.
std::vector<double> project_dual_block(const std::vector<double>& a, std::span<const ClassIndex> Y, double C) {
  const std::size_t K = a.size();
  std::vector<std::size_t> P, N;
  for (std::size_t k = 0; k < K; ++k)
    (std::find(Y.begin(), Y.end(), static_cast<ClassIndex>(k)) != Y.end() ? P : N).push_back(k);
  std::vector<double> out(K, 0.0);
  if (P.empty() || N.empty() || C <= 0) return out;
  std::vector<double> b(N.size()), c(P.size());
  for (std::size_t r = 0; r < N.size(); ++r) b[r] = -a[N[r]];
  for (std::size_t r = 0; r < P.size(); ++r) c[r] = a[P[r]];
  auto cost = [&](double t) {
    const auto x = simplex_by_sorting(b, t), y = simplex_by_sorting(c, t);
    double v = 0;
    for (std::size_t r = 0; r < b.size(); ++r) v += (x[r] - b[r]) * (x[r] - b[r]);
    for (std::size_t r = 0; r < c.size(); ++r) v += (y[r] - c[r]) * (y[r] - c[r]);
    return v;
  };
  double lo = 0, hi = C;
  const double g = (std::sqrt(5.0) - 1) / 2;
  for (int it = 0; it < 200 && hi - lo > 1e-15 * (1 + C); ++it) {
    const double m1 = hi - g * (hi - lo), m2 = lo + g * (hi - lo);
    if (cost(m1) <= cost(m2)) hi = m2;
    else lo = m1;
  }
  const double t = 0.5 * (lo + hi);
  const auto x = simplex_by_sorting(b, t), y = simplex_by_sorting(c, t);
  for (std::size_t r = 0; r < N.size(); ++r) out[N[r]] = -x[r];
  for (std::size_t r = 0; r < P.size(); ++r) out[P[r]] = y[r];
  return out;
}

Dense brute_force_dual(const Instance& in, int iterations) {
  const Eigen::Index n = in.X.rows(), K = in.K();
  const double L = in.X.squaredNorm();  // ≥ ‖X‖₂², the Lipschitz constant of ∇G
  Dense A = Dense::Zero(n, K), prev = A, Z = A;
  double t = 1;
  for (int it = 0; it < iterations; ++it) {
    const Dense W = in.prox_of(in.X.transpose() * Z);
    Dense grad = in.X * W;  // ∇_{α^i} G = Wᵀx_i + e_i
    for (Eigen::Index i = 0; i < n; ++i)
      for (Eigen::Index k = 0; k < K; ++k)
        if (std::find(in.y[static_cast<std::size_t>(i)].begin(), in.y[static_cast<std::size_t>(i)].end(),
                      static_cast<ClassIndex>(k)) == in.y[static_cast<std::size_t>(i)].end())
          grad(i, k) += 1.0;
    for (Eigen::Index i = 0; i < n; ++i) {
      std::vector<double> a(static_cast<std::size_t>(K));
      for (Eigen::Index k = 0; k < K; ++k) a[static_cast<std::size_t>(k)] = Z(i, k) - grad(i, k) / L;
      const double C = in.cost[static_cast<std::size_t>(i)] / (in.mu * static_cast<double>(n));
      const auto p = project_dual_block(a, in.y[static_cast<std::size_t>(i)], C);
      for (Eigen::Index k = 0; k < K; ++k) A(i, k) = p[static_cast<std::size_t>(k)];
    }
    const double t_next = (1 + std::sqrt(1 + 4 * t * t)) / 2;
    Z = A + ((t - 1) / t_next) * (A - prev);
    prev = A;
    t = t_next;
  }
  return A;
}

// Probes the one-sided directional derivatives F'(W; D) by difference quotients along every
// coordinate direction ±e_jk and random directions: 0 ∈ ∂F(W) iff F'(W; D) ≥ 0 for all D.
double worst_difference_quotient(const Instance& in, const Dense& W, double step, std::uint64_t seed) {
  const double F = in.primal(W);
  double worst = std::numeric_limits<double>::infinity();
  Dense D = Dense::Zero(W.rows(), W.cols());
  for (Eigen::Index j = 0; j < W.rows(); ++j)
    for (Eigen::Index k = 0; k < W.cols(); ++k)
      for (double sign : {-1.0, 1.0}) {
        D.setZero();
        D(j, k) = sign;
        worst = std::min(worst, (in.primal(W + step * D) - F) / step);
      }
  Rng rng(seed);
  for (int r = 0; r < 200; ++r) {
    for (Eigen::Index j = 0; j < W.rows(); ++j)
      for (Eigen::Index k = 0; k < W.cols(); ++k) D(j, k) = uniform_real(rng) - 0.5;
    D /= D.norm();
    worst = std::min(worst, (in.primal(W + step * D) - F) / step);
  }
  return worst;
}

// ---------------------------------------------------------------------------------------------
// LIBLINEAR: run `liblinear-train -s 4` and read W back from its model file.

bool have_liblinear() { return std::system("command -v liblinear-train > /dev/null 2>&1") == 0; }

// Returns W (d × K) with columns in the order of `encoder`'s classes.
Dense read_liblinear_model(const std::string& path, const LabelEncoder& encoder, Eigen::Index d) {
  std::ifstream in(path);
  REQUIRE(in.good());
  std::string key;
  std::vector<Label> labels;
  int nr_class = 0;
  while (in >> key && key != "w") {
    if (key == "nr_class") in >> nr_class;
    else if (key == "label") {
      labels.resize(static_cast<std::size_t>(nr_class));
      for (auto& l : labels) in >> l;
    } else {
      std::string rest;
      std::getline(in, rest);
    }
  }
  Dense W = Dense::Zero(d, encoder.size());
  for (Eigen::Index j = 0; j < d; ++j)
    for (int k = 0; k < nr_class; ++k) in >> W(j, encoder.index_of(labels[static_cast<std::size_t>(k)]));
  REQUIRE(in.good());
  return W;
}

template <class Scalar, class Index>
std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          (name + "_" + std::to_string(sizeof(Scalar)) + std::to_string(sizeof(Index)) + "_" +
           std::to_string(::getpid())))
      .string();
}

}  // namespace

using ScalarIndexPairs = sparsemc_test::SolverTestTypes<
    std::tuple<std::tuple<float, std::int32_t>,
               std::tuple<float, std::int64_t>,
               std::tuple<double, std::int32_t>,
               std::tuple<double, std::int64_t>>>;

TEMPLATE_LIST_TEST_CASE("fcbcfw: the duality gap at the returned model is below tol (recomputed densely)",
                        "[fcbcfw]", ScalarIndexPairs) {
  using Scalar = std::tuple_element_t<0, TestType>;
  using Index = std::tuple_element_t<1, TestType>;
  constexpr bool is_double = std::is_same_v<Scalar, double>;
  const double tol = is_double ? 1e-6 : 1e-4;
  const double rel = is_double ? 1e-9 : 2e-5;  // float: W is rounded to float once
  for (const int labels_per_sample : {1, 3}) {
    const auto data = generate<Scalar, Index>(120, 60, 7, 8, labels_per_sample, 11 + labels_per_sample);
    const double n = 120, mu = 1.0 / (0.5 * n);
    for (const auto& [lambda, storage] : {std::pair{0.0, FCBCFWStorage::dense}, std::pair{0.05 * mu, FCBCFWStorage::dense},
                                         std::pair{0.5 * mu, FCBCFWStorage::dense}, std::pair{0.0, FCBCFWStorage::hashed},
                                         std::pair{0.05 * mu, FCBCFWStorage::hashed}}) {
      INFO("labels/sample " << labels_per_sample << " lambda " << lambda << " dense " << (storage == FCBCFWStorage::dense));
      const Solver solver({}, {.lambda = lambda, .mu = mu},
                          {.tol = tol, .max_epochs = 20000, .seed = 3, .storage = storage});
      const auto s = solver.solve(data.template problem<Eigen::RowMajor>());
      REQUIRE(s.info.status == Status::converged);
      CHECK(s.info.measure_name == "duality_gap");
      check_solution(instance(data, lambda, mu), s, tol, rel);
      // fit() returns the same W as a LinearModel, with provenance.
      const auto r = solver.fit(data.template problem<Eigen::RowMajor>());
      CHECK(r.model.dense().template cast<double>() == dense_W(s));
      CHECK(r.info.objective == s.info.objective);
      CHECK(r.info.nnz == r.model.nnz());
      CHECK(r.model.provenance().solver == "fcbcfw");
      CHECK(r.model.provenance().loss == "crammer-singer");
      CHECK(r.model.provenance().penalty == "l1");
      CHECK(r.model.provenance().lambda == lambda);
      CHECK(r.model.provenance().mu == mu);
      CHECK(r.model.provenance().status == "converged");
    }
  }
}

// A default fit (no option set) of a generated problem: certified (converged, relative gap of
// (1) ≤ 1e-3), its reported gap bounds F − F*, and it is within 1e-3 of F*. F* is bracketed by
// tight solves (tol 1e-9) of FCBCFW and, for multiclass data, FBPD (Chierchia Alg. 1), which
// must agree to 2e-9 relative: [max(F_t − gap_t), min(F_t)] over the tight solves.
template <class Penalty>
void check_default_fit(const Dataset<double>& data, const Penalty& penalty, double lambda) {
  const auto problem = data.problem<Eigen::RowMajor>();
  const bool multiclass = !problem.y.multilabel();
  const auto r = FCBCFW<CrammerSinger, Penalty>({}, penalty).fit(problem);
  INFO("n " << problem.n_samples() << " d " << problem.n_features() << " multiclass " << multiclass << " lambda "
            << lambda << ": status " << to_string(r.info.status) << " epochs " << r.info.epochs << " F "
            << r.info.objective << " gap " << r.info.duality_gap << " relative " << r.info.relative_gap);
  REQUIRE(r.info.status == Status::converged);
  CHECK(r.info.relative_gap <= 1e-3);
  const auto tight = FCBCFW<CrammerSinger, Penalty>({}, penalty, {.tol = 1e-9, .max_epochs = 200000}).fit(problem);
  REQUIRE(tight.info.status == Status::converged);
  double high = tight.info.objective, low = tight.info.objective - tight.info.duality_gap;
  if (multiclass) {
    const auto other = FBPD<CrammerSinger, Penalty>({}, penalty, {.tol = 1e-9, .max_epochs = 1000000}).fit(problem);
    REQUIRE(other.info.status == Status::converged);
    CHECK(std::abs(other.info.objective - tight.info.objective) <= 2e-9 * high);
    high = std::min(high, other.info.objective);
    low = std::max(low, other.info.objective - other.info.duality_gap);
  }
  INFO("F* in [" << low << ", " << high << "]");
  REQUIRE(low <= high * (1 + 1e-12));
  // F recomputed densely, independently of the solver.
  const double F = instance(data, lambda, static_cast<double>(penalty.mu)).primal(r.model.dense());
  CHECK(std::abs(F - r.info.objective) <= 1e-10 * F);
  CHECK(r.info.duality_gap >= F - high);
  CHECK((F - low) / low <= 1e-3);
}

TEST_CASE("fcbcfw: default options certify a fit within 1e-3 of the optimum (wide, tall, multilabel)",
          "[fcbcfw][defaults]") {
  // Wide: d ≫ n (the sector shape); tall: n ≫ d. μ = 1/n (LIBLINEAR's C = 1).
  for (const auto& [n, d, per_row] : {std::tuple{60, 3000, 30}, std::tuple{900, 40, 8}}) {
    for (const int labels : {1, 3}) {
      const auto data = generate<double>(n, d, 6, per_row, labels, 70 + static_cast<std::uint64_t>(labels));
      const double mu = 1.0 / n;
      check_default_fit(data, L1{.lambda = 0.1 * mu, .mu = mu}, 0.1 * mu);
      check_default_fit(data, NoPenalty{.mu = mu}, 0.0);
    }
  }
}

TEST_CASE("fcbcfw: weighted samples and degenerate label sets", "[fcbcfw]") {
  auto data = generate<double>(80, 30, 5, 6, 2, 5);
  // Sample 0 with no class, sample 1 with every class, sample 2 with an empty row.
  CsrMatrix<double> X = data.matrix();
  for (CsrMatrix<double>::InnerIterator it(X, 2); it; ++it) it.valueRef() = 0;
  X.prune(0.0);
  LabelSets sets(5);
  const auto y = data.labels().view();
  for (std::size_t i = 0; i < y.size(); ++i) {
    if (i == 0) sets.push_back({});
    else if (i == 1) sets.push_back(std::vector<ClassIndex>{0, 1, 2, 3, 4});
    else sets.push_back(y[i]);
  }
  Dataset<double> weighted(std::move(X), std::move(sets), data.encoder());
  std::vector<double> w(80);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = 0.25 + static_cast<double>(i % 4);
  w[5] = 0;
  weighted.set_sample_weights(w);
  const double mu = 0.05, lambda = 0.002;
  const Solver solver({}, {.lambda = lambda, .mu = mu}, {.tol = 1e-7, .max_epochs = 50000});
  const auto s = solver.solve(weighted.problem<Eigen::RowMajor>());
  REQUIRE(s.info.status == Status::converged);
  check_solution(instance(weighted, lambda, mu), s, 1e-7, 1e-9);
  // No dual variable for the samples without a pair or with c_i = 0.
  for (const std::size_t i : {0u, 1u, 5u}) CHECK(s.dual_ptr[i + 1] == s.dual_ptr[i]);
}

TEST_CASE("fcbcfw: one class, or no sample with a pair, is solved by W = 0", "[fcbcfw]") {
  auto data = generate<double>(20, 10, 1, 4, 1, 2);
  const auto s = Solver({}, {.lambda = 0.01, .mu = 0.1}).solve(data.problem<Eigen::RowMajor>());
  CHECK(s.info.status == Status::converged);
  CHECK(s.info.epochs == 1);
  CHECK(s.info.objective == 0.0);
  CHECK(s.weight.empty());
}

TEST_CASE("fcbcfw: optimal against a brute-force dual solver and by directional derivatives", "[fcbcfw]") {
  const int iterations = sanitizer_run() ? 2000 : 8000;
  for (const int labels_per_sample : {1, 2}) {
    for (const double lambda : {0.0, 0.02}) {
      const auto data = generate<double>(14, 6, 4, 3, labels_per_sample, 40 + labels_per_sample);
      const double mu = 0.1;
      INFO("labels/sample " << labels_per_sample << " lambda " << lambda);
      const Instance in = instance(data, lambda, mu);
      const auto s = Solver({}, {.lambda = lambda, .mu = mu}, {.tol = 1e-12, .max_epochs = 200000})
                         .solve(data.problem<Eigen::RowMajor>());
      REQUIRE(s.info.status == Status::converged);
      const Dense W = dense_W(s);
      const double F = in.primal(W);
      // The brute-force dual point is feasible, so D_brute ≤ F*: F − D_brute bounds F − F*
      // without using anything the solver computed.
      const Dense A = brute_force_dual(in, iterations);
      REQUIRE(in.infeasibility(A) <= 1e-9);
      const double D = in.dual(A);
      CHECK(F - D >= -1e-12);
      CHECK((F - D) / in.f0() <= (sanitizer_run() ? 1e-4 : 1e-7));
      CHECK(F <= in.primal(in.prox_of(in.X.transpose() * A)) + 1e-12);
      // KKT by directional derivatives: F(W + εD) − F(W) ≥ −(F − F*) ≥ −1e-12 for every D.
      CHECK(worst_difference_quotient(in, W, 1e-6, 9) >= -1e-5);
      // And W is not optimal for a perturbed λ (the check has teeth).
      if (lambda > 0) {
        Instance other = in;
        other.lambda = 2 * lambda;
        CHECK(worst_difference_quotient(other, W, 1e-6, 9) < -1e-3);
      }
    }
  }
}

// dna and F of (1) (λ = 0, μ = 1/(Cn), C = 0.1) at LIBLINEAR -s 4 -e 1e-6's model; nullopt,
// with a WARN saying why, when the comparison is skipped.
struct LiblinearS4 {
  Dataset<double> data;
  double mu;
  double objective;
};
std::optional<LiblinearS4> liblinear_s4_on_dna(const std::string& name) {
  if (sanitizer_run()) {
    SPARSEMC_SKIP_FROM_HELPER("the LIBLINEAR comparison is too long for a sanitizer run");
    return std::nullopt;
  }
  if (!have_liblinear()) {
    SPARSEMC_SKIP_FROM_HELPER("liblinear-train is not installed (Debian package liblinear-tools)");
    return std::nullopt;
  }
  const std::string train = (sparsemc_test::repo_data() / "dna.scale").string();
  auto data = read_text<double>(train);
  const double C = 0.1, mu = 1.0 / (C * static_cast<double>(data.n_samples()));
  const std::string model = temp_path<double, int>(name);
  const std::string command = "liblinear-train -q -s 4 -c 0.1 -e 1e-6 " + train + " " + model;
  REQUIRE(std::system(command.c_str()) == 0);
  const Dense W = read_liblinear_model(model, data.encoder(), data.n_features());
  std::filesystem::remove(model);
  const double objective = instance(data, 0.0, mu).primal(W);
  return LiblinearS4{std::move(data), mu, objective};
}

TEST_CASE("fcbcfw: with lambda = 0 the objective equals LIBLINEAR -s 4 on dna", "[fcbcfw][liblinear][external]") {
  const auto reference = liblinear_s4_on_dna("fcbcfw_dna_liblinear");
  if (!reference) return;
  const auto& [data, mu, F_liblinear] = *reference;
  const Instance in = instance(data, 0.0, mu);

  const auto s = FCBCFW<CrammerSinger, NoPenalty>({}, {.mu = mu}, {.tol = 1e-6, .max_epochs = 20000})
                     .solve(data.problem<Eigen::RowMajor>());
  REQUIRE(s.info.status == Status::converged);
  const double F = in.primal(dense_W(s));
  INFO("F fcbcfw " << F << "  F liblinear " << F_liblinear);
  CHECK(std::abs(F - s.info.objective) <= 1e-10 * F);
  CHECK(std::abs(F - F_liblinear) <= 1e-4 * F_liblinear);
  // Our dual value certifies that LIBLINEAR's W is not better than ours by more than the gap.
  CHECK(F_liblinear >= in.dual(dense_alpha(s, in.n())) - 1e-12);
}

TEST_CASE("fcbcfw: multilabel bibtex converges and reports precision@k", "[fcbcfw][multilabel][external]") {
  const std::string dir = (sparsemc_test::shared_data() / "multilabel").string() + "/";
  if (!std::filesystem::exists(dir + "bibtex.train")) SPARSEMC_SKIP(dir << "bibtex.train not found (shared data absent)");
  if (sanitizer_run()) SPARSEMC_SKIP("bibtex is too large for a sanitizer run");
  const auto train = read_text<float>(dir + "bibtex.train");
  const auto test = read_text<float>(dir + "bibtex.test", train.n_features(), &train.encoder());
  const double n = train.n_samples(), C = 1.0, lambda_pd = 0.1;  // PD-Sparse -c 1 -l 0.1
  const double mu = 1.0 / (C * n), lambda = lambda_pd / (C * n);
  const auto r = Solver({}, {.lambda = lambda, .mu = mu}, {.tol = 1e-2, .max_epochs = 500})
                     .fit(train.problem<Eigen::RowMajor>());
  REQUIRE(r.info.status == Status::converged);
  CHECK(r.info.measure <= 1e-2);
  // precision@k on the test set.
  const auto S = r.model.decision_function(test.csr());
  const auto y = test.labels().view();
  double p_at[6] = {0, 0, 0, 0, 0, 0};
  std::vector<Eigen::Index> order(static_cast<std::size_t>(S.cols()));
  for (Eigen::Index i = 0; i < S.rows(); ++i) {
    std::iota(order.begin(), order.end(), Eigen::Index{0});
    std::partial_sort(order.begin(), order.begin() + 5, order.end(),
                      [&](Eigen::Index a, Eigen::Index b) { return S(i, a) > S(i, b); });
    int hits = 0;
    for (int k = 1; k <= 5; ++k) {
      const auto c = static_cast<ClassIndex>(order[static_cast<std::size_t>(k - 1)]);
      hits += std::find(y[static_cast<std::size_t>(i)].begin(), y[static_cast<std::size_t>(i)].end(), c) !=
              y[static_cast<std::size_t>(i)].end();
      p_at[k] += static_cast<double>(hits) / k;
    }
  }
  for (double& p : p_at) p /= static_cast<double>(S.rows());
  WARN("bibtex (fcbcfw, C = 1, lambda' = 0.1): epochs " << r.info.epochs << ", gap " << r.info.measure
                                                        << ", nnz " << r.info.nnz << ", P@1 " << p_at[1]
                                                        << ", P@3 " << p_at[3] << ", P@5 " << p_at[5]);
  CHECK(p_at[1] > 0.5);  // PD-Sparse reports 64.55% top-1 on bibtex
}

TEST_CASE("fcbcfw: reproducible for a seed", "[fcbcfw]") {
  const auto data = generate<double>(150, 50, 9, 6, 1, 77);
  const auto problem = data.problem<Eigen::RowMajor>();
  for (const auto search : {FCBCFWSearch::exact, FCBCFWSearch::bi_stochastic}) {
    const Solver solver({}, {.lambda = 0.001, .mu = 0.02}, {.tol = 1e-4, .seed = 5, .search = search});
    const auto a = solver.solve(problem), b = solver.solve(problem);
    CHECK(a.weight == b.weight);
    CHECK(a.weight_class == b.weight_class);
    CHECK(a.dual == b.dual);
    CHECK(a.info.epochs == b.info.epochs);
    CHECK(a.info.objective == b.info.objective);
    const auto c = Solver({}, {.lambda = 0.001, .mu = 0.02}, {.tol = 1e-4, .seed = 6, .search = search}).solve(problem);
    CHECK(c.dual != a.dual);
    CHECK(std::abs(c.info.objective - a.info.objective) <= 2e-4 * a.info.objective);
  }
}

TEST_CASE("fcbcfw: the bi-stochastic search converges to the same optimum", "[fcbcfw]") {
  const auto data = generate<double>(200, 80, 12, 10, 1, 8);
  const double mu = 0.01, lambda = 0.0005;
  const auto problem = data.problem<Eigen::RowMajor>();
  const auto exact = Solver({}, {.lambda = lambda, .mu = mu}, {.tol = 1e-6, .max_epochs = 20000}).solve(problem);
  for (const double speedup : {1.0, 3.0}) {
    const auto s = Solver({}, {.lambda = lambda, .mu = mu},
                          {.tol = 1e-6, .max_epochs = 50000, .search = FCBCFWSearch::bi_stochastic,
                           .class_partitions = 3, .speedup = speedup})
                       .solve(problem);
    REQUIRE(s.info.status == Status::converged);
    check_solution(instance(data, lambda, mu), s, 1e-6, 1e-9);
    CHECK(std::abs(s.info.objective - exact.info.objective) <= 2e-6 * exact.info.objective);
  }
}

TEST_CASE("fcbcfw: steps along the projection arc reach the same optimum as (21)'s", "[fcbcfw]") {
  const double lambda = 0.002, mu = 0.01;  // W sparse: the arc's curvatures fall below Q_i
  for (const int labels : {1, 2}) {        // the simplex and the bi-simplex (22)
    const auto data = generate<double>(200, 80, 12, 10, labels, 37);
    const auto problem = data.problem<Eigen::RowMajor>();
    for (const auto search : {FCBCFWSearch::exact, FCBCFWSearch::bi_stochastic}) {
      const auto plain = Solver({}, {.lambda = lambda, .mu = mu},
                                {.tol = 1e-7, .max_epochs = 50000, .search = search, .arc_search = false})
                             .solve(problem);
      const auto arc = Solver({}, {.lambda = lambda, .mu = mu}, {.tol = 1e-7, .max_epochs = 50000, .search = search})
                           .solve(problem);
      REQUIRE(plain.info.status == Status::converged);
      REQUIRE(arc.info.status == Status::converged);
      check_solution(instance(data, lambda, mu), arc, 1e-7, 1e-9);
      // Both gaps are ≤ 1e-7·F: the objectives agree within their sum.
      CHECK(std::abs(arc.info.objective - plain.info.objective) <= 2e-7 * plain.info.objective);
    }
  }
}

TEST_CASE("fcbcfw: active-set sweeps reach the same optimum as Algorithm 1 alone", "[fcbcfw]") {
  const auto data = generate<double>(200, 80, 12, 10, 1, 31);
  const auto problem = data.problem<Eigen::RowMajor>();
  for (const double lambda : {0.0, 0.0005}) {
    const double mu = 0.01;
    for (const auto search : {FCBCFWSearch::exact, FCBCFWSearch::bi_stochastic}) {
      const auto plain = Solver({}, {.lambda = lambda, .mu = mu},
                                {.tol = 1e-6, .max_epochs = 50000, .search = search, .active_sweeps = 0})
                             .solve(problem);
      const auto swept = Solver({}, {.lambda = lambda, .mu = mu},
                                {.tol = 1e-6, .max_epochs = 50000, .search = search, .active_sweeps = 20})
                             .solve(problem);
      const auto automatic = Solver({}, {.lambda = lambda, .mu = mu}, {.tol = 1e-6, .max_epochs = 50000, .search = search})
                                 .solve(problem);  // V is small here: the automatic setting sweeps (at most 20)
      CHECK(automatic.dual == swept.dual);
      REQUIRE(plain.info.status == Status::converged);
      REQUIRE(swept.info.status == Status::converged);
      check_solution(instance(data, lambda, mu), swept, 1e-6, 1e-9);
      // Both gaps are ≤ 1e-6·F(0), F(0) = 1 here: the objectives agree to 2e-6.
      CHECK(std::abs(swept.info.objective - plain.info.objective) <= 2e-6);
    }
  }
}

TEST_CASE("fcbcfw: dense and hashed storage of V and W reach the same optimum", "[fcbcfw]") {
  const auto data = generate<double>(200, 80, 12, 10, 2, 37);
  const auto problem = data.problem<Eigen::RowMajor>();
  const double mu = 0.01;
  for (const double lambda : {0.0, 0.0005}) {
    INFO("lambda " << lambda);
    const auto fit = [&](FCBCFWStorage storage) {
      return Solver({}, {.lambda = lambda, .mu = mu}, {.tol = 1e-7, .max_epochs = 50000, .storage = storage})
          .solve(problem);
    };
    const auto hashed = fit(FCBCFWStorage::hashed), dense = fit(FCBCFWStorage::dense);
    const auto automatic = fit(FCBCFWStorage::automatic);  // d·K = 800: dense
    REQUIRE(hashed.info.status == Status::converged);
    REQUIRE(dense.info.status == Status::converged);
    CHECK(automatic.dual == dense.dual);
    check_solution(instance(data, lambda, mu), dense, 1e-7, 1e-9);
    CHECK(std::abs(dense.info.objective - hashed.info.objective) <= 2e-7);
  }
  // The dense layout serves the exact search only: an automatic search that resolves to the
  // bi-stochastic one (K ≥ 1000) with storage = dense is refused, naming the option.
  const auto wide = generate<double>(20, 10, 1000, 2, 1, 3);
  CHECK_THROWS_WITH(Solver({}, {.lambda = 0, .mu = 1}, {.storage = FCBCFWStorage::dense})
                        .solve(wide.problem<Eigen::RowMajor>()),
                    Catch::Contains("storage"));
  // The stopping fields are checked as in every solver: an infinite tol is refused, not taken
  // as "stop at once".
  CHECK_THROWS_WITH(Solver({}, {.lambda = 0, .mu = 1}, {.tol = std::numeric_limits<double>::infinity()}),
                    Catch::Contains("tol") && Catch::Contains("finite"));
}

TEST_CASE("fcbcfw: statuses, callbacks and the held-out early stop", "[fcbcfw]") {
  const auto data = generate<double>(300, 100, 10, 8, 1, 21);
  const auto heldout = generate<double>(200, 100, 10, 8, 1, 21);  // same prototypes (same seed)
  const auto problem = data.problem<Eigen::RowMajor>();
  const L1 penalty{.lambda = 1e-4, .mu = 1e-3};

  const auto few = Solver({}, penalty, {.tol = 1e-9, .max_epochs = 2}).fit(problem);
  CHECK(few.info.status == Status::max_iter);
  CHECK(few.info.epochs == 2);
  CHECK(few.model.provenance().status == "max_iter");

  const auto timed = Solver({}, penalty, {.tol = 1e-12, .max_epochs = 1000000, .time_limit = 1e-6}).fit(problem);
  CHECK(timed.info.status == Status::time_limit);

  History history;
  struct StopAt3 {
    bool end_epoch(const EpochReport& r) { return r.epoch == 3; }
  } stop3;
  const auto stopped = Solver({}, penalty, {.tol = 1e-9}).fit(problem, history, stop3);
  CHECK(stopped.info.status == Status::stopped_by_callback);
  REQUIRE(history.epochs.size() == 3);
  CHECK(history.epochs.back().objective == stopped.info.objective);
  CHECK(history.epochs.back().measure == stopped.info.measure);
  // Every status reports the gap of (1) at the returned model.
  CHECK(history.epochs.back().relative_gap == stopped.info.relative_gap);
  for (const auto* r : {&few, &timed, &stopped}) {
    CHECK(std::isfinite(r->info.duality_gap));
    CHECK(r->info.duality_gap >= 0.0);
    CHECK(r->info.relative_gap == Approx(r->info.duality_gap / r->info.objective).epsilon(1e-12));
  }

  HeldoutEarlyStop<double> early(heldout.csr(), heldout.labels().view(), 2);
  const auto best = Solver({}, penalty, {.tol = 1e-12, .max_epochs = 300}).fit(problem, early);
  REQUIRE(best.info.status == Status::stopped_by_callback);
  REQUIRE(early.best_model() != nullptr);
  CHECK(early.held_out_score(best.model) == early.best_score());
  // The best epoch's report: its exact objective and gap when the gap was evaluated then (every
  // other epoch with the exact search), else the objective is computed for the model returned
  // and the gap is unknown.
  if (std::isnan(early.best_report().objective)) {
    CHECK(std::isnan(best.info.measure));
  } else {
    CHECK(best.info.objective == early.best_report().objective);
    CHECK(best.info.measure == early.best_report().measure);
  }
  CHECK(early.scores().size() == static_cast<std::size_t>(best.info.epochs));
  CHECK(early.best_score() == *std::max_element(early.scores().begin(), early.scores().end()));
  CHECK(best.model.provenance().status == "stopped_by_callback");
  // The returned objective is the exact (1) of the returned model.
  const Instance in = instance(data, penalty.lambda, penalty.mu);
  CHECK(std::abs(in.primal(best.model.dense()) - best.info.objective) <= 1e-10 * best.info.objective);
  // The kept model's gap (against the best dual value seen) bounds its distance to F*.
  const auto tight = Solver({}, penalty, {.tol = 1e-10, .max_epochs = 100000}).fit(problem);
  REQUIRE(tight.info.status == Status::converged);
  const double F_star = tight.info.objective - tight.info.duality_gap;  // a lower bound on F*
  REQUIRE(std::isfinite(best.info.duality_gap));
  CHECK(best.info.duality_gap >= best.info.objective - tight.info.objective);
  CHECK(best.info.duality_gap >= best.info.objective - F_star - 1e-12);
  CHECK(best.info.relative_gap == Approx(best.info.duality_gap / best.info.objective).epsilon(1e-12));
  // solve() returns the last iterate, not the kept model: evaluated exactly when the stop comes.
  HeldoutEarlyStop<double> again(heldout.csr(), heldout.labels().view(), 2);
  const auto last = Solver({}, penalty, {.tol = 1e-12, .max_epochs = 300}).solve(problem, again);
  REQUIRE(last.info.status == Status::stopped_by_callback);
  CHECK(last.info.epochs == best.info.epochs);
  CHECK(std::abs(in.primal(dense_W(last)) - last.info.objective) <= 1e-10 * last.info.objective);
  CHECK(last.info.measure >= 0.0);
}

TEST_CASE("fcbcfw: l2 refit on the selected support (section 4.3)", "[fcbcfw]") {
  const auto data = generate<double>(200, 80, 8, 8, 1, 33);
  const double mu = 0.01, lambda = 0.002;
  const auto problem = data.problem<Eigen::RowMajor>();
  const auto storage = GENERATE(FCBCFWStorage::hashed, FCBCFWStorage::dense);
  INFO("dense " << (storage == FCBCFWStorage::dense));
  const auto plain =
      Solver({}, {.lambda = lambda, .mu = mu}, {.tol = 1e-6, .max_epochs = 20000, .storage = storage}).fit(problem);
  const auto refit = Solver({}, {.lambda = lambda, .mu = mu},
                            {.tol = 1e-6, .max_epochs = 20000, .refit_l2 = true, .storage = storage})
                         .solve(problem);
  REQUIRE(refit.info.status == Status::converged);
  const Dense W0 = plain.model.dense(), W = dense_W(refit);
  for (Eigen::Index j = 0; j < W.rows(); ++j)
    for (Eigen::Index k = 0; k < W.cols(); ++k)
      if (W(j, k) != 0) CHECK(W0(j, k) != 0);
  // The refit solves min (1/n)Σℓ + μ/2‖W‖² over that support: its gap, recomputed here.
  Instance ridge = instance(data, 0.0, mu);
  const Dense A = dense_alpha(refit, ridge.n());
  Dense V = ridge.X.transpose() * A;
  for (Eigen::Index j = 0; j < V.rows(); ++j)
    for (Eigen::Index k = 0; k < V.cols(); ++k)
      if (W0(j, k) == 0) V(j, k) = 0;
  double linear = 0;
  for (std::size_t i = 0; i < ridge.n(); ++i)
    for (auto p = refit.dual_ptr[i]; p < refit.dual_ptr[i + 1]; ++p)
      if (refit.dual_class[static_cast<std::size_t>(p)] != data.labels().view().single(i)) linear += refit.dual[static_cast<std::size_t>(p)];
  const double D = -mu * (0.5 * V.squaredNorm() + linear);
  CHECK((ridge.primal(W) - D) / ridge.f0() <= 1.01e-6);
  CHECK(refit.info.measure <= 1e-6);
  // The reported objective is (1) with its λ term.
  CHECK(std::abs(instance(data, lambda, mu).primal(W) - refit.info.objective) <= 1e-10 * refit.info.objective);
}

TEST_CASE("fcbcfw: a dense X gives the CSR fit bit for bit (searches, multilabel, threads)", "[fcbcfw][dense]") {
  // A dense row is read as the CSR row of its nonzeros, in the same order (a row without zeros
  // in place, here row 0): every step is the CSR fit's.
  for (const int labels_per_sample : {1, 3}) {
    const auto data = generate<double>(160, 40, 9, 7, labels_per_sample, 21);
    Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> X = data.matrix().toDense();
    X.row(0).setConstant(0.05);
    const CsrMatrix<double> A = X.sparseView();
    const CsrProblem<double> csr{CsrView<double>(A), data.labels().view(), {}, 0};
    const DenseProblem<double> dense{{X.data(), X.rows(), X.cols()}, csr.y, {}};
    for (const auto search : {FCBCFWSearch::exact, FCBCFWSearch::bi_stochastic}) {
      for (const int threads : {1, 2}) {
        INFO(labels_per_sample << " labels a sample, search " << static_cast<int>(search) << ", " << threads
                               << " threads");
        const Solver solver({}, {.lambda = 0.001, .mu = 0.02},
                            {.tol = 1e-6, .seed = 4, .search = search, .class_partitions = 3, .threads = threads});
        const auto a = solver.solve(csr), b = solver.solve(dense);
        REQUIRE(b.info.status == Status::converged);
        CHECK(a.weight == b.weight);
        CHECK(a.weight_class == b.weight_class);
        CHECK(a.dual == b.dual);
        CHECK(a.info.epochs == b.info.epochs);
        CHECK(a.info.objective == b.info.objective);
        const auto warm_csr = solver.fit(csr, solver.fit(csr).model);
        const auto warm_dense = solver.fit(dense, solver.fit(dense).model);
        CHECK(warm_csr.info.objective == warm_dense.info.objective);
      }
    }
  }
}

TEST_CASE("fcbcfw: warm start from a model", "[fcbcfw]") {
  const auto data = generate<double>(200, 60, 10, 8, 1, 55);
  const auto problem = data.problem<Eigen::RowMajor>();
  const Solver solver({}, {.lambda = 0.0005, .mu = 0.01}, {.tol = 1e-5, .max_epochs = 20000});
  const auto cold = solver.fit(problem);
  const auto warm = solver.fit(problem, cold.model);
  REQUIRE(warm.info.status == Status::converged);
  CHECK(std::abs(warm.info.objective - cold.info.objective) <= 2e-5 * cold.info.objective);
  // A primal model does not determine α: the warm start seeds the active sets only, so it is
  // not promised to take fewer epochs; it must reach the same optimum.
  CHECK(warm.info.measure <= 1e-5);
  std::vector<Label> labels(10);
  std::iota(labels.begin(), labels.end(), Label{0});
  LinearModel<double> wrong(Dense::Zero(5, 10), {}, labels);  // 5 features instead of 60
  CHECK_THROWS_AS(solver.fit(problem, wrong), std::invalid_argument);
}


template <class Options>
concept HasInterceptOption = requires(Options o) { o.fit_intercept; };

TEST_CASE("fcbcfw: options are validated and name the field", "[fcbcfw]") {
  using Options = Solver::Options;
  const auto message = [](const Options& o, L1 p = {.lambda = 0, .mu = 1}) -> std::string {
    try {
      Solver({}, p, o);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "";
  };
  CHECK_THAT(message({.tol = 0}), Catch::Contains("tol"));
  CHECK_THAT(message({.max_epochs = 0}), Catch::Contains("max_epochs"));
  CHECK_THAT(message({.time_limit = -1}), Catch::Contains("time_limit"));
  // The dual (14) has no intercept: the options have no field to ask for one.
  STATIC_REQUIRE_FALSE(HasInterceptOption<FCBCFWOptions>);
  CHECK_THAT(message({.class_partitions = 0}), Catch::Contains("class_partitions"));
  CHECK_THAT(message({.speedup = 0.5}), Catch::Contains("speedup"));
  CHECK_THAT(message({.warm_start_labels = -1}), Catch::Contains("warm_start_labels"));
  CHECK_THAT(message({.active_sweeps = -2}), Catch::Contains("active_sweeps"));
  CHECK_THAT(message({.search = FCBCFWSearch::bi_stochastic, .storage = FCBCFWStorage::dense}),
             Catch::Contains("storage"));
  CHECK_THAT(message({}, {.lambda = 0, .mu = 0}), Catch::Contains("mu"));
  CHECK_THAT(message({}, {.lambda = -1, .mu = 1}), Catch::Contains("lambda"));
  CHECK(message({}).empty());
}

// ---------------------------------------------------------------------------------------------
// SequentialDual (Keerthi et al. 2008): the ridge-only Crammer–Singer SVM.

using Sdm = SequentialDual<CrammerSinger, NoPenalty>;

// F* of the ridge-only problem bracketed by a tight FCBCFW solve: [F − gap, F].
template <class Scalar>
std::pair<double, double> ridge_optimum(const Dataset<Scalar>& data, double mu) {
  const auto tight = FCBCFW<CrammerSinger, NoPenalty>({}, {.mu = mu}, {.tol = 1e-10, .max_epochs = 200000})
                         .fit(data.template problem<Eigen::RowMajor>());
  REQUIRE(tight.info.status == Status::converged);
  return {tight.info.objective - tight.info.duality_gap, tight.info.objective};
}

TEMPLATE_TEST_CASE("sdm: default options certify a fit within 1e-3 of the optimum (wide, tall)", "[sdm][defaults]",
                   SPARSEMC_TEST_SCALARS) {
  for (const auto& [n, d, K, per_row] : {std::tuple{60, 3000, 6, 30}, std::tuple{900, 40, 6, 8},
                                         std::tuple{300, 500, 40, 12}}) {
    const auto data = generate<TestType>(n, d, K, per_row, 1, 90 + static_cast<std::uint64_t>(K));
    const double mu = 1.0 / n;  // LIBLINEAR's C = 1
    const auto r = Sdm({}, {.mu = mu}).fit(data.template problem<Eigen::RowMajor>());
    INFO("n " << n << " d " << d << " K " << K << ": status " << to_string(r.info.status) << " epochs "
              << r.info.epochs << " F " << r.info.objective << " relative gap " << r.info.relative_gap);
    REQUIRE(r.info.status == Status::converged);
    CHECK(r.info.relative_gap <= 1e-3);
    const auto [low, high] = ridge_optimum(generate<double>(n, d, K, per_row, 1, 90 + static_cast<std::uint64_t>(K)), mu);
    // F recomputed densely in double, independently of the solver.
    const double F = instance(data, 0.0, mu).primal(r.model.dense().template cast<double>());
    const double rounding = std::is_same_v<TestType, float> ? 1e-5 : 1e-10;
    CHECK(std::abs(F - r.info.objective) <= rounding * F);
    CHECK(r.info.duality_gap >= F - high - rounding * F);
    CHECK((F - low) / low <= 1e-3 + rounding);
  }
}

TEST_CASE("sdm: agrees with fcbcfw at a tight tol, with sample costs and empty rows", "[sdm]") {
  auto data = generate<double>(120, 60, 7, 6, 1, 17);
  CsrMatrix<double> X = data.matrix();
  for (CsrMatrix<double>::InnerIterator it(X, 2); it; ++it) it.valueRef() = 0;  // an empty row
  X.prune(0.0);
  Dataset<double> weighted(std::move(X), LabelSets(data.labels()), data.encoder());
  std::vector<double> w(120);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = 0.25 + static_cast<double>(i % 4);
  w[5] = 0;  // a sample with no cost
  weighted.set_sample_weights(w);
  const double mu = 0.02;
  const auto problem = weighted.problem<Eigen::RowMajor>();
  const auto r = Sdm({}, {.mu = mu}, {.tol = 1e-10, .max_epochs = 100000}).fit(problem);
  INFO("status " << to_string(r.info.status) << " epochs " << r.info.epochs << " relative gap " << r.info.relative_gap
                 << " measure " << r.info.measure);
  REQUIRE(r.info.status == Status::converged);
  const auto [low, high] = ridge_optimum(weighted, mu);
  const Instance in = instance(weighted, 0.0, mu);
  const double F = in.primal(r.model.dense());
  CHECK(std::abs(F - r.info.objective) <= 1e-10 * F);
  CHECK(F - low <= 2e-9 * F);
  CHECK(high - (r.info.objective - r.info.duality_gap) >= -1e-12);  // D ≤ F*
  // μ-strong convexity: ‖W − W*‖² ≤ 2(F − F*)/μ for both solvers.
  const auto other = FCBCFW<CrammerSinger, NoPenalty>({}, {.mu = mu}, {.tol = 1e-10, .max_epochs = 200000}).fit(problem);
  REQUIRE(other.info.status == Status::converged);
  const double bound = std::sqrt(2 * (r.info.duality_gap + other.info.duality_gap) / mu);
  CHECK((r.model.dense() - other.model.dense()).norm() <= bound + 1e-9);
}

TEST_CASE("sdm: the dual bound of a given model is valid and close to its excess over F*", "[sdm]") {
  // W₀ from loose fits and from a perturbed tight one: F(W₀) − D bounds F(W₀) − F* from above,
  // and the stop (own gap ≤ a tenth of F(W₀) − D) keeps it within 1/0.9 of it.
  const auto data = generate<double>(200, 120, 8, 9, 1, 31);
  const auto problem = data.problem<Eigen::RowMajor>();
  const double mu = 1.0 / 200;
  const auto [low, high] = ridge_optimum(data, mu);
  const Instance in = instance(data, 0.0, mu);
  std::vector<ClassMatrix<double>> models;
  for (const double tol : {1e-1, 1e-2, 1e-3})
    models.push_back(Sdm({}, {.mu = mu}, {.tol = tol, .seed = 3}).fit(problem).model.dense());
  ClassMatrix<double> perturbed = models.back() * 1.05;
  models.push_back(std::move(perturbed));
  for (const auto& W0 : models) {
    const double F = in.primal(W0);
    const ClassMatrix<double> S = data.matrix() * W0;
    const DualityGap bound = sequential_dual_bound(problem, S, L1{.lambda = 0, .mu = mu}, F, {});
    INFO("F " << F << " F* in [" << low << ", " << high << "] D " << bound.dual);
    CHECK(bound.primal == F);
    CHECK(bound.dual <= high + 1e-12 * high);
    CHECK(bound.gap() <= (F - low) / 0.9 + 1e-9 * F);
  }
  const auto multilabel = generate<double>(40, 20, 4, 5, 2, 7);
  const L1 ridge{.lambda = 0, .mu = mu};
  CHECK_THROWS_AS(sequential_dual_bound(multilabel.problem<Eigen::RowMajor>(), ClassMatrix<double>::Zero(40, 4), ridge,
                                        1.0, {}),
                  std::invalid_argument);
  CHECK_THROWS_AS(sequential_dual_bound(problem, ClassMatrix<double>::Zero(10, 8), ridge, 1.0, {}), std::invalid_argument);
  CHECK_THROWS_AS(sequential_dual_bound(problem, ClassMatrix<double>::Zero(200, 8), L1{.lambda = -1, .mu = mu}, 1.0, {}),
                  std::invalid_argument);
}

// F* of the elastic-net problem bracketed by a tight FCBCFW solve: [F − gap, F].
std::pair<double, double> elastic_optimum(const Dataset<double>& data, double lambda, double mu) {
  const auto tight = FCBCFW<CrammerSinger, L1>({}, {.lambda = lambda, .mu = mu}, {.tol = 1e-10, .max_epochs = 200000})
                         .fit(data.problem<Eigen::RowMajor>());
  REQUIRE(tight.info.status == Status::converged);
  return {tight.info.objective - tight.info.duality_gap, tight.info.objective};
}

TEST_CASE("sdm: the elastic net (l1, lambda > 0) reaches fcbcfw's certified optimum", "[sdm][elastic]") {
  // The proximal steps on V with W = S_τ(V): a sparse W, F of (1) recomputed densely, the
  // certificate bracketing FCBCFW's F*, and W within the strong-convexity bound of FCBCFW's.
  auto data = generate<double>(150, 400, 8, 10, 1, 61);
  std::vector<double> costs(150);
  for (std::size_t i = 0; i < costs.size(); ++i) costs[i] = 0.5 + static_cast<double>(i % 3);
  data.set_sample_weights(costs);
  const auto problem = data.problem<Eigen::RowMajor>();
  const double mu = 1.0 / 150;
  for (const double lambda : {1e-3, 1e-2}) {
    const auto [low, high] = elastic_optimum(data, lambda, mu);
    const auto r = SequentialDual<CrammerSinger, L1>({}, {.lambda = lambda, .mu = mu}, {.tol = 1e-10, .max_epochs = 100000})
                       .fit(problem);
    INFO("lambda " << lambda << ": status " << to_string(r.info.status) << " epochs " << r.info.epochs << " gap "
                   << r.info.relative_gap << " nnz " << r.model.nnz() << " of " << 400 * 8);
    REQUIRE(r.info.status == Status::converged);
    const double F = instance(data, lambda, mu).primal(r.model.dense());
    CHECK(std::abs(F - r.info.objective) <= 1e-10 * F);
    CHECK(F - low <= 2e-9 * F);
    CHECK(high - (r.info.objective - r.info.duality_gap) >= -1e-12 * high);  // D ≤ F*
    CHECK(r.model.nnz() < 400 * 8 / 2);  // S_τ leaves exact zeros
    const auto other =
        FCBCFW<CrammerSinger, L1>({}, {.lambda = lambda, .mu = mu}, {.tol = 1e-10, .max_epochs = 200000}).fit(problem);
    const double bound = std::sqrt(2 * (r.info.duality_gap + other.info.duality_gap) / mu);
    CHECK((r.model.dense() - other.model.dense()).norm() <= bound + 1e-9);
    // The default tol certifies within 1e-3 of F*.
    const auto loose = SequentialDual<CrammerSinger, L1>({}, {.lambda = lambda, .mu = mu}).fit(problem);
    REQUIRE(loose.info.status == Status::converged);
    CHECK((instance(data, lambda, mu).primal(loose.model.dense()) - low) / low <= 1e-3 + 1e-12);
  }
}

TEST_CASE("sdm: the dual bound of an elastic-net model is valid and close to its excess over F*", "[sdm][elastic]") {
  const auto data = generate<double>(200, 300, 8, 9, 1, 37);
  const auto problem = data.problem<Eigen::RowMajor>();
  const double lambda = 2e-3, mu = 1.0 / 200;
  const auto [low, high] = elastic_optimum(data, lambda, mu);
  const Instance in = instance(data, lambda, mu);
  std::vector<ClassMatrix<double>> models;
  for (const double tol : {1e-1, 1e-2, 1e-3})
    models.push_back(FCBCFW<CrammerSinger, L1>({}, {.lambda = lambda, .mu = mu}, {.tol = tol, .seed = 3})
                         .fit(problem)
                         .model.dense());
  ClassMatrix<double> perturbed = models.back() * 1.05;
  models.push_back(std::move(perturbed));
  for (const auto& W0 : models) {
    const double F = in.primal(W0);
    const ClassMatrix<double> S = data.matrix() * W0;
    const DualityGap bound = sequential_dual_bound(problem, S, L1{.lambda = lambda, .mu = mu}, F, {});
    INFO("F " << F << " F* in [" << low << ", " << high << "] D " << bound.dual);
    CHECK(bound.primal == F);
    CHECK(bound.dual <= high + 1e-12 * high);
    CHECK(bound.gap() <= (F - low) / 0.9 + 1e-9 * F);
  }
}

TEST_CASE("sdm: every penalty at lambda = 0 is the ridge-only problem, with the same iterates", "[sdm]") {
  // At λ = 0 each penalty of (1) is (μ/2)‖W‖² alone: the fits with L1, L1L2 and L1Linf are the
  // NoPenalty fit (the engine sees μ only), and each reports F of (1) at its model.
  const auto data = generate<double>(150, 80, 9, 7, 1, 23);
  const auto problem = data.problem<Eigen::RowMajor>();
  const double mu = 1.0 / 150;
  const SequentialDualOptions options{.tol = 1e-6, .seed = 5};
  const auto ridge = Sdm({}, {.mu = mu}, options).fit(problem);
  REQUIRE(ridge.info.status == Status::converged);
  const auto same = [&](const auto& r, const char* penalty) {
    INFO(penalty << ": status " << to_string(r.info.status) << " epochs " << r.info.epochs);
    CHECK(r.model.dense() == ridge.model.dense());
    CHECK(r.info.epochs == ridge.info.epochs);
    CHECK(r.info.objective == ridge.info.objective);
    CHECK(r.info.duality_gap == ridge.info.duality_gap);
    CHECK(r.model.provenance().penalty == penalty);
  };
  same(SequentialDual<CrammerSinger, L1>({}, {.lambda = 0, .mu = mu}, options).fit(problem), "l1");
  same(SequentialDual<CrammerSinger, L1L2>({}, {.lambda = 0, .mu = mu}, options).fit(problem), "l1l2");
  same(SequentialDual<CrammerSinger, L1Linf>({}, {.lambda = 0, .mu = mu}, options).fit(problem), "l1linf");
}

TEMPLATE_TEST_CASE("sdm: a dense X gives the CSR fit bit for bit, warm starts and costs too", "[sdm][dense]",
                   SPARSEMC_TEST_SCALARS) {
  // The dense rows are walked by their nonzeros in the CSR order (data/sample_entries.hpp), so
  // every step does the same arithmetic: the models and reports are equal, not merely close.
  const auto data = generate<TestType>(200, 70, 8, 9, 1, 41);
  const Eigen::Matrix<TestType, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> X = data.matrix().toDense();
  std::vector<TestType> costs(200);
  for (std::size_t i = 0; i < costs.size(); ++i) costs[i] = TestType(0.5) + static_cast<TestType>(i % 3);
  const auto labels = data.labels().view();
  for (const std::span<const TestType> weights : {std::span<const TestType>(), std::span<const TestType>(costs)}) {
    const DenseProblem<TestType> dense{{X.data(), X.rows(), X.cols()}, labels, weights};
    auto csr = data.template problem<Eigen::RowMajor>();
    csr.sample_weights = weights;
    const Sdm solver({}, {.mu = 1.0 / 200}, {.tol = std::is_same_v<TestType, float> ? 1e-4 : 1e-8, .seed = 3});
    const auto a = solver.fit(csr), b = solver.fit(dense);
    INFO((weights.empty() ? "unit costs" : "costs") << ": status " << to_string(b.info.status) << " epochs "
                                                     << b.info.epochs);
    REQUIRE(b.info.status == Status::converged);
    CHECK(a.model.dense() == b.model.dense());
    CHECK(a.info.epochs == b.info.epochs);
    CHECK(a.info.objective == b.info.objective);
    CHECK(a.info.duality_gap == b.info.duality_gap);
    const auto start = Sdm({}, {.mu = 1.0 / 200}, {.max_epochs = 2}).fit(dense);
    const auto warm_csr = solver.fit(csr, start.model), warm_dense = solver.fit(dense, start.model);
    CHECK(warm_csr.model.dense() == warm_dense.model.dense());
    CHECK(warm_csr.info.objective == warm_dense.info.objective);
  }
}

TEST_CASE("sdm: with lambda = 0 the objective equals LIBLINEAR -s 4 on dna", "[sdm][liblinear][external]") {
  const auto reference = liblinear_s4_on_dna("sdm_dna_liblinear");
  if (!reference) return;
  const auto& [data, mu, F_liblinear] = *reference;
  const auto r = Sdm({}, {.mu = mu}, {.tol = 1e-7, .max_epochs = 100000}).fit(data.problem<Eigen::RowMajor>());
  REQUIRE(r.info.status == Status::converged);
  INFO("F sdm " << r.info.objective << "  F liblinear " << F_liblinear);
  CHECK(std::abs(r.info.objective - F_liblinear) <= 1e-4 * F_liblinear);
  // Our dual value bounds LIBLINEAR's primal from below.
  CHECK(F_liblinear >= r.info.objective - r.info.duality_gap - 1e-12);
}

TEST_CASE("sdm: reproducible for a seed; statuses and callbacks", "[sdm]") {
  const auto data = generate<double>(150, 50, 9, 6, 1, 77);
  const auto problem = data.problem<Eigen::RowMajor>();
  const Sdm solver({}, {.mu = 0.02}, {.tol = 1e-6, .seed = 5});
  const auto a = solver.fit(problem), b = solver.fit(problem);
  CHECK(a.model.dense() == b.model.dense());
  CHECK(a.info.epochs == b.info.epochs);
  const auto c = Sdm({}, {.mu = 0.02}, {.tol = 1e-6, .seed = 6}).fit(problem);
  CHECK(std::abs(c.info.objective - a.info.objective) <= 2e-6 * a.info.objective);

  const auto budget = Sdm({}, {.mu = 0.02}, {.tol = 1e-12, .max_epochs = 2}).fit(problem);
  CHECK(budget.info.status == Status::max_iter);
  CHECK(budget.info.epochs == 2);
  CHECK(budget.info.relative_gap > 1e-12);  // reported for every status
  std::int64_t seen = 0;
  struct StopAfter {
    std::int64_t* seen;
    bool end_epoch(const EpochReport& r) { return ++*seen, r.epoch >= 3; }
  };
  const auto stopped = Sdm({}, {.mu = 0.02}, {.tol = 1e-12}).fit(problem, StopAfter{&seen});
  CHECK(stopped.info.status == Status::stopped_by_callback);
  CHECK(seen == 3);
}

TEST_CASE("sdm: the model is W(alpha) summed afresh, without the updates' rounding residue", "[sdm]") {
  // Classes that move and return to α_im = 0 leave W_jm at a few ulps of its past values
  // instead of 0 when W is only updated (here 1462 of 7642 stored weights were below 1e-13 of
  // the largest); the certificate sums W = Σ_i x_i α_iᵀ again. What is left comes from α_im
  // that the sub-problem's rounding leaves at ~1e-16 C_i (46 weights of 6226).
  const auto data = generate<double>(400, 300, 40, 12, 1, 123);
  const auto r = Sdm({}, {.mu = 1.0 / 400}).fit(data.problem<Eigen::RowMajor>());
  REQUIRE(r.info.status == Status::converged);
  const Dense W = r.model.dense();
  const double largest = W.cwiseAbs().maxCoeff();
  const auto residue = (W.array() != 0.0 && W.array().abs() < 1e-13 * largest).count();
  INFO(r.model.nnz() << " stored weights");
  CHECK(residue <= r.model.nnz() / 100);
}

TEST_CASE("sdm: more than 65535 classes take the four-byte class lists", "[sdm]") {
  // The class lists hold two bytes an entry while K ≤ 65535; here K = 70000 (most classes
  // without a sample), so the solve runs on the ClassIndex lists.
  const auto data = generate<double>(24, 16, 70000, 4, 1, 5);
  const double mu = 1.0 / 24;
  const auto r = Sdm({}, {.mu = mu}, {.tol = 1e-9}).fit(data.problem<Eigen::RowMajor>());
  INFO("status " << to_string(r.info.status) << " epochs " << r.info.epochs << " relative gap " << r.info.relative_gap);
  REQUIRE(r.info.status == Status::converged);
  REQUIRE(r.model.n_classes() == 70000);
  const double F = instance(data, 0.0, mu).primal(r.model.dense());
  CHECK(std::abs(F - r.info.objective) <= 1e-10 * F);
  // FCBCFW's certificate closes slowly at this K (2.9e-3 after 1000 epochs), so its pair only
  // brackets: D_fcbcfw ≤ F* ≤ F_sdm ≤ F_fcbcfw and D_sdm ≤ F_fcbcfw.
  const auto other =
      FCBCFW<CrammerSinger, NoPenalty>({}, {.mu = mu}, {.max_epochs = 200}).fit(data.problem<Eigen::RowMajor>());
  const double low = other.info.objective - other.info.duality_gap, high = other.info.objective;
  INFO("fcbcfw F " << high << ", relative gap " << other.info.relative_gap);
  CHECK(F >= low - 1e-12);
  CHECK(F <= high + 1e-12);
  CHECK(r.info.objective - r.info.duality_gap <= high + 1e-12);
}

TEST_CASE("sdm: what it refuses names the reason", "[sdm]") {
  const auto message = [](auto make) -> std::string {
    try {
      make();
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "";
  };
  CHECK_THAT(message([] { SequentialDual<CrammerSinger, L1>({}, {.lambda = -0.1, .mu = 1}); }),
             Catch::Contains("lambda"));
  CHECK(message([] { SequentialDual<CrammerSinger, L1>({}, {.lambda = 0, .mu = 1}); }).empty());
  CHECK(message([] { SequentialDual<CrammerSinger, L1>({}, {.lambda = 0.1, .mu = 1}); }).empty());
  CHECK_THAT(message([] { SequentialDual<CrammerSinger, L1L2>({}, {.lambda = 0.1, .mu = 1}); }),
             Catch::Contains("lambda"));
  CHECK_THAT(message([] { SequentialDual<CrammerSinger, L1Linf>({}, {.lambda = 0.1, .mu = 1}); }),
             Catch::Contains("lambda"));
  CHECK_THAT(message([] { Sdm({}, {.mu = 0}); }), Catch::Contains("mu"));
  CHECK_THAT(message([] { Sdm({}, {.mu = 1}, {.tol = 0}); }), Catch::Contains("tol"));
  CHECK_THAT(message([] { Sdm({}, {.mu = 1}, {.first_trigger = 0}); }), Catch::Contains("first_trigger"));
  CHECK_THAT(message([] { Sdm({}, {.mu = 1}, {.threads = -1}); }), Catch::Contains("threads"));
  const auto multilabel = generate<double>(40, 20, 4, 5, 3, 3);
  CHECK_THAT(message([&] { (void)Sdm({}, {.mu = 1}).fit(multilabel.problem<Eigen::RowMajor>()); }),
             Catch::Contains("multilabel"));
  const auto data = generate<double>(40, 20, 4, 5, 1, 3);
  std::vector<Label> labels(4);
  std::iota(labels.begin(), labels.end(), Label{0});
  const LinearModel<double> wrong(Dense::Zero(5, 4), {}, labels);
  CHECK_THAT(message([&] { (void)Sdm({}, {.mu = 1}).fit(data.problem<Eigen::RowMajor>(), wrong); }),
             Catch::Contains("SequentialDual"));
}
