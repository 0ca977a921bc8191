// Projections of sparsemc/prox/: each against its optimality conditions (variational inequality
// <v − p, x − p> ≤ 0 for feasible x, complementarity) and against a brute-force reference in long
// double (sorting, bisection), on random inputs with ties, zeros, huge and tiny magnitudes, for
// K = 1 … 10^4, in float and double.

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <vector>

#include <sparsemc/prox/bi_simplex.hpp>
#include <sparsemc/prox/epigraph_max.hpp>
#include <sparsemc/prox/group_soft_threshold.hpp>
#include <sparsemc/prox/simplex.hpp>

#include "prox_test_support.hpp"

using namespace prox_test;
namespace prox = sparsemc::prox;

namespace {

constexpr std::size_t sizes[] = {1, 2, 3, 5, 10, 100, 1000, 10000};

/// How many random vectors per (size, kind): many small ones, a few long ones.
int trials_for(std::size_t K) { return trials(K <= 10 ? 200 : K <= 1000 ? 20 : 3); }

/// Relative accuracy expected of the projections: a few dozen ulps, growing like √K for the
/// sums over the active set.
template <class Scalar>
Real accuracy(std::size_t K) {
  return 64 * static_cast<Real>(std::numeric_limits<Scalar>::epsilon()) * (4 + std::sqrt(static_cast<Real>(K)));
}

/// A random mass / radius commensurate with the vector's scale.
template <class Scalar>
Scalar random_mass(sparsemc::Rng& rng, Kind kind) {
  const double choice = sparsemc::uniform_real(rng);
  if (kind == Kind::huge && choice < 0.5) return Scalar(1);  // tiny relative to the entries
  return static_cast<Scalar>(kind_scale<Scalar>(kind) * uniform(rng, 0.01, 3.0));
}

/// Dirichlet(1, …, 1) point scaled to `mass` (a random feasible point of the simplex).
RealVec random_simplex_point(sparsemc::Rng& rng, std::size_t K, Real mass) {
  RealVec x(K);
  Real sum = 0;
  for (auto& e : x) sum += (e = -std::log(1 - static_cast<Real>(sparsemc::uniform_real(rng))));
  for (auto& e : x) e *= mass / sum;
  return x;
}

/// The simplex checks shared by project_simplex and the sign-stripped ℓ1-ball case:
/// p ≥ 0, Σp = a, p ≈ reference, complementarity with one threshold, and the variational
/// inequality at every vertex a·e_k (which implies it on the whole simplex) and at samples.
template <class Scalar>
void check_simplex_projection(const std::vector<Scalar>& v, Scalar mass, const std::vector<Scalar>& p,
                              sparsemc::Rng& rng) {
  const std::size_t K = v.size();
  const RealVec y = to_real(v), x = to_real(p);
  const Real top = *std::max_element(y.begin(), y.end());
  Real spread = 0;
  for (Real e : y) spread = std::max(spread, top - e);
  const Real scale = spread + mass;
  const Real tol = accuracy<Scalar>(K) * scale;

  const RealVec ref = ref_simplex(y, mass);
  REQUIRE(max_abs_diff(x, ref) <= tol);

  std::size_t active = 0;
  Real sum = 0;
  for (Real e : x) {
    REQUIRE(e >= 0);
    sum += e;
    active += e > 0;
  }
  REQUIRE(std::abs(sum - mass) <= tol * static_cast<Real>(active + 1));

  // d = (v − top) − p is v − p up to a constant, which the VI on the simplex ignores (Σx = Σp).
  RealVec d(K);
  Real theta = 0;  // common value of d on the active set
  for (std::size_t k = 0; k < K; ++k) {
    d[k] = (y[k] - top) - x[k];
    if (x[k] > 0) theta += d[k] / static_cast<Real>(active);
  }
  for (std::size_t k = 0; k < K; ++k) {
    if (x[k] > 0) {
      REQUIRE(std::abs(d[k] - theta) <= tol);
    } else {
      REQUIRE(d[k] <= theta + tol);
    }
  }
  Real inner = 0;
  for (std::size_t k = 0; k < K; ++k) inner += d[k] * x[k];
  const Real vi_tol = 4 * tol * mass;
  REQUIRE(mass * *std::max_element(d.begin(), d.end()) - inner <= vi_tol);  // every vertex a·e_k
  for (int s = 0; s < 3; ++s) {
    const RealVec z = random_simplex_point(rng, K, mass);
    Real gap = 0;
    for (std::size_t k = 0; k < K; ++k) gap += d[k] * (z[k] - x[k]);
    REQUIRE(gap <= vi_tol);
  }
}

}  // namespace

TEMPLATE_TEST_CASE("project_simplex: reference, KKT and variational inequality", "[prox][simplex]", float, double) {
  using Scalar = TestType;
  sparsemc::Rng rng(11);
  std::vector<Scalar> scratch;
  for (const std::size_t K : sizes) {
    for (const Kind kind : all_kinds) {
      for (int trial = 0; trial < trials_for(K); ++trial) {
        const auto v = random_vector<Scalar>(rng, K, kind);
        const Scalar mass = random_mass<Scalar>(rng, kind);
        auto p = v;
        const Scalar tau = prox::project_simplex(std::span<Scalar>(p), mass, scratch);
        INFO("K = " << K << ", kind = " << static_cast<int>(kind) << ", mass = " << mass);
        check_simplex_projection(v, mass, p, rng);
        // The returned threshold reproduces the projection: p = (v − τ)_+ (up to τ's rounding).
        const Real ref_tau = sorted_simplex_threshold(to_real(v), mass);
        REQUIRE(std::abs(static_cast<Real>(tau) - ref_tau) <=
                accuracy<Scalar>(K) * (std::abs(ref_tau) + mass + max_abs(to_real(v))));
      }
    }
  }
}

TEMPLATE_TEST_CASE("project_simplex: edge cases", "[prox][simplex]", float, double) {
  using Scalar = TestType;
  std::vector<Scalar> scratch;
  const Scalar huge = static_cast<Scalar>(huge_scale<Scalar>());

  SECTION("K = 1 gives the mass whatever the input") {
    for (const Scalar v0 : {Scalar(-huge), Scalar(-1), Scalar(0), Scalar(3), huge}) {
      std::vector<Scalar> v{v0};
      prox::project_simplex(std::span<Scalar>(v), Scalar(2.5), scratch);
      REQUIRE(v[0] == Scalar(2.5));
    }
  }
  SECTION("mass 0 gives 0, empty input is a no-op") {
    std::vector<Scalar> v{1, -2, 3};
    prox::project_simplex(std::span<Scalar>(v), Scalar(0), scratch);
    REQUIRE(v == std::vector<Scalar>{0, 0, 0});
    std::vector<Scalar> empty;
    prox::project_simplex(std::span<Scalar>(empty), Scalar(1), scratch);
  }
  SECTION("a constant vector is spread evenly") {
    std::vector<Scalar> v(10000, Scalar(-7.25));
    prox::project_simplex(std::span<Scalar>(v), Scalar(1), scratch);
    for (const Scalar x : v) REQUIRE(x == Approx(1e-4).epsilon(1e-5));
  }
  SECTION("huge entries keep the mass exactly: no catastrophic cancellation") {
    // Top entry alone, far above the others: the projection is exactly mass · e_top.
    std::vector<Scalar> v{huge, Scalar(0.5) * huge, -huge, Scalar(0.999) * huge};
    prox::project_simplex(std::span<Scalar>(v), Scalar(1), scratch);
    REQUIRE(v == std::vector<Scalar>{1, 0, 0, 0});
    // Tied top entries share it.
    std::vector<Scalar> w{huge, huge, Scalar(0.5) * huge};
    prox::project_simplex(std::span<Scalar>(w), Scalar(1), scratch);
    REQUIRE(w == std::vector<Scalar>{0.5, 0.5, 0});
  }
  SECTION("tiny entries and tiny mass") {
    const Scalar tiny = static_cast<Scalar>(tiny_scale<Scalar>());
    std::vector<Scalar> v{3 * tiny, tiny, -tiny};
    prox::project_simplex(std::span<Scalar>(v), 2 * tiny, scratch);  // τ = tiny: {2, 0, 0}·tiny
    REQUIRE(v[0] == Approx(2 * tiny).epsilon(1e-5));
    REQUIRE(v[1] == 0);
    REQUIRE(v[2] == 0);
  }
  SECTION("no allocation after warm-up") {
    sparsemc::Rng rng(3);
    std::vector<Scalar> v = random_vector<Scalar>(rng, 10000, Kind::gaussian);
    prox::project_simplex(std::span<Scalar>(v), Scalar(1), scratch);
    const Scalar* storage = scratch.data();
    for (const std::size_t K : {std::size_t(10), std::size_t(10000), std::size_t(100)}) {
      auto w = random_vector<Scalar>(rng, K, Kind::gaussian);
      prox::project_simplex(std::span<Scalar>(w), Scalar(1), scratch);
      prox::project_l1_ball(std::span<Scalar>(w), Scalar(0.1), scratch);
    }
    REQUIRE(scratch.data() == storage);
  }
}

TEMPLATE_TEST_CASE("project_simplex_le: {x >= 0, sum x <= a}", "[prox][simplex]", float, double) {
  using Scalar = TestType;
  sparsemc::Rng rng(12);
  std::vector<Scalar> scratch;
  for (const std::size_t K : sizes) {
    for (const Kind kind : all_kinds) {
      for (int trial = 0; trial < trials_for(K); ++trial) {
        const auto v = random_vector<Scalar>(rng, K, kind);
        const Scalar mass = random_mass<Scalar>(rng, kind);
        auto p = v;
        prox::project_simplex_le(std::span<Scalar>(p), mass, scratch);
        const RealVec y = to_real(v), x = to_real(p);
        Real positive = 0;
        for (Real e : y) positive += std::max(e, Real(0));
        RealVec ref(K);
        if (positive <= mass) {
          for (std::size_t k = 0; k < K; ++k) ref[k] = std::max(y[k], Real(0));
        } else {
          ref = ref_simplex(y, mass);
        }
        const Real tol = accuracy<Scalar>(K) * (max_abs(y) + mass);
        REQUIRE(max_abs_diff(x, ref) <= tol);
        // Variational inequality at the vertices 0 and a·e_k: a·max(0, max_k d_k) ≤ <d, p>.
        Real inner = 0, largest = 0, sum = 0;
        for (std::size_t k = 0; k < K; ++k) {
          REQUIRE(x[k] >= 0);
          sum += x[k];
          inner += (y[k] - x[k]) * x[k];
          largest = std::max(largest, y[k] - x[k]);
        }
        REQUIRE(sum <= mass + tol * static_cast<Real>(K));
        REQUIRE(mass * largest - inner <= 4 * tol * (mass + max_abs(y)));
        REQUIRE(-inner <= 4 * tol * (mass + max_abs(y)));
      }
    }
  }
}

TEMPLATE_TEST_CASE("project_l1_ball: reference, no-op inside, variational inequality", "[prox][l1ball]", float, double) {
  using Scalar = TestType;
  sparsemc::Rng rng(13);
  std::vector<Scalar> scratch;
  SECTION("random inputs") {
    for (const std::size_t K : sizes) {
      for (const Kind kind : all_kinds) {
        for (int trial = 0; trial < trials_for(K); ++trial) {
          const auto v = random_vector<Scalar>(rng, K, kind);
          const RealVec y = to_real(v);
          Real l1 = 0;
          for (Real e : y) l1 += std::abs(e);
          // Radius inside or outside the ball, in turn.
          const Scalar radius = trial % 3 == 0 ? static_cast<Scalar>(l1 * 1.5 + 1e-30)
                                               : random_mass<Scalar>(rng, kind);
          auto p = v;
          const Scalar tau = prox::project_l1_ball(std::span<Scalar>(p), radius, scratch);
          if (l1 <= radius) {
            REQUIRE(p == v);  // bit for bit
            REQUIRE(tau == 0);
            continue;
          }
          const RealVec x = to_real(p);
          const Real tol = accuracy<Scalar>(K) * (max_abs(y) + radius);
          REQUIRE(max_abs_diff(x, ref_l1_ball(y, radius)) <= tol);
          Real norm1 = 0, inner = 0, largest = 0;
          for (std::size_t k = 0; k < K; ++k) {
            REQUIRE((x[k] == 0 || (x[k] > 0) == (y[k] > 0)));  // signs kept
            norm1 += std::abs(x[k]);
            inner += (y[k] - x[k]) * x[k];
            largest = std::max(largest, std::abs(y[k] - x[k]));
            REQUIRE(std::abs(x[k]) <= std::abs(y[k]));
          }
          REQUIRE(std::abs(norm1 - radius) <= tol * static_cast<Real>(K));
          REQUIRE(radius * largest - inner <= 4 * tol * (radius + max_abs(y)));  // vertices ±r·e_k
        }
      }
    }
  }
  SECTION("radius 0 projects to 0; the threshold alone is exposed") {
    std::vector<Scalar> v{1, -2, 0.5};
    REQUIRE(prox::l1_ball_threshold(std::span<const Scalar>(v), Scalar(1), scratch) == Scalar(1));
    prox::project_l1_ball(std::span<Scalar>(v), Scalar(0), scratch);
    REQUIRE(v == std::vector<Scalar>{0, 0, 0});
  }
}

namespace {

/// Checks one epigraph projection of (u, ζ) with offsets r.
template <class Scalar>
void check_epigraph(const std::vector<Scalar>& u, Scalar zeta, const std::vector<Scalar>& r, sparsemc::Rng& rng,
                    std::vector<Scalar>& scratch) {
  const std::size_t K = u.size();
  auto p = u;
  Scalar theta = zeta;
  if (std::all_of(r.begin(), r.end(), [](Scalar e) { return e == 0; }) && K % 2 == 0) {
    prox::project_epigraph_max(std::span<Scalar>(p), theta, scratch);  // the overload without r
  } else {
    prox::project_epigraph_max(std::span<Scalar>(p), theta, r, scratch);
  }
  const RealVec U = to_real(u), R = to_real(r), P = to_real(p);
  Real top = -std::numeric_limits<Real>::infinity(), spread = 0;
  for (std::size_t k = 0; k < K; ++k) top = std::max(top, U[k] + R[k]);
  if (top <= zeta) {  // already in the epigraph: unchanged bit for bit
    REQUIRE(p == u);
    REQUIRE(theta == zeta);
    return;
  }
  for (std::size_t k = 0; k < K; ++k) spread = std::max(spread, top - (U[k] + R[k]));
  const Real scale = spread + (top - zeta) + max_abs(R);
  // θ = top + θ' is rounded at the magnitude of top.
  const Real tol = accuracy<Scalar>(K) * scale + 8 * std::abs(top) * static_cast<Real>(std::numeric_limits<Scalar>::epsilon());

  // Two references agree: Prop. 3.3's sorted closed form and a bisection.
  const Real theta_sorted = ref_epigraph_theta_sorted(U, zeta, R);
  const Real theta_bisect = ref_epigraph_theta_bisection(U, zeta, R);
  REQUIRE(std::abs(theta_sorted - theta_bisect) <= 1e-12L * (scale + std::abs(top)));
  REQUIRE(std::abs(static_cast<Real>(theta) - theta_sorted) <= tol);
  for (std::size_t k = 0; k < K; ++k) {
    REQUIRE(std::abs(P[k] - std::min(U[k], theta_sorted - R[k])) <= tol);
  }
  // KKT: (u − p, ζ − θ) = α (s, −1) with α = θ − ζ ≥ 0 and s in the simplex over the argmax of p + r.
  const Real Theta = theta;
  REQUIRE(Theta >= static_cast<Real>(zeta));
  Real moved = 0;
  for (std::size_t k = 0; k < K; ++k) {
    REQUIRE(P[k] + R[k] <= Theta + tol);  // feasible
    REQUIRE(U[k] - P[k] >= 0);            // p ≤ u
    if (U[k] > P[k]) REQUIRE(std::abs(P[k] + R[k] - Theta) <= tol);  // moved only onto the max
    moved += U[k] - P[k];
  }
  REQUIRE(std::abs(moved - (Theta - zeta)) <= tol * static_cast<Real>(K + 1));
  // Variational inequality at random feasible points (x, ξ), ξ ≥ max(x + r).
  for (int s = 0; s < 4; ++s) {
    Real gap = 0, xi = -std::numeric_limits<Real>::infinity();
    RealVec x(K);
    for (std::size_t k = 0; k < K; ++k) {
      x[k] = P[k] + scale * static_cast<Real>(normal(rng));
      xi = std::max(xi, x[k] + R[k]);
      gap += (U[k] - P[k]) * (x[k] - P[k]);
    }
    xi += scale * std::abs(static_cast<Real>(normal(rng))) * (s % 2);
    gap += (zeta - Theta) * (xi - Theta);
    REQUIRE(gap <= 8 * tol * scale * static_cast<Real>(K + 1));
  }
}

}  // namespace

TEMPLATE_TEST_CASE("project_epigraph_max: Prop. 3.3 closed form, bisection, KKT", "[prox][epigraph]", float, double) {
  using Scalar = TestType;
  sparsemc::Rng rng(14);
  std::vector<Scalar> scratch;
  SECTION("random inputs") {
    for (const std::size_t K : sizes) {
      for (const Kind kind : all_kinds) {
        for (int trial = 0; trial < trials_for(K); ++trial) {
          const auto u = random_vector<Scalar>(rng, K, kind);
          const double scale = kind_scale<Scalar>(kind);
          std::vector<Scalar> r(K, Scalar(0));
          switch (trial % 3) {
            case 1: {  // Crammer–Singer margins: r_y = 0, r_k = 1 (scaled)
              std::fill(r.begin(), r.end(), static_cast<Scalar>(scale));
              r[sparsemc::uniform_index(rng, K)] = 0;
              break;
            }
            case 2: r = random_vector<Scalar>(rng, K, kind); break;
            default: break;
          }
          Scalar top = u[0] + r[0];
          for (std::size_t k = 1; k < K; ++k) top = std::max(top, u[k] + r[k]);
          // ζ below the max (a real projection), exactly at it, or above (a no-op).
          const double where = sparsemc::uniform_real(rng);
          const Scalar zeta = where < 0.8 ? static_cast<Scalar>(top - scale * uniform(rng, 0, 3) * std::sqrt(static_cast<double>(K)))
                              : where < 0.9 ? top
                                            : static_cast<Scalar>(top + scale);
          INFO("K = " << K << ", kind = " << static_cast<int>(kind) << ", trial = " << trial);
          check_epigraph(u, zeta, r, rng, scratch);
        }
      }
    }
  }
  SECTION("K = 1: θ = (ζ + u + r)/2") {
    std::vector<Scalar> u{3};
    Scalar zeta = -1;
    prox::project_epigraph_max(std::span<Scalar>(u), zeta, std::vector<Scalar>{Scalar(0.5)}, scratch);
    REQUIRE(zeta == Scalar(1.25));
    REQUIRE(u[0] == Scalar(0.75));
  }
  SECTION("the example of the header") {
    std::vector<Scalar> u{2, 0.5, -1}, r{0, 1, 1};
    Scalar zeta = 0;
    prox::project_epigraph_max(std::span<Scalar>(u), zeta, r, scratch);
    REQUIRE(zeta == Approx(7.0 / 6));
    REQUIRE(u[0] == Approx(7.0 / 6));
    REQUIRE(u[1] == Approx(1.0 / 6));
    REQUIRE(u[2] == Scalar(-1));
  }
}

namespace {

template <class Scalar>
void check_bi_simplex(const std::vector<Scalar>& b, const std::vector<Scalar>& c, Scalar cap, sparsemc::Rng& rng,
                      std::vector<Scalar>& scratch) {
  auto x = b;
  auto y = c;
  const Scalar t = prox::project_bi_simplex(std::span<Scalar>(x), std::span<Scalar>(y), cap, scratch);
  const RealVec B = to_real(b), C = to_real(c), X = to_real(x), Y = to_real(y);
  const Real cap_r = cap, T = t;
  const Real scale = std::max(max_abs(B), max_abs(C)) + (std::isinf(cap_r) ? 0 : cap_r) + T;
  const Real tol = accuracy<Scalar>(b.size() + c.size()) * scale;

  const BiSimplexRef ref = ref_bi_simplex(B, C, cap_r);
  REQUIRE(std::abs(T - ref.t) <= tol);
  REQUIRE(max_abs_diff(X, ref.x) <= tol);
  REQUIRE(max_abs_diff(Y, ref.y) <= tol);

  // KKT: x = (b − τ_b)_+, y = (c − τ_c)_+, Σx = Σy = t, and τ_b + τ_c = 0 inside (0, C),
  // ≥ 0 at t = C, and max b + max c ≤ 0 at t = 0.
  REQUIRE(T >= 0);
  REQUIRE(T <= cap_r);
  auto threshold = [&](const RealVec& v, const RealVec& w, Real& sum) {
    Real tau = 0;
    std::size_t active = 0;
    sum = 0;
    for (std::size_t k = 0; k < v.size(); ++k) {
      REQUIRE(w[k] >= 0);
      sum += w[k];
      if (w[k] > 0) {
        tau += v[k] - w[k];
        ++active;
      }
    }
    if (active == 0) return std::numeric_limits<Real>::quiet_NaN();
    tau /= static_cast<Real>(active);
    for (std::size_t k = 0; k < v.size(); ++k) {
      if (w[k] > 0) {
        REQUIRE(std::abs(v[k] - w[k] - tau) <= tol);
      } else {
        REQUIRE(v[k] <= tau + tol);
      }
    }
    return tau;
  };
  Real sum_x = 0, sum_y = 0;
  const Real tau_b = threshold(B, X, sum_x), tau_c = threshold(C, Y, sum_y);
  REQUIRE(std::abs(sum_x - T) <= tol * static_cast<Real>(b.size()));
  REQUIRE(std::abs(sum_y - T) <= tol * static_cast<Real>(c.size()));
  if (T == 0) {
    REQUIRE(*std::max_element(B.begin(), B.end()) + *std::max_element(C.begin(), C.end()) <= tol);
  } else if (T < cap_r) {
    REQUIRE(std::abs(tau_b + tau_c) <= 4 * tol);
  } else {
    REQUIRE(tau_b + tau_c >= -4 * tol);
  }
  // Variational inequality at random feasible points (x', y') with Σx' = Σy' = t' ∈ [0, C].
  for (int s = 0; s < 6; ++s) {
    const Real upper = std::isinf(cap_r) ? 2 * T + scale : cap_r;
    const Real t2 = s == 0 ? 0 : s == 1 ? upper : upper * static_cast<Real>(sparsemc::uniform_real(rng));
    const RealVec x2 = random_simplex_point(rng, b.size(), t2), y2 = random_simplex_point(rng, c.size(), t2);
    Real gap = 0;
    for (std::size_t k = 0; k < b.size(); ++k) gap += (B[k] - X[k]) * (x2[k] - X[k]);
    for (std::size_t k = 0; k < c.size(); ++k) gap += (C[k] - Y[k]) * (y2[k] - Y[k]);
    REQUIRE(gap <= 8 * tol * (scale + upper) * static_cast<Real>(b.size() + c.size()));
  }
}

}  // namespace

TEMPLATE_TEST_CASE("project_bi_simplex (PD-Sparse Algorithm 2): reference and KKT", "[prox][bi_simplex]", float, double) {
  using Scalar = TestType;
  sparsemc::Rng rng(15);
  std::vector<Scalar> scratch;
  constexpr std::size_t negatives[] = {1, 2, 3, 5, 20, 100, 1000, 10000};
  constexpr std::size_t positives[] = {1, 2, 3, 10};
  SECTION("random inputs") {
    for (const std::size_t N : negatives) {
      for (const std::size_t M : positives) {
        for (const Kind kind : all_kinds) {
          const int count = N >= 1000 ? trials(2) : trials(N <= 5 ? 40 : 8);
          for (int trial = 0; trial < count; ++trial) {
            const auto b = random_vector<Scalar>(rng, N, kind);
            const auto c = random_vector<Scalar>(rng, M, kind);
            const double scale = kind_scale<Scalar>(kind);
            const Scalar cap = trial % 4 == 0   ? std::numeric_limits<Scalar>::infinity()
                               : trial % 4 == 1 ? static_cast<Scalar>(scale * 0.01)
                                                : static_cast<Scalar>(scale * uniform(rng, 0.1, 5));
            INFO("N = " << N << ", M = " << M << ", kind = " << static_cast<int>(kind) << ", C = " << cap);
            check_bi_simplex(b, c, cap, rng, scratch);
          }
        }
      }
    }
  }
  SECTION("t = 0 when max b + max c <= 0, and when C = 0") {
    std::vector<Scalar> b{-1, -2}, c{0.5, 1};
    REQUIRE(prox::project_bi_simplex(std::span<Scalar>(b), std::span<Scalar>(c), Scalar(3), scratch) == 0);
    REQUIRE(b == std::vector<Scalar>{0, 0});
    REQUIRE(c == std::vector<Scalar>{0, 0});
    std::vector<Scalar> b2{1, 2}, c2{1};
    REQUIRE(prox::project_bi_simplex(std::span<Scalar>(b2), std::span<Scalar>(c2), Scalar(0), scratch) == 0);
    REQUIRE(b2 == std::vector<Scalar>{0, 0});
  }
  SECTION("the example of the header: t = 0.95") {
    std::vector<Scalar> b{0.9, 0.1, -0.3}, c{0.5, 0.4};
    const Scalar t = prox::project_bi_simplex(std::span<Scalar>(b), std::span<Scalar>(c), Scalar(1), scratch);
    REQUIRE(t == Approx(0.95));
    REQUIRE(b[0] == Approx(0.875));
    REQUIRE(b[1] == Approx(0.075));
    REQUIRE(b[2] == 0);
    REQUIRE(c[0] == Approx(0.525));
    REQUIRE(c[1] == Approx(0.425));
  }
  SECTION("scale equivariance: P(s·b, s·c, s·C) = s·P(b, c, C), huge and tiny s") {
    sparsemc::Rng local(5);
    for (const double s : {huge_scale<Scalar>(), tiny_scale<Scalar>()}) {
      const auto b = random_vector<Scalar>(local, 50, Kind::gaussian);
      const auto c = random_vector<Scalar>(local, 4, Kind::gaussian);
      auto x = b, y = c, xs = b, ys = c;
      for (auto& e : xs) e = static_cast<Scalar>(e * s);
      for (auto& e : ys) e = static_cast<Scalar>(e * s);
      const Scalar t = prox::project_bi_simplex(std::span<Scalar>(x), std::span<Scalar>(y), Scalar(2), scratch);
      const Scalar ts = prox::project_bi_simplex(std::span<Scalar>(xs), std::span<Scalar>(ys), static_cast<Scalar>(2 * s), scratch);
      REQUIRE(ts / s == Approx(t).epsilon(1e-4));
      for (std::size_t k = 0; k < b.size(); ++k) REQUIRE(xs[k] / s == Approx(x[k]).epsilon(1e-4).margin(1e-5));
    }
  }
}

TEMPLATE_TEST_CASE("group_soft_threshold_metric: optimality in the metric diag(h), brute force", "[prox][group]", float,
                   double) {
  using Scalar = TestType;
  sparsemc::Rng rng(61);
  for (const bool zero_sum : {false, true}) {
    for (const std::size_t K : sizes) {
      for (const Kind kind : all_kinds) {
        for (int trial = 0; trial < trials_for(K); ++trial) {
          const auto v = random_vector<Scalar>(rng, K, kind);
          const RealVec y = to_real(v);
          // Curvatures spread over four decades (BlockCD's block model), μ = 0 or not.
          std::vector<Scalar> h(K);
          for (auto& e : h) e = static_cast<Scalar>(std::pow(10.0, uniform(rng, -2, 2)));
          Real mean = 0;
          for (std::size_t k = 0; k < K; ++k) mean += h[k] * y[k] / static_cast<Real>(K);
          if (!zero_sum) mean = 0;
          Real a_norm = 0;  // ‖h ⊙ v − ν₀1‖
          for (std::size_t k = 0; k < K; ++k) a_norm += (h[k] * y[k] - mean) * (h[k] * y[k] - mean);
          a_norm = std::sqrt(a_norm);
          const double lambda = static_cast<double>(a_norm) * uniform(rng, 0, 2);
          const double mu = trial % 2 ? 0.0 : uniform(rng, 0, 1);
          auto p = v;
          prox::group_soft_threshold_metric(std::span<Scalar>(p), std::span<const Scalar>(h), lambda, mu, zero_sum);
          const RealVec u = to_real(p);
          Real u_norm = 0, u_sum = 0;
          for (Real e : u) u_norm += e * e, u_sum += e;
          u_norm = std::sqrt(u_norm);
          const Real scale = a_norm + static_cast<Real>(lambda);
          const Real tol = accuracy<Scalar>(K) * 100 * scale;
          INFO("K " << K << " zero_sum " << zero_sum << " trial " << trial);
          if (zero_sum) REQUIRE(std::abs(u_sum) <= tol * (1 + u_norm));
          // 0 ∈ h ⊙ (u − v) + λ ∂‖u‖ + μu (+ ν1): u = 0 needs ‖h ⊙ v − ν₀1‖ ≤ λ; otherwise the
          // gradient vanishes (up to a multiple of 1 on the hyperplane).
          if (u_norm == 0) {
            REQUIRE(a_norm <= static_cast<Real>(lambda) * (1 + 1e-5L));
          } else {
            RealVec g(K);
            Real g_mean = 0;
            for (std::size_t k = 0; k < K; ++k) {
              g[k] = h[k] * (u[k] - y[k]) + lambda * u[k] / u_norm + mu * u[k];
              g_mean += g[k] / static_cast<Real>(K);
            }
            for (std::size_t k = 0; k < K; ++k) REQUIRE(std::abs(g[k] - (zero_sum ? g_mean : 0)) <= tol);
          }
          // Brute force: no feasible point nearby has a smaller objective.
          const auto objective = [&](const RealVec& w) {
            Real value = 0, norm = 0;
            for (std::size_t k = 0; k < K; ++k) {
              value += 0.5L * h[k] * (w[k] - y[k]) * (w[k] - y[k]) + 0.5L * mu * w[k] * w[k];
              norm += w[k] * w[k];
            }
            return value + lambda * std::sqrt(norm);
          };
          const Real best = objective(u);
          for (int probe = 0; probe < 8; ++probe) {
            RealVec w = u;
            Real shift = 0;
            for (auto& e : w) e += uniform(rng, -1e-2, 1e-2) * (std::abs(e) + 1e-3L), shift += e;
            if (zero_sum)
              for (auto& e : w) e -= shift / static_cast<Real>(K);
            REQUIRE(objective(w) >= best - tol * (u_norm + 1));
          }
        }
      }
    }
  }
  SECTION("constant h without the constraint is (G1)") {
    std::vector<double> v{3.0, 4.0}, h{2.0, 2.0};
    prox::group_soft_threshold_metric(std::span<double>(v), std::span<const double>(h), 2.0, 0.0, false);
    REQUIRE(v[0] == Approx(2.4));  // (1 − (λ/h)/‖v‖) v with λ/h = 1
    REQUIRE(v[1] == Approx(3.2));
  }
}

TEMPLATE_TEST_CASE("group_soft_threshold: closed form and optimality", "[prox][group]", float, double) {
  using Scalar = TestType;
  sparsemc::Rng rng(16);
  SECTION("random inputs") {
    for (const std::size_t K : sizes) {
      for (const Kind kind : all_kinds) {
        for (int trial = 0; trial < trials_for(K); ++trial) {
          const auto v = random_vector<Scalar>(rng, K, kind);
          const RealVec y = to_real(v);
          Real norm = 0;
          for (Real e : y) norm += e * e;
          norm = std::sqrt(norm);
          const Scalar threshold = static_cast<Scalar>(static_cast<double>(norm) * uniform(rng, 0, 2));
          const Scalar post = trial % 2 ? Scalar(1) : static_cast<Scalar>(uniform(rng, 0.1, 1));
          auto p = v;
          const Scalar result_norm = prox::group_soft_threshold(std::span<Scalar>(p), threshold, post);
          const RealVec x = to_real(p);
          const Real tol = accuracy<Scalar>(K) * norm;
          const Real factor = norm > threshold ? (1 - threshold / norm) * post : 0;
          for (std::size_t k = 0; k < K; ++k) REQUIRE(std::abs(x[k] - factor * y[k]) <= tol);
          REQUIRE(std::abs(result_norm - factor * norm) <= tol);
          // Optimality of q = p/post: 0 ∈ q − v + t ∂‖q‖: q = 0 needs ‖v‖ ≤ t, else v − q = t q/‖q‖.
          if (factor == 0) {
            REQUIRE(norm <= static_cast<Real>(threshold) * (1 + 1e-6L));
          } else {
            const Real q_norm = result_norm / static_cast<Real>(post);
            for (std::size_t k = 0; k < K; ++k) {
              const Real q = x[k] / post;
              REQUIRE(std::abs(y[k] - q - threshold * q / q_norm) <= 4 * tol);
            }
          }
        }
      }
    }
  }
  SECTION("norms beyond the range of squares (1e±200 in double) are handled") {
    if constexpr (sizeof(Scalar) == 8) {
      for (const double s : {1e200, 1e-200}) {
        std::vector<double> v{3 * s, 4 * s};
        prox::group_soft_threshold(std::span<double>(v), s);
        REQUIRE(v[0] / s == Approx(2.4));
        REQUIRE(v[1] / s == Approx(3.2));
      }
    }
  }
}
