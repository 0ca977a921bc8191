// Penalties of sparsemc/penalty/: prox against its optimality condition (the violation of the
// prox output with g = (p − v)/t must vanish) and against a brute-force minimisation of the prox
// objective; the violation zero at optimal rows and equal to a brute-force distance elsewhere
// (enumeration of the faces of λ∂R(w), or sampling); dual_norm against its definition and λ_max.

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <vector>

#include <sparsemc/penalty/penalties.hpp>

#include "prox_test_support.hpp"

using namespace prox_test;

static_assert(sparsemc::Penalty<sparsemc::NoPenalty, float> && sparsemc::Penalty<sparsemc::NoPenalty, double>);
static_assert(sparsemc::Penalty<sparsemc::L1, float> && sparsemc::Penalty<sparsemc::L1, double>);
static_assert(sparsemc::Penalty<sparsemc::L1L2, float> && sparsemc::Penalty<sparsemc::L1L2, double>);
static_assert(sparsemc::Penalty<sparsemc::L1Linf, float> && sparsemc::Penalty<sparsemc::L1Linf, double>);
static_assert(sparsemc::EntrywisePenalty<sparsemc::NoPenalty, double> && sparsemc::EntrywisePenalty<sparsemc::L1, float>);
static_assert(!sparsemc::EntrywisePenalty<sparsemc::L1L2, double> && !sparsemc::EntrywisePenalty<sparsemc::L1Linf, double>);

namespace {

enum class Which { none, l1, l1l2, l1linf };

template <Which which>
using PenaltyOf = std::conditional_t<which == Which::none, sparsemc::NoPenalty,
                  std::conditional_t<which == Which::l1, sparsemc::L1,
                  std::conditional_t<which == Which::l1l2, sparsemc::L1L2, sparsemc::L1Linf>>>;

Real norm2(const RealVec& v) {
  Real s = 0;
  for (Real x : v) s += x * x;
  return std::sqrt(s);
}

/// R(x) of each penalty, in long double.
template <Which which>
Real norm_r(const RealVec& x) {
  Real r = 0;
  if constexpr (which == Which::l1) {
    for (Real e : x) r += std::abs(e);
  } else if constexpr (which == Which::l1l2) {
    r = norm2(x);
  } else if constexpr (which == Which::l1linf) {
    r = max_abs(x);
  }
  return r;
}

/// The prox objective Φ(x) = ½‖x − v‖² + t(λR(x) + μ/2‖x‖²).
template <Which which>
Real prox_objective(const RealVec& x, const RealVec& v, Real t, Real lambda, Real mu) {
  Real s = 0, sq = 0;
  for (std::size_t k = 0; k < x.size(); ++k) {
    s += (x[k] - v[k]) * (x[k] - v[k]);
    sq += x[k] * x[k];
  }
  return s / 2 + t * (lambda * norm_r<which>(x) + mu / 2 * sq);
}

/// Brute-force minimiser of Φ by one-dimensional convex searches along a family known to
/// contain it: per entry (none, L1), along the ray of v (L1L2), over the ℓ∞ level s with
/// x(s) = clamp(v/(1 + tμ), −s, s) (L1Linf).
template <Which which>
RealVec brute_force_prox(const RealVec& v, Real t, Real lambda, Real mu) {
  const std::size_t K = v.size();
  RealVec x(K, 0);
  if constexpr (which == Which::none || which == Which::l1) {
    const Real l = which == Which::l1 ? lambda : 0;
    for (std::size_t k = 0; k < K; ++k) {
      auto f = [&](Real e) { return (e - v[k]) * (e - v[k]) / 2 + t * (l * std::abs(e) + mu / 2 * e * e); };
      x[k] = ternary_min(f, -std::abs(v[k]) - 1, std::abs(v[k]) + 1);
    }
  } else if constexpr (which == Which::l1l2) {
    const Real n = norm2(v);
    if (n == 0) return x;
    auto f = [&](Real a) { return (a - n) * (a - n) / 2 + t * (lambda * a + mu / 2 * a * a); };
    const Real a = ternary_min(f, 0, n);
    for (std::size_t k = 0; k < K; ++k) x[k] = a * v[k] / n;
  } else {
    auto at = [&](Real s) {
      RealVec y(K);
      for (std::size_t k = 0; k < K; ++k) y[k] = std::clamp(v[k] / (1 + t * mu), -s, s);
      return y;
    };
    // ψ(s) = min_{‖x‖∞ ≤ s} ½‖x − v‖² + tμ/2‖x‖², plus tλs: convex in s (a partial minimum).
    auto psi = [&](Real level) {
      const RealVec y = at(level);
      Real value = t * lambda * level;
      for (std::size_t k = 0; k < K; ++k) value += (y[k] - v[k]) * (y[k] - v[k]) / 2 + t * mu / 2 * y[k] * y[k];
      return value;
    };
    x = at(ternary_min(psi, 0, max_abs(v)));
  }
  return x;
}

/// A random subgradient s ∈ ∂R(w) (used to build rows that are optimal by construction).
template <Which which>
RealVec random_subgradient(const RealVec& w, sparsemc::Rng& rng) {
  const std::size_t K = w.size();
  RealVec s(K, 0);
  if constexpr (which == Which::l1) {
    for (std::size_t k = 0; k < K; ++k) s[k] = w[k] != 0 ? (w[k] > 0 ? 1 : -1) : uniform(rng, -1, 1);
  } else if constexpr (which == Which::l1l2) {
    const Real n = norm2(w);
    if (n > 0) {
      for (std::size_t k = 0; k < K; ++k) s[k] = w[k] / n;
    } else {
      for (auto& e : s) e = normal(rng);
      const Real radius = static_cast<Real>(sparsemc::uniform_real(rng)) / norm2(s);
      for (auto& e : s) e *= radius;
    }
  } else if constexpr (which == Which::l1linf) {
    const Real m = max_abs(w);
    Real total = 0;
    for (std::size_t k = 0; k < K; ++k) {
      if (m == 0 || std::abs(w[k]) == m) total += (s[k] = -std::log(1 - static_cast<Real>(sparsemc::uniform_real(rng))));
    }
    const Real mass = m == 0 ? static_cast<Real>(sparsemc::uniform_real(rng)) : 1;  // w = 0: inside the ℓ1 ball
    for (std::size_t k = 0; k < K; ++k) {
      const Real sign = m == 0 ? (sparsemc::uniform_real(rng) < 0.5 ? -1 : 1) : (w[k] > 0 ? 1 : -1);
      s[k] = sign * s[k] * mass / total;
    }
  }
  return s;
}

/// Brute-force dist(z, λ∂R(w)): the convex hull of the vertices of λ∂R(w) for the polyhedral
/// penalties (small K), the singleton λw/‖w‖ or sampled points of the ball λB2 for L1L2.
template <Which which>
Real brute_force_distance(const RealVec& z, const RealVec& w, Real lambda, sparsemc::Rng& rng) {
  const std::size_t K = w.size();
  if constexpr (which == Which::none) {
    return norm2(z);
  } else if constexpr (which == Which::l1) {
    std::vector<RealVec> vertices;  // product of {λ sign w_k} and [−λ, λ] over zero entries
    for (std::size_t mask = 0; mask < (std::size_t(1) << K); ++mask) {
      RealVec vertex(K);
      bool duplicate = false;
      for (std::size_t k = 0; k < K; ++k) {
        if (w[k] != 0) {
          vertex[k] = w[k] > 0 ? lambda : -lambda;
          duplicate |= (mask >> k & 1) != 0;
        } else {
          vertex[k] = (mask >> k & 1) ? lambda : -lambda;
        }
      }
      if (!duplicate) vertices.push_back(vertex);
    }
    return distance_to_hull(z, vertices);
  } else if constexpr (which == Which::l1linf) {
    std::vector<RealVec> vertices;
    const Real m = max_abs(w);
    for (std::size_t k = 0; k < K; ++k) {
      RealVec e(K, 0);
      if (m == 0) {
        e[k] = lambda;
        vertices.push_back(e);
        e[k] = -lambda;
        vertices.push_back(e);
      } else if (std::abs(w[k]) == m) {
        e[k] = w[k] > 0 ? lambda : -lambda;
        vertices.push_back(e);
      }
    }
    return distance_to_hull(z, vertices);
  } else {
    const Real n = norm2(w);
    if (n > 0) {
      RealVec d(K);
      for (std::size_t k = 0; k < K; ++k) d[k] = z[k] - lambda * w[k] / n;
      return norm2(d);
    }
    // z in the ball λB2 (its definition): distance 0. Otherwise a random search over the
    // sphere λS (sampled directions, then shrinking perturbations of the best one); every point
    // tried bounds the distance from above.
    if (norm2(z) <= lambda) return 0;
    auto distance_along = [&](const RealVec& u) {
      const Real n = norm2(u);
      Real d = 0;
      for (std::size_t k = 0; k < K; ++k) d += (z[k] - lambda * u[k] / n) * (z[k] - lambda * u[k] / n);
      return std::sqrt(d);
    };
    RealVec best_u(K), u(K);
    Real best = std::numeric_limits<Real>::infinity();
    for (int s = 0; s < 2000; ++s) {
      for (auto& e : u) e = normal(rng);
      if (const Real d = distance_along(u); d < best) best = d, best_u = u;
    }
    for (Real sigma = 0.1L; sigma > 1e-7L; sigma *= 0.9L) {
      for (int s = 0; s < 20; ++s) {
        const Real n = norm2(best_u);
        for (std::size_t k = 0; k < K; ++k) u[k] = best_u[k] / n + sigma * normal(rng);
        if (const Real d = distance_along(u); d < best) best = d, best_u = u;
      }
    }
    return best;
  }
}

/// Rough magnitude λ should have for the penalty to zero some rows of this length.
template <Which which>
double lambda_scale(std::size_t K) {
  if constexpr (which == Which::l1l2) return std::sqrt(static_cast<double>(K));
  if constexpr (which == Which::l1linf) return static_cast<double>(K);
  return 1.0;
}

template <class Scalar>
Real accuracy(std::size_t K) {
  return 64 * static_cast<Real>(std::numeric_limits<Scalar>::epsilon()) * (4 + std::sqrt(static_cast<Real>(K)));
}

template <Which which, class Scalar>
void check_prox() {
  using Penalty = PenaltyOf<which>;
  sparsemc::Rng rng(100 + static_cast<int>(which));
  for (const std::size_t K : {std::size_t(1), std::size_t(2), std::size_t(3), std::size_t(4), std::size_t(10), std::size_t(100), std::size_t(10000)}) {
    const int count = trials(K <= 4 ? 60 : K <= 100 ? 20 : 2);
    for (const Kind kind : all_kinds) {
      for (int trial = 0; trial < count; ++trial) {
        const double scale = kind_scale<Scalar>(kind);
        const auto v = random_vector<Scalar>(rng, K, kind);
        const Scalar t = static_cast<Scalar>(uniform(rng, 0.1, 2));
        const Penalty penalty{.lambda = scale * lambda_scale<which>(K) * uniform(rng, 0, 1.5) / t,
                              .mu = trial % 3 == 0 ? 0.0 : uniform(rng, 0, 2)};
        auto p = v;
        penalty.prox(std::span<Scalar>(p), t);
        const RealVec V = to_real(v), P = to_real(p);
        const Real lambda = penalty.lambda, mu = penalty.mu, T = t;
        INFO("penalty = " << Penalty::name << ", K = " << K << ", kind = " << static_cast<int>(kind)
                          << ", t = " << t << ", lambda = " << lambda << ", mu = " << mu);

        // Optimality: 0 ∈ (p − v)/t + λ∂R(p) + μp, i.e. violation(p, (p − v)/t) = 0.
        std::vector<Scalar> g(K);
        for (std::size_t k = 0; k < K; ++k) g[k] = static_cast<Scalar>((P[k] - V[k]) / T);
        const Real v_scale = max_abs(V) + T * lambda;
        const Real viol = penalty.violation(std::span<const Scalar>(p), std::span<const Scalar>(g));
        REQUIRE(viol <= accuracy<Scalar>(K) * v_scale / T * std::sqrt(static_cast<Real>(K)) * (1 + T * mu));

        if (K <= 4) {  // brute force on small rows
          const RealVec ref = brute_force_prox<which>(V, T, lambda, mu);
          const Real tol = std::max(accuracy<Scalar>(K), Real(1e-8)) * v_scale;
          REQUIRE(max_abs_diff(P, ref) <= tol);
          // No perturbation of p improves Φ (Φ is 1-strongly convex: Φ(p + d) ≥ Φ(p) + ½‖d‖²).
          const Real phi = prox_objective<which>(P, V, T, lambda, mu);
          for (int s = 0; s < 20; ++s) {
            RealVec q = P;
            const Real step = v_scale * (s % 2 ? 1e-3L : 1e-1L);
            for (auto& e : q) e += step * static_cast<Real>(normal(rng));
            if (s % 5 == 0) q[sparsemc::uniform_index(rng, K)] = 0;
            REQUIRE(prox_objective<which>(q, V, T, lambda, mu) >= phi - tol * v_scale * static_cast<Real>(K));
          }
        }
      }
    }
  }
}

template <Which which, class Scalar>
void check_violation() {
  using Penalty = PenaltyOf<which>;
  sparsemc::Rng rng(200 + static_cast<int>(which));
  for (const std::size_t K : {std::size_t(1), std::size_t(2), std::size_t(3), std::size_t(4), std::size_t(50), std::size_t(10000)}) {
    const int count = trials(K <= 4 ? 40 : K <= 50 ? 20 : 2);
    for (const Kind kind : all_kinds) {
      for (int trial = 0; trial < count; ++trial) {
        const double scale = kind_scale<Scalar>(kind);
        auto w = random_vector<Scalar>(rng, K, kind);
        if (trial % 4 == 0) std::fill(w.begin(), w.end(), Scalar(0));  // the zero row
        if (trial % 4 == 1 && K > 1) w[1] = -w[0];                       // an exact tie in |w|
        const Penalty penalty{.lambda = scale * uniform(rng, 0, 2), .mu = trial % 3 == 0 ? 0.0 : uniform(rng, 0, 2)};
        const RealVec W = to_real(w);
        const Real lambda = penalty.lambda, mu = penalty.mu;
        INFO("penalty = " << Penalty::name << ", K = " << K << ", kind = " << static_cast<int>(kind)
                          << ", lambda = " << lambda << ", mu = " << mu << ", trial = " << trial);

        // Optimal by construction: g = −μw − λs with s ∈ ∂R(w).
        const RealVec s = random_subgradient<which>(W, rng);
        std::vector<Scalar> g(K);
        for (std::size_t k = 0; k < K; ++k) g[k] = static_cast<Scalar>(-mu * W[k] - lambda * s[k]);
        const Real g_scale = max_abs(to_real(g)) + lambda + mu * max_abs(W);
        const Real tol = accuracy<Scalar>(K) * g_scale * std::sqrt(static_cast<Real>(K));
        REQUIRE(static_cast<Real>(penalty.violation(std::span<const Scalar>(w), std::span<const Scalar>(g))) <= tol);

        // Random gradient: the violation is the distance from −(g + μw) to λ∂R(w).
        std::vector<Scalar> h = random_vector<Scalar>(rng, K, kind == Kind::ties ? Kind::gaussian : kind);
        const Real viol = penalty.violation(std::span<Scalar>(w), std::span<Scalar>(h));
        if (K <= 4) {
          RealVec z(K);
          for (std::size_t k = 0; k < K; ++k) z[k] = -(static_cast<Real>(h[k]) + mu * W[k]);
          const Real ref = brute_force_distance<which>(z, W, lambda, rng);
          CAPTURE(viol, ref, W, z);
          const Real h_scale = max_abs(z) + lambda;
          const Real ref_tol = which == Which::l1l2 && max_abs(W) == 0 ? 1e-6L * h_scale  // random search
                                                                        : 16 * accuracy<Scalar>(K) * h_scale;
          REQUIRE(std::abs(viol - ref) <= ref_tol);
          if (ref > ref_tol) REQUIRE(viol > 0);
        }
      }
    }
  }
}

template <Which which, class Scalar>
void check_dual_norm() {
  using Penalty = PenaltyOf<which>;
  sparsemc::Rng rng(300 + static_cast<int>(which));
  for (const std::size_t K : {std::size_t(1), std::size_t(2), std::size_t(5), std::size_t(10)}) {
    for (int trial = 0; trial < trials(50); ++trial) {
      const auto g = random_vector<Scalar>(rng, K, trial % 2 ? Kind::gaussian : Kind::ties);
      const RealVec G = to_real(g);
      const Penalty base{};
      const Real dual = base.dual_norm(std::span<const Scalar>(g));
      // Definition: sup {<g, x> : R(x) ≤ 1}, the maximum over the vertices of the unit ball of R
      // (±e_k for ℓ1, {±1}^K for ℓ∞), attained at g/‖g‖ for ℓ2 (sampled points never beat it).
      Real sup = 0;
      if constexpr (which == Which::none) {
        sup = max_abs(G) == 0 ? 0 : std::numeric_limits<Real>::infinity();
        REQUIRE(dual == sup);
        continue;
      } else if constexpr (which == Which::l1) {
        for (std::size_t k = 0; k < K; ++k) sup = std::max(sup, std::abs(G[k]));
      } else if constexpr (which == Which::l1linf) {
        for (std::size_t mask = 0; mask < (std::size_t(1) << K); ++mask) {
          Real inner = 0;
          for (std::size_t k = 0; k < K; ++k) inner += (mask >> k & 1 ? 1 : -1) * G[k];
          sup = std::max(sup, inner);
        }
      } else {
        sup = norm2(G);
        for (int s = 0; s < 200; ++s) {
          RealVec u(K);
          for (auto& e : u) e = normal(rng);
          const Real n = norm2(u);
          Real inner = 0;
          for (std::size_t k = 0; k < K; ++k) inner += G[k] * u[k] / n;
          REQUIRE(inner <= sup * (1 + 1e-12L));
        }
      }
      REQUIRE(std::abs(dual - sup) <= accuracy<Scalar>(K) * (sup + 1));
      // λ_max: W = 0 is optimal for λ ≥ R°(g) and not below.
      if (dual > 0) {
        const std::vector<Scalar> zero(K, Scalar(0));
        const Penalty above{.lambda = static_cast<double>(dual) * (1 + 1e-4), .mu = 1.0};
        const Penalty below{.lambda = static_cast<double>(dual) * (1 - 1e-2), .mu = 1.0};
        REQUIRE(above.violation(std::span<const Scalar>(zero), std::span<const Scalar>(g)) == 0);
        REQUIRE(below.violation(std::span<const Scalar>(zero), std::span<const Scalar>(g)) > 0);
      }
    }
  }
}

}  // namespace

TEMPLATE_TEST_CASE("penalty prox: optimality condition and brute-force minimisation", "[penalty][prox]", float, double) {
  check_prox<Which::none, TestType>();
  check_prox<Which::l1, TestType>();
  check_prox<Which::l1l2, TestType>();
  check_prox<Which::l1linf, TestType>();
}

TEMPLATE_TEST_CASE("penalty violation: zero at optimal rows, the exact distance elsewhere", "[penalty][violation]", float, double) {
  check_violation<Which::none, TestType>();
  check_violation<Which::l1, TestType>();
  check_violation<Which::l1l2, TestType>();
  check_violation<Which::l1linf, TestType>();
}

TEMPLATE_TEST_CASE("penalty dual_norm: definition and lambda_max", "[penalty][dual]", float, double) {
  check_dual_norm<Which::none, TestType>();
  check_dual_norm<Which::l1, TestType>();
  check_dual_norm<Which::l1l2, TestType>();
  check_dual_norm<Which::l1linf, TestType>();
}

TEMPLATE_TEST_CASE("penalty value: lambda R(w) + mu/2 ||w||^2", "[penalty][value]", float, double) {
  using Scalar = TestType;
  const std::vector<Scalar> w{3, -4, 0, 1};
  const double lambda = 0.5, mu = 0.25, squares = 26;
  REQUIRE(sparsemc::NoPenalty{.lambda = lambda, .mu = mu}.value(std::span<const Scalar>(w)) == Approx(mu / 2 * squares));
  REQUIRE(sparsemc::L1{.lambda = lambda, .mu = mu}.value(std::span<const Scalar>(w)) == Approx(lambda * 8 + mu / 2 * squares));
  REQUIRE(sparsemc::L1L2{.lambda = lambda, .mu = mu}.value(std::span<const Scalar>(w)) ==
          Approx(lambda * std::sqrt(squares) + mu / 2 * squares));
  REQUIRE(sparsemc::L1Linf{.lambda = lambda, .mu = mu}.value(std::span<const Scalar>(w)) == Approx(lambda * 4 + mu / 2 * squares));
  // Mutable spans are accepted as well as const ones.
  std::vector<Scalar> m = w;
  REQUIRE(sparsemc::L1{.lambda = lambda, .mu = 0}.value(std::span<Scalar>(m)) == Approx(lambda * 8));
}

TEMPLATE_TEST_CASE("entrywise penalties: per-entry prox and violation match the row versions", "[penalty][entry]", float, double) {
  using Scalar = TestType;
  sparsemc::Rng rng(400);
  auto check = [&](const auto& penalty) {
    for (int trial = 0; trial < trials(50); ++trial) {
      const auto v = random_vector<Scalar>(rng, 20, trial % 2 ? Kind::sparse : Kind::gaussian);
      const auto g = random_vector<Scalar>(rng, 20, Kind::gaussian);
      const Scalar t = static_cast<Scalar>(uniform(rng, 0.1, 2));
      auto p = v;
      penalty.prox(std::span<Scalar>(p), t);
      Real squares = 0;
      for (std::size_t k = 0; k < v.size(); ++k) {
        REQUIRE(penalty.prox_entry(v[k], t) == p[k]);  // bit for bit
        const Real e = penalty.violation_entry(v[k], g[k]);
        squares += e * e;
      }
      const Real row = penalty.violation(std::span<const Scalar>(v), std::span<const Scalar>(g));
      REQUIRE(std::abs(row - std::sqrt(squares)) <= accuracy<Scalar>(20) * (row + 1));
    }
  };
  check(sparsemc::NoPenalty{.lambda = 0, .mu = 0.7});
  check(sparsemc::L1{.lambda = 0.6, .mu = 0.3});
  check(sparsemc::L1{.lambda = 0.6, .mu = 0});
}

TEMPLATE_TEST_CASE("L1Linf: robust tie test and per-thread scratch", "[penalty][l1linf]", float, double) {
  using Scalar = TestType;
  const Scalar eps = std::numeric_limits<Scalar>::epsilon();
  const sparsemc::L1Linf penalty{.lambda = 1.0, .mu = 0.5};
  // Optimal for the tied row (1, −1, 0.3): g = −μw − λ(½, −½, 0).
  auto gradient_for = [&](const std::vector<Scalar>& w) {
    return std::vector<Scalar>{static_cast<Scalar>(-0.5 * w[0] - 0.5), static_cast<Scalar>(-0.5 * w[1] + 0.5),
                               static_cast<Scalar>(-0.5 * w[2])};
  };
  SECTION("magnitudes a few ulps apart count as ties") {
    for (const Scalar gap : {Scalar(0), eps, 4 * eps, 16 * eps}) {
      const std::vector<Scalar> w{1, -(1 - gap), Scalar(0.3)};
      const auto g = gradient_for(w);
      REQUIRE(penalty.violation(std::span<const Scalar>(w), std::span<const Scalar>(g)) <= 8 * eps);
    }
  }
  SECTION("a real gap is not a tie: the second entry's subgradient mass is a violation") {
    const std::vector<Scalar> w{1, Scalar(-0.999), Scalar(0.3)};
    const auto g = gradient_for(w);
    // J = {0}: entry 0 needs sign(w_0) z_0 = λ = 1 but has 0.5; entry 1 needs z_1 = 0 but has −0.5.
    const Real expected = std::sqrt(0.5L * 0.5L + 0.5L * 0.5L);
    REQUIRE(penalty.violation(std::span<const Scalar>(w), std::span<const Scalar>(g)) == Approx(expected).epsilon(1e-5));
  }
  SECTION("the prox output ties exactly") {
    // |v| = (3, 2, 0.5, 2.5), ℓ1 radius 1: τ = (3 + 2.5 − 1)/2 = 2.25 clamps entries 0 and 3.
    std::vector<Scalar> v{3, -2, Scalar(0.5), Scalar(-2.5)};
    penalty.prox(std::span<Scalar>(v), Scalar(1));
    REQUIRE(v[0] == -v[3]);
    REQUIRE(v[0] == Approx(2.25 / 1.5));
    REQUIRE(v[1] == Approx(-2 / 1.5));
  }
  SECTION("the per-thread scratch is reused; the explicit-scratch overloads agree") {
    sparsemc::Rng rng(7);
    auto big = random_vector<Scalar>(rng, 5000, Kind::gaussian);
    penalty.prox(std::span<Scalar>(big), Scalar(1));
    const Scalar* storage = sparsemc::detail::penalty_scratch<Scalar>().data();
    std::vector<Scalar> own;
    for (const std::size_t K : {std::size_t(10), std::size_t(5000), std::size_t(300)}) {
      const auto v = random_vector<Scalar>(rng, K, Kind::gaussian);
      const auto g = random_vector<Scalar>(rng, K, Kind::gaussian);
      auto a = v, b = v;
      penalty.prox(std::span<Scalar>(a), Scalar(0.3));
      penalty.prox(std::span<Scalar>(b), Scalar(0.3), own);
      REQUIRE(a == b);
      REQUIRE(penalty.violation(std::span<const Scalar>(a), std::span<const Scalar>(g)) ==
              penalty.violation(std::span<const Scalar>(a), std::span<const Scalar>(g), own));
    }
    REQUIRE(sparsemc::detail::penalty_scratch<Scalar>().data() == storage);
  }
}
