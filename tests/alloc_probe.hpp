#pragma once
// Counts heap allocations inside a window, for the "iterations do not allocate" tests: every
// replacement operator new below is counted while the window is open, and Eigen's own heap use
// trips its runtime no-malloc check, counted through the redefined eigen_assert (any other
// failed Eigen assertion aborts as usual).
//
// Include it FIRST (before any Eigen header) in exactly ONE translation unit per test
// executable: it defines the replaceable global operator new / delete.

#define EIGEN_RUNTIME_NO_MALLOC
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <new>

namespace alloc_probe {
inline std::atomic<bool> window_open{false};
inline std::atomic<long> eigen_mallocs{0};
inline std::atomic<long> new_calls{0};
}  // namespace alloc_probe

#define eigen_assert(x)                                                                       \
  do {                                                                                        \
    if (!(x)) {                                                                               \
      if (!alloc_probe::window_open.load()) {                                                 \
        std::fprintf(stderr, "Eigen assertion failed: %s (%s:%d)\n", #x, __FILE__, __LINE__); \
        std::abort();                                                                         \
      }                                                                                       \
      alloc_probe::eigen_mallocs.fetch_add(1);                                                \
    }                                                                                         \
  } while (false)

#include <Eigen/Core>

namespace alloc_probe {
/// Zeroes the counts, forbids Eigen's heap and starts counting operator new.
inline void open_window() {
  new_calls = 0;
  eigen_mallocs = 0;
  Eigen::internal::set_is_malloc_allowed(false);
  window_open = true;
}
/// Stops counting; the counts stay readable.
inline void close_window() {
  window_open = false;
  Eigen::internal::set_is_malloc_allowed(true);
}
}  // namespace alloc_probe

// noinline: GCC would otherwise pair the inlined malloc/free with new/delete and warn.
[[gnu::noinline]] void* operator new(std::size_t size) {
  if (alloc_probe::window_open.load()) alloc_probe::new_calls.fetch_add(1);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
[[gnu::noinline]] void* operator new[](std::size_t size) { return ::operator new(size); }
[[gnu::noinline]] void operator delete(void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete[](void* p) noexcept { ::operator delete(p); }
[[gnu::noinline]] void operator delete(void* p, std::size_t) noexcept { ::operator delete(p); }
[[gnu::noinline]] void operator delete[](void* p, std::size_t) noexcept { ::operator delete(p); }
// The nothrow forms too (Catch registers test cases through them): every new pairs with the free above.
[[gnu::noinline]] void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  if (alloc_probe::window_open.load()) alloc_probe::new_calls.fetch_add(1);
  return std::malloc(size == 0 ? 1 : size);
}
[[gnu::noinline]] void* operator new[](std::size_t size, const std::nothrow_t& tag) noexcept {
  return ::operator new(size, tag);
}
[[gnu::noinline]] void operator delete(void* p, const std::nothrow_t&) noexcept { ::operator delete(p); }
[[gnu::noinline]] void operator delete[](void* p, const std::nothrow_t&) noexcept { ::operator delete(p); }
