#pragma once
/// \file bi_simplex.hpp
/// The "bi-simplex" projection of PD-Sparse (Yen et al. 2016, Algorithm 2), which solves the
/// block subproblem (21)–(22) of its fully-corrective block-coordinate Frank–Wolfe method for
/// the separation-ranking loss:
///
///   min_{x ∈ R^N, y ∈ R^M}  ‖x − b‖² + ‖y − c‖²
///   s.t.  x ≥ 0,  y ≥ 0,  Σ_k x_k = Σ_k y_k = t,  t ∈ [0, C].                                (B)
///
/// In (22), x = −α over the active negative labels N_i and y = α over the positive labels P_i
/// of sample i, so this is the projection onto the dual block set C_i of eq. (16).
///
/// For fixed t the two parts decouple into simplex projections, x = (b − τ_b)_+ and
/// y = (c − τ_c)_+ with Σx = Σy = t (simplex.hpp, (S1)). Their value f(t) is convex with
/// f'(t) = −2(τ_b(t) + τ_c(t)), both thresholds decreasing in t, so the optimal t is the root
/// of τ_b + τ_c, clipped to [0, C]:
///
///   t* = 0            if max b + max c ≤ 0 (then x = y = 0),
///   t* = min(t̂, C),  t̂ = ((m)S_b(n) + (n)S_c(m)) / (n + m)  on the segment where the top n
///                     entries of b and the top m of c are active                           (B1)
///
/// (S_b(n) = sum of the n largest b, the paper's step 3 with 1-based counts). The segments are
/// delimited by the breakpoints D_b(n) = S_b(n−1) − (n−1)·b_(n) (the paper's D_b, the mass at
/// which the n-th largest entry becomes active) and likewise D_c; Algorithm 2 sorts b and c
/// and scans the merged breakpoints in increasing t. We scan the same segments but draw the
/// entries in decreasing order from two binary heaps, so the cost is O(N + M + a log(N + M))
/// for a active entries instead of a full sort. Thresholds are computed relative to max b and
/// max c, which keeps t accurate when b or c carry a large common offset.
///
/// Example:
/// \code
///   std::vector<double> b{0.9, 0.1, -0.3}, c{0.5, 0.4}, scratch;
///   double t = sparsemc::prox::project_bi_simplex(std::span<double>(b), std::span<double>(c),
///                                                 1.0, scratch);
///   // b ← x, c ← y with Σx = Σy = t ∈ [0, 1]
/// \endcode

#include <algorithm>
#include <cstddef>
#include <limits>
#include <span>
#include <type_traits>
#include <vector>

#include "../core/traits.hpp"
#include "simplex.hpp"

namespace sparsemc::prox {

/// Solves (B) in place: b ← x, c ← y; returns t = Σx = Σy. `cap` is C ≥ 0 (may be
/// +infinity); empty b or c, or C = 0, force t = 0. Scratch grows to N + M entries.
template <RealScalar Scalar>
Scalar project_bi_simplex(std::span<Scalar> b, std::span<Scalar> c, std::type_identity_t<Scalar> cap,
                          std::vector<Scalar>& scratch) {
  const std::size_t n_total = b.size(), m_total = c.size();
  auto zero = [&] {
    std::fill(b.begin(), b.end(), Scalar(0));
    std::fill(c.begin(), c.end(), Scalar(0));
    return Scalar(0);
  };
  if (n_total == 0 || m_total == 0 || !(cap > 0)) return zero();

  // Two max-heaps in the scratch buffer: entries leave them in decreasing order.
  Scalar* heap_b = detail::workspace(scratch, n_total + m_total);
  Scalar* heap_c = heap_b + n_total;
  std::copy(b.begin(), b.end(), heap_b);
  std::copy(c.begin(), c.end(), heap_c);
  std::make_heap(heap_b, heap_b + n_total);
  std::make_heap(heap_c, heap_c + m_total);
  std::size_t left_b = n_total, left_c = m_total;
  auto pop = [](Scalar* heap, std::size_t& size) {
    std::pop_heap(heap, heap + size);
    return heap[--size];
  };
  const Scalar top_b = pop(heap_b, left_b), top_c = pop(heap_c, left_c);
  const double gap = static_cast<double>(top_b) + static_cast<double>(top_c);
  if (!(gap > 0)) return zero();  // f'(0+) = −2(max b + max c) ≥ 0: t* = 0

  // Sums of the active entries relative to the maxima: S'_b = S_b − n·max b (same for c).
  // In these coordinates τ'_b + τ'_c = −gap at the root, which turns (B1) into
  // t̂ = (m S'_b + n S'_c + n m gap) / (n + m).
  double sum_b = 0, sum_c = 0, n = 1, m = 1;
  double segment_start = 0, t = 0;
  const double cap_d = static_cast<double>(cap), inf = std::numeric_limits<double>::infinity();
  for (;;) {
    const double next_b = left_b ? static_cast<double>(heap_b[0]) - static_cast<double>(top_b) : 0;
    const double next_c = left_c ? static_cast<double>(heap_c[0]) - static_cast<double>(top_c) : 0;
    const double break_b = left_b ? sum_b - n * next_b : inf;  // D_b: the next b becomes active
    const double break_c = left_c ? sum_c - m * next_c : inf;
    const double segment_end = std::min(break_b, break_c);
    const double root = (m * sum_b + n * sum_c + n * m * gap) / (n + m);
    if (root <= segment_end || segment_end >= cap_d) {
      t = std::clamp(root, segment_start, cap_d);
      break;
    }
    segment_start = segment_end;
    if (break_b <= break_c) {
      pop(heap_b, left_b);
      sum_b += next_b;
      n += 1;
    } else {
      pop(heap_c, left_c);
      sum_c += next_c;
      m += 1;
    }
  }
  const auto tau_b = static_cast<Scalar>((sum_b - t) / n);  // thresholds relative to the maxima
  const auto tau_c = static_cast<Scalar>((sum_c - t) / m);
  for (Scalar& x : b) x = std::max((x - top_b) - tau_b, Scalar(0));
  for (Scalar& y : c) y = std::max((y - top_c) - tau_c, Scalar(0));
  return static_cast<Scalar>(t);
}

}  // namespace sparsemc::prox
