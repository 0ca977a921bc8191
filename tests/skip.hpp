#pragma once
/// Skips that are skips. A test case that cannot run here (a peer tool or a data set is
/// missing, or the sanitizer run has no time for it) ends with SPARSEMC_SKIP("why"). Such cases
/// carry the tag [external] and run in a ctest entry of their own (`sparsemc_add_external_tests`
/// in tests/CMakeLists.txt), whose runner (catch_main.cpp) exits 77 — ctest's "skipped" — when
/// every case it ran skipped, and lists each skip with its reason. SPARSEMC_SKIP_PART records a
/// part of a case that could not run while the rest of it did.

#include <catch2/catch.hpp>

#include "data_dirs.hpp"

#include <cstdlib>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace sparsemc_test {

struct SkipRecord {
  std::string test_case;
  std::string reason;
  bool whole_case = true;
};

inline std::vector<SkipRecord>& skip_records() {
  static std::vector<SkipRecord> records;
  return records;
}

/// Whether this is the sanitizer run (SPARSEMC_SANITIZER_RUN set by the asan test preset), which
/// skips what it has no time for.
inline bool sanitizer_run() { return std::getenv("SPARSEMC_SANITIZER_RUN") != nullptr; }

inline void record_skip(const std::string& reason, bool whole_case) {
  skip_records().push_back({Catch::getResultCapture().getCurrentTestName(), reason, whole_case});
}

}  // namespace sparsemc_test

#define SPARSEMC_SKIP_RECORD_(message, whole)                   \
  do {                                                          \
    std::ostringstream sparsemc_skip_message_;                  \
    sparsemc_skip_message_ << message;                          \
    sparsemc_test::record_skip(sparsemc_skip_message_.str(), whole); \
    WARN("SKIPPED: " << sparsemc_skip_message_.str());          \
  } while (false)

/// Ends the test case as skipped, with the reason (a stream expression).
#define SPARSEMC_SKIP(message)               \
  do {                                       \
    SPARSEMC_SKIP_RECORD_(message, true);    \
    return;                                  \
  } while (false)

/// Records that a part of the test case was skipped; the case goes on.
#define SPARSEMC_SKIP_PART(message) SPARSEMC_SKIP_RECORD_(message, false)

/// Records a whole-case skip from inside a helper (which then returns, e.g., an empty optional);
/// the test case must return at once.
#define SPARSEMC_SKIP_FROM_HELPER(message) SPARSEMC_SKIP_RECORD_(message, true)
