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

/// Runs part(0), …, part(team − 1), part t on thread t of the team whenever the runtime gives
/// the whole team (so that a thread meets the same part, and the same memory, at every call);
/// with fewer threads each takes every so-many-th part. Exceptions as parallel_tasks.
template <class Part>
void on_each_thread(int team, Part&& part) {
  if (team <= 1) {
    for (int t = 0; t < team; ++t) part(static_cast<std::size_t>(t));
    return;
  }
  std::exception_ptr thrown;
#ifdef SPARSEMC_USE_OPENMP
#pragma omp parallel num_threads(team)
  {
    const int size = omp_get_num_threads();
    for (int t = omp_get_thread_num(); t < team; t += size) {
      try {
        part(static_cast<std::size_t>(t));
      } catch (...) {
#pragma omp critical(sparsemc_on_each_thread)
        if (!thrown) thrown = std::current_exception();
      }
    }
  }
#else
  for (int t = 0; t < team; ++t) {
    try {
      part(static_cast<std::size_t>(t));
    } catch (...) {
      if (!thrown) thrown = std::current_exception();
    }
  }
#endif
  if (thrown) std::rethrow_exception(thrown);
}

}  // namespace detail
}  // namespace sparsemc
