#pragma once
/// Where the tests and the benchmarks find their data sets, decided at run time: a path compiled
/// in would differ from clone to clone, and a compiler cache would then reuse none of their
/// objects in a new clone.

#include <cstdlib>
#include <filesystem>

namespace sparsemc_test {

/// The small real data sets shipped in data/: the directory SPARSEMC_REPO_DATA names (ctest sets
/// it for every test, tests/CMakeLists.txt), else data/ under the working directory (a test or
/// a benchmark run by hand from the repository's root).
inline std::filesystem::path repo_data() {
  const char* dir = std::getenv("SPARSEMC_REPO_DATA");
  return dir != nullptr ? std::filesystem::path(dir) : std::filesystem::path("data");
}

/// The shared real data sets: ../shared/data beside the repository, or the directory the
/// environment variable SPARSEMC_SHARED_DATA names — `SPARSEMC_SHARED_DATA=/nonexistent ctest`
/// shows what a clone without the data skips.
inline std::filesystem::path shared_data() {
  const char* overridden = std::getenv("SPARSEMC_SHARED_DATA");
  return overridden != nullptr ? std::filesystem::path(overridden) : repo_data() / ".." / ".." / "shared" / "data";
}

}  // namespace sparsemc_test
