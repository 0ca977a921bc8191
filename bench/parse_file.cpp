// Times sparsemc's LIBSVM reader on whole files, the way a user calls it:
//   parse_file [--repeat R] [--float] [--multilabel] FILE...
// For each file prints one line: path, n, d, nnz, the best wall time of R reads in seconds,
// the best CPU time (less sensitive to a busy machine) and the throughput in MB/s of file
// bytes (compressed bytes for .gz/.bz2) from the wall time.
// bench/parse_vs_sklearn.py runs it next to scikit-learn's load_svmlight_file.
#include <sparsemc/io/libsvm.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

namespace {

template <class Scalar>
int time_file(const std::string& path, int repeat, const sparsemc::io::LibsvmOptions& options) {
  double best = std::numeric_limits<double>::infinity();
  double best_cpu = best;
  long long n = 0, d = 0, nnz = 0;
  for (int r = 0; r < repeat; ++r) {
    const std::clock_t cpu_start = std::clock();
    const auto start = std::chrono::steady_clock::now();
    const auto data = sparsemc::io::read_libsvm<Scalar>(path, options);
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
    best = std::min(best, elapsed.count());
    best_cpu = std::min(best_cpu, static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC);
    n = data.n_samples();
    d = data.n_features();
    nnz = data.nnz();
  }
  const double mb = static_cast<double>(std::filesystem::file_size(path)) / 1e6;
  std::printf("%s n=%lld d=%lld nnz=%lld seconds=%.6f cpu_seconds=%.6f MB/s=%.1f\n", path.c_str(), n, d, nnz, best,
              best_cpu, mb / best);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int repeat = 5;
  bool single = false;
  sparsemc::io::LibsvmOptions options;
  std::vector<std::string> files;
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    if (arg == "--repeat" && a + 1 < argc) {
      repeat = std::max(1, std::atoi(argv[++a]));
    } else if (arg == "--float") {
      single = true;
    } else if (arg == "--multilabel") {
      options.label_format = sparsemc::io::LabelFormat::multilabel;
    } else if (arg.starts_with("--")) {
      std::fprintf(stderr, "usage: %s [--repeat R] [--float] [--multilabel] FILE...\n", argv[0]);
      return 2;
    } else {
      files.push_back(arg);
    }
  }
  try {
    for (const auto& file : files) single ? time_file<float>(file, repeat, options) : time_file<double>(file, repeat, options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
