// LinearModel scoring (CSR, CSC, dense, single samples), probabilities, top-k, metrics, the
// native model format and LIBLINEAR model interchange (checked against the real binaries).
#include <catch2/catch.hpp>

#include "skip.hpp"

#include <sparsemc/core/rng.hpp>
#include <sparsemc/io/any_model.hpp>
#include <sparsemc/io/liblinear_model.hpp>
#include <sparsemc/io/libsvm_reader.hpp>
#include <sparsemc/io/model_io.hpp>
#include <sparsemc/model/linear_model.hpp>
#include <sparsemc/model/metrics.hpp>

#include <algorithm>
#include <chrono>
#include <iterator>
#include <tuple>
#include <unistd.h>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <set>
#include <span>
#include <sstream>
#include <string>
#include <vector>

using namespace sparsemc;
namespace fs = std::filesystem;

namespace {

template <class Scalar>
using RowMatrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class Scalar>
using Vector = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;

// The lines of a text file, each ended by LF.
std::string join(const std::vector<std::string>& lines) {
  std::string text;
  for (const auto& l : lines) text += l + '\n';
  return text;
}

// CSR matrix from dense rows (entries equal to 0 are not stored).
template <class Scalar, class Index = std::int32_t>
CsrMatrix<Scalar, Index> csr_from(const RowMatrix<Scalar>& dense) {
  CsrMatrix<Scalar, Index> m = dense.sparseView();
  m.makeCompressed();
  return m;
}

// The hand-computed model of the scoring tests: d = 4, K = 3, feature 1 zero (not stored).
template <class Scalar>
LinearModel<Scalar> hand_model(bool with_intercept) {
  RowMatrix<Scalar> W(4, 3);
  W << 1, 0, -1,  //
      0, 0, 0,    //
      0.5, 2, 0,  //
      -1, 1, 1;
  Vector<Scalar> b(3);
  b << 0.5, -0.25, 0.125;
  return LinearModel<Scalar>(W, with_intercept ? b : Vector<Scalar>(), {10, 20, 30});
}

// Samples of the hand model, 6 columns: columns 4 and 5 lie beyond the model.
template <class Scalar>
RowMatrix<Scalar> hand_samples() {
  RowMatrix<Scalar> X = RowMatrix<Scalar>::Zero(3, 6);
  X(0, 0) = 1;
  X(0, 2) = 2;
  X(1, 3) = 1;
  X(1, 5) = 100;
  return X;  // sample 2 is empty
}

template <class Scalar>
bool same_bits(const Scalar* a, const Scalar* b, Eigen::Index n) {
  return n == 0 || std::memcmp(a, b, sizeof(Scalar) * static_cast<std::size_t>(n)) == 0;
}

// Exact equality of everything a model holds (bitwise for the numbers).
template <class Scalar>
void require_identical(const LinearModel<Scalar>& a, const LinearModel<Scalar>& b) {
  REQUIRE(a.n_features() == b.n_features());
  REQUIRE(a.labels() == b.labels());
  REQUIRE(a.support() == b.support());
  REQUIRE(a.n_classes() == b.n_classes());
  REQUIRE(a.nnz() == b.nnz());
  for (std::size_t r = 0; r < a.support().size(); ++r) {
    REQUIRE(std::ranges::equal(a.row(r).indices, b.row(r).indices));
    REQUIRE(same_bits(a.row(r).values.data(), b.row(r).values.data(), static_cast<Eigen::Index>(a.row(r).size())));
  }
  REQUIRE(a.has_intercept() == b.has_intercept());
  REQUIRE(a.intercept().size() == b.intercept().size());
  REQUIRE(same_bits(a.intercept().data(), b.intercept().data(), a.intercept().size()));
  const auto& pa = a.provenance();
  const auto& pb = b.provenance();
  REQUIRE(pa.loss == pb.loss);
  REQUIRE(pa.penalty == pb.penalty);
  REQUIRE(pa.solver == pb.solver);
  REQUIRE(pa.status == pb.status);
  REQUIRE(std::bit_cast<std::uint64_t>(pa.lambda) == std::bit_cast<std::uint64_t>(pb.lambda));
  REQUIRE(std::bit_cast<std::uint64_t>(pa.mu) == std::bit_cast<std::uint64_t>(pb.mu));
  REQUIRE(std::bit_cast<std::uint64_t>(pa.bias) == std::bit_cast<std::uint64_t>(pb.bias));
}

// Values over many magnitudes, with the awkward ones: −0, subnormals, extremes, integers.
template <class Scalar>
Scalar awkward_value(Rng& rng) {
  const double u = uniform_real(rng);
  const std::size_t kind = uniform_index(rng, 10);
  using limits = std::numeric_limits<Scalar>;
  switch (kind) {
    case 0: return Scalar(-0.0);
    case 1: return limits::denorm_min() * static_cast<Scalar>(1 + uniform_index(rng, 1000));
    case 2: return (u < 0.5 ? -1 : 1) * limits::max() * static_cast<Scalar>(uniform_real(rng));
    case 3: return limits::min();
    case 4: return static_cast<Scalar>(static_cast<int>(uniform_index(rng, 2001)) - 1000);
    case 5: return static_cast<Scalar>(1) / 3;
    default: {
      const double exponent = -30.0 + 60.0 * uniform_real(rng);
      return static_cast<Scalar>((u - 0.5) * std::pow(10.0, exponent));
    }
  }
}

// A random model: `density` of the d rows stored (each row has at least one nonzero).
template <class Scalar>
LinearModel<Scalar> random_model(std::int64_t d, ClassIndex K, double density, bool intercept, bool awkward,
                                 std::uint64_t seed, std::vector<Label> labels = {}) {
  Rng rng(seed);
  std::vector<std::int64_t> support;
  for (std::int64_t j = 0; j < d; ++j)
    if (uniform_real(rng) < density) support.push_back(j);
  RowMatrix<Scalar> rows(static_cast<Eigen::Index>(support.size()), K);
  for (Eigen::Index r = 0; r < rows.rows(); ++r) {
    for (ClassIndex k = 0; k < K; ++k)
      rows(r, k) = awkward ? awkward_value<Scalar>(rng) : static_cast<Scalar>(2 * uniform_real(rng) - 1);
    rows(r, static_cast<Eigen::Index>(uniform_index(rng, static_cast<std::size_t>(K)))) = Scalar(0.75);
  }
  Vector<Scalar> b;
  if (intercept) {
    b.resize(K);
    for (ClassIndex k = 0; k < K; ++k) b[k] = awkward ? awkward_value<Scalar>(rng) : static_cast<Scalar>(uniform_real(rng) - 0.5);
  }
  if (labels.empty())
    for (ClassIndex k = 0; k < K; ++k) labels.push_back(k + 1);
  return LinearModel<Scalar>(d, std::move(support), std::move(rows), std::move(b), std::move(labels));
}

// A fresh directory under the system temp dir, removed at the end of the test.
struct TempDir {
  fs::path path;
  TempDir() {
    std::random_device rd;
    path = fs::temp_directory_path() / ("sparsemc_test_model_" + std::to_string(rd()) + std::to_string(rd()));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] std::string operator/(const std::string& name) const { return (path / name).string(); }
};

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Scoring
// ---------------------------------------------------------------------------------------------

TEMPLATE_TEST_CASE("decision_function and predict on a hand-computed model", "[model]", float, double) {
  using Scalar = TestType;
  const auto model = hand_model<Scalar>(true);
  REQUIRE(model.nnz_rows() == 3);  // feature 1 is not stored
  REQUIRE(model.support() == std::vector<std::int64_t>{0, 2, 3});
  const RowMatrix<Scalar> Xd = hand_samples<Scalar>();
  const auto Xs = csr_from(Xd);
  const CsrView<Scalar> X(Xs);

  // s = Wᵀx + b by hand; columns 4 and 5 (beyond the model) are ignored.
  RowMatrix<Scalar> expected(3, 3);
  expected << 2.5, 3.75, -0.875,  //
      -0.5, 0.75, 1.125,          //
      0.5, -0.25, 0.125;
  const RowMatrix<Scalar> S = model.decision_function(X);
  REQUIRE(S == expected);
  REQUIRE(model.predict_classes(X) == std::vector<ClassIndex>{1, 2, 0});
  REQUIRE(model.predict(X) == std::vector<Label>{20, 30, 10});

  SECTION("dense, CSC and single-sample paths give the same bits") {
    REQUIRE(model.decision_function(Xd) == S);
    const Eigen::Map<const RowMatrix<Scalar>> view(Xd.data(), Xd.rows(), Xd.cols());  // a DenseRowView
    REQUIRE(model.decision_function(view) == S);
    const Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic> col_major = Xd;
    REQUIRE(model.decision_function(col_major) == S);
    REQUIRE(model.predict(col_major) == std::vector<Label>{20, 30, 10});
    const auto Xc = to_csc(X);
    REQUIRE(model.decision_function(CscView<Scalar>(Xc)) == S);
    REQUIRE(model.predict(CscView<Scalar>(Xc)) == std::vector<Label>{20, 30, 10});
    std::vector<Scalar> s(3);
    for (Eigen::Index i = 0; i < 3; ++i) {
      model.decision_function(X.outer(static_cast<std::int32_t>(i)), std::span<Scalar>(s));
      REQUIRE(RowMatrix<Scalar>(Eigen::Map<RowMatrix<Scalar>>(s.data(), 1, 3)) == S.row(i));
      model.decision_function(std::span<const Scalar>(Xd.row(i).data(), 6), std::span<Scalar>(s));
      REQUIRE(RowMatrix<Scalar>(Eigen::Map<RowMatrix<Scalar>>(s.data(), 1, 3)) == S.row(i));
      // A dense sample shorter than the model: the missing features are zeros.
      model.decision_function(std::span<const Scalar>(Xd.row(i).data(), 3), std::span<Scalar>(s));
      REQUIRE(s[0] == S(i, 0) - (Xd(i, 3) * Scalar(-1)));
    }
    REQUIRE(model.predict_class(X.outer(1)) == 2);
    REQUIRE(model.predict_class(std::span<const Scalar>(Xd.row(0).data(), 6)) == 1);
    std::vector<Scalar> wrong(2);
    REQUIRE_THROWS_AS(model.decision_function(X.outer(0), std::span<Scalar>(wrong)), std::invalid_argument);
  }

  SECTION("without intercept, an all-zero score vector is a tie won by class 0") {
    const auto plain = hand_model<Scalar>(false);
    REQUIRE(!plain.has_intercept());
    REQUIRE(plain.decision_function(X).row(2).isZero());
    REQUIRE(plain.predict_classes(X)[2] == 0);
    REQUIRE(plain.top_k(X, 3).row(2) == Eigen::Matrix<ClassIndex, 1, 3>(0, 1, 2));
  }

  SECTION("class_of maps labels back to classes") {
    REQUIRE(model.class_of(30) == 2);
    REQUIRE(model.class_of(10) == 0);
    REQUIRE(model.class_of(11) == -1);
    RowMatrix<Scalar> W = RowMatrix<Scalar>::Ones(2, 2);
    REQUIRE_THROWS_AS(LinearModel<Scalar>(W, Vector<Scalar>(), {5, 5}), std::invalid_argument);
  }
}

TEMPLATE_TEST_CASE("a bias feature is appended by the model and a data column at its index is ignored",
                   "[model]", float, double) {
  using Scalar = TestType;
  // n_features = 3: features 0, 1 from the data, feature 2 the constant bias 2.
  RowMatrix<Scalar> W(3, 2);
  W << 1, -1,  //
      0, 0,    //
      0.5, -0.5;
  LinearModel<Scalar> model(W, Vector<Scalar>(), {-1, 1});
  model.provenance().bias = 2;
  REQUIRE(model.n_data_features() == 2);
  RowMatrix<Scalar> Xd = RowMatrix<Scalar>::Zero(2, 8);
  Xd(0, 0) = 1;
  Xd(0, 2) = 100;  // at the bias index: ignored
  Xd(0, 7) = 3;    // beyond the model: ignored
  Xd(1, 1) = 5;
  const auto Xs = csr_from(Xd);
  const RowMatrix<Scalar> S = model.decision_function(CsrView<Scalar>(Xs));
  RowMatrix<Scalar> expected(2, 2);
  expected << 2, -2,  // 1·(1, −1) + 2·(0.5, −0.5)
      1, -1;          // 2·(0.5, −0.5)
  REQUIRE(S == expected);
  REQUIRE(model.decision_function(Xd) == expected);
  const auto Xc = to_csc(CsrView<Scalar>(Xs));
  REQUIRE(model.decision_function(CscView<Scalar>(Xc)) == expected);
  // Narrow data (only feature 0) scores the same: the bias does not come from the data.
  const RowMatrix<Scalar> narrow = Xd.leftCols(1);
  REQUIRE(model.decision_function(narrow) == expected);
  // With an intercept too: bias feature, then intercept.
  Vector<Scalar> b(2);
  b << 0.25, -0.25;
  LinearModel<Scalar> both(W, b, {-1, 1});
  both.provenance().bias = 2;
  REQUIRE(both.decision_function(Xd)(0, 0) == Scalar(2.25));
}

TEMPLATE_TEST_CASE("predict_proba is a stable softmax, only for logistic models", "[model]", float, double) {
  using Scalar = TestType;
  auto model = hand_model<Scalar>(true);
  const auto Xs = csr_from(hand_samples<Scalar>());
  const CsrView<Scalar> X(Xs);
  REQUIRE_THROWS_AS(model.predict_proba(X), std::logic_error);
  REQUIRE_THROWS_AS(model.predict_log_proba(X), std::logic_error);
  model.provenance().loss = "logistic";

  const RowMatrix<Scalar> S = model.decision_function(X);
  const RowMatrix<Scalar> P = model.predict_proba(X);
  const RowMatrix<Scalar> L = model.predict_log_proba(X);
  for (Eigen::Index i = 0; i < 3; ++i) {
    long double z = 0;
    for (Eigen::Index k = 0; k < 3; ++k) z += std::exp(static_cast<long double>(S(i, k)));
    for (Eigen::Index k = 0; k < 3; ++k) {
      const long double p = std::exp(static_cast<long double>(S(i, k))) / z;
      REQUIRE(static_cast<double>(P(i, k)) == Approx(static_cast<double>(p)).epsilon(1e-6));
      REQUIRE(static_cast<double>(L(i, k)) == Approx(static_cast<double>(std::log(p))).epsilon(1e-6));
    }
    REQUIRE(P.row(i).sum() == Approx(1.0).epsilon(1e-6));
  }
  REQUIRE(model.top_k(X, 1).col(0) == Eigen::Matrix<ClassIndex, 3, 1>(1, 2, 0));

  SECTION("scores of ±1e6 and ±inf give 0/1 and shared mass, never NaN") {
    const Scalar inf = std::numeric_limits<Scalar>::infinity();
    // One feature per case; sample i has only feature i, value 1, so s_i = row i.
    RowMatrix<Scalar> W(6, 3);
    W << 1e6, -1e6, 0,     //
        1e6, 1e6, -1e6,    //
        -1e6, -1e6, -1e6,  //
        inf, 0, 0,         //
        inf, inf, -inf,    //
        -inf, -inf, -inf;
    LinearModel<Scalar> extreme(W, Vector<Scalar>(), {0, 1, 2});
    extreme.provenance().loss = "logistic";
    const RowMatrix<Scalar> I = RowMatrix<Scalar>::Identity(6, 6);
    const RowMatrix<Scalar> Pe = extreme.predict_proba(I);
    RowMatrix<Scalar> expected(6, 3);
    const Scalar third = Scalar(1) / 3;
    expected << 1, 0, 0,  //
        0.5, 0.5, 0,      //
        third, third, third, 1, 0, 0, 0.5, 0.5, 0, third, third, third;
    REQUIRE(Pe == expected);
    const RowMatrix<Scalar> Le = extreme.predict_log_proba(I);
    REQUIRE(Le(0, 0) == 0);
    REQUIRE(Le(0, 1) == Scalar(-2e6));
    REQUIRE(Le(0, 2) == Scalar(-1e6));
    REQUIRE(Le(2, 0) == Approx(-std::log(3.0)));
    REQUIRE(!Le.array().isNaN().any());
  }
}

TEMPLATE_TEST_CASE("top_k ranks classes best first, ties by class index, NaN last", "[model]", float, double) {
  using Scalar = TestType;
  const Scalar nan = std::numeric_limits<Scalar>::quiet_NaN();
  RowMatrix<Scalar> W(3, 5);
  W << 3, 1, 4, 1, 5,  //
      2, 2, 2, 2, 2,   //
      nan, 1, 0, nan, -1;
  LinearModel<Scalar> model(W, Vector<Scalar>(), {1, 2, 3, 4, 5});
  const RowMatrix<Scalar> I = RowMatrix<Scalar>::Identity(3, 3);
  ClassRanking top = model.top_k(I, 3);
  REQUIRE(top.cols() == 3);
  REQUIRE(top.row(0) == Eigen::Matrix<ClassIndex, 1, 3>(4, 2, 0));
  REQUIRE(top.row(1) == Eigen::Matrix<ClassIndex, 1, 3>(0, 1, 2));
  REQUIRE(top.row(2) == Eigen::Matrix<ClassIndex, 1, 3>(1, 2, 4));
  const ClassRanking all = model.top_k(I, 99);  // clamped to K
  REQUIRE(all.cols() == 5);
  REQUIRE(all.row(0) == Eigen::Matrix<ClassIndex, 1, 5>(4, 2, 0, 1, 3));
  REQUIRE(all.row(2) == Eigen::Matrix<ClassIndex, 1, 5>(1, 2, 4, 0, 3));
  REQUIRE(model.predict_classes(I) == std::vector<ClassIndex>{4, 0, 1});  // = column 0
  REQUIRE_THROWS_AS(model.top_k(I, 0), std::invalid_argument);

  // On a random model and data, column 0 of top_k is predict_classes and rows are sorted.
  const auto random = random_model<Scalar>(40, 7, 0.5, true, false, 3);
  RowMatrix<Scalar> X = RowMatrix<Scalar>::Zero(50, 40);
  Rng rng(4);
  for (Eigen::Index i = 0; i < X.rows(); ++i)
    for (Eigen::Index j = 0; j < X.cols(); ++j)
      if (uniform_real(rng) < 0.2) X(i, j) = static_cast<Scalar>(uniform_real(rng));
  const ClassRanking r = random.top_k(X, 4);
  const RowMatrix<Scalar> S = random.decision_function(X);
  const auto argmax = random.predict_classes(X);
  for (Eigen::Index i = 0; i < X.rows(); ++i) {
    REQUIRE(r(i, 0) == argmax[static_cast<std::size_t>(i)]);
    for (Eigen::Index c = 1; c < 4; ++c) REQUIRE(S(i, r(i, c - 1)) >= S(i, r(i, c)));
    // Nothing outside the top 4 beats the 4th.
    for (ClassIndex k = 0; k < 7; ++k)
      if ((r.row(i).array() != k).all()) REQUIRE(S(i, k) <= S(i, r(i, 3)));
  }
}

// ---------------------------------------------------------------------------------------------
// Metrics
// ---------------------------------------------------------------------------------------------

TEST_CASE("metrics on hand-computed cases", "[model][metrics]") {
  namespace m = sparsemc::metrics;
  const std::vector<ClassIndex> truth_classes{0, 1, 2, 1};
  const auto truth = LabelSets::multiclass(truth_classes, 3);
  const std::vector<ClassIndex> predicted{0, 2, 2, 1};
  REQUIRE(m::accuracy(predicted, truth.view()) == 0.75);
  REQUIRE(m::accuracy(std::vector<Label>{5, 6, 7}, std::vector<Label>{5, 6, 8}) == Approx(2.0 / 3.0));

  ClassRanking ranking(4, 2);
  ranking << 1, 0,  //
      2, 1,         //
      0, 2,         //
      1, 0;
  REQUIRE(m::top_k_accuracy(ranking, truth.view(), 1) == 0.25);
  REQUIRE(m::top_k_accuracy(ranking, truth.view()) == 1.0);

  const auto C = m::confusion_matrix(predicted, truth.view());
  Eigen::Matrix<std::int64_t, 3, 3, Eigen::RowMajor> expected_c;
  expected_c << 1, 0, 0,  //
      0, 1, 1,            //
      0, 0, 1;
  REQUIRE(C == expected_c);

  // Multilabel: truth {0,2}, {1}, {}, {0,1,2} over K = 4 (class 3 never occurs).
  LabelSets ml_truth(4);
  for (const auto& s : std::vector<std::vector<ClassIndex>>{{0, 2}, {1}, {}, {0, 1, 2}}) ml_truth.push_back(s);
  ClassRanking ml_rank(4, 2);
  ml_rank << 0, 1,  //
      1, 2,         //
      2, 0,         //
      2, 1;
  REQUIRE(m::precision_at_k(ml_rank, ml_truth.view(), 1) == 0.75);
  REQUIRE(m::precision_at_k(ml_rank, ml_truth.view(), 2) == 0.5);
  REQUIRE_THROWS_AS(m::precision_at_k(ml_rank, ml_truth.view(), 3), std::invalid_argument);

  LabelSets ml_pred(4);
  for (const auto& s : std::vector<std::vector<ClassIndex>>{{0}, {1, 2}, {2}, {0, 1, 2}}) ml_pred.push_back(s);
  const auto counts = m::class_counts(ml_pred.view(), ml_truth.view());
  REQUIRE(counts.true_positives == std::vector<std::int64_t>{2, 2, 1, 0});
  REQUIRE(counts.false_positives == std::vector<std::int64_t>{0, 0, 2, 0});
  REQUIRE(counts.false_negatives == std::vector<std::int64_t>{0, 0, 1, 0});
  // micro: 2·5 / (2·5 + 2 + 1); macro over classes 0..2: (1 + 1 + 2/5) / 3.
  REQUIRE(m::micro_f1(ml_pred.view(), ml_truth.view()) == Approx(10.0 / 13.0));
  REQUIRE(m::macro_f1(ml_pred.view(), ml_truth.view()) == Approx(0.8));
  // Nothing true, nothing predicted: every empty set is right.
  LabelSets empty(2);
  empty.push_back(std::vector<ClassIndex>{});
  REQUIRE(m::micro_f1(empty.view(), empty.view()) == 1.0);
  REQUIRE(m::macro_f1(empty.view(), empty.view()) == 1.0);

  // Sets from scores: thresholding at 0 and top-k.
  RowMatrix<double> S(2, 3);
  S << 0.5, 0, -1,  //
      2, 3, 1;
  const auto above = m::sets_above(S);
  REQUIRE(above.view()[0].size() == 1);
  REQUIRE(above.view()[0][0] == 0);
  REQUIRE(above.view()[1].size() == 3);
  const auto above2 = m::sets_above(S, 1.5);
  REQUIRE(above2.view()[1].size() == 2);
  const auto top = m::sets_top_k(ml_rank, 4, 1);
  REQUIRE(m::micro_f1(top.view(), ml_truth.view()) == Approx(2.0 * 3 / (2.0 * 3 + 1 + 3)));

  // Disagreeing lengths and empty inputs are errors.
  REQUIRE_THROWS_AS(m::accuracy(std::vector<ClassIndex>{0}, truth.view()), std::invalid_argument);
  REQUIRE_THROWS_AS(m::accuracy(std::vector<Label>{}, std::vector<Label>{}), std::invalid_argument);
  REQUIRE_THROWS_AS(m::class_counts(ml_pred.view(), above.view()), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// Native format
// ---------------------------------------------------------------------------------------------

TEMPLATE_TEST_CASE("native format: save → load is bit exact", "[model][io]", float, double) {
  using Scalar = TestType;
  TempDir dir;
  struct Case {
    const char* name;
    std::int64_t d;
    ClassIndex K;
    double density;
    bool intercept;
    double bias;
  };
  const std::vector<Case> cases{{"dense with intercept", 30, 4, 1.0, true, -1},
                                {"row-sparse without intercept", 200, 3, 0.1, false, -1},
                                {"row-sparse, intercept and bias feature", 50, 5, 0.3, true, 1.5},
                                {"one class, no stored row", 10, 1, 0.0, false, -1},
                                {"two classes", 20, 2, 0.5, true, 0}};
  std::uint64_t seed = 11;
  for (const auto& c : cases) {
    SECTION(c.name) {
      auto model = random_model<Scalar>(c.d, c.K, c.density, c.intercept, true, ++seed);
      auto& prov = model.provenance();
      prov.loss = "logistic";
      prov.penalty = "l1 l2 (group)";  // inner blanks survive
      prov.solver = "fista";
      prov.lambda = 1.0 / 3.0;
      prov.mu = std::numeric_limits<double>::quiet_NaN();  // unknown
      prov.status = "";
      prov.bias = c.bias;
      const auto path = dir / "model.txt";
      io::save_model(model, path);
      const auto back = io::load_model<Scalar>(path);
      require_identical(model, back);
      // And the text is a fixed point.
      REQUIRE(io::format_model(back) == read_text(path));
      // Through streams too.
      std::stringstream stream;
      io::save_model(model, stream);
      require_identical(model, io::load_model<Scalar>(stream));
    }
  }

  SECTION("labels anywhere in int64, intercept 'none', CRLF line ends") {
    RowMatrix<Scalar> W(2, 3);
    W << 1, 2, 3, 0, 0, 0;
    LinearModel<Scalar> model(W, Vector<Scalar>(), {std::numeric_limits<Label>::min(), -7, std::numeric_limits<Label>::max()});
    std::string text = io::format_model(model);
    REQUIRE(text.find("intercept none\n") != std::string::npos);
    REQUIRE(text.find("rows 1\nentries 3\nlayout dense\n0 1 2 3\nend\n") != std::string::npos);
    std::string crlf;
    for (char ch : text) crlf += ch == '\n' ? std::string("\r\n") : std::string(1, ch);
    require_identical(model, io::parse_model<Scalar>(crlf, "crlf"));
  }

  SECTION("a float file read into a double model is widened exactly") {
    const auto f = random_model<float>(40, 3, 0.5, true, true, 99);
    const auto d = io::parse_model<double>(io::format_model(f), "float-file");
    REQUIRE(d.support() == f.support());
    REQUIRE(d.dense() == f.dense().template cast<double>());
    REQUIRE(d.intercept() == f.intercept().template cast<double>());
  }
}

TEST_CASE("model files longer than the write buffer are written a chunk at a time, as formatted", "[model][io]") {
  // 20000 dense rows of 6 classes: about 2.5 MB of text in either format, several chunks.
  const auto model = random_model<double>(20000, 6, 1.0, true, false, 21);
  TempDir dir;
  const std::string native = io::format_model(model);
  REQUIRE(native.size() > 2 * io::detail::ModelText::chunk);
  io::save_model(model, dir / "native.model");
  REQUIRE(read_text(dir / "native.model") == native);
  std::stringstream stream;
  io::save_model(model, stream);
  REQUIRE(stream.str() == native);

  const std::string liblinear = io::format_liblinear_model(model);
  REQUIRE(liblinear.size() > 2 * io::detail::ModelText::chunk);
  io::save_liblinear_model(model, dir / "liblinear.model");
  REQUIRE(read_text(dir / "liblinear.model") == liblinear);
  std::stringstream liblinear_stream;
  io::save_liblinear_model(model, liblinear_stream);
  REQUIRE(liblinear_stream.str() == liblinear);

  // A model that cannot be saved is refused before the file is touched.
  auto bad = model;
  bad.provenance().solver = "two\nlines";
  REQUIRE_THROWS_AS(io::save_model(bad, dir / "bad.model"), std::invalid_argument);
  REQUIRE_FALSE(fs::exists(dir / "bad.model"));
  std::stringstream refused;
  REQUIRE_THROWS_AS(io::save_model(bad, refused), std::invalid_argument);
  REQUIRE(refused.str().empty());
}

TEST_CASE("native format: saving what cannot be read back is refused", "[model][io]") {
  RowMatrix<double> W(2, 2);
  W << 1, std::numeric_limits<double>::infinity(), 0, 1;
  const LinearModel<double> bad(W, Vector<double>(), {0, 1});
  REQUIRE_THROWS_AS(io::format_model(bad), std::invalid_argument);
  W(0, 1) = 2;
  LinearModel<double> model(W, Vector<double>(), {0, 1});
  model.provenance().solver = "two\nlines";
  REQUIRE_THROWS_AS(io::format_model(model), std::invalid_argument);
  model.provenance().solver = " padded";
  REQUIRE_THROWS_AS(io::format_model(model), std::invalid_argument);
  model.provenance().solver = "fine";
  REQUIRE_NOTHROW(io::format_model(model));
  REQUIRE_THROWS_AS(io::save_model(model, fs::path("/nonexistent-dir/x/model.txt")), std::runtime_error);
  REQUIRE_THROWS_AS(io::load_model<double>(fs::path("/nonexistent-dir/x/model.txt")), std::runtime_error);
}

TEST_CASE("native format: every malformed file is a ParseError at file:line:column", "[model][io]") {
  const std::vector<std::string> good{
      "sparsemc-model 1", "scalar double", "n_features 5", "n_classes 3", "labels 1 2 3",
      "intercept 0.5 0 -1", "bias -1", "loss logistic", "penalty l1", "solver fista",
      "lambda 0.01", "mu 0", "status converged", "rows 2", "0 1 2 3", "3 -1 0 0.25"};
  REQUIRE_NOTHROW(io::parse_model<double>(join(good), "m"));

  struct Case {
    std::size_t line;  // 1-based line to replace (0: none)
    std::string replacement;
    std::int64_t error_line, error_column;
    std::string message;
  };
  const std::vector<Case> cases{
      {1, "sparsemc-modle 1", 1, 1, "expected 'sparsemc-model'"},
      {1, "sparsemc-model 4", 1, 16, "unsupported format version 4"},
      {1, "sparsemc-model 0", 1, 16, "unsupported format version 0"},
      {1, "sparsemc-model one", 1, 16, "expected a format version"},
      {2, "scalar half", 2, 8, "expected 'float' or 'double'"},
      {3, "n_classes 3", 3, 1, "expected 'n_features', got 'n_classes'"},
      {3, "n_features -1", 3, 12, "must be >= 0"},
      {3, "n_features 5 6", 3, 14, "unexpected '6'"},
      {4, "n_classes 99999999999", 4, 11, "out of range"},
      {4, "n_classes 0", 4, 11, "must be >= 1"},
      {5, "labels 1 2", 5, 11, "expected 3 labels, the line has 2"},
      {5, "labels 1 2 1", 5, 12, "label 1 appears twice"},
      {5, "labels 1 2 x", 5, 12, "expected an integer label, got 'x'"},
      {6, "intercept 0.5 0", 6, 16, "expected 3 intercept values, the line has 2"},
      {6, "intercept nan 0 0", 6, 11, "not finite"},
      {6, "intercept", 6, 10, "expected 3 intercept values, the line has 0"},
      {7, "bias b", 7, 6, "expected a bias value"},
      {11, "lambda", 11, 7, "expected lambda"},
      {14, "rows 6", 14, 6, "must be in [0, n_features = 5]"},
      {15, "5 1 2 3", 15, 1, "feature index 5 is outside [0, 5)"},
      {15, "-1 1 2 3", 15, 1, "feature index -1 is outside"},
      {16, "0 -1 0 0.25", 16, 1, "feature index 0 does not increase"},
      {16, "3 -1 0", 16, 7, "expected 3 weights, the line has 2"},
      {16, "3 -1 0 0.25 7", 16, 13, "expected 3 weights, the line has more"},
      {16, "3 -1 inf 0.25", 16, 6, "weight 'inf' is not finite"},
      {16, "3 -1 1e999 0.25", 16, 6, "out of range"},
      {16, "3 -1 0x1 0.25", 16, 6, "expected weight, got '0x1'"},
      {16, "3 -1 +1 0.25", 16, 6, "expected weight, got '+1'"},
  };
  for (const auto& c : cases) {
    auto lines = good;
    lines[c.line - 1] = c.replacement;
    INFO("line " << c.line << " = '" << c.replacement << "'");
    try {
      (void)io::parse_model<double>(join(lines), "bad.model");
      FAIL("no error");
    } catch (const io::ParseError& e) {
      INFO(e.what());
      REQUIRE(e.file() == "bad.model");
      REQUIRE(e.line() == c.error_line);
      REQUIRE(e.column() == c.error_column);
      REQUIRE_THAT(e.message(), Catch::Contains(c.message));
      REQUIRE_THAT(std::string(e.what()),
                   Catch::StartsWith("bad.model:" + std::to_string(c.error_line) + ":" + std::to_string(c.error_column) + ": "));
    }
  }

  const auto fails_at = [](const std::string& text, std::int64_t line, std::int64_t column, const std::string& message) {
    try {
      (void)io::parse_model<float>(text, "t");
      FAIL("no error");
    } catch (const io::ParseError& e) {
      INFO(e.what());
      REQUIRE(e.line() == line);
      REQUIRE(e.column() == column);
      REQUIRE_THAT(e.message(), Catch::Contains(message));
    }
  };
  fails_at("", 1, 1, "unexpected end of file");
  auto truncated = good;
  truncated.pop_back();
  fails_at(join(truncated), 16, 1, "after 1 of 2 rows");
  auto header_only = good;
  header_only.resize(9);
  fails_at(join(header_only), 10, 1, "expected 'solver'");
  fails_at(join(good) + "\n  \n7 1 1 1\n", 19, 1, "unexpected content after the last");
  auto bias = good;
  bias[2] = "n_features 0";
  bias[6] = "bias 1";
  bias[13] = "rows 0";
  bias.resize(14);
  fails_at(join(bias), 7, 6, "needs n_features >= 1");

  // Errors from a file carry its path.
  TempDir dir;
  auto lines = good;
  lines[15] = "3 -1 0 zero";
  const auto path = dir / "broken.model";
  write_text(path, join(lines));
  try {
    (void)io::load_model<double>(path);
    FAIL("no error");
  } catch (const io::ParseError& e) {
    REQUIRE_THAT(std::string(e.what()), Catch::StartsWith(path + ":16:8: "));
  }
}

// ---------------------------------------------------------------------------------------------
// Sparse rows: storage, scoring, format version 2
// ---------------------------------------------------------------------------------------------

// A model over d features and K classes whose stored rows keep `per_row` random classes each
// (awkward values), built from its sparse parts; rows of `density` of the features.
template <class Scalar>
LinearModel<Scalar> random_sparse_model(std::int64_t d, ClassIndex K, double density, ClassIndex per_row, bool intercept,
                                        std::uint64_t seed) {
  Rng rng(seed);
  std::vector<std::int64_t> support, row_start{0};
  std::vector<ClassIndex> classes;
  std::vector<Scalar> weights;
  std::vector<ClassIndex> row;
  for (std::int64_t j = 0; j < d; ++j) {
    if (uniform_real(rng) >= density) continue;
    row.clear();
    while (static_cast<ClassIndex>(row.size()) < per_row) {
      const auto k = static_cast<ClassIndex>(uniform_index(rng, static_cast<std::size_t>(K)));
      if (std::find(row.begin(), row.end(), k) == row.end()) row.push_back(k);
    }
    std::sort(row.begin(), row.end());
    for (ClassIndex k : row) {
      classes.push_back(k);
      Scalar w = awkward_value<Scalar>(rng);
      weights.push_back(w == Scalar(0) ? Scalar(0.5) : w);
    }
    support.push_back(j);
    row_start.push_back(static_cast<std::int64_t>(classes.size()));
  }
  Vector<Scalar> b;
  if (intercept) b = Vector<Scalar>::LinSpaced(K, Scalar(-1), Scalar(1));
  std::vector<Label> labels(static_cast<std::size_t>(K));
  for (std::size_t k = 0; k < labels.size(); ++k) labels[k] = 3 * static_cast<Label>(k) - 7;
  return LinearModel<Scalar>(d, std::move(support), std::move(row_start), std::move(classes), std::move(weights),
                             std::move(b), std::move(labels));
}

TEMPLATE_TEST_CASE("a model stores only its nonzero entries and scores like its dense W", "[model]", float, double) {
  using Scalar = TestType;
  // From a dense W: zero entries and zero rows are not stored; row(r) lists the rest in order.
  RowMatrix<Scalar> W(4, 5);
  W << 0, 1.5, 0, 0, -2,  //
      0, 0, 0, 0, 0,      //
      0.25, 0, 0, 0, 0,   //
      0, 0, -0.0, 3, 0;
  const LinearModel<Scalar> model(W, Vector<Scalar>(), {0, 1, 2, 3, 4});
  REQUIRE(model.support() == std::vector<std::int64_t>{0, 2, 3});
  REQUIRE(model.nnz() == 4);
  REQUIRE(model.nnz_rows() == 3);
  REQUIRE(std::ranges::equal(model.row(0).indices, std::vector<ClassIndex>{1, 4}));
  REQUIRE(std::ranges::equal(model.row(0).values, std::vector<Scalar>{1.5, -2}));
  REQUIRE(std::ranges::equal(model.row(2).indices, std::vector<ClassIndex>{3}));
  REQUIRE(model.dense() == W);
  REQUIRE(model.weights().squaredNorm() == W.squaredNorm());
  // A consumed W gives the same model, W emptied: over fewer rows than the shrink steps, and
  // over more (rows shrunk away while the model is built), with zero rows at both ends.
  require_identical(model, LinearModel<Scalar>::consuming(RowMatrix<Scalar>(W), Vector<Scalar>(), {0, 1, 2, 3, 4}));
  {
    RowMatrix<Scalar> consumed = random_sparse_model<Scalar>(300, 7, 0.3, 2, false, 8).dense();
    consumed.row(0).setZero();
    consumed.row(299).setZero();
    const LinearModel<Scalar> kept(consumed, Vector<Scalar>(), {0, 1, 2, 3, 4, 5, 6});
    require_identical(kept, LinearModel<Scalar>::consuming(std::move(consumed), Vector<Scalar>(), {0, 1, 2, 3, 4, 5, 6}));
    REQUIRE(consumed.size() == 0);
  }
  RowMatrix<Scalar> into = RowMatrix<Scalar>::Constant(4, 5, Scalar(9));
  model.copy_to(into);  // writes the stored entries only
  REQUIRE(into(0, 1) == Scalar(1.5));
  REQUIRE(into(0, 0) == Scalar(9));

  // From sparse parts: zeros and the rows they empty are dropped; bad parts are refused.
  const LinearModel<Scalar> parts(6, {1, 4, 5}, {0, 2, 3, 4}, {0, 3, 2, 1}, {Scalar(1), Scalar(-1), Scalar(0), Scalar(2)},
                                  Vector<Scalar>(), {0, 1, 2, 3});
  REQUIRE(parts.support() == std::vector<std::int64_t>{1, 5});
  REQUIRE(parts.nnz() == 3);
  REQUIRE(parts.dense()(5, 1) == Scalar(2));
  const auto bad = [](std::vector<std::int64_t> support, std::vector<std::int64_t> start, std::vector<ClassIndex> cls) {
    std::vector<Scalar> w(cls.size(), Scalar(1));
    return LinearModel<Scalar>(6, std::move(support), std::move(start), std::move(cls), std::move(w), Vector<Scalar>(),
                               {0, 1, 2, 3});
  };
  REQUIRE_THROWS_AS(bad({1}, {0, 2}, {2, 1}), std::invalid_argument);      // classes not increasing
  REQUIRE_THROWS_AS(bad({1}, {0, 1}, {4}), std::invalid_argument);         // class ≥ K
  REQUIRE_THROWS_AS(bad({1}, {0, 2}, {0}), std::invalid_argument);         // row_start past the entries
  REQUIRE_THROWS_AS(bad({3, 1}, {0, 1, 2}, {0, 0}), std::invalid_argument);  // support not increasing
  REQUIRE_THROWS_AS(bad({1}, {0}, {}), std::invalid_argument);             // row_start too short

  // Scores: every path equals the dense product summed in the same order (features
  // increasing, then the intercept), bit for bit.
  const auto sparse = random_sparse_model<Scalar>(60, 40, 0.5, 3, true, 5);
  const RowMatrix<Scalar> Wd = sparse.dense();
  Rng rng(6);
  RowMatrix<Scalar> Xd = RowMatrix<Scalar>::Zero(25, 60);
  for (Eigen::Index i = 0; i < Xd.rows(); ++i)
    for (Eigen::Index j = 0; j < Xd.cols(); ++j)
      if (uniform_real(rng) < 0.2) Xd(i, j) = static_cast<Scalar>(uniform_real(rng) - 0.5);
  RowMatrix<Scalar> expected = RowMatrix<Scalar>::Zero(Xd.rows(), 40);
  for (Eigen::Index i = 0; i < Xd.rows(); ++i) {
    for (Eigen::Index j = 0; j < Xd.cols(); ++j)
      if (Xd(i, j) != Scalar(0))
        for (Eigen::Index k = 0; k < 40; ++k)
          if (Wd(j, k) != Scalar(0)) expected(i, k) += Xd(i, j) * Wd(j, k);
    expected.row(i) += sparse.intercept().transpose();
  }
  const auto Xs = csr_from(Xd);
  REQUIRE(sparse.decision_function(CsrView<Scalar>(Xs)) == expected);
  const auto Xc = to_csc(CsrView<Scalar>(Xs));
  REQUIRE(sparse.decision_function(CscView<Scalar>(Xc)) == expected);
  REQUIRE(sparse.decision_function(Xd) == expected);
}

TEMPLATE_TEST_CASE("a model fitted on compact features scores like its expansion on the original ones", "[model]",
                   float, double) {
  using Scalar = TestType;
  // Data over d = 10^9 features of which a few occur; W′ over the compact columns.
  constexpr std::int64_t d = 1'000'000'000;
  const std::vector<std::int64_t> occurring{4, 77, 5'000'000, 999'999'998};
  RowMatrix<Scalar> dense_compact(9, 4);
  Rng rng(21);
  for (Eigen::Index i = 0; i < dense_compact.rows(); ++i)
    for (Eigen::Index c = 0; c < dense_compact.cols(); ++c)
      dense_compact(i, c) = uniform_real(rng) < 0.6 ? static_cast<Scalar>(uniform_real(rng) - 0.5) : Scalar(0);
  dense_compact(0, 0) = dense_compact(1, 1) = dense_compact(2, 2) = dense_compact(3, 3) = Scalar(1);  // each occurs
  CsrMatrix<Scalar> X(9, static_cast<std::int32_t>(d));  // filled row by row: no d-sized buffer
  for (Eigen::Index i = 0; i < dense_compact.rows(); ++i) {
    X.startVec(i);
    for (Eigen::Index c = 0; c < dense_compact.cols(); ++c)
      if (dense_compact(i, c) != Scalar(0))
        X.insertBack(i, static_cast<std::int32_t>(occurring[static_cast<std::size_t>(c)])) = dense_compact(i, c);
  }
  X.finalize();
  const FeatureMap map = FeatureMap::used_by(X);
  REQUIRE(std::ranges::equal(map.used(), occurring));
  CsrMatrix<Scalar> X_compact = X;
  map.apply(X_compact);

  RowMatrix<Scalar> W_compact(4, 3);
  W_compact << 1, 0, -2, 0, 0, 0, 0.5, 0.25, 0, 0, 3, 0;  // row 1 is zero: not stored
  Vector<Scalar> b(3);
  b << 0.5, -0.5, 1;
  const LinearModel<Scalar> fitted(W_compact, b, {10, 20, 30});
  const LinearModel<Scalar> model = expand_features(fitted, map);
  CHECK(model.n_features() == d);
  CHECK(model.support() == std::vector<std::int64_t>{4, 5'000'000, 999'999'998});
  CHECK(model.weights() == fitted.weights());
  CHECK(model.intercept() == fitted.intercept());
  CHECK(model.labels() == fitted.labels());
  // Same products in the same order: bit-identical scores.
  CHECK(model.decision_function(CsrView<Scalar>(X)) == fitted.decision_function(CsrView<Scalar>(X_compact)));

  // Back onto the compact columns (a warm start): the fitted model again; rows of features
  // the map lacks are dropped.
  const LinearModel<Scalar> back = restrict_features(model, map);
  CHECK(back.n_features() == 4);
  CHECK(back.support() == fitted.support());
  CHECK(back.weights() == fitted.weights());
  const LinearModel<Scalar> wider(d, {3, 4}, RowMatrix<Scalar>::Ones(2, 3), Vector<Scalar>(), {10, 20, 30});
  CHECK(restrict_features(wider, map).support() == std::vector<std::int64_t>{0});

  // Consuming forms: the same models, the rows moved in place.
  LinearModel<Scalar> moved = fitted;
  moved = expand_features(std::move(moved), map);
  CHECK(moved.n_features() == model.n_features());
  CHECK(moved.support() == model.support());
  CHECK(moved.weights() == model.weights());
  for (std::size_t r = 0; r < model.support().size(); ++r)
    CHECK(std::ranges::equal(moved.row(r).indices, model.row(r).indices));
  CHECK(moved.decision_function(CsrView<Scalar>(X)) == model.decision_function(CsrView<Scalar>(X)));
  LinearModel<Scalar> narrowed = wider;
  narrowed = restrict_features(std::move(narrowed), map);
  const LinearModel<Scalar> narrowed_copy = restrict_features(wider, map);
  CHECK(narrowed.n_features() == narrowed_copy.n_features());
  CHECK(narrowed.support() == narrowed_copy.support());
  CHECK(narrowed.weights() == narrowed_copy.weights());
  CHECK(std::ranges::equal(narrowed.row(0).indices, narrowed_copy.row(0).indices));
  CHECK(narrowed.row_of_feature(0) == 0);
  CHECK(narrowed.row_of_feature(1) == -1);
}

TEMPLATE_TEST_CASE("native format version 2: sparse rows save → load bit exactly and stay small", "[model][io]", float,
                   double) {
  using Scalar = TestType;
  SECTION("sparse rows with intercept and bias feature") {
    auto model = random_sparse_model<Scalar>(300, 50, 0.4, 4, true, 21);
    model.provenance().bias = 1;
    model.provenance().solver = "fcbcfw";
    const std::string text = io::format_model(model);
    REQUIRE(text.rfind("sparsemc-model 3\n", 0) == 0);
    REQUIRE(text.find("\nlayout sparse\n") != std::string::npos);
    const auto back = io::parse_model<Scalar>(text, "v2");
    require_identical(model, back);
    REQUIRE(io::format_model(back) == text);
  }
  SECTION("K = 100000 with 3 classes per row: memory and file follow nnz, not |support|·K") {
    const auto model = random_sparse_model<Scalar>(2000, 100000, 0.5, 3, false, 22);
    REQUIRE(model.nnz() == 3 * model.nnz_rows());
    const std::string text = io::format_model(model);
    REQUIRE(text.size() < static_cast<std::size_t>(64 * model.nnz() + 16 * model.n_classes() + 4096));  // labels: O(K)
    require_identical(model, io::parse_model<Scalar>(text, "wide"));
    std::vector<Scalar> s(100000);
    const std::vector<std::int32_t> idx{static_cast<std::int32_t>(model.support()[0])};
    const std::vector<Scalar> val{Scalar(2)};
    model.decision_function(SparseSlice<Scalar, std::int32_t>{idx, val}, std::span<Scalar>(s));
    for (auto [k, w] : model.row(0)) REQUIRE(s[static_cast<std::size_t>(k)] == Scalar(2) * w);
  }
  SECTION("dense-enough rows are written as dense rows") {
    const auto model = random_model<Scalar>(30, 4, 1.0, true, true, 23);
    REQUIRE(io::format_model(model).rfind("sparsemc-model 3\n", 0) == 0);
    REQUIRE(io::format_model(model).find("\nlayout dense\n") != std::string::npos);
  }
}

TEST_CASE("native format version 2: malformed sparse rows are ParseErrors at file:line:column", "[model][io]") {
  const std::vector<std::string> good{
      "sparsemc-model 2", "scalar double", "n_features 5", "n_classes 3", "labels 1 2 3",
      "intercept none", "bias -1", "loss crammer-singer", "penalty l1", "solver fcbcfw",
      "lambda 0.01", "mu 0.001", "status converged", "rows 2", "0 1:2", "3 0:-1 2:0.25"};
  const auto model = io::parse_model<double>(join(good), "good");
  REQUIRE(model.nnz() == 3);
  REQUIRE(model.dense()(3, 2) == 0.25);
  struct Case {
    std::string replacement;
    std::int64_t column;
    std::string message;
  };
  const std::vector<Case> cases{
      {"3 0:-1 2", 8, "expected class:weight, got '2'"},
      {"3 0:-1 3:1", 8, "class index 3 is outside [0, 3)"},
      {"3 0:-1 -1:1", 8, "class index -1 is outside"},
      {"3 2:-1 0:1", 8, "class index 0 does not increase"},
      {"3 1:-1 1:1", 8, "class index 1 does not increase"},
      {"3 0:-1 2:", 10, "expected a weight after ':'"},
      {"3 0:-1 :2", 8, "expected a class index before ':'"},
      {"3 0:-1 2:nan", 10, "not finite"},
      {"3 0:-1 x:2", 8, "expected a class index, got 'x'"},
      {"3", 2, "expected at least one class:weight entry"},
  };
  for (const auto& c : cases) {
    auto lines = good;
    lines.back() = c.replacement;
    INFO("row line = '" << c.replacement << "'");
    try {
      (void)io::parse_model<double>(join(lines), "bad.model");
      FAIL("no error");
    } catch (const io::ParseError& e) {
      INFO(e.what());
      REQUIRE(e.line() == 16);
      REQUIRE(e.column() == c.column);
      REQUIRE_THAT(e.message(), Catch::Contains(c.message));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// LIBLINEAR format, without the binaries
// ---------------------------------------------------------------------------------------------

TEST_CASE("LIBLINEAR format: parsing, mapping and errors", "[model][io][liblinear]") {
  SECTION("a 3-class MCSVM_CS model with bias keeps LIBLINEAR's label order") {
    const std::string text =
        "solver_type MCSVM_CS\nnr_class 3\nlabel 3 1 2\nnr_feature 2\nbias 1\nw\n"
        "1 0 -1 \n0 0 0 \n0.5 0.25 -0.75 \n";
    const auto model = io::parse_liblinear_model<double>(text, "m");
    REQUIRE(model.labels() == std::vector<Label>{3, 1, 2});
    REQUIRE(model.n_features() == 3);
    REQUIRE(model.provenance().bias == 1);
    REQUIRE(model.provenance().loss == "crammer-singer");
    REQUIRE(model.provenance().solver == "liblinear:MCSVM_CS");
    REQUIRE(std::isnan(model.provenance().lambda));
    REQUIRE(model.support() == std::vector<std::int64_t>{0, 2});
    // x = (feature 1 = 2): s = 2·(1, 0, −1) + 1·(0.5, 0.25, −0.75) → label 3.
    RowMatrix<double> X(1, 2);
    X << 2, 0;
    REQUIRE(model.predict(X) == std::vector<Label>{3});
    // Round trip through our export keeps everything that matters.
    const auto again = io::parse_liblinear_model<double>(io::format_liblinear_model(model), "again");
    require_identical(model, again);
  }

  SECTION("binary models: classes (label[1], label[0]) with columns (0, w); ties go to label[1]") {
    const std::string text = "solver_type L2R_LR\nnr_class 2\nlabel 1 -1\nnr_feature 2\nbias -1\nw\n2 \n-1 \n";
    const auto model = io::parse_liblinear_model<double>(text, "m");
    REQUIRE(model.labels() == std::vector<Label>{-1, 1});
    REQUIRE(model.provenance().loss == "logistic");
    RowMatrix<double> X(3, 2);
    X << 1, 0,  // dec 2 > 0 → label 1
        1, 2,   // dec 0 → label −1 (LIBLINEAR's strict test)
        0, 1;   // dec −1 → label −1
    REQUIRE(model.predict(X) == std::vector<Label>{1, -1, -1});
    const auto P = model.predict_proba(X);
    REQUIRE(P(0, 1) == Approx(1 / (1 + std::exp(-2.0))));  // LIBLINEAR's sigmoid for label[0]
    // Export gives back the same file content (up to number spelling).
    const auto again = io::parse_liblinear_model<double>(io::format_liblinear_model(model), "again");
    REQUIRE(again.labels() == model.labels());
    REQUIRE(again.dense() == model.dense());
    // A binary MCSVM_CS model decides on column 0 only, like liblinear-predict.
    const auto cs = io::parse_liblinear_model<double>(
        "solver_type MCSVM_CS\nnr_class 2\nlabel 1 2\nnr_feature 1\nbias -1\nw\n1 2 \n", "cs");
    RowMatrix<double> one(1, 1);
    one << 1;
    REQUIRE(cs.predict(one) == std::vector<Label>{1});
  }

  SECTION("malformed LIBLINEAR files") {
    const auto fails_at = [](const std::string& text, std::int64_t line, std::int64_t column, const std::string& message) {
      try {
        (void)io::parse_liblinear_model<double>(text, "ll");
        FAIL("no error");
      } catch (const io::ParseError& e) {
        INFO(e.what());
        REQUIRE(e.line() == line);
        REQUIRE(e.column() == column);
        REQUIRE_THAT(e.message(), Catch::Contains(message));
      }
    };
    const std::string head = "solver_type MCSVM_CS\nnr_class 3\nlabel 1 2 3\nnr_feature 2\nbias -1\nw\n";
    fails_at("solver_type FOO\n", 1, 13, "unknown solver type 'FOO'");
    fails_at("solver_type L2R_L2LOSS_SVR\n", 1, 13, "regression model");
    fails_at("solver_type MCSVM_CS\nrho 0\n", 2, 1, "unknown text in model file: 'rho'");
    fails_at("solver_type MCSVM_CS\nlabel 1 2\n", 2, 1, "'label' must come after 'nr_class'");
    fails_at("solver_type MCSVM_CS\nnr_class 3\nnr_feature 2\nbias -1\nw\n", 5, 1, "'label' must come before 'w'");
    fails_at("solver_type MCSVM_CS\nnr_class 3\nnr_class 3\n", 3, 1, "appears twice");
    fails_at(head + "1 2 3 \n4 5 \n", 8, 5, "expected 3 weights, the line has 2");
    fails_at(head + "1 2 3 \n4 5 6 7\n", 8, 7, "the line has more");
    fails_at(head + "1 2 3 \n", 8, 1, "after 1 of 2 weight rows");
    fails_at(head + "1 2 3 \n4 nan 6\n", 8, 3, "not finite");
    fails_at(head + "1 2 3 \n4 5 6\n7 8 9\n", 9, 1, "unexpected content");
    fails_at("solver_type MCSVM_CS\nnr_class 3\n", 3, 1, "before the weights");
  }
}

// ---------------------------------------------------------------------------------------------
// LIBLINEAR interchange with the real binaries
// ---------------------------------------------------------------------------------------------

namespace {

bool on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return false;
  std::stringstream dirs(path);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    std::error_code ec;
    const auto candidate = fs::path(dir.empty() ? "." : dir) / program;
    if (fs::is_regular_file(candidate, ec) &&
        (fs::status(candidate, ec).permissions() & fs::perms::owner_exec) != fs::perms::none)
      return true;
  }
  return false;
}

bool liblinear_available() {
  if (on_path("liblinear-train") && on_path("liblinear-predict")) return true;
  SPARSEMC_SKIP_FROM_HELPER("liblinear-train / liblinear-predict are not on PATH (Debian package liblinear-tools)");
  return false;
}

void run(const std::string& command) {
  INFO(command);
  REQUIRE(std::system((command + " > /dev/null 2>&1").c_str()) == 0);
}

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Runs liblinear-predict and checks its output equals our predictions line by line.
void require_same_predictions(const std::string& test_file, const std::string& model_file,
                              const std::vector<Label>& ours, const std::string& output) {
  run("liblinear-predict " + test_file + " " + model_file + " " + output);
  const auto theirs = lines_of(output);
  REQUIRE(theirs.size() == ours.size());
  std::size_t differ = 0;
  for (std::size_t i = 0; i < ours.size(); ++i) differ += theirs[i] != std::to_string(ours[i]) ? 1 : 0;
  REQUIRE(differ == 0);
}

// Writes the samples of `source` whose label is in `keep`, dropping features above `max_feature`.
void filter_file(const std::string& source, const std::string& target, std::vector<std::string> keep, int max_feature) {
  std::ifstream in(source);
  std::ofstream out(target);
  for (std::string line; std::getline(in, line);) {
    std::stringstream tokens(line);
    std::string label;
    tokens >> label;
    if (!keep.empty() && std::find(keep.begin(), keep.end(), label) == keep.end()) continue;
    out << label;
    for (std::string feature; tokens >> feature;)
      if (std::stoi(feature.substr(0, feature.find(':'))) <= max_feature) out << ' ' << feature;
    out << '\n';
  }
}

}  // namespace

TEST_CASE("LIBLINEAR models load into sparsemc and predict exactly like liblinear-predict",
          "[model][io][liblinear][external]") {
  if (!liblinear_available()) return;
  TempDir dir;
  const std::string train = (sparsemc_test::repo_data() / "dna.scale").string();
  const std::string test = (sparsemc_test::repo_data() / "dna.scale.t").string();
  const auto test_data = io::read_libsvm_plain<double>(test);
  const CsrView<double> X = test_data.csr();

  struct Case {
    std::string options;
    std::string train_file;
  };
  const std::string narrow = dir / "dna.narrow";  // features 1..150 only: the test set is wider
  filter_file(train, narrow, {}, 150);
  const std::string binary = dir / "dna.binary";  // classes 1 and 2 only
  filter_file(train, binary, {"1", "2"}, 180);
  const std::vector<Case> cases{{"-s 4", train},        {"-s 5", train},        {"-s 4 -B 1", train},
                                {"-s 1 -B 1", train},   {"-s 4 -B 1", narrow},  {"-s 0", binary},
                                {"-s 4", binary},       {"-s 5 -B 2", binary},  {"-s 3", narrow}};
  int n = 0;
  for (const auto& c : cases) {
    INFO("liblinear-train " << c.options << " " << c.train_file);
    const std::string model_file = dir / ("model" + std::to_string(++n));
    run("liblinear-train -q " + c.options + " " + c.train_file + " " + model_file);
    const auto model = io::load_liblinear_model<double>(model_file);
    require_same_predictions(test, model_file, model.predict(X), dir / "out");
    // Re-exported, it still predicts the same under liblinear-predict.
    const std::string again = dir / "again";
    io::save_liblinear_model(model, again);
    require_same_predictions(test, again, model.predict(X), dir / "out2");
    // A float copy agrees on nearly every sample (it sums in float, LIBLINEAR in double).
    const auto model_f = io::load_liblinear_model<float>(model_file);
    const auto test_f = io::read_libsvm_plain<float>(test);
    const auto pred_f = model_f.predict(test_f.csr());
    const auto pred_d = model.predict(X);
    std::size_t differ = 0;
    for (std::size_t i = 0; i < pred_d.size(); ++i) differ += pred_f[i] != pred_d[i] ? 1 : 0;
    REQUIRE(differ <= pred_d.size() / 100);
  }

  SECTION("binary logistic probabilities equal liblinear-predict -b 1") {
    const std::string model_file = dir / "lr.model";
    run("liblinear-train -q -s 0 -B 1 " + binary + " " + model_file);
    const auto model = io::load_liblinear_model<double>(model_file);
    REQUIRE(model.provenance().loss == "logistic");
    const std::string output = dir / "proba";
    run("liblinear-predict -b 1 " + test + " " + model_file + " " + output);
    const auto lines = lines_of(output);
    REQUIRE(lines.size() == static_cast<std::size_t>(X.rows()) + 1);
    std::stringstream header(lines[0]);
    std::string word;
    header >> word;
    REQUIRE(word == "labels");
    std::vector<ClassIndex> column_of;  // LIBLINEAR's column c is our class column_of[c]
    for (Label l; header >> l;) column_of.push_back(model.class_of(l));
    REQUIRE(column_of.size() == 2);
    const auto P = model.predict_proba(X);
    const auto predicted = model.predict(X);
    for (Eigen::Index i = 0; i < X.rows(); ++i) {
      std::stringstream row(lines[static_cast<std::size_t>(i) + 1]);
      Label label = 0;
      row >> label;
      REQUIRE(label == predicted[static_cast<std::size_t>(i)]);
      for (ClassIndex c = 0; c < 2; ++c) {
        double p = 0;
        row >> p;
        REQUIRE(P(i, column_of[static_cast<std::size_t>(c)]) == Approx(p).epsilon(1e-5).margin(1e-6));
      }
    }
  }
}

TEST_CASE("sparsemc models exported to LIBLINEAR predict the same under liblinear-predict",
          "[model][io][liblinear][external]") {
  if (!liblinear_available()) return;
  TempDir dir;
  const std::string test = (sparsemc_test::repo_data() / "dna.scale.t").string();
  const auto test_data = io::read_libsvm_plain<double>(test);
  const CsrView<double> X = test_data.csr();
  REQUIRE(X.cols() == 180);

  struct Case {
    const char* name;
    std::int64_t d;  // data features of the model (the test data has 180)
    ClassIndex K;
    bool intercept;
    double bias;  // bias feature (−1: none); it adds a feature to d
    std::vector<Label> labels;
  };
  const std::vector<Case> cases{
      {"K = 3, row-sparse, intercept", 180, 3, true, -1, {1, 2, 3}},
      {"K = 3, labels in LIBLINEAR order, no intercept", 180, 3, false, -1, {3, 1, 2}},
      {"K = 2 with intercept", 180, 2, true, -1, {1, 2}},
      {"K = 2, no intercept, negative labels", 180, 2, false, -1, {-1, 7}},
      {"K = 5, narrower than the data", 120, 5, true, -1, {1, 2, 3, 4, 5}},
      {"K = 3 with a bias feature", 180, 3, false, 0.5, {1, 2, 3}},
      {"K = 3 with a bias feature and an intercept", 150, 3, true, 2, {1, 2, 3}},
      {"K = 1", 180, 1, true, -1, {4}},
  };
  std::uint64_t seed = 100;
  for (const auto& c : cases) {
    SECTION(c.name) {
      const std::int64_t d = c.d + (c.bias >= 0 ? 1 : 0);
      auto model = random_model<double>(d, c.K, 0.4, c.intercept, false, ++seed, c.labels);
      model.provenance().bias = c.bias;
      const std::string model_file = dir / "exported.model";
      io::save_liblinear_model(model, model_file);
      const auto ours = model.predict(X);
      // The random scores are not degenerate: several classes are predicted.
      if (c.K > 1) REQUIRE(std::set<Label>(ours.begin(), ours.end()).size() > 1);
      require_same_predictions(test, model_file, ours, dir / "out");
      // Importing the export predicts the same, with bit-identical scores for K ≠ 2.
      const auto back = io::load_liblinear_model<double>(model_file);
      REQUIRE(back.predict(X) == ours);
      if (c.K != 2 && !(c.intercept && c.bias >= 0)) {
        const RowMatrix<double> S = model.decision_function(X);
        const RowMatrix<double> S_back = back.decision_function(X);
        REQUIRE(same_bits(S.data(), S_back.data(), S.size()));
      }
    }
  }

  SECTION("a K = 2 logistic model exports as L2R_LR: -b 1 gives our softmax probabilities") {
    auto model = random_model<double>(180, 2, 0.4, true, false, 7, {1, 2});
    model.provenance().loss = "logistic";
    const std::string model_file = dir / "lr.model";
    io::save_liblinear_model(model, model_file);
    REQUIRE(lines_of(model_file)[0] == "solver_type L2R_LR");
    const std::string output = dir / "proba";
    run("liblinear-predict -b 1 " + test + " " + model_file + " " + output);
    const auto lines = lines_of(output);
    REQUIRE(lines[0] == "labels 2 1");  // file order (labels[1], labels[0])
    const auto P = model.predict_proba(X);
    for (Eigen::Index i = 0; i < X.rows(); ++i) {
      std::stringstream row(lines[static_cast<std::size_t>(i) + 1]);
      Label label = 0;
      double p2 = 0, p1 = 0;
      row >> label >> p2 >> p1;
      REQUIRE(P(i, 1) == Approx(p2).epsilon(1e-5).margin(1e-6));
      REQUIRE(P(i, 0) == Approx(p1).epsilon(1e-5).margin(1e-6));
    }
  }
}

TEST_CASE("set_labels renames classes and rejects a table of the wrong size or with duplicates", "[model]") {
  sparsemc::LinearModel<double>::RowMatrix W(2, 3);
  W << 1, 0, 0,
       0, 0, 2;
  sparsemc::LinearModel<double> model(W, {}, {0, 1, 2});
  model.set_labels({10, 20, 30});
  CHECK(model.labels() == std::vector<sparsemc::Label>{10, 20, 30});
  CHECK(model.class_of(30) == 2);
  CHECK_THROWS_AS(model.set_labels({1, 2}), std::invalid_argument);
  CHECK_THROWS_AS(model.set_labels({1, 1, 2}), std::invalid_argument);
  CHECK(model.labels() == std::vector<sparsemc::Label>{10, 20, 30});
}

// ---- issue 17: model files that cannot hurt ---------------------------------------------------

namespace {
// The ParseError of parsing `text` with `parse` (fails the test when nothing is thrown).
template <class Parse>
io::ParseError model_error(const std::string& text, Parse parse) {
  try {
    parse(text);
  } catch (const io::ParseError& e) {
    return e;
  }
  FAIL("no ParseError for: " << text.substr(0, 200));
  throw std::logic_error("unreachable");
}
const auto parse_native = [](const std::string& t) { (void)io::parse_model<double>(t, "m"); };
const auto parse_liblinear = [](const std::string& t) { (void)io::parse_liblinear_model<double>(t, "m"); };

std::vector<std::string> v3_lines() {
  return {"sparsemc-model 3", "scalar double", "n_features 5", "n_classes 3", "labels 1 2 3",
          "intercept 0.5 0 -1", "bias -1", "loss logistic", "penalty l1", "solver fista",
          "lambda 0.01", "mu 0", "status converged", "rows 2", "entries 6", "layout dense",
          "0 1 2 3", "3 -1 0 0.25", "end"};
}
using sparsemc_test::sanitizer_run;
}  // namespace

TEST_CASE("native format version 3: an end marker and a count, so a cut file is an error", "[model][io]") {
  // Issue 17, defect 10: a model cut inside its last weight loaded with exit 0.
  const std::string text = join(v3_lines());
  const auto model = io::parse_model<double>(text, "m");
  REQUIRE(model.nnz() == 5);
  REQUIRE(model.dense()(3, 2) == 0.25);
  // Every cut of the file (not at or after the end marker's line) is an error.
  for (std::size_t cut = 0; cut < text.rfind("end"); ++cut) {
    INFO("cut at byte " << cut << ": ..." << text.substr(cut > 20 ? cut - 20 : 0, 20));
    REQUIRE_THROWS_AS(io::parse_model<double>(text.substr(0, cut), "m"), io::ParseError);
  }
  // Inside the last weight: "0.25" cut to "0.2" and to "0." parse as numbers, yet the end is missing.
  const auto cut_weight = text.substr(0, text.find("0.25") + 3);
  const auto e = model_error(cut_weight, parse_native);
  CHECK(e.message().find("no 'end' line") != std::string::npos);
  CHECK(e.line() == 19);
  // The count is checked against the rows, and the layout against the count.
  auto lines = v3_lines();
  lines[14] = "entries 5";
  CHECK(model_error(join(lines), parse_native).line() == 15);
  lines[14] = "entries 7";
  CHECK(model_error(join(lines), parse_native).line() == 15);
  lines = v3_lines();
  lines[15] = "layout diagonal";
  CHECK(model_error(join(lines), parse_native).column() == 8);
  lines = v3_lines();
  lines[18] = "end 2";
  CHECK(model_error(join(lines), parse_native).line() == 19);
  lines[18] = "end";
  lines.push_back("0 1 2 3");
  CHECK_THAT(model_error(join(lines), parse_native).message(), Catch::Contains("after 'end'"));
  // Sparse rows with a count.
  lines = v3_lines();
  lines[14] = "entries 3";
  lines[15] = "layout sparse";
  lines[16] = "0 1:2";
  lines[17] = "3 0:-1 2:0.25";
  REQUIRE(io::parse_model<double>(join(lines), "m").nnz() == 3);
  lines[14] = "entries 2";
  CHECK(model_error(join(lines), parse_native).line() == 18);
  // Versions 1 and 2 still read; the writer writes 3, which reads back to the same model.
  const auto v1 = io::parse_model<double>(
      join({"sparsemc-model 1", "scalar double", "n_features 5", "n_classes 3", "labels 1 2 3", "intercept 0.5 0 -1",
            "bias -1", "loss logistic", "penalty l1", "solver fista", "lambda 0.01", "mu 0", "status converged",
            "rows 2", "0 1 2 3", "3 -1 0 0.25"}),
      "v1");
  REQUIRE(io::format_model(v1) == text);
}

TEST_CASE("header counts are checked against the file before they size anything", "[model][io]") {
  // Issue 17, defect 2: impossible counts made the tools allocate first and exit 3 "out of memory".
  auto lines = v3_lines();
  lines[3] = "n_classes 2147483647";
  auto e = model_error(join(lines), parse_native);
  CHECK(e.line() == 4);
  CHECK(e.column() == 11);
  CHECK_THAT(e.message(), Catch::Contains("more labels than the rest of the file"));
  lines = v3_lines();
  lines[2] = "n_features 1000000000000";
  lines[13] = "rows 1000000000000";
  e = model_error(join(lines), parse_native);
  CHECK(e.line() == 14);
  CHECK(e.column() == 6);
  lines = v3_lines();
  lines[14] = "entries 1000000000000";
  CHECK(model_error(join(lines), parse_native).line() == 15);
  // A large d costs nothing by itself: the model stores its rows only (no d-sized table).
  lines = v3_lines();
  lines[2] = "n_features 1000000000000";
  lines[16] = "999999999998 1 2 3";
  lines[17] = "999999999999 -1 0 0.25";
  const auto wide = io::parse_model<double>(join(lines), "m");
  REQUIRE(wide.n_features() == 1000000000000);
  REQUIRE(wide.row_of_feature(999999999999) == 1);
  REQUIRE(wide.row_of_feature(5) == -1);
  std::vector<double> s(3);
  const std::vector<std::int64_t> idx{3, 999999999999};
  const std::vector<double> val{7, 2};
  wide.decision_function(SparseSlice<double, std::int64_t>{idx, val}, std::span<double>(s));
  CHECK(s == std::vector<double>{0.5 - 2, 0, -1 + 0.5});
  // LIBLINEAR: nr_class and nr_feature likewise.
  const std::string ll = "solver_type MCSVM_CS\nnr_class 2147483647\nlabel 1 2 3\nnr_feature 2\nbias -1\nw\n1 2 3\n4 5 6\n";
  e = model_error(ll, parse_liblinear);
  CHECK(e.line() == 2);
  CHECK(e.column() == 10);
  e = model_error("solver_type MCSVM_CS\nnr_class 3\nlabel 1 2 3\nnr_feature 2000000000\nbias -1\nw\n1 2 3\n", parse_liblinear);
  CHECK(e.line() == 4);
  CHECK(e.column() == 12);
}

TEST_CASE("label tables are checked in O(K log K): 10^6 labels load in under a second", "[model][io]") {
  // Issue 17, defect 3: a LIBLINEAR model of 300,000 labels took > 20 s to load.
  const int K = sanitizer_run() ? 100000 : 1000000;
  std::string labels;
  for (int k = 0; k < K; ++k) labels += ' ' + std::to_string((k * 7919LL) % K - K / 2);
  const std::string native = "sparsemc-model 3\nscalar double\nn_features 1\nn_classes " + std::to_string(K) + "\nlabels" +
                             labels + "\nintercept none\nbias -1\nloss\npenalty\nsolver\nlambda nan\nmu nan\nstatus\n"
                             "rows 1\nentries 1\nlayout sparse\n0 5:1\nend\n";
  const std::string liblinear = "solver_type MCSVM_CS\nnr_class " + std::to_string(K) + "\nlabel" + labels +
                                "\nnr_feature 0\nbias -1\nw\n";
  for (const std::string* text : {&native, &liblinear}) {
    const auto start = std::chrono::steady_clock::now();
    const auto model = text == &native ? io::parse_model<double>(*text, "n") : io::parse_liblinear_model<double>(*text, "l");
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    REQUIRE(model.n_classes() == K);
    INFO("load time " << seconds << " s");
    if (!sanitizer_run()) CHECK(seconds < 1.0);
  }
  // A repeated label is still found, at its second occurrence.
  auto e = model_error("solver_type MCSVM_CS\nnr_class 4\nlabel 5 6 7 6\nnr_feature 0\nbias -1\nw\n", parse_liblinear);
  CHECK(e.line() == 3);
  CHECK(e.column() == 13);
  CHECK(e.message() == "label 6 appears twice");
  auto lines = v3_lines();
  lines[4] = "labels 3 1 3";
  e = model_error(join(lines), parse_native);
  CHECK(e.column() == 12);
  CHECK(e.message() == "label 3 appears twice");
}

TEST_CASE("recorded hyper-parameters are validated like the flags", "[model][io]") {
  // Issue 17, defect 5: lambda -1 / mu -5 in a model file were accepted.
  for (const auto& [line, text, column] : std::vector<std::tuple<std::size_t, std::string, std::int64_t>>{
           {10, "lambda -1", 8}, {11, "mu -5", 4}, {10, "lambda inf", 8}, {11, "mu -inf", 4}, {10, "lambda 1e999", 8}}) {
    auto lines = v3_lines();
    lines[line] = text;
    INFO(text);
    const auto e = model_error(join(lines), parse_native);
    CHECK(e.line() == static_cast<std::int64_t>(line + 1));
    CHECK(e.column() == column);
  }
  auto lines = v3_lines();
  lines[10] = "lambda nan";  // unknown, as in an imported model
  lines[11] = "mu 1e-400";   // underflow: 0 (issue 17, defect 8)
  const auto model = io::parse_model<double>(join(lines), "m");
  CHECK(std::isnan(model.provenance().lambda));
  CHECK(model.provenance().mu == 0.0);
}

TEST_CASE("model files: I/O errors name the file, and saving is atomic", "[model][io]") {
  // Issue 17, defects 9 and 1.
  const auto dir = fs::temp_directory_path() / ("sparsemc_test_model_" + std::to_string(::getpid()));
  fs::create_directories(dir / "a.model");
  REQUIRE_THROWS_WITH(io::load_model<double>(dir / "a.model"), Catch::StartsWith((dir / "a.model").string() + ": "));
  REQUIRE_THROWS_WITH(io::load_liblinear_model<double>(dir / "a.model"), Catch::StartsWith((dir / "a.model").string() + ": "));
  const auto model = io::parse_model<double>(join(v3_lines()), "m");
  REQUIRE_THROWS_WITH(io::save_model(model, dir / "a.model"), Catch::StartsWith((dir / "a.model").string() + ": "));
  io::save_model(model, dir / "m.model");
  const auto before = fs::file_size(dir / "m.model");
  auto bad = model;
  bad.provenance().solver = "two\nlines";
  REQUIRE_THROWS(io::save_model(bad, dir / "m.model"));
  REQUIRE(fs::file_size(dir / "m.model") == before);
  REQUIRE(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 2);
  fs::remove_all(dir);
}

TEST_CASE("load_any_model tells the formats apart by their first word and reads a stream once", "[model][io]") {
  const auto native = io::parse_model<double>(join(v3_lines()), "m");
  auto linear_of = [](const io::AnyModel<double>& loaded) {
    REQUIRE(std::holds_alternative<LinearModel<double>>(loaded));
    return std::get<LinearModel<double>>(loaded);
  };
  // Native, from a stream (the way a pipe reaches it): the same bits as parse_model.
  std::istringstream native_stream(io::format_model(native));
  const LinearModel<double> from_stream = linear_of(io::load_any_model<double>(native_stream, "pipe"));
  CHECK(io::format_model(from_stream) == io::format_model(native));
  // LIBLINEAR: the same model as load_liblinear_model reads.
  const std::string liblinear = io::format_liblinear_model(native);
  CHECK(io::format_model(linear_of(io::parse_any_model<double>(liblinear, "l"))) ==
        io::format_model(io::parse_liblinear_model<double>(liblinear, "l")));
  // Anything else is the native reader's error at 1:1.
  REQUIRE_THROWS_WITH(io::parse_any_model<double>("solver type\n", "x"), Catch::StartsWith("x:1:1: "));
  REQUIRE_THROWS_WITH(io::parse_any_model<double>("", "empty"), Catch::StartsWith("empty:"));
}
