#pragma once
// Shared by test_prox.cpp and test_prox_penalties.cpp: random inputs with ties, zeros, huge and
// tiny magnitudes, and brute-force references computed in long double by different algorithms
// from the library's (sorting, bisection, enumeration of polytope faces).

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <functional>
#include <limits>
#include <numeric>
#include <vector>

#include <Eigen/Dense>

#include <sparsemc/core/rng.hpp>

#include "skip.hpp"

namespace prox_test {

using Real = long double;
using RealVec = std::vector<Real>;

/// True under the sanitizer CI run: tests shrink their trial counts.
using sparsemc_test::sanitizer_run;

/// Trials to run: `full` normally, a tenth (at least 2) under sanitizers.
inline int trials(int full) { return sanitizer_run() ? std::max(2, full / 10) : full; }

inline double uniform(sparsemc::Rng& rng, double lo, double hi) { return lo + (hi - lo) * sparsemc::uniform_real(rng); }

/// Standard normal by Box–Muller (reproducible: built on sparsemc::uniform_real).
inline double normal(sparsemc::Rng& rng) {
  const double u1 = 1.0 - sparsemc::uniform_real(rng), u2 = sparsemc::uniform_real(rng);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

/// Kinds of random vectors the projections are tried on.
enum class Kind { gaussian, ties, sparse, mixed_magnitudes, huge, tiny };
inline constexpr Kind all_kinds[] = {Kind::gaussian, Kind::ties, Kind::sparse, Kind::mixed_magnitudes, Kind::huge, Kind::tiny};

/// Scale of the huge / tiny inputs: 1e30 / 1e-30 for double, 1e15 / 1e-15 for float.
template <class Scalar>
double huge_scale() { return sizeof(Scalar) == 4 ? 1e15 : 1e30; }
template <class Scalar>
double tiny_scale() { return sizeof(Scalar) == 4 ? 1e-15 : 1e-30; }

/// Typical magnitude of a vector of this kind.
template <class Scalar>
double kind_scale(Kind kind) {
  if (kind == Kind::huge) return huge_scale<Scalar>();
  if (kind == Kind::tiny) return tiny_scale<Scalar>();
  return 1.0;
}

/// A random vector of K entries of the given kind.
template <class Scalar>
std::vector<Scalar> random_vector(sparsemc::Rng& rng, std::size_t K, Kind kind) {
  std::vector<Scalar> v(K);
  const double scale = kind_scale<Scalar>(kind);
  static constexpr double levels[] = {-1.0, -0.25, 0.0, 0.5, 1.0};
  for (auto& x : v) {
    switch (kind) {
      case Kind::ties: x = static_cast<Scalar>(levels[sparsemc::uniform_index(rng, 5)]); break;
      case Kind::sparse: x = sparsemc::uniform_real(rng) < 0.8 ? Scalar(0) : static_cast<Scalar>(normal(rng)); break;
      case Kind::mixed_magnitudes:
        x = static_cast<Scalar>(std::copysign(std::pow(10.0, uniform(rng, -6, 6)), normal(rng)));
        break;
      default: x = static_cast<Scalar>(scale * normal(rng)); break;
    }
  }
  return v;
}

template <class Scalar>
RealVec to_real(const std::vector<Scalar>& v) {
  return RealVec(v.begin(), v.end());
}

inline Real max_abs(const RealVec& v) {
  Real m = 0;
  for (Real x : v) m = std::max(m, std::abs(x));
  return m;
}

inline Real max_abs_diff(const RealVec& a, const RealVec& b) {
  Real m = 0;
  for (std::size_t k = 0; k < a.size(); ++k) m = std::max(m, std::abs(a[k] - b[k]));
  return m;
}

/// Exact simplex threshold by sorting (Held–Wolfe–Crowder / Duchi et al.): the largest ρ with
/// y_(ρ) > (Σ_{i≤ρ} y_(i) − a)/ρ, on y − max y for accuracy. Returns τ − max y, with
/// x = ((y − max y) − (τ − max y))_+.
inline Real sorted_simplex_shifted_threshold(const RealVec& y, Real mass) {
  const Real top = *std::max_element(y.begin(), y.end());
  RealVec s(y.size());
  for (std::size_t k = 0; k < y.size(); ++k) s[k] = y[k] - top;
  std::sort(s.begin(), s.end(), std::greater<>());
  Real sum = 0, tau = 0;
  for (std::size_t k = 0; k < s.size(); ++k) {
    sum += s[k];
    const Real candidate = (sum - mass) / static_cast<Real>(k + 1);
    if (s[k] > candidate) tau = candidate;
  }
  return tau;
}

/// The threshold τ itself (x = (y − τ)_+).
inline Real sorted_simplex_threshold(const RealVec& y, Real mass) {
  return *std::max_element(y.begin(), y.end()) + sorted_simplex_shifted_threshold(y, mass);
}

inline RealVec ref_simplex(const RealVec& y, Real mass) {
  RealVec x(y.size(), 0);
  if (mass <= 0) return x;
  const Real top = *std::max_element(y.begin(), y.end());
  const Real tau = sorted_simplex_shifted_threshold(y, mass);
  for (std::size_t k = 0; k < y.size(); ++k) x[k] = std::max((y[k] - top) - tau, Real(0));
  return x;
}

inline RealVec ref_l1_ball(const RealVec& y, Real radius) {
  Real l1 = 0;
  for (Real v : y) l1 += std::abs(v);
  if (l1 <= radius) return y;
  RealVec a(y.size());
  for (std::size_t k = 0; k < y.size(); ++k) a[k] = std::abs(y[k]);
  RealVec x = ref_simplex(a, radius);
  for (std::size_t k = 0; k < y.size(); ++k) x[k] = std::copysign(x[k], y[k]);
  return x;
}

/// Epigraph of max(u + r) by Chierchia Prop. 3.3 read literally: sort ν = u + r ascending and
/// find k̄ with ν_{k̄−1} < θ ≤ ν_{k̄}, θ = (ζ + Σ_{k≥k̄} ν_k)/(K − k̄ + 2) (eqs. 15–16).
inline Real ref_epigraph_theta_sorted(const RealVec& u, Real zeta, const RealVec& r) {
  const std::size_t K = u.size();
  RealVec nu(K);
  for (std::size_t k = 0; k < K; ++k) nu[k] = u[k] + r[k];
  std::sort(nu.begin(), nu.end());
  // 1-based ν_1..ν_K, ν_0 = −∞, ν_{K+1} = +∞; scan k̄ = K+1 down to 1.
  Real tail = 0;
  const Real inf = std::numeric_limits<Real>::infinity();
  for (std::size_t kbar = K + 1; kbar >= 1; --kbar) {
    if (kbar <= K) tail += nu[kbar - 1];
    const Real theta = (zeta + tail) / static_cast<Real>(K - kbar + 2);
    const Real below = kbar >= 2 ? nu[kbar - 2] : -inf;
    const Real above = kbar <= K ? nu[kbar - 1] : inf;
    if (below < theta && theta <= above) return theta;
  }
  return std::numeric_limits<Real>::quiet_NaN();
}

/// θ of the epigraph projection by bisection on G(θ) = ζ − θ + Σ(ν_k − θ)_+ (decreasing).
inline Real ref_epigraph_theta_bisection(const RealVec& u, Real zeta, const RealVec& r) {
  Real lo = zeta, hi = zeta;
  for (std::size_t k = 0; k < u.size(); ++k) hi = std::max(hi, u[k] + r[k]);
  auto G = [&](Real theta) {
    Real s = zeta - theta;
    for (std::size_t k = 0; k < u.size(); ++k) s += std::max(u[k] + r[k] - theta, Real(0));
    return s;
  };
  for (int it = 0; it < 200 && lo < hi; ++it) {
    const Real mid = lo + (hi - lo) / 2;
    if (mid <= lo || mid >= hi) break;
    (G(mid) > 0 ? lo : hi) = mid;
  }
  return lo + (hi - lo) / 2;
}

/// Bi-simplex (PD-Sparse Algorithm 2's problem) by bisection on t of the monotone derivative
/// τ_b(t) + τ_c(t), each threshold by the sort-based rule on a sorted copy (sorted once).
struct BiSimplexRef {
  RealVec x, y;
  Real t = 0;
};
inline BiSimplexRef ref_bi_simplex(const RealVec& b, const RealVec& c, Real cap) {
  BiSimplexRef out{RealVec(b.size(), 0), RealVec(c.size(), 0), 0};
  if (b.empty() || c.empty() || cap <= 0) return out;
  const Real bmax = *std::max_element(b.begin(), b.end()), cmax = *std::max_element(c.begin(), c.end());
  if (bmax + cmax <= 0) return out;
  auto sorted_shifted = [](const RealVec& v, Real top) {
    RealVec s(v.size());
    for (std::size_t k = 0; k < v.size(); ++k) s[k] = v[k] - top;
    std::sort(s.begin(), s.end(), std::greater<>());
    return s;
  };
  const RealVec sb = sorted_shifted(b, bmax), sc = sorted_shifted(c, cmax);
  auto shifted_threshold = [](const RealVec& s, Real mass) {
    Real sum = 0, tau = 0;
    for (std::size_t k = 0; k < s.size(); ++k) {
      sum += s[k];
      const Real candidate = (sum - mass) / static_cast<Real>(k + 1);
      if (s[k] > candidate) tau = candidate;
    }
    return tau;
  };
  // τ_b + τ_c = (bmax + τ'_b) + (cmax + τ'_c), decreasing in t.
  auto slope = [&](Real t) { return (bmax + cmax) + shifted_threshold(sb, t) + shifted_threshold(sc, t); };
  Real lo = 0, hi = std::isinf(cap) ? Real(1) : cap;
  if (std::isinf(cap)) {
    while (slope(hi) > 0) hi *= 2;
  }
  if (slope(hi) >= 0) {
    out.t = hi;
  } else {
    for (int it = 0; it < 300; ++it) {
      const Real mid = lo + (hi - lo) / 2;
      if (mid <= lo || mid >= hi) break;
      (slope(mid) > 0 ? lo : hi) = mid;
    }
    out.t = lo + (hi - lo) / 2;
  }
  const Real tau_b = shifted_threshold(sb, out.t), tau_c = shifted_threshold(sc, out.t);
  for (std::size_t k = 0; k < b.size(); ++k) out.x[k] = std::max((b[k] - bmax) - tau_b, Real(0));
  for (std::size_t k = 0; k < c.size(); ++k) out.y[k] = std::max((c[k] - cmax) - tau_c, Real(0));
  return out;
}

/// Euclidean distance from z to the convex hull of `vertices`, by enumerating every subset of
/// at most dim+1 vertices, projecting onto its affine hull (least squares in barycentric
/// coordinates) and keeping the feasible (nonnegative) candidates. Exact for polytopes whose
/// faces are triangulated by vertex subsets (all of them); exponential, so small cases only.
inline Real distance_to_hull(const RealVec& z, const std::vector<RealVec>& vertices) {
  using Mat = Eigen::Matrix<Real, Eigen::Dynamic, Eigen::Dynamic>;
  using Vec = Eigen::Matrix<Real, Eigen::Dynamic, 1>;
  const std::size_t dim = z.size(), count = vertices.size();
  const Vec target = Eigen::Map<const Vec>(z.data(), static_cast<Eigen::Index>(dim));
  Real best = std::numeric_limits<Real>::infinity();
  for (std::size_t mask = 1; mask < (std::size_t(1) << count); ++mask) {
    std::vector<std::size_t> chosen;
    for (std::size_t i = 0; i < count; ++i) {
      if (mask >> i & 1) chosen.push_back(i);
    }
    if (chosen.size() > dim + 1) continue;
    // Point = v0 + Σ_{i≥1} β_i (v_i − v0); least squares for β, then α = (1 − Σβ, β).
    const Vec v0 = Eigen::Map<const Vec>(vertices[chosen[0]].data(), static_cast<Eigen::Index>(dim));
    Vec point = v0;
    Vec alpha = Vec::Ones(1);
    if (chosen.size() > 1) {
      Mat D(dim, chosen.size() - 1);
      for (std::size_t i = 1; i < chosen.size(); ++i) {
        D.col(static_cast<Eigen::Index>(i - 1)) =
            Eigen::Map<const Vec>(vertices[chosen[i]].data(), static_cast<Eigen::Index>(dim)) - v0;
      }
      const Vec beta = D.completeOrthogonalDecomposition().solve(target - v0);
      point = v0 + D * beta;
      alpha.resize(static_cast<Eigen::Index>(chosen.size()));
      alpha(0) = 1 - beta.sum();
      alpha.tail(beta.size()) = beta;
    }
    if (alpha.minCoeff() < -1e-12L) continue;
    best = std::min(best, (target - point).norm());
  }
  return best;
}

/// Ternary search for the minimiser of a convex function on [lo, hi].
template <class F>
Real ternary_min(F f, Real lo, Real hi, int iterations = 300) {
  for (int it = 0; it < iterations; ++it) {
    const Real a = lo + (hi - lo) / 3, b = hi - (hi - lo) / 3;
    if (f(a) < f(b)) {
      hi = b;
    } else {
      lo = a;
    }
  }
  return lo + (hi - lo) / 2;
}

}  // namespace prox_test
