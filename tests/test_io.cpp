// LIBSVM / SVMlight reader and writer: the grammar, every malformed-input error with its
// position, label tables, multilabel detection, block boundaries, exact round trips,
// compressed files, and every real file of ../shared/data against its README figures.
#include <catch2/catch.hpp>

#include "skip.hpp"

// The core reader and writer must not pull in zlib or libbz2 (only sparsemc::io does).
#include <sparsemc/io/libsvm_reader.hpp>
#include <sparsemc/io/libsvm_writer.hpp>
#if defined(ZLIB_H) || defined(_BZLIB_H)
#error "the core LIBSVM headers must not include zlib.h or bzlib.h"
#endif

#include <sparsemc/core/rng.hpp>
#include <sparsemc/io/atomic_file.hpp>
#include <sparsemc/io/libsvm.hpp>

#include <bit>
#include <cmath>
#include <iterator>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#ifdef SPARSEMC_HAVE_ZLIB
#include <zlib.h>
#endif
#ifdef SPARSEMC_HAVE_BZIP2
#include <bzlib.h>
#endif

#include <unistd.h>

using namespace sparsemc;
namespace fs = std::filesystem;
using io::LabelFormat;
using io::LibsvmOptions;
using io::ParseError;
using io::UnknownLabel;

namespace {

using ScalarIndexPairs = std::tuple<std::tuple<float, std::int32_t>, std::tuple<float, std::int64_t>,
                                    std::tuple<double, std::int32_t>, std::tuple<double, std::int64_t>>;

using sparsemc_test::sanitizer_run;

// Row i of X as (column, value) pairs.
template <class Scalar, class Index>
std::vector<std::pair<Index, Scalar>> row(const Dataset<Scalar, Index>& data, Index i) {
  std::vector<std::pair<Index, Scalar>> out;
  for (auto [j, v] : data.csr().outer(i)) out.emplace_back(j, v);
  return out;
}

// The labels (as read) of sample i.
template <class Scalar, class Index>
std::vector<Label> labels_of(const Dataset<Scalar, Index>& data, std::size_t i) {
  std::vector<Label> out;
  for (ClassIndex k : data.labels().view()[i]) out.push_back(data.encoder().label_of(k));
  return out;
}

// Bitwise equality of two datasets: shape, CSR arrays (values compared as bits, so -0 and
// +0 differ), class sets and label tables.
template <class Scalar, class Index>
void require_identical(const Dataset<Scalar, Index>& a, const Dataset<Scalar, Index>& b) {
  REQUIRE(a.n_samples() == b.n_samples());
  REQUIRE(a.n_features() == b.n_features());
  REQUIRE(a.nnz() == b.nnz());
  const auto A = a.csr();
  const auto B = b.csr();
  REQUIRE(std::equal(A.outer_ptr().begin(), A.outer_ptr().end(), B.outer_ptr().begin()));
  REQUIRE(std::equal(A.inner_indices().begin(), A.inner_indices().end(), B.inner_indices().begin()));
  // memcmp needs non-null pointers even for 0 bytes (an empty file has no values).
  REQUIRE((A.values().empty() || std::memcmp(A.values().data(), B.values().data(), A.values().size_bytes()) == 0));
  const auto ya = a.labels().view();
  const auto yb = b.labels().view();
  REQUIRE(ya.n_classes() == yb.n_classes());
  REQUIRE(std::equal(ya.offsets().begin(), ya.offsets().end(), yb.offsets().begin(), yb.offsets().end()));
  REQUIRE(std::equal(ya.classes().begin(), ya.classes().end(), yb.classes().begin(), yb.classes().end()));
  REQUIRE(a.encoder().labels() == b.encoder().labels());
}

// The ParseError that parsing `text` throws (fails the test when nothing is thrown).
template <class Scalar = double, class Index = std::int32_t>
ParseError parse_error(const std::string& text, const LibsvmOptions& options = {}) {
  try {
    (void)io::parse_libsvm<Scalar, Index>(text, options, "in.svm");
  } catch (const ParseError& e) {
    return e;
  }
  FAIL("no ParseError for input: " << text);
  throw std::logic_error("unreachable");
}

// Checks the error of `text`: the complete what() string and the position fields.
template <class Scalar = double, class Index = std::int32_t>
void require_error(const std::string& text, std::int64_t line, std::int64_t column, const std::string& message,
                   const LibsvmOptions& options = {}) {
  INFO("input: " << text);
  const ParseError e = parse_error<Scalar, Index>(text, options);
  CHECK(e.file() == "in.svm");
  CHECK(e.line() == line);
  CHECK(e.column() == column);
  CHECK(e.message() == message);
  CHECK(std::string(e.what()) == "in.svm:" + std::to_string(line) + ":" + std::to_string(column) + ": " + message);
}

// A byte source handing out a string in pieces of at most `piece` bytes.
struct PieceSource {
  std::string_view text;
  std::size_t piece;
  std::size_t position = 0;
  std::optional<std::size_t> reported_size = std::nullopt;  ///< what size() says, when not the text's
  std::optional<std::size_t> size() const { return reported_size ? reported_size : text.size(); }
  std::size_t read(char* dst, std::size_t capacity) {
    const std::size_t n = std::min({capacity, piece, text.size() - position});
    std::memcpy(dst, text.data() + position, n);
    position += n;
    return n;
  }
};

// A random dataset: some entries tiny, huge, negative zero or explicit zero; for multilabel,
// some samples without label, one without label and without features.
template <class Scalar, class Index>
Dataset<Scalar, Index> random_dataset(Index n, Index d, bool multilabel, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<Eigen::Triplet<Scalar, Index>> triplets;
  for (Index i = 0; i < n; ++i) {
    for (Index j = 0; j < d; ++j) {
      if (uniform_real(rng) > 0.3) continue;
      Scalar v = static_cast<Scalar>(uniform_real(rng) * 2 - 1);
      switch (uniform_index(rng, 8)) {
        case 0: v = std::numeric_limits<Scalar>::denorm_min() * 3; break;
        case 1: v = std::numeric_limits<Scalar>::max() / 3; break;
        case 2: v = Scalar(-0.0); break;
        case 3: v = Scalar(0); break;
        case 4: v = static_cast<Scalar>(uniform_index(rng, 100)); break;
        default: break;
      }
      triplets.emplace_back(i, j, v);
    }
  }
  if (multilabel && n > 3) {  // sample 3: neither label nor feature
    std::erase_if(triplets, [](const auto& t) { return t.row() == 3; });
  }
  CsrMatrix<Scalar, Index> X(n, d);
  X.setFromTriplets(triplets.begin(), triplets.end());
  // setFromTriplets sums duplicates only; explicit zeros and -0 are kept as stored entries.
  const std::vector<Label> table{-7, 0, 2, 5, 1000000000000LL};
  const auto K = static_cast<ClassIndex>(table.size());
  LabelSets y(K);
  for (Index i = 0; i < n; ++i) {
    std::vector<ClassIndex> classes;
    if (!multilabel) {
      classes.push_back(static_cast<ClassIndex>(uniform_index(rng, static_cast<std::uint64_t>(K))));
    } else if (i != 3) {
      const auto count = uniform_index(rng, 4);  // 0..3 labels
      for (std::uint64_t c = 0; c < count; ++c)
        classes.push_back(static_cast<ClassIndex>(uniform_index(rng, static_cast<std::uint64_t>(K))));
    }
    y.push_back(classes);
  }
  return Dataset<Scalar, Index>(std::move(X), std::move(y), LabelEncoder(table));
}

template <class Scalar, class Index>
std::string to_text(const Dataset<Scalar, Index>& data, const io::LibsvmWriteOptions& options = {}) {
  std::ostringstream out;
  io::write_libsvm(out, data, options);
  return out.str();
}

// A scratch directory removed at the end of the test.
struct TempDir {
  fs::path path = fs::temp_directory_path() / ("sparsemc_test_io_" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

// ---- the grammar ---------------------------------------------------------------------------

TEMPLATE_LIST_TEST_CASE("the reader follows the LIBSVM grammar", "[io]", ScalarIndexPairs) {
  using Scalar = std::tuple_element_t<0, TestType>;
  using Index = std::tuple_element_t<1, TestType>;
  const std::string text =
      "# a comment line\n"
      "3 1:0.5 4:-2 10:1e-3   # trailing comment\n"
      "\n"
      "   \t \r\n"
      "-1\t2:+0.25\r\n"
      "+1 qid:17 3:0 5:7\n"
      "1.0#label only, no features\n"
      "2e0 1:.5 2:5. 3:-1.5E+2";  // no final newline
  const auto data = io::parse_libsvm<Scalar, Index>(text);
  REQUIRE(data.n_samples() == 5);
  REQUIRE(data.n_features() == 10);
  REQUIRE(data.nnz() == 9);  // the explicit zero 3:0 is kept
  REQUIRE_FALSE(data.multilabel());
  REQUIRE(data.encoder().labels() == std::vector<Label>{-1, 1, 2, 3});
  REQUIRE(labels_of(data, 0) == std::vector<Label>{3});
  REQUIRE(labels_of(data, 1) == std::vector<Label>{-1});
  REQUIRE(labels_of(data, 2) == std::vector<Label>{1});
  REQUIRE(labels_of(data, 3) == std::vector<Label>{1});
  REQUIRE(labels_of(data, 4) == std::vector<Label>{2});
  using Entries = std::vector<std::pair<Index, Scalar>>;
  REQUIRE(row(data, Index(0)) == Entries{{0, Scalar(0.5)}, {3, Scalar(-2)}, {9, Scalar(1e-3)}});
  REQUIRE(row(data, Index(1)) == Entries{{1, Scalar(0.25)}});
  REQUIRE(row(data, Index(2)) == Entries{{2, Scalar(0)}, {4, Scalar(7)}});
  REQUIRE(row(data, Index(3)).empty());
  REQUIRE(row(data, Index(4)) == Entries{{0, Scalar(0.5)}, {1, Scalar(5)}, {2, Scalar(-150)}});

  // The same bytes through a stream and through the path reader give the same dataset.
  std::istringstream in(text);
  require_identical(data, io::read_libsvm<Scalar, Index>(in));
  TempDir dir;
  const auto path = dir.path / "grammar.svm";
  std::ofstream(path, std::ios::binary) << text;
  require_identical(data, io::read_libsvm<Scalar, Index>(path));
}

TEST_CASE("values are read exactly, subnormals included", "[io]") {
  const auto d = io::parse_libsvm<double>("1 1:0.1 2:1e-310 3:1e-400 4:-4.9e-324 5:1.7976931348623157e308\n");
  const auto v = d.csr().values();
  REQUIRE(v[0] == 0.1);
  REQUIRE(v[1] == 1e-310);
  REQUIRE(v[2] == 0.0);  // below the smallest subnormal: rounds to zero, as strtod does
  REQUIRE(v[3] == -4.9e-324);
  REQUIRE(v[4] == std::numeric_limits<double>::max());
  const auto f = io::parse_libsvm<float>("1 1:0.1 2:1e-40 3:1e-50 4:3.4028235e38\n");
  const auto w = f.csr().values();
  REQUIRE(w[0] == 0.1f);  // read as float directly, correctly rounded
  REQUIRE(w[1] == 1e-40f);
  REQUIRE(w[2] == 0.0f);
  REQUIRE(w[3] == std::numeric_limits<float>::max());
}

TEST_CASE("zero-based indices and a fixed number of features", "[io]") {
  const auto z = io::parse_libsvm<double>("1 0:1 2:3\n2 1:4\n", {.zero_based = true});
  REQUIRE(z.n_features() == 3);
  REQUIRE(row(z, 0) == std::vector<std::pair<int, double>>{{0, 1.0}, {2, 3.0}});

  const auto fixed = io::parse_libsvm<double>("1 1:1 2:3\n", {.n_features = 50});
  REQUIRE(fixed.n_features() == 50);
  // The largest admissible index under a fixed d is d itself (1-based) or d-1 (0-based).
  REQUIRE(io::parse_libsvm<double>("1 50:1\n", {.n_features = 50}).nnz() == 1);
  REQUIRE(io::parse_libsvm<double>("1 49:1\n", {.n_features = 50, .zero_based = true}).nnz() == 1);

  REQUIRE_THROWS_AS(io::parse_libsvm<double>("1 1:1\n", {.n_features = -1}), std::invalid_argument);
  REQUIRE_THROWS_AS((io::parse_libsvm<double, std::int32_t>("1 1:1\n", {.n_features = std::int64_t{1} << 40})),
                    std::invalid_argument);
  REQUIRE((io::parse_libsvm<double, std::int64_t>("1 1:1\n", {.n_features = std::int64_t{1} << 40}).n_features()) ==
          (std::int64_t{1} << 40));
}

TEST_CASE("indices at the limit of the index type", "[io]") {
  // 1-based 2147483647 is column 2147483646, so d = 2^31 - 1 still fits int32.
  const auto ok = io::parse_libsvm<float, std::int32_t>("1 2147483647:1\n");
  REQUIRE(ok.n_features() == std::numeric_limits<std::int32_t>::max());
  require_error<float, std::int32_t>("1 2147483648:1\n", 1, 3, "feature index 2147483648 overflows the 32-bit index type");
  require_error<float, std::int32_t>("1 2147483647:1\n", 1, 3, "feature index 2147483647 overflows the 32-bit index type",
                                     {.zero_based = true});
  const auto big = io::parse_libsvm<float, std::int64_t>("1 2147483648:1 9223372036854775807:2\n");
  REQUIRE(big.n_features() == std::numeric_limits<std::int64_t>::max());
  require_error<float, std::int64_t>("1 9223372036854775808:1\n", 1, 3,
                                     "feature index '9223372036854775808' overflows the 64-bit index type");
  require_error<float, std::int64_t>("1 9223372036854775807:1\n", 1, 3,
                                     "feature index 9223372036854775807 overflows the 64-bit index type",
                                     {.zero_based = true});
}

// ---- every malformed input -----------------------------------------------------------------

TEST_CASE("every malformed input is a ParseError at its position", "[io]") {
  // Labels.
  require_error("1 1:1\nabc 1:1\n", 2, 1, "label 'abc' is not an integer");
  require_error("1.5 1:1\n", 1, 1, "label '1.5' is not an integer");
  require_error("1e400 1:1\n", 1, 1, "label '1e400' is not an integer");
  require_error("nan 1:1\n", 1, 1, "label 'nan' is not an integer");
  require_error("+ 1:1\n", 1, 1, "label '+' is not an integer");
  require_error("+-1 1:1\n", 1, 1, "label '+-1' is not an integer");
  require_error("99999999999999999999 1:1\n", 1, 1, "label '99999999999999999999' overflows the 64-bit label type");
  require_error("1e19 1:1\n", 1, 1, "label '1e19' overflows the 64-bit label type");
  require_error("1,,2 1:1\n", 1, 3, "empty label in a label list");
  require_error("1,2, 1:1\n", 1, 5, "empty label in a label list");
  require_error(",1 1:1\n", 1, 1, "empty label in a label list");
  require_error("1,2 1:1\n", 1, 2, "',' in a label: a multiclass line has one label (LabelFormat::multilabel reads label lists)",
                {.label_format = LabelFormat::multiclass});
  require_error("1 1:1\n1:1 2:2\n", 2, 1, "missing label before the first feature",
                {.label_format = LabelFormat::multiclass});
  require_error("1 1:1\n 1:1 2:2\n", 2, 2, "missing label before the first feature",
                {.label_format = LabelFormat::multiclass});
  require_error("1 1:1\n1:1 2:2\n3 1:1\n", 2, 1,
                "missing label (nothing marks the input as multilabel, so it is read as multiclass; "
                "force LabelFormat::multilabel for multilabel data)");
  // Feature tokens.
  require_error("1 1:1 x:2\n", 1, 7, "feature index 'x' is not an integer");
  require_error("1 1.5:2\n", 1, 3, "feature index '1.5' is not an integer");
  require_error("1 +3:2\n", 1, 3, "feature index '+3' is not an integer");
  require_error("1 :2\n", 1, 3, "missing feature index before ':'");
  require_error("1 1:1 5\n", 1, 8, "missing ':' after feature index '5'");
  require_error("1 1:1 5\r\n", 1, 8, "missing ':' after feature index '5'");
  require_error("1 1:1 5#c\n", 1, 8, "missing ':' after feature index '5'");
  require_error("1 abc\n", 1, 3, "expected index:value, got 'abc'");
  require_error("1 5x\n", 1, 3, "expected index:value, got '5x'");
  require_error("1 0:1\n", 1, 3, "feature index 0 is < 1 (indices are 1-based)");
  require_error("1 -3:1\n", 1, 3, "feature index -3 is < 1 (indices are 1-based)");
  require_error("1 -1:1\n", 1, 3, "feature index -1 is < 0", {.zero_based = true});
  require_error("1 2:1 2:1\n", 1, 7, "feature indices must be strictly increasing: 2 after 2");
  require_error("1 5:1 3:1\n", 1, 7, "feature indices must be strictly increasing: 3 after 5");
  require_error("1 1:1\n2 1:1 7:1\n", 2, 7, "feature index 7 is beyond the number of features 6", {.n_features = 6});
  require_error("1 6:1\n", 1, 3, "feature index 6 is beyond the number of features 6 (zero-based)",
                {.n_features = 6, .zero_based = true});
  // Data to predict: features beyond d are checked like any entry, then skipped.
  const io::LibsvmOptions beyond{.n_features = 6, .ignore_features_beyond = true};
  const auto skipped = io::parse_libsvm<double>("1 2:1 7:5 9:1\n2 6:2\n", beyond, "in.svm");
  REQUIRE(skipped.n_features() == 6);
  REQUIRE(skipped.nnz() == 2);
  CHECK(skipped.matrix().coeff(0, 1) == 1.0);
  CHECK(skipped.matrix().coeff(1, 5) == 2.0);
  require_error("1 7:1 7:1\n", 1, 7, "feature indices must be strictly increasing: 7 after 7", beyond);
  require_error("1 7:nan\n", 1, 5, "value 'nan' is NaN or infinite", beyond);
  require_error("1 99999999999999999999:1\n", 1, 3, "feature index '99999999999999999999' overflows the 32-bit index type");
  require_error("1 1:1 2:1 qid:3\n", 1, 11, "feature index 'qid' is not an integer");  // qid only first
  require_error("1 qid: 1:1\n", 1, 7, "missing value after 'qid:'");
  require_error("1 qid:x 1:1\n", 1, 7, "qid 'x' is not an integer");
  // Values.
  require_error("1 1:\n", 1, 5, "missing value after ':'");
  require_error("1 1: 2:1\n", 1, 5, "missing value after ':'");
  require_error("1 1:#\n", 1, 5, "missing value after ':'");
  require_error("1 1:abc\n", 1, 5, "value 'abc' is not a number");
  require_error("1 1:1.5x\n", 1, 5, "value '1.5x' is not a number");
  require_error("1 1:2:3\n", 1, 5, "value '2:3' is not a number");
  require_error("1 1:1,5\n", 1, 5, "value '1,5' is not a number");
  require_error("1 1:0x10\n", 1, 5, "value '0x10' is not a number");
  require_error("1 1:++1\n", 1, 5, "value '++1' is not a number");
  require_error("1 1:+-1\n", 1, 5, "value '+-1' is not a number");
  require_error("1 1:-\n", 1, 5, "value '-' is not a number");
  require_error("1 1:nan\n", 1, 5, "value 'nan' is NaN or infinite");
  require_error("1 1:-NaN\n", 1, 5, "value '-NaN' is NaN or infinite");
  require_error("1 1:inf\n", 1, 5, "value 'inf' is NaN or infinite");
  require_error("1 1:+Infinity\n", 1, 5, "value '+Infinity' is NaN or infinite");
  require_error("1 1:1e400\n", 1, 5, "value '1e400' overflows double");
  require_error("1 1:1e5000\n", 1, 5, "value '1e5000' overflows double");
  require_error("1 1:-1e99999999999\n", 1, 5, "value '-1e99999999999' overflows double");
  require_error<float>("1 1:1e39\n", 1, 5, "value '1e39' overflows float");
  require_error<float>("1 1:-1e400\n", 1, 5, "value '-1e400' overflows float");
  // Stray bytes, a NUL, a long token (quoted with an ellipsis).
  require_error(std::string("1 1:1\x01\n"), 1, 5, "value '1?' is not a number");
  require_error(std::string("1 1:1\0 2:1\n", 11), 1, 5, "value '1?' is not a number");
  require_error("1 1:" + std::string(100, '7') + "z\n", 1, 5, "value '" + std::string(40, '7') + "...' is not a number");
  // A file with no samples.
  require_error("", 1, 1, "no samples (the input is empty or holds only blank and comment lines)");
  require_error("# only a comment\n\n   \n", 4, 1, "no samples (the input is empty or holds only blank and comment lines)");
  require_error("\n# comment without newline", 2, 26, "no samples (the input is empty or holds only blank and comment lines)");
  // Errors on later lines count every line, blank and comment lines included.
  require_error("# c\n\n1 1:1\r\n\r\n2 3:1 3:2\n", 5, 7, "feature indices must be strictly increasing: 3 after 3");
}

TEST_CASE("underflow is zero or a subnormal, overflow an error", "[io]") {
  // Issue 17, defect 8: 1e-5000 was refused while 1e-400 became 0.
  const auto d = io::parse_libsvm<double>("1 1:1e-400 2:1e-5000 3:-1e-5000 4:4e-320 5:1e-99999999999\n");
  const auto v = d.csr().values();
  REQUIRE(v.size() == 5);
  CHECK(v[0] == 0.0);
  CHECK(v[1] == 0.0);
  CHECK(v[2] == 0.0);
  CHECK(std::signbit(v[2]));  // the sign of the text is kept
  CHECK(v[3] == 4e-320);      // a subnormal stays one
  CHECK(v[4] == 0.0);
  const auto f = io::parse_libsvm<float>("1 1:1e-50 2:1e-5000 3:1e-44\n");
  CHECK(f.csr().values()[0] == 0.0f);
  CHECK(f.csr().values()[1] == 0.0f);
  CHECK(f.csr().values()[2] == 1e-44f);
}

TEST_CASE("every I/O error names the file", "[io]") {
  // Issue 17, defect 9: a directory used to give "basic_filebuf::underflow error reading the file".
  TempDir dir;
  for (const char* name : {"dir.svm", "dir.svm.gz", "dir.svm.bz2"}) {
    const auto path = dir.path / name;
    fs::create_directories(path);
    INFO(path);
    try {
      (void)io::read_libsvm<double>(path);
      FAIL("no error");
    } catch (const std::runtime_error& e) {
      REQUIRE(std::string(e.what()).rfind(path.string() + ":", 0) == 0);
      REQUIRE(std::string(e.what()).find("directory") != std::string::npos);
    }
  }
  const auto data = io::parse_libsvm<double>("1 1:1\n");
  REQUIRE_THROWS_WITH(io::write_libsvm(dir.path / "dir.svm", data), Catch::StartsWith((dir.path / "dir.svm").string() + ":"));
  REQUIRE_THROWS_WITH(io::write_libsvm(dir.path / "no" / "such.svm", data),
                      Catch::StartsWith((dir.path / "no" / "such.svm").string() + ":"));
}

TEST_CASE("files are written atomically: a failed write keeps the old file", "[io]") {
  // Issue 17, defect 1: the writers truncated the target in place.
  TempDir dir;
  const auto path = dir.path / "out.svm";
  const auto first = io::parse_libsvm<double>("1 1:1\n2 2:2\n");
  io::write_libsvm(path, first);
  const std::string old_text = read_bytes(path);
  REQUIRE(old_text == "1 1:1\n2 2:2\n");
  // A producer that fails half-way (as a full disk does): the old content stays, no temporary is left.
  REQUIRE_THROWS_WITH(io::write_file_atomically(path,
                                                [](std::ostream& out) {
                                                  out << std::string(1 << 20, 'x');
                                                  throw std::runtime_error("disk full");
                                                }),
                      "disk full");
  REQUIRE(read_bytes(path) == old_text);
  REQUIRE(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()) == 1);
  // A successful write replaces the file as a whole.
  io::write_file_atomically(path, std::string_view("new\n"));
  REQUIRE(read_bytes(path) == "new\n");
  REQUIRE(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()) == 1);
  // The early check names the file.
  REQUIRE_NOTHROW(io::check_writable(path));
  REQUIRE_NOTHROW(io::check_writable(dir.path / "new.svm"));
  REQUIRE_THROWS_WITH(io::check_writable("/nonexistdir/x.model"), Catch::StartsWith("/nonexistdir/x.model: cannot be written"));
  REQUIRE_THROWS_WITH(io::check_writable(dir.path), Catch::Contains("is a directory"));
  if (::geteuid() != 0) {  // root writes anywhere
    const auto locked = dir.path / "locked";
    fs::create_directories(locked);
    fs::permissions(locked, fs::perms::owner_read | fs::perms::owner_exec);
    REQUIRE_THROWS_WITH(io::check_writable(locked / "m.model"), Catch::Contains("not writable"));
    REQUIRE_THROWS_WITH(io::write_file_atomically(locked / "m.model", std::string_view("x")),
                        Catch::StartsWith((locked / "m.model").string() + ": cannot create a temporary file"));
    fs::permissions(locked, fs::perms::owner_all);
  }
}

TEST_CASE("a file that cannot be opened is a runtime_error, not a ParseError", "[io]") {
  try {
    (void)io::read_libsvm<double>("/nonexistent/sparsemc/file.svm");
    FAIL("no exception");
  } catch (const ParseError&) {
    FAIL("a missing file is not a parse error");
  } catch (const std::runtime_error& e) {
    REQUIRE(std::string(e.what()).find("/nonexistent/sparsemc/file.svm: cannot open") == 0);
  }
}

// ---- labels --------------------------------------------------------------------------------

TEST_CASE("a caller-given label table maps test data to the training classes", "[io]") {
  const auto train = io::parse_libsvm<double>("1 1:1\n5 2:1\n9 3:1\n5 1:2\n");
  REQUIRE(train.encoder().labels() == std::vector<Label>{1, 5, 9});
  const LibsvmOptions test_options{.n_features = train.n_features(), .labels = train.encoder()};
  const auto test = io::parse_libsvm<double>("9 1:1\n9 2:1\n", test_options);
  REQUIRE(test.n_classes() == 3);  // K of the training set, though only label 9 occurs
  REQUIRE(test.labels().view().single(0) == 2);
  REQUIRE(test.n_features() == 3);

  require_error("9 1:1\n7 2:1\n", 2, 1, "label 7 is not in the given label table (3 labels; UnknownLabel::extend accepts it)",
                test_options);
  require_error("1 4:1\n", 1, 3, "feature index 4 is beyond the number of features 3", test_options);

  auto extend = test_options;
  extend.unknown_label = UnknownLabel::extend;
  const auto extended = io::parse_libsvm<double>("9 1:1\n7 2:1\n0 3:1\n", extend);
  REQUIRE(extended.encoder().labels() == std::vector<Label>{0, 1, 5, 7, 9});
  REQUIRE(labels_of(extended, 0) == std::vector<Label>{9});
  REQUIRE(labels_of(extended, 1) == std::vector<Label>{7});
  REQUIRE(labels_of(extended, 2) == std::vector<Label>{0});

  // Multilabel with a table: classes absent from the file keep their index.
  const auto ml = io::parse_libsvm<double>("5,1 1:1\n 2:1\n", {.labels = LabelEncoder({1, 5, 9, 11})});
  REQUIRE(ml.n_classes() == 4);
  REQUIRE(labels_of(ml, 0) == std::vector<Label>{1, 5});
  REQUIRE(labels_of(ml, 1).empty());
}

TEST_CASE("multilabel files are detected or forced", "[io]") {
  SECTION("a comma marks multilabel data") {
    const auto data = io::parse_libsvm<float>("3,1 1:1\n2 2:1\n7,3,3 1:1\n");
    REQUIRE(data.multilabel());
    REQUIRE(labels_of(data, 0) == std::vector<Label>{1, 3});
    REQUIRE(labels_of(data, 1) == std::vector<Label>{2});
    REQUIRE(labels_of(data, 2) == std::vector<Label>{3, 7});  // duplicates merged
  }
  SECTION("a line starting with a blank and a feature is a missing label in a multiclass file") {
    // Issue 17, defect 7: one deleted byte ("2 2:1" → " 2:1") used to make the file multilabel.
    require_error("3 1:1\n 2:1\n\t1:1 # no label\n", 2, 2,
                  "missing label (nothing marks the input as multilabel, so it is read as multiclass; "
                  "force LabelFormat::multilabel for multilabel data)");
    require_error("3 1:1\n2 2:1\n5:1 6:1\n", 3, 1,
                  "missing label (nothing marks the input as multilabel, so it is read as multiclass; "
                  "force LabelFormat::multilabel for multilabel data)");
  }
  SECTION("with a comma elsewhere, label-less lines are empty label sets") {
    const auto data = io::parse_libsvm<float>("3 1:1\n 2:1\n\t1:1 # no label\n1,2 3:1\n");
    REQUIRE(data.multilabel());
    REQUIRE(labels_of(data, 1).empty());
    REQUIRE(labels_of(data, 2).empty());
  }
  SECTION("forced multilabel with one label per line") {
    const auto data = io::parse_libsvm<float>("3 1:1\n2 2:1\n1:1\n", {.label_format = LabelFormat::multilabel});
    REQUIRE(data.n_samples() == 3);
    REQUIRE(labels_of(data, 0) == std::vector<Label>{3});
    REQUIRE(labels_of(data, 2).empty());
  }
  SECTION("forced multiclass rejects label lists") {
    REQUIRE_THROWS_AS(io::parse_libsvm<float>("3,1 1:1\n", {.label_format = LabelFormat::multiclass}), ParseError);
  }
  SECTION("a label-only multilabel line and a qid-only line") {
    const auto data = io::parse_libsvm<double>("1,2\n qid:4\n", {});
    REQUIRE(data.n_samples() == 2);
    REQUIRE(data.nnz() == 0);
    REQUIRE(labels_of(data, 1).empty());
  }
}

// ---- reading in blocks ---------------------------------------------------------------------

TEST_CASE("block boundaries do not change the result or the error positions", "[io]") {
  const std::string text =
      "# header\r\n1 1:0.5 3:2\r\n\r\n2 2:1e-3 4:7  # c\n3 1:1\n   \n1 5:-2.5\n2,3 1:1\n 2:2\n4 6:1";
  const auto whole = io::parse_libsvm<double>(text);
  REQUIRE(whole.n_samples() == 7);
  for (std::size_t block : {1, 2, 3, 5, 7, 16, 4096}) {
    for (std::size_t piece : {1, 3, 1000}) {
      INFO("block " << block << ", piece " << piece);
      PieceSource source{text, piece};
      require_identical(whole, io::detail::read_blocks<double, std::int32_t>(source, {}, "<pieces>", block));
    }
  }
  // A source larger than it said it was (a file that grew while being read) is read to its end.
  for (std::size_t block : {2, 16, 4096}) {
    for (std::size_t said : {std::size_t{0}, std::size_t{10}, text.size() - 1}) {
      INFO("block " << block << ", size said " << said);
      PieceSource source{text, 1000, 0, said};
      require_identical(whole, io::detail::read_blocks<double, std::int32_t>(source, {}, "<grew>", block));
    }
  }
  const std::string bad = text + "\n1 1:1\n2 2:x\n";
  for (std::size_t block : {1, 4, 9, 64}) {
    PieceSource source{bad, 5};
    try {
      (void)io::detail::read_blocks<double, std::int32_t>(source, {}, "b.svm", block);
      FAIL("no error");
    } catch (const ParseError& e) {
      REQUIRE(std::string(e.what()) == "b.svm:12:5: value 'x' is not a number");
    }
  }
  // A line much longer than the block grows the buffer.
  std::string long_line = "7";
  for (int j = 1; j <= 5000; ++j) long_line.append(" ").append(std::to_string(j)).append(":").append(std::to_string(j % 13));
  const std::string long_text = long_line + "\n8 1:1\n";
  PieceSource source{long_text, 100};
  const auto data = io::detail::read_blocks<double, std::int64_t>(source, {}, "<long>", 64);
  REQUIRE(data.n_samples() == 2);
  REQUIRE(data.nnz() == 5001);
}

// ---- the writer ----------------------------------------------------------------------------

TEMPLATE_LIST_TEST_CASE("write_libsvm round-trips the reader exactly", "[io]", ScalarIndexPairs) {
  using Scalar = std::tuple_element_t<0, TestType>;
  using Index = std::tuple_element_t<1, TestType>;
  for (bool multilabel : {false, true}) {
    INFO("multilabel " << multilabel);
    const auto data = random_dataset<Scalar, Index>(60, 25, multilabel, multilabel ? 11 : 12);
    const std::string text = to_text(data);
    LibsvmOptions options{.n_features = data.n_features(), .labels = data.encoder()};
    require_identical(data, io::parse_libsvm<Scalar, Index>(text, options));
    // Zero-based output reads back with the zero-based option.
    options.zero_based = true;
    require_identical(data, io::parse_libsvm<Scalar, Index>(to_text(data, {.zero_based = true}), options));
    // Without a label table or d the label table and d are those occurring in the file.
    const auto plain = io::parse_libsvm<Scalar, Index>(text);
    REQUIRE(plain.nnz() == data.nnz());
    REQUIRE(plain.multilabel() == multilabel);
    // Writing what was read gives the same text again.
    options.zero_based = false;
    REQUIRE(to_text(io::parse_libsvm<Scalar, Index>(text, options)) == text);
  }
}

TEST_CASE("write_libsvm: format details and refusals", "[io]") {
  const auto data = io::parse_libsvm<double>("-1 1:0.1 3:-0 7:1e+300\n2,5 2:3\n 4:1\n1 qid:2\n");
  REQUIRE(to_text(data) == "-1 1:0.1 3:-0 7:1e+300\n2,5 2:3\n 4:1\n1\n");
  const auto empty = io::parse_libsvm<double>("1,2 1:1\n qid:1\n");
  REQUIRE(to_text(empty) == "1,2 1:1\n qid:0\n");

  CsrMatrix<double, int> X(1, 2);
  X.insert(0, 1) = std::numeric_limits<double>::quiet_NaN();
  X.makeCompressed();
  const Dataset<double, int> bad(X, LabelSets::multiclass(std::vector<ClassIndex>{0}, 1), LabelEncoder({4}));
  std::ostringstream out;
  REQUIRE_THROWS_AS(io::write_libsvm(out, bad), std::invalid_argument);

  TempDir dir;
  io::write_libsvm(dir.path / "out.svm", data);
  require_identical(data, io::read_libsvm<double>(dir.path / "out.svm"));
}

// ---- compressed files ----------------------------------------------------------------------

TEST_CASE("compression is chosen by extension", "[io]") {
  REQUIRE(io::compression_of("a/b.svm.gz") == io::Compression::gzip);
  REQUIRE(io::compression_of("x.bz2") == io::Compression::bzip2);
  REQUIRE(io::compression_of("news20.t") == io::Compression::none);
  REQUIRE(io::compression_of("gz") == io::Compression::none);
}

#ifdef SPARSEMC_HAVE_ZLIB
TEST_CASE("gzip files are read directly, concatenated members included", "[io][compressed]") {
  const std::string text = read_bytes(sparsemc_test::repo_data() / "dna.scale");
  const auto plain = io::parse_libsvm<float>(text + text);
  TempDir dir;
  const auto path = dir.path / "dna2.svm.gz";
  for (const char* mode : {"wb", "ab"}) {  // two gzip members, one after the other
    gzFile out = gzopen(path.c_str(), mode);
    REQUIRE(out != nullptr);
    REQUIRE(gzwrite(out, text.data(), static_cast<unsigned>(text.size())) == static_cast<int>(text.size()));
    REQUIRE(gzclose(out) == Z_OK);
  }
  require_identical(plain, io::read_libsvm<float>(path));

  // A parse error inside a compressed file names the file and the line.
  const auto bad = dir.path / "bad.gz";
  gzFile out = gzopen(bad.c_str(), "wb");
  const std::string bad_text = "1 1:1\n2 2:1 1:1\n";
  gzwrite(out, bad_text.data(), static_cast<unsigned>(bad_text.size()));
  gzclose(out);
  try {
    (void)io::read_libsvm<double>(bad);
    FAIL("no error");
  } catch (const ParseError& e) {
    REQUIRE(std::string(e.what()) == bad.string() + ":2:7: feature indices must be strictly increasing: 1 after 2");
  }

  // Issue 17, defect 6: bytes after the last member that are not another member are an error
  // (zlib's gzread dropped them: half the samples, exit 0).
  {
    std::ofstream(path, std::ios::binary | std::ios::app) << "3 1:1\n";
    REQUIRE_THROWS_WITH(io::read_libsvm<float>(path), Catch::Contains("trailing bytes after the gzip data"));
    std::ofstream(path, std::ios::binary | std::ios::app) << std::string("\x1f\x8b\x08", 3);  // a cut header
    REQUIRE_THROWS_WITH(io::read_libsvm<float>(path), Catch::Contains("gzip"));
  }
  // Truncated data is an error, not a short dataset.
  fs::resize_file(path, fs::file_size(path) / 3);
  REQUIRE_THROWS_WITH(io::read_libsvm<float>(path), Catch::Contains("gzip"));
}
#endif

#ifdef SPARSEMC_HAVE_BZIP2
namespace {
void write_bz2_stream(std::FILE* file, const std::string& text) {
  int error = 0;
  BZFILE* bz = BZ2_bzWriteOpen(&error, file, 9, 0, 0);
  REQUIRE(error == BZ_OK);
  BZ2_bzWrite(&error, bz, const_cast<char*>(text.data()), static_cast<int>(text.size()));
  REQUIRE(error == BZ_OK);
  BZ2_bzWriteClose(&error, bz, 0, nullptr, nullptr);
  REQUIRE(error == BZ_OK);
}
}  // namespace

TEST_CASE("bzip2 files are read directly, concatenated streams included", "[io][compressed]") {
  const std::string text = read_bytes(sparsemc_test::repo_data() / "dna.scale.t");
  const std::string second = "# second stream\n2 1:1 180:0.25\n";
  const auto plain = io::parse_libsvm<double, std::int64_t>(text + second);
  TempDir dir;
  const auto path = dir.path / "dna.t.bz2";
  std::FILE* file = std::fopen(path.c_str(), "wb");
  REQUIRE(file != nullptr);
  write_bz2_stream(file, text);
  write_bz2_stream(file, second);
  std::fclose(file);
  require_identical(plain, io::read_libsvm<double, std::int64_t>(path));

  // Issue 17, defect 6: text appended after the last stream is an error.
  {
    const auto appended = dir.path / "appended.bz2";
    fs::copy_file(path, appended);
    std::ofstream(appended, std::ios::binary | std::ios::app) << "3 1:1\n";
    REQUIRE_THROWS_WITH((io::read_libsvm<double, std::int64_t>(appended)), Catch::Contains("trailing bytes after the bzip2 data"));
  }
  fs::resize_file(path, fs::file_size(path) / 2);
  REQUIRE_THROWS_WITH((io::read_libsvm<double, std::int64_t>(path)), Catch::Contains("bzip2"));
  std::ofstream(dir.path / "garbage.bz2", std::ios::binary) << "this is not bzip2 data\n";
  REQUIRE_THROWS_WITH(io::read_libsvm<double>(dir.path / "garbage.bz2"), Catch::Contains("corrupt bzip2"));
}
#endif

// ---- real data -----------------------------------------------------------------------------

TEST_CASE("the shipped dna.scale / dna.scale.t read and round-trip", "[io][data]") {
  const fs::path repo = sparsemc_test::repo_data();
  const auto train = io::read_libsvm<double>(repo / "dna.scale");
  REQUIRE(train.n_samples() == 2000);
  REQUIRE(train.n_features() == 180);
  REQUIRE(train.nnz() == 91233);
  REQUIRE(train.encoder().labels() == std::vector<Label>{1, 2, 3});
  const auto test = io::read_libsvm<double>(repo / "dna.scale.t", {.n_features = 180, .labels = train.encoder()});
  REQUIRE(test.n_samples() == 1186);
  REQUIRE(test.nnz() == 53669);
  require_identical(train, io::parse_libsvm<double>(to_text(train)));
}

TEST_CASE("every file of ../shared/data reads with its README figures and round-trips", "[io][data][external]") {
  const fs::path root = sparsemc_test::shared_data();
  const fs::path readme = root / "README.md";
  if (!fs::exists(readme))
    SPARSEMC_SKIP(root.string() << " is absent (the shared real datasets are not on this machine)");
  // Table rows: | `multiclass/x` | task | n | d (max idx) | nnz | K (...) ... |
  std::ifstream in(readme);
  std::string line;
  int checked = 0;
  int skipped = 0;
  while (std::getline(in, line)) {
    if (line.rfind("| `", 0) != 0) continue;
    std::vector<std::string> cells;
    std::stringstream row_stream(line.substr(1));
    for (std::string cell; std::getline(row_stream, cell, '|');) cells.push_back(cell);
    REQUIRE(cells.size() >= 6);
    auto number = [](std::string s) {
      std::erase(s, ',');
      return std::stoll(s);
    };
    const std::string name = cells[0].substr(cells[0].find('`') + 1, cells[0].rfind('`') - cells[0].find('`') - 1);
    const fs::path path = root / name;
    if (!fs::exists(path)) {
      SPARSEMC_SKIP_PART(path.string() << " listed in the README but absent");
      continue;
    }
    // Under the sanitizers, only the small uncompressed files.
    if (sanitizer_run() && (path.extension() == ".bz2" || fs::file_size(path) > 700'000)) {
      ++skipped;
      continue;
    }
    INFO(name);
    const bool compressed = path.extension() == ".bz2";
    const auto data = io::read_libsvm<double>(path);
    CHECK(data.n_samples() == number(cells[2]));
    CHECK(data.n_features() == number(cells[3]));
    CHECK(data.nnz() == number(cells[4]));
    CHECK(data.n_classes() == std::stoll(cells[5]));
    CHECK(data.multilabel() == (cells[1].find("multilabel") != std::string::npos));
    // Float and 64-bit indices see the same structure (plain files: decompressing bzip2
    // dominates the time and is exercised once above).
    if (!compressed) {
      const auto single = io::read_libsvm<float, std::int64_t>(path);
      CHECK(single.nnz() == data.nnz());
      CHECK(single.n_features() == data.n_features());
      CHECK(single.labels().view().classes().size() == data.labels().view().classes().size());
    }
    // The writer's text reads back to the identical dataset.
    require_identical(data, io::parse_libsvm<double>(to_text(data)));
    ++checked;
  }
  REQUIRE(checked > 0);
  if (skipped > 0) WARN("sanitizer run: " << skipped << " large or compressed shared files not read");
}

// ---- robustness ----------------------------------------------------------------------------

TEST_CASE("mutated input either parses (and round-trips) or is a ParseError", "[io]") {
  // Random edits of a small valid file with the bytes the grammar cares about: the reader
  // must never crash, hang or throw anything but ParseError.
  const std::string seed_text = "1 1:0.5 3:-2 10:1e-3\n-1 2:+0.25 # c\n3,4 qid:2 5:7\n 6:1\r\n2 1:1";
  const std::string alphabet = std::string("0123456789:.,+-eE#qidnaif \t\r\n\x01\xff") + std::string(1, '\0');
  Rng rng(2024);
  const int rounds = sanitizer_run() ? 3000 : 20000;
  int parsed = 0;
  for (int round = 0; round < rounds; ++round) {
    std::string text = seed_text;
    const auto edits = 1 + uniform_index(rng, 4);
    for (std::uint64_t e = 0; e < edits; ++e) {
      const auto at = uniform_index(rng, text.size() + 1);
      const char c = alphabet[uniform_index(rng, alphabet.size())];
      switch (uniform_index(rng, 3)) {
        case 0: text.insert(text.begin() + static_cast<std::ptrdiff_t>(at), c); break;
        case 1: if (at < text.size()) text[at] = c; break;
        default: if (at < text.size()) text.erase(at, 1); break;
      }
    }
    INFO("input: " << text);
    try {
      const auto data = io::parse_libsvm<float, std::int32_t>(text, {.label_format = LabelFormat::multilabel});
      ++parsed;
      require_identical(data, io::parse_libsvm<float, std::int32_t>(
                                  to_text(data), {.n_features = data.n_features(), .label_format = LabelFormat::multilabel,
                                                  .labels = data.encoder()}));
    } catch (const ParseError& e) {
      REQUIRE(e.line() >= 1);
      REQUIRE(e.column() >= 1);
    }
  }
  REQUIRE(parsed > 0);
}

TEMPLATE_LIST_TEST_CASE("property: every generated file the reader accepts round-trips through the writer bit for bit",
                        "[io][property]", ScalarIndexPairs) {
  // Random LIBSVM text in every spelling the grammar allows (blanks and tabs, CRLF, comments,
  // blank lines, '+' signs, exponents, integral-real labels, qid, explicit and negative zeros,
  // random finite bit patterns, subnormals, underflowing decimals): whatever the reader
  // accepts, the writer writes, and the reader reads back to the same bits; writing that
  // again gives the same text.
  using Scalar = std::tuple_element_t<0, TestType>;
  using Index = std::tuple_element_t<1, TestType>;
  using Bits = std::conditional_t<sizeof(Scalar) == 4, std::uint32_t, std::uint64_t>;
  Rng rng(17 + sizeof(Scalar) + sizeof(Index));
  const auto pick = [&](std::uint64_t n) { return uniform_index(rng, n); };
  const int files = sanitizer_run() ? 150 : 1500;
  int accepted = 0;
  for (int file = 0; file < files; ++file) {
    const bool multilabel = pick(2) == 0;
    const bool zero_based = pick(4) == 0;
    const auto blank = [&] { return std::string(pick(3) == 0 ? "\t" : " ") + (pick(4) == 0 ? " " : ""); };
    std::string text;
    const auto lines = 1 + pick(12);
    for (std::uint64_t l = 0; l < lines; ++l) {
      if (pick(8) == 0) text += pick(2) ? "# a comment\n" : "\n";
      if (pick(6) == 0) text += blank();
      // Labels: one (multiclass) or 0..3 comma-separated (multilabel, one line with two).
      const auto n_labels = multilabel ? (l == 0 ? 2 : pick(4)) : 1;
      for (std::uint64_t k = 0; k < n_labels; ++k) {
        if (k > 0) text += ',';
        const auto label = static_cast<std::int64_t>(pick(7)) - 3;
        switch (pick(4)) {
          case 0: text += (label >= 0 ? "+" : "") + std::to_string(label); break;
          case 1: text += std::to_string(label) + ".0"; break;
          default: text += std::to_string(label); break;
        }
      }
      if (pick(10) == 0) text += blank() + "qid:" + std::to_string(pick(50));
      std::int64_t index = zero_based ? -1 : 0;
      const auto entries = pick(6);
      for (std::uint64_t e = 0; e < entries; ++e) {
        index += 1 + static_cast<std::int64_t>(pick(pick(5) == 0 ? 100000 : 5));
        text += blank() + std::to_string(index) + ':';
        char buffer[64];
        switch (pick(7)) {
          case 0: {  // a random finite bit pattern, shortest form
            Scalar v;
            do {
              const Bits bits = static_cast<Bits>(rng());
              std::memcpy(&v, &bits, sizeof v);
            } while (!std::isfinite(v));
            text.append(buffer, std::to_chars(buffer, buffer + sizeof buffer, v).ptr);
            break;
          }
          case 1: text += pick(2) ? "-0" : "0.000"; break;
          case 2: text += pick(2) ? "1e-400" : "-2.5E-5000"; break;  // underflow: ±0
          case 3: text += "+" + std::to_string(pick(1000)) + "e" + std::to_string(static_cast<int>(pick(20)) - 10); break;
          case 4: {  // a subnormal in a long fixed form
            const Scalar v = std::numeric_limits<Scalar>::denorm_min() * static_cast<Scalar>(1 + pick(100));
            text.append(buffer, std::to_chars(buffer, buffer + sizeof buffer, v, std::chars_format::scientific, 30).ptr);
            break;
          }
          default: text += std::to_string(uniform_real(rng) * 2 - 1); break;
        }
      }
      if (pick(6) == 0) text += blank() + "# trailing";
      text += pick(5) == 0 ? "\r\n" : "\n";
    }
    if (pick(4) == 0 && text.back() == '\n') text.pop_back();  // a last line without '\n'
    INFO("file: " << text);
    const LibsvmOptions options{.zero_based = zero_based};
    try {
      const auto data = io::parse_libsvm<Scalar, Index>(text, options);
      ++accepted;
      if (!multilabel) REQUIRE(!data.multilabel());
      const std::string written = to_text(data, {.zero_based = zero_based});
      LibsvmOptions again = options;
      again.n_features = data.n_features();
      again.labels = data.encoder();
      // A multilabel dataset whose samples have at most one label each is written without a
      // comma: only the caller knows it is multilabel (a label-less line alone does not say so).
      if (data.multilabel()) again.label_format = LabelFormat::multilabel;
      const auto back = io::parse_libsvm<Scalar, Index>(written, again);
      require_identical(data, back);
      REQUIRE(to_text(back, {.zero_based = zero_based}) == written);
    } catch (const ParseError& e) {
      // Only an index beyond a 32-bit Index may be refused here; every other generated file is valid.
      INFO(e.what());
      REQUIRE(std::string(e.message()).find("index type") != std::string::npos);
    }
  }
  REQUIRE(accepted > files / 2);
}
