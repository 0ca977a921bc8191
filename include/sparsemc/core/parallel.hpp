#pragma once
/// \file parallel.hpp
/// Threads: how many a solver's `threads` option means, and the one parallel loop shape the
/// solvers share (tasks handed out one at a time, exceptions carried back to the caller).
///
/// OpenMP is on by default when the compiler has it (CMake option SPARSEMC_USE_OPENMP, which
/// defines the macro of that name); without it every loop runs its tasks in turn on the
/// calling thread and `available_threads()` is 1.
///
/// \code
///   const int team = sparsemc::resolve_threads(options.threads);   // 0 → every core
///   const int busy = sparsemc::detail::team_for_work(team, multiply_adds);  // small loops: fewer
///   sparsemc::detail::parallel_tasks(busy, n_tasks, [&](std::size_t task) { work(task); });
/// \endcode

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <exception>

#ifdef SPARSEMC_USE_OPENMP
#include <omp.h>
#endif

namespace sparsemc {

/// True when this build runs parallel loops on OpenMP threads.
inline constexpr bool has_openmp =
#ifdef SPARSEMC_USE_OPENMP
    true;
#else
    false;
#endif

/// The threads a loop may use: OpenMP's default team (OMP_NUM_THREADS, else the cores), 1
/// without OpenMP.
[[nodiscard]] inline int available_threads() noexcept {
#ifdef SPARSEMC_USE_OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

/// The team of a loop for an option `threads`: 0 = available_threads(), n ≥ 1 = n (1 without
/// OpenMP, where the option is accepted and changes nothing).
[[nodiscard]] inline int resolve_threads(int threads) noexcept {
  if constexpr (!has_openmp) return 1;
  return threads > 0 ? threads : available_threads();
}

namespace detail {

/// Multiply-adds a parallel loop gives each thread at least: below about this much work a
/// thread's share takes less time than waking it and joining it (a few µs on an idle machine,
/// far more when other processes hold the cores and the team's waits spin), so smaller loops
/// run on fewer threads, the smallest on the calling thread alone (docs/parallel.md).
inline constexpr double min_work_per_thread = 1 << 14;

/// The threads of `team` worth waking for a loop of `work` multiply-adds: one per
/// `per_thread` of them, from 1 to `team`.
[[nodiscard]] inline int team_for_work(int team, double work, double per_thread = min_work_per_thread) noexcept {
  const double worth = std::floor(work / per_thread);
  return worth >= static_cast<double>(team) ? team : std::max(1, static_cast<int>(worth));
}

/// The calling thread's number in the team of the innermost parallel region (0 outside one, and
/// without OpenMP): the index of a per-thread buffer inside `parallel_tasks`.
[[nodiscard]] inline int thread_index() noexcept {
#ifdef SPARSEMC_USE_OPENMP
  return omp_get_thread_num();
#else
  return 0;
#endif
}

/// Runs task(0), …, task(count − 1) on `team` threads, handing the tasks out one at a time in
/// order (OpenMP's dynamic schedule: tasks of uneven cost balance themselves). Which thread
/// runs a task is not fixed, so a task must write only its own state. An exception a task
/// throws is rethrown here after every task has ended (the first caught, if several).
/// Allocates nothing itself.
template <class Task>
void parallel_tasks(int team, std::size_t count, Task&& task) {
  if (team <= 1 || count <= 1) {
    for (std::size_t t = 0; t < count; ++t) task(t);
    return;
  }
  std::exception_ptr thrown;
#ifdef SPARSEMC_USE_OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(team)
#endif
  for (std::ptrdiff_t t = 0; t < static_cast<std::ptrdiff_t>(count); ++t) {
    try {
      task(static_cast<std::size_t>(t));
    } catch (...) {
#ifdef SPARSEMC_USE_OPENMP
#pragma omp critical(sparsemc_parallel_tasks)
#endif
      if (!thrown) thrown = std::current_exception();
    }
  }
  if (thrown) std::rethrow_exception(thrown);
}

/// One parallel region held across the phases of a loop (`on_team`): every thread runs the
/// same body, whose phases share out work and meet at barriers, in place of a region per
/// phase. `parts` gives part t to thread t (every so-many-th with fewer threads), `tasks`
/// hands tasks out one at a time and ends with a barrier, `leader` runs a step on thread 0
/// only. A part, task or step that throws keeps the first exception, which on_team rethrows
/// after the region, and sets failed(): read after a barrier, it lets the threads leave their
/// loop together.
class TeamRegion {
 public:
  template <class Part>
  void parts(std::size_t count, Part&& part) {
    for (auto t = static_cast<std::size_t>(index()); t < count; t += static_cast<std::size_t>(size()))
      guard([&] { part(t); });
  }

  template <class Task>
  void tasks(std::size_t count, Task&& task) {
#ifdef SPARSEMC_USE_OPENMP
#pragma omp for schedule(dynamic, 1)
#endif
    for (std::ptrdiff_t t = 0; t < static_cast<std::ptrdiff_t>(count); ++t)
      guard([&] { task(static_cast<std::size_t>(t)); });
  }

  template <class Step>
  void leader(Step&& step) {
    if (index() == 0) guard(step);
  }

  void barrier() const noexcept {
#ifdef SPARSEMC_USE_OPENMP
#pragma omp barrier
#endif
  }

  [[nodiscard]] bool failed() const noexcept { return failed_.load(std::memory_order_relaxed); }

 private:
  template <class Body>
  friend void on_team(int team, Body&& body);

  [[nodiscard]] static int index() noexcept { return thread_index(); }
  [[nodiscard]] static int size() noexcept {
#ifdef SPARSEMC_USE_OPENMP
    return omp_get_num_threads();
#else
    return 1;
#endif
  }

  template <class Step>
  void guard(Step&& step) noexcept {
    try {
      step();
    } catch (...) {
#ifdef SPARSEMC_USE_OPENMP
#pragma omp critical(sparsemc_team_region)
#endif
      if (!thrown_) thrown_ = std::current_exception();
      failed_.store(true, std::memory_order_relaxed);
    }
  }

  std::exception_ptr thrown_;
  std::atomic<bool> failed_{false};
};

/// Runs body(region) on every thread of one parallel region of `team` threads (on the calling
/// thread alone for a team of 1, or without OpenMP), then rethrows the first exception a phase
/// threw.
template <class Body>
void on_team(int team, Body&& body) {
  TeamRegion region;
#ifdef SPARSEMC_USE_OPENMP
#pragma omp parallel num_threads(std::max(team, 1))
  body(region);
#else
  (void)team;
  body(region);
#endif
  if (region.thrown_) std::rethrow_exception(region.thrown_);
}

}  // namespace detail
}  // namespace sparsemc
