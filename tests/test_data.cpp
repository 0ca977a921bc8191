// Sparse views, conversion, labels, problems and datasets over float/double × int32/int64.
#include <catch2/catch.hpp>

#include <sparsemc/core/class_matrix.hpp>
#include <sparsemc/core/huge_pages.hpp>
#include <sparsemc/core/rng.hpp>
#include <sparsemc/data/dataset.hpp>
#include <sparsemc/data/feature_map.hpp>
#include <sparsemc/data/folds.hpp>
#include <sparsemc/data/problem.hpp>
#include <sparsemc/data/sparse_view.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <set>
#include <tuple>
#include <vector>

using namespace sparsemc;

namespace {

// A random n × d sparse matrix with about `density` of its entries set, row-major.
template <class Scalar, class Index>
CsrMatrix<Scalar, Index> random_csr(Index n, Index d, double density, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<Eigen::Triplet<Scalar, Index>> triplets;
  for (Index i = 0; i < n; ++i)
    for (Index j = 0; j < d; ++j)
      if (uniform_real(rng) < density) triplets.emplace_back(i, j, static_cast<Scalar>(uniform_real(rng) - 0.5));
  CsrMatrix<Scalar, Index> m(n, d);
  m.setFromTriplets(triplets.begin(), triplets.end());
  m.makeCompressed();
  return m;
}

}  // namespace

using ScalarIndexPairs = std::tuple<std::tuple<float, std::int32_t>, std::tuple<float, std::int64_t>,
                                    std::tuple<double, std::int32_t>, std::tuple<double, std::int64_t>>;

TEMPLATE_LIST_TEST_CASE("views see Eigen matrices without copying and convert in both directions",
                        "[data]", ScalarIndexPairs) {
  using Scalar = std::tuple_element_t<0, TestType>;
  using Index = std::tuple_element_t<1, TestType>;
  const auto A = random_csr<Scalar, Index>(37, 23, 0.2, 7);
  CsrView<Scalar, Index> X(A);
  REQUIRE(X.rows() == 37);
  REQUIRE(X.cols() == 23);
  REQUIRE(X.nnz() == A.nonZeros());
  REQUIRE(X.values().data() == A.valuePtr());  // zero copy

  const auto C = to_csc(X);
  CscView<Scalar, Index> Xc(C);
  REQUIRE(Xc.nnz() == X.nnz());
  // Every entry of the CSR view is found in the CSC view at the transposed position.
  Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic> dense_from_csr = Eigen::Matrix<Scalar, -1, -1>::Zero(37, 23);
  Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic> dense_from_csc = dense_from_csr;
  for (Index i = 0; i < X.rows(); ++i)
    for (auto [j, v] : X.outer(i)) dense_from_csr(i, j) = v;
  for (Index j = 0; j < Xc.cols(); ++j)
    for (auto [i, v] : Xc.outer(j)) dense_from_csc(i, j) = v;
  REQUIRE(dense_from_csr == dense_from_csc);
  REQUIRE(Eigen::Matrix<Scalar, -1, -1>(A) == dense_from_csr);

  const auto back = to_csr(Xc);
  REQUIRE(back.nonZeros() == A.nonZeros());
  REQUIRE(Eigen::Matrix<Scalar, -1, -1>(back) == dense_from_csr);

  // Eigen::Map over the same buffers, as a scipy user would hand them over.
  Eigen::Map<const CscMatrix<Scalar, Index>> map(C.rows(), C.cols(), C.nonZeros(), C.outerIndexPtr(),
                                                   C.innerIndexPtr(), C.valuePtr());
  CscView<Scalar, Index> from_map(map);
  REQUIRE(from_map.nnz() == Xc.nnz());
  REQUIRE(from_map.inner_indices().data() == C.innerIndexPtr());
}

TEMPLATE_LIST_TEST_CASE("raw arrays are validated and every violation names the array", "[data]",
                        ScalarIndexPairs) {
  using Scalar = std::tuple_element_t<0, TestType>;
  using Index = std::tuple_element_t<1, TestType>;
  // 2 × 3 CSR: row 0 = {0:1, 2:2}, row 1 = {1:3}
  std::vector<Index> ptr{0, 2, 3}, idx{0, 2, 1};
  std::vector<Scalar> val{1, 2, 3};
  CsrView<Scalar, Index> ok(2, 3, ptr.data(), idx.data(), val.data());
  REQUIRE(ok.nnz() == 3);
  REQUIRE(ok.outer(0).size() == 2);

  auto message_of = [](auto&& make) {
    try {
      make();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no exception");
  };
  std::vector<Index> bad_ptr{0, 3, 2};
  CHECK_THAT(message_of([&] { CsrView<Scalar, Index>(2, 3, bad_ptr.data(), idx.data(), val.data()); }),
             Catch::Contains("outer_ptr is not monotone"));
  std::vector<Index> bad_start{1, 2, 3};
  CHECK_THAT(message_of([&] { CsrView<Scalar, Index>(2, 3, bad_start.data(), idx.data(), val.data()); }),
             Catch::Contains("outer_ptr[0]"));
  std::vector<Index> out_of_range{0, 2, 5};
  CHECK_THAT(message_of([&] { CsrView<Scalar, Index>(2, 3, ptr.data(), std::vector<Index>{0, 3, 1}.data(), val.data()); }),
             Catch::Contains("inner_idx[1] = 3 is out of range"));
  CHECK_THAT(message_of([&] { CsrView<Scalar, Index>(2, 3, ptr.data(), std::vector<Index>{2, 0, 1}.data(), val.data()); }),
             Catch::Contains("not strictly increasing within row 0"));
  CHECK_THAT(message_of([&] { CscView<Scalar, Index>(3, 2, ptr.data(), std::vector<Index>{1, 1, 0}.data(), val.data()); }),
             Catch::Contains("CscView: inner_idx is not strictly increasing within column 0"));
  (void)out_of_range;

  CsrMatrix<Scalar, Index> uncompressed(3, 3);
  uncompressed.insert(0, 0) = 1;  // insert leaves the matrix uncompressed
  CHECK_THAT(message_of([&] { CsrView<Scalar, Index>{uncompressed}; }), Catch::Contains("not compressed"));
}

TEST_CASE("labels keep the table as read and map to class indices 0..K-1", "[data]") {
  LabelEncoder encoder;
  const std::vector<Label> glass{5, 1, 7, 2, 3, 6, 1};
  encoder.fit(glass);
  REQUIRE(encoder.size() == 6);
  REQUIRE(encoder.index_of(1) == 0);
  REQUIRE(encoder.index_of(5) == 3);
  REQUIRE(encoder.label_of(5) == 7);
  REQUIRE_THROWS_AS(encoder.index_of(4), std::out_of_range);

  LabelSets sets(4);
  sets.push_back(std::vector<ClassIndex>{2, 0, 2});
  sets.push_back(std::vector<ClassIndex>{});
  sets.push_back(std::vector<ClassIndex>{3});
  const auto view = sets.view();
  REQUIRE(view.size() == 3);
  REQUIRE(view.multilabel());
  REQUIRE(std::vector<ClassIndex>(view[0].begin(), view[0].end()) == std::vector<ClassIndex>{0, 2});
  REQUIRE(view[1].empty());
  REQUIRE_THROWS_AS(sets.push_back(std::vector<ClassIndex>{4}), std::invalid_argument);

  const auto single = LabelSets::multiclass(std::vector<ClassIndex>{1, 0, 1}, 2);
  REQUIRE_FALSE(single.view().multilabel());
  REQUIRE(single.view().single(2) == 1);
}

TEMPLATE_TEST_CASE("a dataset converts to CSC once and combines sample and class weights", "[data]",
                   float, double) {
  auto A = random_csr<TestType, std::int64_t>(6, 4, 0.5, 3);
  auto y = LabelSets::multiclass(std::vector<ClassIndex>{0, 1, 2, 0, 1, 2}, 3);
  Dataset<TestType, std::int64_t> data(A, y, LabelEncoder({10, 20, 30}));
  const auto csc1 = data.csc();
  const auto csc2 = data.csc();
  REQUIRE(csc1.values().data() == csc2.values().data());  // converted once
  REQUIRE(data.costs().empty());

  data.set_class_weights({{20, 2.0}});
  data.set_sample_weights(std::vector<TestType>{1, 1, 1, 3, 3, 3});
  const auto c = data.costs();
  REQUIRE(c.size() == 6);
  CHECK(c[0] == Approx(1.0));
  CHECK(c[1] == Approx(2.0));
  CHECK(c[4] == Approx(6.0));
  REQUIRE_THROWS_AS(data.set_class_weights({{99, 1.0}}), std::out_of_range);

  const auto problem = data.template problem<Eigen::ColMajor>();
  REQUIRE_NOTHROW(problem.validate());
  REQUIRE(problem.n_classes() == 3);
  REQUIRE(problem.weight(4) == Approx(6.0));
}

TEMPLATE_LIST_TEST_CASE("a borrowing dataset walks the caller's arrays and owns only what it converts", "[data]",
                        ScalarIndexPairs) {
  using Scalar = std::tuple_element_t<0, TestType>;
  using Index = std::tuple_element_t<1, TestType>;
  using Data = Dataset<Scalar, Index>;
  auto A = random_csr<Scalar, Index>(7, 5, 0.5, 11);
  A.prune([](Index, Index j, Scalar) { return j != 2; });  // feature 2 unused
  A.makeCompressed();
  const CscMatrix<Scalar, Index> B = A;  // the same X, column-major
  auto y = LabelSets::multiclass(std::vector<ClassIndex>{0, 1, 2, 0, 1, 2, 0}, 3);
  const LabelEncoder encoder({1, 2, 3});

  // CSR arrays: csr() is them; csc() is converted once and equals B.
  auto rows = Data::borrowing(CsrView<Scalar, Index>(A), y, encoder);
  REQUIRE(rows.borrowed());
  REQUIRE(rows.csr().values().data() == A.valuePtr());
  REQUIRE(rows.n_samples() == 7);
  REQUIRE(rows.n_features() == 5);
  REQUIRE(rows.nnz() == A.nonZeros());
  const auto csc = rows.csc();
  REQUIRE(csc.values().data() == rows.csc().values().data());
  REQUIRE(CscMatrix<Scalar, Index>(csc.eigen()).isApprox(B, Scalar(0)));

  // CSC arrays: csc() is them; csr() is converted once and equals A.
  auto columns = Data::borrowing(CscView<Scalar, Index>(B), y, encoder);
  REQUIRE(columns.template problem<Eigen::ColMajor>().X.values().data() == B.valuePtr());
  REQUIRE(CsrMatrix<Scalar, Index>(columns.csr().eigen()).isApprox(A, Scalar(0)));
  REQUIRE(columns.nnz() == A.nonZeros());

  // An in-place change (compacting the features) copies first: the caller's arrays stay as they were.
  const std::vector<Scalar> before(A.valuePtr(), A.valuePtr() + A.nonZeros());
  const FeatureMap map = rows.compact_features();
  REQUIRE_FALSE(rows.borrowed());
  REQUIRE(rows.csr().values().data() != A.valuePtr());
  REQUIRE(std::equal(before.begin(), before.end(), A.valuePtr()));
  REQUIRE(rows.n_features() == 4);
  REQUIRE(map.n_used() == 4);

  const auto too_few = LabelSets::multiclass(std::vector<ClassIndex>{0, 1}, 3);
  const CsrView<Scalar, Index> view(A);
  REQUIRE_THROWS_AS(Data::borrowing(view, too_few, encoder), std::invalid_argument);
}

TEMPLATE_TEST_CASE("a subset keeps its samples' rows, classes and costs, in the order asked", "[data]", float,
                   double) {
  auto A = random_csr<TestType, std::int32_t>(6, 4, 0.6, 5);
  auto y = LabelSets::multiclass(std::vector<ClassIndex>{0, 1, 2, 0, 1, 2}, 3);
  const LabelEncoder encoder({10, 20, 30});
  const CscMatrix<TestType, std::int32_t> columns = CscMatrix<TestType, std::int32_t>(A);
  // X row-major as read, column-major only (keep_csc_only), and a borrowed CSC: the rows are
  // copied from the CSR or gathered from the columns, the same arrays either way.
  Dataset<TestType> read(A, y, encoder), csc_only(A, y, encoder);
  csc_only.keep_csc_only();
  auto borrowed = Dataset<TestType>::borrowing(CscView<TestType, std::int32_t>(columns), y, encoder);
  const std::vector<std::int64_t> rows{4, 1, 1, 0};
  const Dataset<TestType> reference = read.subset(rows);
  for (Dataset<TestType>* data : {&read, &csc_only, &borrowed}) {
    data->set_class_weights({{20, 2.0}});
    data->set_sample_weights(std::vector<TestType>{1, 2, 3, 4, 5, 6});
    const Dataset<TestType> part = data->subset(rows);
    REQUIRE(part.n_samples() == 4);
    REQUIRE(part.n_features() == 4);
    REQUIRE(part.encoder().labels() == data->encoder().labels());
    const auto got = part.csr(), want = reference.csr();
    CHECK(std::ranges::equal(got.outer_ptr(), want.outer_ptr()));
    CHECK(std::ranges::equal(got.inner_indices(), want.inner_indices()));
    CHECK(std::ranges::equal(got.values(), want.values()));
    const Eigen::Matrix<TestType, -1, -1> dense = Eigen::Matrix<TestType, -1, -1>(A);
    const Eigen::Matrix<TestType, -1, -1> part_dense = Eigen::Matrix<TestType, -1, -1>(part.matrix());
    for (std::size_t r = 0; r < rows.size(); ++r) {
      const auto i = static_cast<std::size_t>(rows[r]);
      CHECK(part_dense.row(static_cast<Eigen::Index>(r)) == dense.row(static_cast<Eigen::Index>(i)));
      CHECK(part.labels().view().single(r) == data->labels().view().single(i));
      CHECK(part.costs()[r] == data->costs()[i]);
    }
    REQUIRE_THROWS_AS(data->subset(std::vector<std::int64_t>{6}), std::out_of_range);
  }
}

TEST_CASE("stratified folds: every fold gets its share of every class, reproducibly", "[data]") {
  // 3 classes of 50, 31 and 7 samples (88 samples), in an order that is not by class.
  std::vector<ClassIndex> classes;
  for (int i = 0; i < 88; ++i) classes.push_back(i % 11 < 6 ? 0 : i % 11 < 10 ? 1 : 2);
  const auto y = LabelSets::multiclass(classes, 3);
  std::vector<int> per_class(3, 0);
  for (ClassIndex c : classes) ++per_class[static_cast<std::size_t>(c)];
  const int k = 5;
  const std::vector<int> fold = stratified_folds(y.view(), k, 42);
  REQUIRE(fold == stratified_folds(y.view(), k, 42));
  REQUIRE(fold != stratified_folds(y.view(), k, 43));
  for (int f = 0; f < k; ++f) {
    const auto [train, test] = fold_samples(fold, f);
    CHECK(train.size() + test.size() == classes.size());
    CHECK((test.size() == 88 / k || test.size() == 88 / k + 1));
    for (std::size_t c = 0; c < 3; ++c) {
      const auto in_fold = std::count_if(test.begin(), test.end(), [&](std::int64_t i) {
        return classes[static_cast<std::size_t>(i)] == static_cast<ClassIndex>(c);
      });
      CHECK(in_fold >= per_class[c] / k);
      CHECK(in_fold <= per_class[c] / k + 1);
    }
  }
  REQUIRE_THROWS_AS(stratified_folds(y.view(), 1, 0), std::invalid_argument);
  REQUIRE_THROWS_AS(stratified_folds(y.view(), 89, 0), std::invalid_argument);
}

// X with its columns spread out: column j of a random n × d matrix becomes column j·stride + 3
// of a matrix of `wide_d` columns (hashed features: few used among many possible).
template <class Scalar, class Index>
CsrMatrix<Scalar, Index> spread_columns(const CsrMatrix<Scalar, Index>& X, std::int64_t stride, std::int64_t wide_d) {
  // Filled row by row: setFromTriplets would build a transposed copy with wide_d outer slots.
  CsrMatrix<Scalar, Index> wide(X.rows(), static_cast<Index>(wide_d));
  wide.reserve(X.nonZeros());
  for (Index i = 0; i < X.rows(); ++i) {
    wide.startVec(i);
    for (typename CsrMatrix<Scalar, Index>::InnerIterator it(X, i); it; ++it)
      wide.insertBack(i, static_cast<Index>(it.col() * stride + 3)) = it.value();
  }
  wide.finalize();
  return wide;
}

TEMPLATE_LIST_TEST_CASE("compact features: X P keeps every entry, renumbered onto the used columns", "[data]",
                        ScalarIndexPairs) {
  using Scalar = std::tuple_element_t<0, TestType>;
  using Index = std::tuple_element_t<1, TestType>;
  const auto narrow = random_csr<Scalar, Index>(30, 40, 0.1, 11);
  // Both ways of finding the used columns and both lookups: d ≤ nnz (a bitmap, a dense
  // table) and d ≫ nnz (a sorted copy, binary search).
  const std::int64_t huge = std::numeric_limits<std::int32_t>::max();
  for (const auto& [stride, d] : {std::pair<std::int64_t, std::int64_t>{1, 45}, {(huge - 4) / 40, huge}}) {
    const CsrMatrix<Scalar, Index> X = spread_columns(narrow, stride, d);
    std::set<std::int64_t> occurring;
    for (Index k = 0; k < X.nonZeros(); ++k) occurring.insert(X.innerIndexPtr()[k]);

    const FeatureMap map = FeatureMap::used_by(X);
    CHECK(map.n_features() == d);
    CHECK(!map.identity());
    REQUIRE(std::vector<std::int64_t>(map.used().begin(), map.used().end()) ==
            std::vector<std::int64_t>(occurring.begin(), occurring.end()));
    for (std::int64_t c = 0; c < map.n_used(); ++c) CHECK(map.compact(map.original(c)) == c);
    CHECK(map.compact(d - 1) == -1);

    CsrMatrix<Scalar, Index> compact = X;
    map.apply(compact);
    REQUIRE(compact.cols() == map.n_used());
    REQUIRE(compact.nonZeros() == X.nonZeros());
    REQUIRE(compact.isCompressed());
    for (Index i = 0; i < X.rows(); ++i) {
      typename CsrMatrix<Scalar, Index>::InnerIterator a(X, i), b(compact, i);
      for (; a; ++a, ++b) {
        REQUIRE(b);
        CHECK(map.original(b.col()) == a.col());
        CHECK(b.value() == a.value());
      }
      CHECK(!b);
    }

    // Held-out data with the training map: entries in columns the map lacks are dropped.
    CsrMatrix<Scalar, Index> other = spread_columns(random_csr<Scalar, Index>(10, 40, 0.3, 12), stride, d);
    other.coeffRef(0, 0) = Scalar(5);  // column 0 is never used by X
    other.makeCompressed();
    const CsrMatrix<Scalar, Index> other_wide = other;
    map.apply(other);
    Index kept = 0;
    for (Index i = 0; i < other_wide.rows(); ++i)
      for (typename CsrMatrix<Scalar, Index>::InnerIterator it(other_wide, i); it; ++it) {
        const std::int64_t c = map.compact(it.col());
        if (c < 0) continue;
        ++kept;
        CHECK(other.coeff(i, static_cast<Index>(c)) == it.value());
      }
    CHECK(other.nonZeros() == kept);
    CHECK(kept < other_wide.nonZeros());
  }
}

TEMPLATE_TEST_CASE("keep_csc_only frees the CSR and converts back on demand, the same X", "[data]", float, double) {
  const auto A = random_csr<TestType, std::int32_t>(7, 30, 0.3, 5);
  auto y = LabelSets::multiclass(std::vector<ClassIndex>{0, 1, 2, 0, 1, 2, 0}, 3);
  Dataset<TestType> data(A, y, LabelEncoder({10, 20, 30}));
  const CscMatrix<TestType, std::int32_t> columns = CscMatrix<TestType, std::int32_t>(A);
  data.keep_csc_only();
  CHECK(data.n_samples() == 7);
  CHECK(data.n_features() == 30);
  CHECK(data.nnz() == A.nonZeros());
  CHECK(data.csc().eigen().isApprox(columns, 0));  // the CSC kept as built
  const std::vector<std::int64_t> rows{6, 0, 3};
  const auto part = data.subset(rows);  // gathered from the columns
  CHECK(part.csr().eigen().row(0).isApprox(A.row(6), 0));
  CHECK(data.matrix().isApprox(A, 0));
  // A feature map renumbers the CSR converted back, and the CSC follows it.
  data.keep_csc_only();
  const FeatureMap map = data.compact_features();
  CHECK(data.n_features() == static_cast<std::int32_t>(map.used().size()));
  CHECK(data.csc().nnz() == A.nonZeros());
}

TEST_CASE("compact features: the dataset drops its CSC, a map grows by a model's support", "[data]") {
  CsrMatrix<double, std::int32_t> X(3, 100);
  X.insert(0, 7) = 1.0;
  X.insert(1, 2) = 2.0;
  X.insert(2, 7) = 3.0;
  X.makeCompressed();
  Dataset<double> data(X, LabelSets::multiclass(std::vector<ClassIndex>{0, 1, 0}, 2), LabelEncoder({1, 2}));
  REQUIRE(data.csc().cols() == 100);
  const FeatureMap map = data.compact_features();
  CHECK(std::vector<std::int64_t>(map.used().begin(), map.used().end()) == std::vector<std::int64_t>{2, 7});
  REQUIRE(data.n_features() == 2);
  REQUIRE(data.csc().cols() == 2);
  CHECK(data.csc().outer(1).values.size() == 2);  // column 7's two entries

  FeatureMap with_model = map;
  with_model.add(std::vector<std::int64_t>{0, 7, 150});
  CHECK(std::vector<std::int64_t>(with_model.used().begin(), with_model.used().end()) ==
        std::vector<std::int64_t>{0, 2, 7, 150});
  CHECK(with_model.n_features() == 151);

  // Once compacted, every column is used: compacting again is the identity.
  Dataset<double> full(CsrMatrix<double, std::int32_t>(X.block(0, 0, 3, 8)), LabelSets::multiclass(std::vector<ClassIndex>{0, 1, 0}, 2),
                       LabelEncoder({1, 2}));
  CHECK(!full.compact_features().identity());
  CHECK(full.compact_features().identity());
}

TEST_CASE("bounded random integers and shuffles reproduce for a seed", "[core]") {
  Rng a(42), b(42);
  std::vector<int> p(100), q(100);
  for (int i = 0; i < 100; ++i) p[static_cast<std::size_t>(i)] = q[static_cast<std::size_t>(i)] = i;
  shuffle(std::span<int>(p), a);
  shuffle(std::span<int>(q), b);
  REQUIRE(p == q);
  std::vector<int> counts(7, 0);
  for (int t = 0; t < 70000; ++t) ++counts[uniform_index(a, 7)];
  for (int count : counts) CHECK(std::abs(count - 10000) < 600);
}

TEST_CASE("arrays advised to huge pages hold what plain ones do", "[core][memory]") {
  using sparsemc::ClassMatrix;
  using namespace sparsemc::detail;
  // 5 MiB: the advice covers the whole 2 MiB pages inside; a small array gets none. Either way
  // only the backing may change, never the values.
  for (const Eigen::Index rows : {Eigen::Index{3}, Eigen::Index{81920}}) {
    const auto Z = advised_zeros<ClassMatrix<double>>(rows, 8);
    CHECK(Z.rows() == rows);
    CHECK(Z.cols() == 8);
    CHECK(Z.isZero(0.0));
    ClassMatrix<float> M = ClassMatrix<float>::Constant(2, 2, 7.0f);
    resize_advised(M, rows, 4);
    CHECK(M.rows() == rows);
    CHECK(M.cols() == 4);
  }
  std::vector<int> v{1, 2, 3};
  assign_advised(v, 2, 9);  // fits the capacity: the storage is kept
  CHECK(v == std::vector<int>{9, 9});
  assign_advised(v, std::size_t{3} << 20, -1);  // grows: fresh, advised storage
  CHECK(v.size() == (std::size_t{3} << 20));
  CHECK(std::all_of(v.begin(), v.end(), [](int x) { return x == -1; }));
  advise_huge_pages(nullptr, 0);  // nothing to advise
}
