// Throughput of the LIBSVM reader and writer, in MB/s of LIBSVM text.
//   parse/<file>       parse_libsvm on text already in memory (the parser alone)
//   read/<file>        read_libsvm(path): file reading + parsing + building the Dataset
//   read_bz2/<file>    the same through libbz2 (MB/s of decompressed text)
//   write/<file>       write_libsvm into memory
// Files: data/dna.scale (shipped), and when ../shared/data is present news20.t,
// usps_zip.test and sector.t.scale.bz2. The side-by-side ratio to scikit-learn comes from
// bench/parse_vs_sklearn.py.
#include <benchmark/benchmark.h>

#include <sparsemc/io/libsvm.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "data_dirs.hpp"

namespace {

namespace fs = std::filesystem;
namespace io = sparsemc::io;

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

template <class Scalar, class Index>
void register_file(const fs::path& path) {
  const std::string type = std::string(sizeof(Scalar) == 4 ? "float" : "double") + "," +
                           (sizeof(Index) == 4 ? "int32" : "int64");
  const std::string name = path.filename().string() + "<" + type + ">";
  if (path.extension() == ".bz2") {
#ifdef SPARSEMC_HAVE_BZIP2
    // MB/s counts decompressed bytes, measured once.
    std::size_t text_bytes = 0;
    {
      io::detail::FileSource file(path);
      io::detail::Bzip2Source source(file, path.string());
      std::vector<char> block(1 << 20);
      while (const std::size_t got = source.read(block.data(), block.size())) text_bytes += got;
    }
    benchmark::RegisterBenchmark(("read_bz2/" + name).c_str(), [path, text_bytes](benchmark::State& state) {
      for (auto _ : state) benchmark::DoNotOptimize(io::read_libsvm<Scalar, Index>(path));
      state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text_bytes));
    })->Unit(benchmark::kMillisecond);
#endif
    return;
  }
  const auto text = std::make_shared<const std::string>(slurp(path));
  benchmark::RegisterBenchmark(("parse/" + name).c_str(), [text](benchmark::State& state) {
    for (auto _ : state) benchmark::DoNotOptimize(io::parse_libsvm<Scalar, Index>(*text));
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text->size()));
  })->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark(("read/" + name).c_str(), [path, text](benchmark::State& state) {
    for (auto _ : state) benchmark::DoNotOptimize(io::read_libsvm<Scalar, Index>(path));
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text->size()));
  })->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark(("write/" + name).c_str(), [text](benchmark::State& state) {
    const auto data = io::parse_libsvm<Scalar, Index>(*text);
    std::size_t bytes = 0;
    for (auto _ : state) {
      std::ostringstream out;
      io::write_libsvm(out, data);
      bytes += out.view().size();
      benchmark::DoNotOptimize(bytes);
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
  })->Unit(benchmark::kMillisecond);
}

}  // namespace

int main(int argc, char** argv) {
  const fs::path repo = sparsemc_test::repo_data();
  const fs::path shared = sparsemc_test::shared_data() / "multiclass";
  register_file<double, std::int32_t>(repo / "dna.scale");
  register_file<float, std::int32_t>(repo / "dna.scale");
  for (const char* file : {"news20.t", "usps_zip.test", "sector.t.scale.bz2"}) {
    if (fs::exists(shared / file)) {
      register_file<double, std::int32_t>(shared / file);
    } else {
      std::fprintf(stderr, "note: %s absent, not benchmarked\n", (shared / file).c_str());
    }
  }
  if (fs::exists(shared / "news20.t")) register_file<float, std::int64_t>(shared / "news20.t");
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
