// Distributed sparsemc (include/sparsemc/mpi) under mpirun: every case runs on every rank.
// The reader's parts, stacked, are the serial reader's data bit for bit, and a malformed file
// gives the serial reader's error on every rank; a fit split by classes is certified like a
// local one — its reported F is the objective of the gathered model on the whole problem, and
// it agrees with the serial fit within the two certificates; FISTA and GLS split by samples take
// the serial steps (up to the order of the sums) and report the whole problem's gap, and so
// does FBPD (Crammer–Singer's Algorithms 1 and 2, and a smooth loss).

#include <catch2/catch.hpp>

#include <unistd.h>
#include <zlib.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

#include <sparsemc/mpi/class_partition.hpp>
#include <sparsemc/mpi/read.hpp>
#include <sparsemc/mpi/sample_partition.hpp>
#include <sparsemc/sparsemc.hpp>

#include "libsvm_text.hpp"
#include "random_problem.hpp"
#include "skip.hpp"

using namespace sparsemc;
using sparsemc_test::libsvm_text;
using sparsemc_test::RandomLabels;
using sparsemc_test::RandomProblem;
using sparsemc_test::require_same_data;

namespace {

const mpi::Communicator& world() {
  static const mpi::Communicator comm;
  return comm;
}

/// A file every rank sees: written by rank 0 (gzip-compressed when the name ends in .gz),
/// named after rank 0's process so that concurrent runs do not share it, removed at the end.
class SharedFile {
 public:
  SharedFile(const std::string& suffix, const std::string& text) {
    std::vector<std::int64_t> pid{static_cast<std::int64_t>(::getpid())};
    world().broadcast(pid, 0);
    path_ = std::filesystem::temp_directory_path() / ("sparsemc_test_mpi_" + std::to_string(pid.front()) + suffix);
    if (world().root()) {
      if (path_.extension() == ".gz") {
        gzFile out = gzopen(path_.c_str(), "wb");
        gzwrite(out, text.data(), static_cast<unsigned>(text.size()));
        gzclose(out);
      } else {
        std::ofstream(path_, std::ios::binary) << text;
      }
    }
    (void)world().max(0);  // a barrier: the file is complete before any rank opens it
  }
  SharedFile(const SharedFile&) = delete;
  SharedFile& operator=(const SharedFile&) = delete;
  ~SharedFile() {
    (void)world().max(0);
    if (world().root()) std::filesystem::remove(path_);
  }
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

/// The message the serial reader throws on `path` ("" when it reads it).
std::string serial_error(const std::filesystem::path& path) {
  try {
    (void)io::read_libsvm<double>(path, {.threads = 1});
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

/// The message the parts' reader throws on `path` on this rank ("" when it reads it).
std::string parts_error(const std::filesystem::path& path) {
  try {
    (void)mpi::read_libsvm_part<double>(world(), path, {.threads = 1});
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

/// The parts of `path`, stacked, are the serial reader's data; each part is its rows, about
/// its share of the entries.
void check_parts(const std::filesystem::path& path, int threads) {
  INFO(path << ", threads " << threads);
  const Dataset<double> expected = io::read_libsvm<double>(path, {.threads = 1});
  mpi::PartOfFile where;
  const Dataset<double> part = mpi::read_libsvm_part<double>(world(), path, {.threads = threads}, &where);
  CHECK(where.n_samples == expected.n_samples());
  CHECK(where.first_sample == world().exclusive_sum(part.n_samples()));
  std::vector<std::int64_t> rows(static_cast<std::size_t>(part.n_samples()));
  std::iota(rows.begin(), rows.end(), where.first_sample);
  const Dataset<double> mine = expected.subset(rows);
  CHECK(part.n_features() == mine.n_features());
  // A rank holds its share of X: the bytes are cut evenly, and so, on a long file, are the entries.
  if (expected.n_samples() > 1000)
    CHECK(static_cast<double>(part.nnz()) <= 1.1 * static_cast<double>(expected.nnz()) / world().size());
  CHECK(std::ranges::equal(part.csr().values(), mine.csr().values()));
  require_same_data(mpi::gather_dataset(world(), part), expected);
}

/// A Dataset over a RandomProblem's X, classes and weights.
Dataset<double> dataset_of(const RandomProblem<double>& rp) {
  std::vector<Label> labels(static_cast<std::size_t>(rp.labels.n_classes()));
  std::iota(labels.begin(), labels.end(), Label{0});
  Dataset<double> data(CsrMatrix<double>(rp.A), rp.labels, LabelEncoder(labels));
  if (!rp.weights.empty()) data.set_sample_weights(rp.weights);
  return data;
}

/// fit_by_classes against the serial fit: both certified at tol; F of the split fit is the
/// objective of its gathered model on the whole problem; the two agree within their gaps.
template <class Solver>
void check_split_fit(const Solver& solver, const Dataset<double>& data, double tol, ClassIndex classes_per_fit = 0) {
  const auto problem = data.problem<Eigen::ColMajor>();
  const Result<double> split = mpi::fit_by_classes(
      world(), data, [&](const Dataset<double>& mine) { return solver.fit(mine.problem<Eigen::ColMajor>()); },
      classes_per_fit);
  const Result<double> serial = solver.fit(problem);
  REQUIRE(split.info.status == Status::converged);
  REQUIRE(serial.info.status == Status::converged);
  CHECK(split.info.relative_gap <= tol);
  CHECK(std::abs(split.info.objective - serial.info.objective) <=
        (split.info.duality_gap + serial.info.duality_gap) * (1 + 1e-9) + 1e-13);
  if (!world().root()) {
    CHECK(split.model.n_classes() == 0);
    return;
  }
  CHECK(split.model.n_classes() == data.n_classes());
  CHECK(split.model.labels() == data.encoder().labels());
  GapWorkspace<double> work;
  const DualityGap whole = duality_gap(solver.loss(), solver.penalty(), problem, split.model, work);
  CHECK(whole.primal == Approx(split.info.objective).epsilon(1e-9));
  CHECK(split.info.nnz == split.model.nnz());
  CHECK(split.info.nnz_rows == static_cast<std::int64_t>(split.model.support().size()));
}

/// This rank's rows of `data`: [n·r/P, n·(r+1)/P).
template <class Scalar>
Dataset<Scalar> rank_rows(const Dataset<Scalar>& data) {
  const auto n = static_cast<std::int64_t>(data.n_samples());
  const std::int64_t first = n * world().rank() / world().size(), end = n * (world().rank() + 1) / world().size();
  std::vector<std::int64_t> rows(static_cast<std::size_t>(end - first));
  std::iota(rows.begin(), rows.end(), first);
  return data.subset(rows);
}

/// What a solver's `converged` certifies: the gap of (1) at the model's loss gradient (the
/// serial `duality_gap` at the returned model), the gap of (1) at its own dual iterate, or the
/// KKT residual of the constrained form (8) (its measure).
enum class Certificate { gap_at_model, own_dual, kkt };

/// fit_by_samples against the serial fit: every rank returns the same model and information;
/// both fits are certified at tol and agree to `agreement` (relative) in F, and the reported F
/// (and the gap at the model's loss gradient) are those of the whole problem at the returned model.
template <class Scalar, class Solver>
void check_sample_split(const Solver& solver, const Dataset<Scalar>& data, double tol, double agreement,
                        Certificate certificate = Certificate::gap_at_model) {
  const auto problem = data.template problem<Eigen::RowMajor>();
  const Dataset<Scalar> part = rank_rows(data);
  const std::int64_t bytes_before = world().reduced_bytes();
  const Result<Scalar> split = mpi::fit_by_samples(world(), solver, part.template problem<Eigen::RowMajor>());
  const std::int64_t bytes = world().reduced_bytes() - bytes_before;
  const Result<Scalar> serial = solver.fit(problem);
  REQUIRE(split.info.status == Status::converged);
  REQUIRE(serial.info.status == Status::converged);
  CHECK((certificate == Certificate::kkt ? split.info.measure : split.info.relative_gap) <= tol);
  CHECK(split.info.objective == Approx(serial.info.objective).epsilon(agreement));
  // The same bits on every rank.
  CHECK(world().max(split.info.objective) == world().min(split.info.objective));
  CHECK(world().max(split.info.epochs) == world().min(split.info.epochs));
  const double w_sum = split.model.dense().template cast<double>().sum();
  CHECK(world().max(w_sum) == world().min(w_sum));
  // The whole problem's F and gap at the returned model, evaluated on one process.
  GapWorkspace<Scalar> work;
  const DualityGap whole = duality_gap(solver.loss(), solver.penalty(), problem, split.model, work);
  CHECK(whole.primal == Approx(split.info.objective).epsilon(agreement));
  if (certificate == Certificate::gap_at_model)
    CHECK(whole.relative() == Approx(split.info.relative_gap).epsilon(1e-3).margin(std::is_same_v<Scalar, float> ? 1e-5 : 1e-9));
  // At least the d × K gradient per iteration went through the reductions.
  const auto gradient_bytes = static_cast<std::int64_t>(sizeof(Scalar)) * data.n_features() * data.n_classes();
  CHECK(bytes >= split.info.epochs * gradient_bytes);
}

}  // namespace

TEST_CASE("the parts of a file, stacked, are the serial reader's data", "[mpi][io]") {
  for (const bool multilabel : {false, true}) {
    const std::string text = libsvm_text(20000, multilabel, multilabel ? 5 : 3);
    const SharedFile plain(".svm", text);
    const SharedFile gzip(".svm.gz", text);
    for (const int threads : {1, 2}) {
      check_parts(plain.path(), threads);
      check_parts(gzip.path(), threads);
    }
  }
  SECTION("fewer lines than ranks, a last line without '\\n', comment lines") {
    const SharedFile tiny(".svm", "# two samples\n2 3:1\n1 1:0.5 7:2");
    check_parts(tiny.path(), 1);
  }
  SECTION("a multilabel sign in a late part makes an earlier line without a label a sample") {
    std::string text = "1:1 2:3\n";
    for (int i = 0; i < 2000; ++i) text += "3 4:1\n";
    text += "1,2 5:1\n";
    const SharedFile late(".svm", text);
    check_parts(late.path(), 1);
  }
}

TEST_CASE("a malformed file gives the serial reader's error on every rank", "[mpi][io]") {
  std::string body;
  for (int i = 0; i < 3000; ++i) body += std::to_string(1 + i % 4) + " 1:0.5 3:" + std::to_string(i) + "\n";
  const auto check_error = [](const std::string& text) {
    const SharedFile file(".svm", text);
    const std::string expected = serial_error(file.path());
    REQUIRE(!expected.empty());
    CHECK(parts_error(file.path()) == expected);
  };
  SECTION("a bad value near the end") { check_error(body + "2 1:x\n" + body); }
  SECTION("a bad index on the last line") { check_error(body + "2 3:1 2:1"); }
  SECTION("a line without a label in a multiclass file, and a bad token after it") {
    check_error("1 1:1\n 2:1\n" + body + "1 1:1 1:2\n");
  }
  SECTION("a line without a label in a multiclass file") { check_error(body + " 2:1\n" + body); }
  SECTION("no samples") { check_error("# nothing\n\n# here\n"); }
  SECTION("an empty file") { check_error(""); }
  SECTION("a file that does not exist") {
    CHECK(parts_error("/nonexistent/sparsemc.svm") == serial_error("/nonexistent/sparsemc.svm"));
  }
}

TEST_CASE("a fit split by classes is certified like the serial fit", "[mpi][bcd]") {
  const double tol = 1e-8;
  SECTION("one-vs-rest squared hinge + l1, line search, weighted, with an intercept") {
    const RandomProblem<double> rp(150, 40, 5, 0.2, 3, /*weighted=*/true);
    check_split_fit(BlockCD<OvrSquaredHinge, L1, TsengYun>({}, {.lambda = 2e-3},
                                                           {.tol = tol, .max_epochs = 20000, .fit_intercept = true, .threads = 1}),
                    dataset_of(rp), tol);
  }
  SECTION("one-vs-rest squared hinge + l1 on multilabel data") {
    const RandomProblem<double> rp(120, 30, 7, 0.25, 5, false, RandomLabels::up_to_three);
    check_split_fit(BlockCD<OvrSquaredHinge, L1, TsengYun>({}, {.lambda = 1e-3}, {.tol = tol, .max_epochs = 50000, .threads = 1}),
                    dataset_of(rp), tol);
  }
  SECTION("least squares + ridge only, with an intercept") {
    const RandomProblem<double> rp(100, 25, 4, 0.3, 8);
    check_split_fit(BlockCD<LeastSquares, NoPenalty, TsengYun>({}, {.mu = 1e-2},
                                                               {.tol = tol, .max_epochs = 20000, .fit_intercept = true, .threads = 1}),
                    dataset_of(rp), tol);
  }
  SECTION("in batches of one and of two classes, weighted, with an intercept") {
    const RandomProblem<double> rp(150, 40, 7, 0.2, 4, /*weighted=*/true);
    for (const ClassIndex batch : {1, 2})
      check_split_fit(BlockCD<OvrSquaredHinge, L1, TsengYun>(
                          {}, {.lambda = 2e-3}, {.tol = tol, .max_epochs = 20000, .fit_intercept = true, .threads = 1}),
                      dataset_of(rp), tol, batch);
  }
  SECTION("two classes: with three ranks one has none") {
    const RandomProblem<double> rp(100, 20, 2, 0.3, 9);
    check_split_fit(BlockCD<OvrSquaredHinge, L1, TsengYun>({}, {.lambda = 1e-3}, {.tol = tol, .max_epochs = 20000, .threads = 1}),
                    dataset_of(rp), tol);
  }
  SECTION("SCD with its line search, the real dna data") {
    const Dataset<double> dna =
        io::read_libsvm_plain<double>(sparsemc_test::repo_data() / "dna.scale", {.threads = 1});
    check_split_fit(SCD<OvrSquaredHinge, L1, Adaptive>({}, {.lambda = 1e-3}, {.tol = 1e-6, .max_epochs = 5000, .seed = 3, .threads = 1}),
                    dna, 1e-6);
  }
}

TEST_CASE("a warm start split by classes or samples starts at the given model", "[mpi][warm]") {
  const RandomProblem<double> rp(150, 40, 5, 0.2, 41, /*weighted=*/true);
  const Dataset<double> data = dataset_of(rp);
  SECTION("by classes: each batch starts from its columns of the model") {
    // The serial optimum to 1e-11; a fit to 1e-6 from it has nothing to do.
    const BlockCD<OvrSquaredHinge, L1, TsengYun> tight({}, {.lambda = 2e-3},
                                                       {.tol = 1e-11, .max_epochs = 50000, .fit_intercept = true, .threads = 1});
    const Result<double> serial = tight.fit(data.problem<Eigen::ColMajor>());
    REQUIRE(serial.info.status == Status::converged);
    const BlockCD<OvrSquaredHinge, L1, TsengYun> solver({}, {.lambda = 2e-3}, {.tol = 1e-6, .fit_intercept = true, .threads = 1});
    for (const ClassIndex batch : {0, 2}) {
      const Result<double> warm = mpi::fit_by_classes(
          world(), data,
          [&](const Dataset<double>& mine, const LinearModel<double>* start) {
            // The start is the serial model's columns of these classes, with their labels.
            REQUIRE(start != nullptr);
            CHECK(start->labels() == mine.encoder().labels());
            return solver.fit(mine.problem<Eigen::ColMajor>(), *start);
          },
          batch, &serial.model);
      CHECK(warm.info.status == Status::converged);
      CHECK(warm.info.epochs <= 1);  // certified at once, or after a pass
      CHECK(warm.info.objective == Approx(serial.info.objective).epsilon(1e-6));
    }
  }
  SECTION("the columns of a share, renumbered, with their intercepts") {
    const LinearModel<double> model(Eigen::MatrixXd::NullaryExpr(6, 5, [](Eigen::Index j, Eigen::Index k) {
                                      return (j + k) % 3 == 0 ? 0.0 : static_cast<double>(10 * j + k);
                                    }),
                                    Eigen::VectorXd::LinSpaced(5, 1.0, 5.0), {10, 20, 30, 40, 50});
    const LinearModel<double> part = mpi::restrict_model_to_classes(model, {1, 3});
    CHECK(part.dense() == model.dense().middleCols(1, 3));
    CHECK(part.intercept() == model.intercept().segment(1, 3));
    CHECK(part.labels() == std::vector<Label>{20, 30, 40});
  }
  SECTION("by samples: FISTA from the serial optimum is certified at once") {
    const ProxGradient<Logistic, L1L2> tight({}, {.lambda = 2e-3}, {.tol = 1e-11, .max_epochs = 50000, .threads = 1});
    const Result<double> serial = tight.fit(data.problem<Eigen::RowMajor>());
    REQUIRE(serial.info.status == Status::converged);
    const ProxGradient<Logistic, L1L2> solver({}, {.lambda = 2e-3}, {.tol = 1e-6, .threads = 1});
    const Dataset<double> part = rank_rows(data);
    const Result<double> warm =
        mpi::fit_by_samples(world(), solver, part.problem<Eigen::RowMajor>(), &serial.model);
    CHECK(warm.info.status == Status::converged);
    CHECK(warm.info.epochs <= 1);
    CHECK(warm.info.objective == Approx(serial.info.objective).epsilon(1e-6));
  }
}

TEST_CASE("FISTA split by samples takes the serial steps and is certified by the whole gap", "[mpi][fista]") {
  SECTION("multinomial logistic + l1l2, weighted, with an intercept") {
    const RandomProblem<double> rp(200, 30, 4, 0.3, 11, /*weighted=*/true);
    check_sample_split<double>(ProxGradient<Logistic, L1L2>({}, {.lambda = 2e-3},
                                                             {.tol = 1e-10, .max_epochs = 20000, .fit_intercept = true, .threads = 1}),
                               dataset_of(rp), 1e-10, 1e-9);
  }
  SECTION("squared hinge + l1 (mu = 0: the gap's per-sample rescaling over the ranks)") {
    const RandomProblem<double> rp(150, 40, 5, 0.2, 12);
    check_sample_split<double>(ProxGradient<SquaredHinge, L1>({}, {.lambda = 1e-3}, {.tol = 1e-10, .max_epochs = 50000, .threads = 1}),
                               dataset_of(rp), 1e-10, 1e-9);
  }
  SECTION("one-vs-rest squared hinge + l1 on multilabel data, with an intercept") {
    const RandomProblem<double> rp(120, 30, 6, 0.25, 13, false, RandomLabels::up_to_three);
    check_sample_split<double>(ProxGradient<OvrSquaredHinge, L1>({}, {.lambda = 1e-3},
                                                                  {.tol = 1e-10, .max_epochs = 50000, .fit_intercept = true, .threads = 1}),
                               dataset_of(rp), 1e-10, 1e-9);
  }
  SECTION("least squares + ridge only, in single precision") {
    const RandomProblem<double> rp(100, 25, 3, 0.3, 14);
    const Dataset<double> data = dataset_of(rp);
    const Dataset<float> data_f(CsrMatrix<float>(data.matrix().template cast<float>()), data.labels(), data.encoder());
    check_sample_split<float>(ProxGradient<LeastSquares, NoPenalty>({}, {.mu = 1e-2f}, {.tol = 1e-5, .max_epochs = 20000, .threads = 1}),
                              data_f, 1e-5, 1e-5);
  }
}

TEST_CASE("GLS split by samples takes the serial steps and is certified by the whole gap", "[mpi][gls]") {
  SECTION("multinomial logistic, quasi-Newton with curvature refreshes, weighted, with an intercept") {
    const RandomProblem<double> rp(200, 30, 4, 0.3, 21, /*weighted=*/true);
    check_sample_split<double>(
        GLS(Logistic{}, NoPenalty{.mu = 1e-3}, {.tol = 1e-10, .fit_intercept = true, .curvature_refresh = 3}),
        dataset_of(rp), 1e-10, 1e-9);
  }
  SECTION("multinomial logistic, Algorithm 1 with momentum") {
    const RandomProblem<double> rp(150, 25, 3, 0.3, 22);
    check_sample_split<double>(
        GLS(Logistic{}, NoPenalty{.mu = 1e-2}, {.tol = 1e-10, .max_epochs = 5000, .accelerated = true, .memory = 0}),
        dataset_of(rp), 1e-10, 1e-9);
  }
  SECTION("least squares (identity link), in single precision") {
    const RandomProblem<double> rp(100, 20, 3, 0.3, 23);
    const Dataset<double> data = dataset_of(rp);
    const Dataset<float> data_f(CsrMatrix<float>(data.matrix().template cast<float>()), data.labels(), data.encoder());
    check_sample_split<float>(GLS(LeastSquares{}, NoPenalty{.mu = 1e-2}, {.tol = 1e-5}), data_f, 1e-5, 1e-5);
  }
}

TEST_CASE("FBPD split by samples takes the serial steps and is certified over the whole problem", "[mpi][fbpd]") {
  // Crammer–Singer: the dual blocks y_i stay on their rank; the restarts, the adaptive steps and
  // the preconditioner's column sums are agreed over the ranks.
  SECTION("Crammer-Singer + l1, Algorithm 1, the gap of its own dual") {
    const RandomProblem<double> rp(150, 30, 4, 0.3, 31);
    check_sample_split<double>(FBPD<CrammerSinger, L1L2>({}, {.lambda = 1e-3, .mu = 1e-2}, {.tol = 1e-7, .threads = 1}),
                               dataset_of(rp), 1e-7, 1e-6, Certificate::own_dual);
  }
  SECTION("Crammer-Singer + l1l2, weighted, with an intercept (the gap after the intercept's correction)") {
    const RandomProblem<double> rp(120, 25, 3, 0.3, 32, /*weighted=*/true);
    check_sample_split<double>(
        FBPD<CrammerSinger, L1L2>({}, {.lambda = 1e-3, .mu = 1e-2}, {.tol = 1e-7, .fit_intercept = true, .threads = 1}),
        dataset_of(rp), 1e-7, 1e-6, Certificate::own_dual);
  }
  SECTION("Crammer-Singer, Algorithm 2 (epigraphical splitting, the slack step's sums)") {
    const RandomProblem<double> rp(100, 20, 3, 0.3, 33);
    const Dataset<double> data = dataset_of(rp);
    const L1L2 penalty{.lambda = 0.02, .mu = 0.02};
    const auto regularised = FBPD<CrammerSinger, L1L2>({}, penalty, {.tol = 1e-9, .threads = 1})
                                 .fit(data.problem<Eigen::RowMajor>());
    const double eta = regularised.info.objective - penalty_value(penalty, regularised.model);
    check_sample_split<double>(FBPD<CrammerSinger, L1L2, Constrained>({}, penalty, {.tol = 1e-7, .eta = eta, .threads = 1}),
                               data, 1e-7, 1e-5, Certificate::kkt);
  }
  SECTION("multinomial logistic + l1l2 (the forward step), with an intercept") {
    const RandomProblem<double> rp(150, 25, 4, 0.3, 34);
    check_sample_split<double>(
        FBPD<Logistic, L1L2>({}, {.lambda = 2e-3, .mu = 1e-3}, {.tol = 1e-9, .fit_intercept = true, .threads = 1}),
        dataset_of(rp), 1e-9, 1e-8);
  }
}

TEST_CASE("sums and maxima over the ranks, short and long, are exact and the same on every rank", "[mpi]") {
  const int P = world().size(), r = world().rank();
  for (const std::size_t length : {std::size_t{3}, std::size_t{100'003}}) {
    std::vector<double> values(length), largest(length);
    for (std::size_t i = 0; i < length; ++i) {
      values[i] = static_cast<double>((r + 1) * static_cast<int>(i % 1000));
      largest[i] = -static_cast<double>(r) - static_cast<double>(i);
    }
    world().sum(std::span<double>(values));
    world().max(std::span<double>(largest));
    bool exact = true;
    for (std::size_t i = 0; i < length; ++i) {
      exact &= values[i] == static_cast<double>(P * (P + 1) / 2 * static_cast<int>(i % 1000));
      exact &= largest[i] == -static_cast<double>(i);
    }
    CHECK(exact);
  }
  std::vector<float> ones(50'000, 1.0f);
  world().sum(std::span<float>(ones));
  CHECK(std::ranges::all_of(ones, [&](float x) { return x == static_cast<float>(P); }));
}

TEST_CASE("class shares cover the classes in order, rank 0's never empty", "[mpi]") {
  for (const int ranks : {1, 2, 3, 7})
    for (const ClassIndex K : {1, 2, 3, 10, 105}) {
      ClassIndex next = 0;
      for (int r = 0; r < ranks; ++r) {
        const mpi::ClassShare share = mpi::class_share(K, r, ranks);
        CHECK(share.first == next);
        CHECK(share.size >= K / ranks);
        CHECK(share.size <= K / ranks + 1);
        next = share.first + share.size;
      }
      CHECK(next == K);
      CHECK(mpi::class_share(K, 0, ranks).size > 0);
    }
}
