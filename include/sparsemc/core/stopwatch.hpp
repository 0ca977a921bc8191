#pragma once
/// \file stopwatch.hpp
/// Wall-clock timing for time limits and reports.

#include <chrono>

namespace sparsemc {

/// Seconds elapsed since construction or the last restart(), from a monotonic clock.
class Stopwatch {
 public:
  Stopwatch() : start_(clock::now()) {}
  void restart() { start_ = clock::now(); }
  [[nodiscard]] double seconds() const {
    return std::chrono::duration<double>(clock::now() - start_).count();
  }

 private:
  using clock = std::chrono::steady_clock;
  clock::time_point start_;
};

}  // namespace sparsemc
