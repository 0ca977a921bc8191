// The tests' runner: Catch2's session, then the skip summary of skip.hpp. Exit 77 (ctest:
// skipped) when every test case that ran was skipped, or when no case matched the filter.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>
#include <set>
#include <string>

#include "skip.hpp"

namespace {

class CaseCounter : public Catch::TestEventListenerBase {
 public:
  using TestEventListenerBase::TestEventListenerBase;
  void testCaseStarting(const Catch::TestCaseInfo& info) override { started().insert(info.name); }
  static std::set<std::string>& started() {
    static std::set<std::string> names;
    return names;
  }
};

}  // namespace

CATCH_REGISTER_LISTENER(CaseCounter)

int main(int argc, char** argv) {
  const int status = Catch::Session().run(argc, argv);
  std::set<std::string> skipped_cases;
  for (const auto& skip : sparsemc_test::skip_records()) {
    std::printf("SKIPPED%s: %s: %s\n", skip.whole_case ? "" : " (part)", skip.test_case.c_str(), skip.reason.c_str());
    if (skip.whole_case) skipped_cases.insert(skip.test_case);
  }
  constexpr int ctest_skipped = 77;
  if (status == 0 && skipped_cases.size() == CaseCounter::started().size()) return ctest_skipped;
  return status;
}
