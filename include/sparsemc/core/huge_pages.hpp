#pragma once
/// \file huge_pages.hpp
/// Large arrays backed by transparent huge pages where the kernel offers them on request.
///
/// A solver's dense arrays (W: d × K, scores and dual variables: n × K) are written once from
/// fresh memory, and with 4 KiB pages every page of them costs a fault that zeroes it: 218 MB of
/// W at d = 30000, K = 1000 took 0.56 s of page faults before the first epoch (on the virtual
/// machines of docs/parallel.md), as long as two of its epochs. Under the kernel policy
/// `transparent_hugepage/enabled = madvise` (Ubuntu's default, and this project's machines')
/// Linux backs a range with 2 MiB pages only when advised to (madvise(MADV_HUGEPAGE)), and then
/// the same W costs about a hundred faults instead of 53 000. These helpers give that advice
/// before an array is first written. Under `always` the advice changes nothing; under `never`,
/// or off Linux, nothing happens. Define SPARSEMC_NO_HUGE_PAGES to leave it out.

#include <cstddef>
#include <cstdint>
#include <vector>

#include <Eigen/Core>

#if defined(__linux__) && !defined(SPARSEMC_NO_HUGE_PAGES)
#include <sys/mman.h>
#endif

namespace sparsemc::detail {

/// The size of a transparent huge page on x86-64 and most arm64 kernels.
inline constexpr std::size_t huge_page_bytes = std::size_t{2} << 20;

/// Advises the kernel to back the whole huge pages inside [data, data + bytes) with huge pages
/// when they are first touched. Ranges smaller than two huge pages are left alone: they hold
/// at most one whole huge page, and advising splits the mapping they live in.
inline void advise_huge_pages([[maybe_unused]] const void* data, [[maybe_unused]] std::size_t bytes) noexcept {
#if defined(__linux__) && !defined(SPARSEMC_NO_HUGE_PAGES) && defined(MADV_HUGEPAGE)
  if (bytes < 2 * huge_page_bytes) return;
  const auto begin = reinterpret_cast<std::uintptr_t>(data);
  const std::uintptr_t first = (begin + huge_page_bytes - 1) & ~(std::uintptr_t{huge_page_bytes} - 1);
  const std::uintptr_t last = (begin + bytes) & ~(std::uintptr_t{huge_page_bytes} - 1);
  if (last > first)
    (void)::madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);  // a hint: failure is harmless
#endif
}

/// Resizes `m` to rows × cols and advises its storage; the entries are left unset. When the size
/// changes Eigen allocates afresh, so the advice comes before the first write.
template <class Derived>
void resize_advised(Eigen::PlainObjectBase<Derived>& m, Eigen::Index rows, Eigen::Index cols) {
  m.resize(rows, cols);
  advise_huge_pages(m.data(), static_cast<std::size_t>(m.size()) * sizeof(typename Derived::Scalar));
}

/// A rows × cols matrix of zeros whose storage was advised before the zeros were written.
template <class Matrix>
[[nodiscard]] Matrix advised_zeros(Eigen::Index rows, Eigen::Index cols) {
  Matrix m;
  resize_advised(m, rows, cols);
  m.setZero();
  return m;
}

/// `v.assign(n, value)`, with storage that, when it must grow, is allocated and advised before
/// it is written.
template <class T>
void assign_advised(std::vector<T>& v, std::size_t n, const T& value) {
  if (v.capacity() < n) {
    std::vector<T>().swap(v);
    v.reserve(n);
    advise_huge_pages(v.data(), n * sizeof(T));
  }
  v.assign(n, value);
}

}  // namespace sparsemc::detail
