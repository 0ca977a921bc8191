// Losses (loss/): values against brute-force definitions, gradients and curvature diagonals
// against finite differences, curvature bounds against sampled pairs and finite-difference
// Hessians (and shown attained), subgradients by the subgradient inequality, the logistic at
// ±1e6, no allocation per call, and the concepts and traits each loss models. Float and double,
// K = 1…1000.
#include <catch2/catch.hpp>

#include <sparsemc/core/rng.hpp>
#include <sparsemc/loss/losses.hpp>

#include <Eigen/Dense>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <new>
#include <numeric>
#include <span>
#include <vector>

#include "skip.hpp"

using namespace sparsemc;

// ---------------------------------------------------------------------------------------------
// Allocation counter (the per-sample calls must not allocate). Replacing operator new would
// hide allocations from AddressSanitizer, so the counter is compiled out under sanitizers.
#if defined(__SANITIZE_ADDRESS__)
#define SPARSEMC_TEST_COUNT_ALLOCATIONS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SPARSEMC_TEST_COUNT_ALLOCATIONS 0
#endif
#endif
#ifndef SPARSEMC_TEST_COUNT_ALLOCATIONS
#define SPARSEMC_TEST_COUNT_ALLOCATIONS 1
#endif

#if SPARSEMC_TEST_COUNT_ALLOCATIONS
namespace {
std::atomic<long> allocation_count{0};
}
void* operator new(std::size_t size) {
  allocation_count.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
// GCC cannot see that these pair with the operator new above once it inlines them.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif

namespace {

using sparsemc_test::sanitizer_run;

// The class counts every test sweeps (1000 shrinks under sanitizers).
std::vector<std::size_t> class_counts() {
  return {1, 2, 3, 10, sanitizer_run() ? std::size_t{100} : std::size_t{1000}};
}

template <class Scalar>
std::vector<Scalar> random_scores(Rng& rng, std::size_t K, double scale) {
  std::vector<Scalar> s(K);
  for (auto& v : s) v = static_cast<Scalar>(scale * (2 * uniform_real(rng) - 1));
  return s;
}

// A sorted class set: one class (multiclass) or each class with probability `density`.
std::vector<ClassIndex> random_classes(Rng& rng, std::size_t K, bool multilabel, double density) {
  std::vector<ClassIndex> y;
  if (!multilabel) {
    y.push_back(static_cast<ClassIndex>(uniform_index(rng, K)));
    return y;
  }
  for (std::size_t k = 0; k < K; ++k)
    if (uniform_real(rng) < density) y.push_back(static_cast<ClassIndex>(k));
  return y;
}

bool contains(const std::vector<ClassIndex>& y, std::size_t k) {
  return std::binary_search(y.begin(), y.end(), static_cast<ClassIndex>(k));
}

// ----- brute-force definitions, in long double -----------------------------------------------
template <class Scalar>
long double brute_squared_hinge(const std::vector<Scalar>& s, const std::vector<ClassIndex>& y) {
  long double sum = 0;
  const auto c = static_cast<std::size_t>(y[0]);
  for (std::size_t r = 0; r < s.size(); ++r)
    if (r != c) {
      const long double a = std::max(0.0L, 1.0L - (static_cast<long double>(s[c]) - s[r]));
      sum += a * a;
    }
  return sum;
}
template <class Scalar>
long double brute_huber_hinge(const HuberHinge& loss, const std::vector<Scalar>& s, const std::vector<ClassIndex>& y) {
  const long double d = loss.smoothing;
  long double sum = 0;
  const auto c = static_cast<std::size_t>(y[0]);
  for (std::size_t r = 0; r < s.size(); ++r)
    if (r != c) {
      const long double z = 1.0L - (static_cast<long double>(s[c]) - s[r]);
      sum += z <= 0 ? 0.0L : z <= d ? z * z / (2 * d) : z - d / 2;
    }
  return sum;
}
template <class Scalar>
long double brute_ovr(const std::vector<Scalar>& s, const std::vector<ClassIndex>& y) {
  long double sum = 0;
  for (std::size_t r = 0; r < s.size(); ++r) {
    const long double Y = contains(y, r) ? 1 : -1;
    const long double a = std::max(0.0L, 1.0L - Y * s[r]);
    sum += a * a;
  }
  return sum;
}
template <class Scalar>
long double brute_separation_ranking(const std::vector<Scalar>& s, const std::vector<ClassIndex>& y) {
  long double worst = 0;  // the maximum over no pair is 0
  for (std::size_t n = 0; n < s.size(); ++n) {
    if (contains(y, n)) continue;
    for (const ClassIndex p : y)
      worst = std::max(worst, 1.0L + s[n] - static_cast<long double>(s[static_cast<std::size_t>(p)]));
  }
  return worst;
}
template <class Scalar>
long double brute_logistic(const std::vector<Scalar>& s, const std::vector<ClassIndex>& y) {
  if (y.empty()) return 0;
  const long double m = *std::max_element(s.begin(), s.end());  // exp(±1e6) overflows even here
  long double z = 0;
  for (const Scalar v : s) z += std::exp(static_cast<long double>(v) - m);
  long double mean = 0;
  for (const ClassIndex c : y) mean += s[static_cast<std::size_t>(c)] - m;
  mean /= static_cast<long double>(y.size());
  return std::log(z) - mean - std::log(static_cast<long double>(y.size()));
}
template <class Scalar>
long double brute_least_squares(const std::vector<Scalar>& s, const std::vector<ClassIndex>& y) {
  long double sum = 0;
  for (std::size_t r = 0; r < s.size(); ++r) {
    const long double d = s[r] - (contains(y, r) ? 1.0L : 0.0L);
    sum += d * d;
  }
  return sum / 2;
}

// Number of hinge terms whose argument lies within `h` of its kink (0 for smooth losses): the
// finite-difference error of a C¹ piecewise quadratic is at most h/2 per such term.
template <class Scalar>
int kinks_near(const SquaredHinge&, const std::vector<Scalar>& s, const std::vector<ClassIndex>& y, double h) {
  int count = 0;
  const auto c = static_cast<std::size_t>(y[0]);
  for (std::size_t r = 0; r < s.size(); ++r)
    if (r != c && std::abs(1.0 - double(s[c]) + double(s[r])) < h) ++count;
  return count;
}
template <class Scalar>
int kinks_near(const HuberHinge& loss, const std::vector<Scalar>& s, const std::vector<ClassIndex>& y, double h) {
  int count = 0;  // φ'' jumps by 1/δ at z = 0 and z = δ: each counts as ⌈1/(2δ)⌉ squared-hinge kinks (a jump of 2)
  const auto c = static_cast<std::size_t>(y[0]);
  for (std::size_t r = 0; r < s.size(); ++r) {
    const double z = 1.0 - double(s[c]) + double(s[r]);
    if (r != c && (std::abs(z) < h || std::abs(z - loss.smoothing) < h)) ++count;
  }
  return count * static_cast<int>(std::ceil(0.5 / loss.smoothing));
}
template <class Scalar>
int kinks_near(const OvrSquaredHinge&, const std::vector<Scalar>& s, const std::vector<ClassIndex>& y, double h) {
  int count = 0;
  for (std::size_t r = 0; r < s.size(); ++r)
    if (std::abs(1.0 - (contains(y, r) ? 1.0 : -1.0) * double(s[r])) < h) ++count;
  return count;
}
template <class Scalar, class L>
int kinks_near(const L&, const std::vector<Scalar>&, const std::vector<ClassIndex>&, double) {
  return 0;
}

// ----- finite differences --------------------------------------------------------------------
template <class Scalar, class L>
std::vector<double> fd_gradient(const L& loss, const std::vector<Scalar>& s, ClassSet y, double h) {
  std::vector<Scalar> x = s;
  std::vector<double> fd(s.size());
  for (std::size_t k = 0; k < s.size(); ++k) {
    const Scalar up = static_cast<Scalar>(s[k] + h), down = static_cast<Scalar>(s[k] - h);
    x[k] = up;
    const double fp = loss.template value<Scalar>(x, y);
    x[k] = down;
    const double fm = loss.template value<Scalar>(x, y);
    x[k] = s[k];
    fd[k] = (fp - fm) / (double(up) - double(down));
  }
  return fd;
}

// ∇ℓ(s + h v) − ∇ℓ(s − h v) over 2h: the average Hessian on the segment applied to v.
template <class Scalar, class L>
Eigen::VectorXd fd_hessian_times(const L& loss, const std::vector<Scalar>& s, ClassSet y,
                                 const Eigen::VectorXd& v, double h) {
  const std::size_t K = s.size();
  std::vector<Scalar> xp(K), xm(K), gp(K), gm(K);
  for (std::size_t k = 0; k < K; ++k) {
    xp[k] = static_cast<Scalar>(s[k] + h * v[Eigen::Index(k)]);
    xm[k] = static_cast<Scalar>(s[k] - h * v[Eigen::Index(k)]);
  }
  loss.template gradient<Scalar>(xp, y, gp);
  loss.template gradient<Scalar>(xm, y, gm);
  Eigen::VectorXd out(static_cast<Eigen::Index>(K));
  for (std::size_t k = 0; k < K; ++k) out[Eigen::Index(k)] = (double(gp[k]) - double(gm[k])) / (2 * h);
  return out;
}

// Largest eigenvalue of the (averaged) Hessian at s by power iteration on FD products.
template <class Scalar, class L>
double fd_lambda_max(const L& loss, const std::vector<Scalar>& s, ClassSet y, double h, Rng& rng) {
  const auto K = Eigen::Index(s.size());
  Eigen::VectorXd v(K);
  for (auto i = Eigen::Index(0); i < K; ++i) v[i] = 2 * uniform_real(rng) - 1;
  v.normalize();
  double lambda = 0;
  for (int it = 0; it < 200; ++it) {
    Eigen::VectorXd w = fd_hessian_times(loss, s, y, v, h);
    lambda = w.norm();
    if (lambda == 0) return 0;
    v = w / lambda;
  }
  return lambda;
}

template <class Scalar>
struct Tolerance;
template <>
struct Tolerance<double> {
  static constexpr double fd_step = 1e-5, fd_rel = 1e-7, curvature_step = 1e-5, curvature_rel = 1e-6;
  static constexpr double value_rel = 1e-12, bound_rel = 1e-6;
};
template <>
struct Tolerance<float> {
  static constexpr double fd_step = 1e-2, fd_rel = 2e-3, curvature_step = 1e-3, curvature_rel = 2e-3;
  static constexpr double value_rel = 1e-4, bound_rel = 2e-3;
};

// Calls f(loss, multilabel) for every (smooth loss, class-set kind) pair it supports.
template <class F>
void for_each_smooth_loss(F&& f) {
  f(SquaredHinge{}, false);
  f(HuberHinge{}, false);
  f(HuberHinge(0.3), false);
  f(OvrSquaredHinge{}, false);
  f(OvrSquaredHinge{}, true);
  f(Logistic{}, false);
  f(Logistic{}, true);
  f(LeastSquares{}, false);
  f(LeastSquares{}, true);
}

template <class Scalar, class L>
long double brute_value(const L& loss, const std::vector<Scalar>& s, const std::vector<ClassIndex>& y) {
  if constexpr (std::is_same_v<L, SquaredHinge>) return brute_squared_hinge(s, y);
  if constexpr (std::is_same_v<L, HuberHinge>) return brute_huber_hinge(loss, s, y);
  if constexpr (std::is_same_v<L, OvrSquaredHinge>) return brute_ovr(s, y);
  if constexpr (std::is_same_v<L, CrammerSinger>) return brute_separation_ranking(s, y);
  if constexpr (std::is_same_v<L, Logistic>) return brute_logistic(s, y);
  if constexpr (std::is_same_v<L, LeastSquares>) return brute_least_squares(s, y);
}

// Minimal policies for the negative concept check.
struct Nameless {
  static constexpr bool supports_multilabel = false;
  template <class S>
  S value(std::span<const S>, ClassSet) const { return 0; }
};
struct Named : Nameless {
  static constexpr std::string_view name = "named";
};

}  // namespace

// ===== concepts ==============================================================================

TEST_CASE("a loss that declares bounded subgradients has them in [-1, 1] at any scores", "[loss][concepts]") {
  Rng rng(5);
  const std::size_t K = 6;
  std::vector<double> g(K);
  auto largest_entry = [&](const auto& loss, double scale) {
    double largest = 0.0;
    for (int trial = 0; trial < 200; ++trial) {
      const auto s = random_scores<double>(rng, K, scale);
      const auto y = random_classes(rng, K, /*multilabel=*/false, 0.0);
      loss.subgradient(std::span<const double>(s), ClassSet(y), std::span<double>(g));
      for (const double v : g) largest = std::max(largest, std::abs(v));
    }
    return largest;
  };
  for (const double scale : {1.0, 1e3}) {
    CHECK(largest_entry(CrammerSinger{}, scale) <= 1.0);
    CHECK(largest_entry(Logistic{}, scale) <= 1.0);
  }
  CHECK(largest_entry(OvrSquaredHinge{}, 1e3) > 1.0);  // not bounded: it does not declare the trait
}

TEMPLATE_TEST_CASE("each loss models exactly the concepts it should", "[loss][concepts]", float, double) {
  using S = TestType;
  static_assert(SmoothLoss<SquaredHinge, S> && SubgradientLoss<SquaredHinge, S>);
  static_assert(SmoothLoss<OvrSquaredHinge, S> && SubgradientLoss<OvrSquaredHinge, S>);
  static_assert(SmoothLoss<Logistic, S> && SubgradientLoss<Logistic, S>);
  static_assert(SmoothLoss<LeastSquares, S> && SubgradientLoss<LeastSquares, S>);
  static_assert(Loss<CrammerSinger, S> && SubgradientLoss<CrammerSinger, S> && !SmoothLoss<CrammerSinger, S>);
  // The traits the solvers dispatch on (loss/concepts.hpp).
  static_assert(ClassSeparableLoss<OvrSquaredHinge> && ClassSeparableLoss<LeastSquares> &&
                !ClassSeparableLoss<SquaredHinge> && !ClassSeparableLoss<Logistic> && !ClassSeparableLoss<CrammerSinger>);
  static_assert(SeparationRankingLoss<CrammerSinger> && !SeparationRankingLoss<SquaredHinge> &&
                !SeparationRankingLoss<Logistic>);
  static_assert(GeneralizedLinearLoss<Logistic> && GeneralizedLinearLoss<LeastSquares> &&
                !GeneralizedLinearLoss<SquaredHinge> && !GeneralizedLinearLoss<CrammerSinger>);
  static_assert(Logistic::inverse_link == InverseLink::softmax && LeastSquares::inverse_link == InverseLink::identity);
  // The kernels they own (loss/kernels/): the fused ones, and the generic fallback for the rest.
  static_assert(kernels::OwnsBlockKernel<SquaredHinge, S, std::int32_t> &&
                kernels::OwnsBlockKernel<OvrSquaredHinge, S, std::int64_t> &&
                kernels::OwnsBlockKernel<Logistic, S, std::int32_t> &&
                !kernels::OwnsBlockKernel<LeastSquares, S, std::int32_t>);
  static_assert(kernels::OwnsCoordinateKernel<CrammerSinger, S, std::int32_t> &&
                !kernels::OwnsCoordinateKernel<LeastSquares, S, std::int32_t>);
  static_assert(std::same_as<kernels::BlockKernelFor<LeastSquares, S, std::int32_t>,
                             kernels::GenericBlockKernel<LeastSquares, S, std::int32_t>>);
  static_assert(!SquaredHinge::supports_multilabel && OvrSquaredHinge::supports_multilabel &&
                CrammerSinger::supports_multilabel && Logistic::supports_multilabel &&
                LeastSquares::supports_multilabel);
  static_assert(BoundedSubgradientLoss<CrammerSinger, S> && BoundedSubgradientLoss<Logistic, S> &&
                !BoundedSubgradientLoss<SquaredHinge, S> && !BoundedSubgradientLoss<OvrSquaredHinge, S> &&
                !BoundedSubgradientLoss<LeastSquares, S>);
  // Not a loss: an int is no scalar, a policy without `name` is no policy.
  static_assert(!Loss<SquaredHinge, int> && !Loss<Nameless, S> && Loss<Named, S>);
  CHECK(SquaredHinge::name == "squared-hinge");
  CHECK(OvrSquaredHinge::name == "ovr-squared-hinge");
  CHECK(CrammerSinger::name == "crammer-singer");
  CHECK(Logistic::name == "logistic");
  CHECK(LeastSquares::name == "least-squares");
  CHECK(SquaredHinge::curvature_bound<S>(7) == S(14));
  CHECK(OvrSquaredHinge::curvature_bound<S>(7) == S(2));
  CHECK(Logistic::curvature_bound<S>(7) == S(0.5));
  CHECK(LeastSquares::curvature_bound<S>(7) == S(1));
}

// ===== values ================================================================================

TEMPLATE_TEST_CASE("values match brute-force definitions", "[loss][value]", float, double) {
  using S = TestType;
  Rng rng(11);
  const auto check = [&](const auto& loss, bool multilabel, std::size_t K, double density, double scale) {
    const auto s = random_scores<S>(rng, K, scale);
    const auto y = random_classes(rng, K, multilabel, density);
    std::vector<S> g(K);
    const double expected = static_cast<double>(brute_value(loss, s, y));
    const double got = loss.template value<S>(s, y);
    INFO(std::string(loss.name) << " K=" << K << " |y|=" << y.size() << " expected " << expected);
    CHECK(std::abs(got - expected) <= Tolerance<S>::value_rel * (1 + std::abs(expected)) * std::sqrt(double(K)));
    CHECK(loss.template subgradient<S>(s, y, g) == got);
    if constexpr (SmoothLoss<std::decay_t<decltype(loss)>, S>) CHECK(loss.template gradient<S>(s, y, g) == got);
  };
  for (const std::size_t K : class_counts())
    for (int rep = 0; rep < 20; ++rep) {
      const double scale = rep % 2 ? 2.0 : 0.5;
      for_each_smooth_loss([&](auto loss, bool multilabel) { check(loss, multilabel, K, 0.3, scale); });
      check(CrammerSinger{}, false, K, 0, scale);
      for (const double density : {0.0, 0.1, 0.5, 1.0}) {
        check(CrammerSinger{}, true, K, density, scale);
        check(OvrSquaredHinge{}, true, K, density, scale);
        check(Logistic{}, true, K, density, scale);
        check(LeastSquares{}, true, K, density, scale);
      }
    }
}

TEST_CASE("values on hand-computed examples (the header examples)", "[loss][value]") {
  const std::vector<double> s{0.5, 1.0, -2.0};
  const std::vector<ClassIndex> one{1}, two{0, 1};
  std::vector<double> g(3);
  CHECK(SquaredHinge{}.gradient<double>(s, one, g) == 0.25);
  CHECK(g == std::vector<double>{1, -1, 0});
  CHECK(OvrSquaredHinge{}.gradient<double>(s, two, g) == 0.25);
  CHECK(g == std::vector<double>{-1, 0, 0});
  CHECK(LeastSquares{}.gradient<double>(s, one, g) == 2.125);
  CHECK(g == std::vector<double>{0.5, 0, -2});
  CHECK(CrammerSinger{}.subgradient<double>(s, one, g) == 0.5);
  CHECK(g == std::vector<double>{1, -1, 0});
  // Separation ranking: negatives {2}, positives {0, 1}: 1 + s_2 − min(s_0, s_1) < 0.
  CHECK(CrammerSinger{}.value<double>(s, two) == 0.0);
  // Degenerate class sets: no pair to separate.
  CHECK(CrammerSinger{}.value<double>(s, {}) == 0.0);
  const std::vector<ClassIndex> all{0, 1, 2};
  CHECK(CrammerSinger{}.value<double>(s, all) == 0.0);
}

// ===== gradients =============================================================================

TEMPLATE_TEST_CASE("gradients match central finite differences", "[loss][gradient]", float, double) {
  using S = TestType;
  using T = Tolerance<S>;
  Rng rng(21);
  for (const std::size_t K : class_counts()) {
    const int reps = K >= 100 ? 2 : 10;
    for_each_smooth_loss([&](auto loss, bool multilabel) {
      for (int rep = 0; rep < reps; ++rep) {
        const auto s = random_scores<S>(rng, K, 2.0);
        const auto y = random_classes(rng, K, multilabel, rep % 3 == 0 ? 0.0 : 0.3);
        std::vector<S> g(K);
        const double l = loss.template gradient<S>(s, y, g);
        const auto fd = fd_gradient(loss, s, y, T::fd_step);
        const int kinks = kinks_near(loss, s, y, 1.5 * T::fd_step);
        for (std::size_t k = 0; k < K; ++k) {
          INFO(std::string(loss.name) << " K=" << K << " k=" << k << " |y|=" << y.size());
          CHECK(std::abs(fd[k] - double(g[k])) <=
                T::fd_rel * (1 + std::abs(l) + std::abs(double(g[k]))) + T::fd_step * kinks);
        }
      }
    });
  }
}

TEMPLATE_TEST_CASE("curvature diagonals match finite differences of the gradient", "[loss][curvature]", float,
                   double) {
  using S = TestType;
  using T = Tolerance<S>;
  Rng rng(31);
  for (const std::size_t K : class_counts()) {
    for_each_smooth_loss([&](auto loss, bool multilabel) {
      for (int rep = 0; rep < 3; ++rep) {
        // A point where ℓ is twice differentiable: no hinge argument within 3h of its kink.
        std::vector<S> s;
        std::vector<ClassIndex> y;
        int tries = 0;
        do {
          s = random_scores<S>(rng, K, 2.0);
          y = random_classes(rng, K, multilabel, 0.3);
        } while (kinks_near(loss, s, y, 3 * T::curvature_step) > 0 && ++tries < 1000);
        REQUIRE(tries < 1000);
        std::vector<S> h(K), g(K);
        loss.template curvature<S>(s, y, h);
        const double scale = 1 + std::abs(double(loss.template gradient<S>(s, y, g))) +
                             std::abs(double(*std::max_element(g.begin(), g.end(), [](S a, S b) {
                               return std::abs(a) < std::abs(b);
                             })));
        for (std::size_t k = 0; k < K; ++k) {
          Eigen::VectorXd e = Eigen::VectorXd::Zero(Eigen::Index(K));
          e[Eigen::Index(k)] = 1;
          const double fd = fd_hessian_times(loss, s, y, e, T::curvature_step)[Eigen::Index(k)];
          INFO(std::string(loss.name) << " K=" << K << " k=" << k);
          CHECK(std::abs(fd - double(h[k])) <= T::curvature_rel * scale);
        }
      }
    });
  }
}

// ===== curvature bounds ======================================================================

TEMPLATE_TEST_CASE("curvature bounds hold on sampled pairs and bound the FD Hessian", "[loss][bound]", float,
                   double) {
  using S = TestType;
  using T = Tolerance<S>;
  Rng rng(41);
  for (const std::size_t K : class_counts()) {
    for_each_smooth_loss([&](auto loss, bool multilabel) {
      const double L_bound = loss.template curvature_bound<S>(static_cast<ClassIndex>(K));
      // ‖∇ℓ(s) − ∇ℓ(t)‖ ≤ L ‖s − t‖ for near and far pairs.
      for (int rep = 0; rep < 20; ++rep) {
        const auto s = random_scores<S>(rng, K, 2.0);
        const auto y = random_classes(rng, K, multilabel, 0.3);
        const double radius = rep % 2 ? 0.05 : 3.0;
        auto t = s;
        for (auto& v : t) v = static_cast<S>(v + radius * (2 * uniform_real(rng) - 1));
        std::vector<S> gs(K), gt(K);
        loss.template gradient<S>(s, y, gs);
        loss.template gradient<S>(t, y, gt);
        double dg = 0, ds = 0;
        for (std::size_t k = 0; k < K; ++k) {
          dg += (double(gs[k]) - double(gt[k])) * (double(gs[k]) - double(gt[k]));
          ds += (double(s[k]) - double(t[k])) * (double(s[k]) - double(t[k]));
        }
        INFO(std::string(loss.name) << " K=" << K);
        CHECK(std::sqrt(dg) <= L_bound * std::sqrt(ds) * (1 + T::bound_rel) + 1e-6);
      }
      // Largest eigenvalue of the FD Hessian: dense for small K (at kink-free points), power
      // iteration on FD products for any K.
      for (int rep = 0; rep < 3; ++rep) {
        std::vector<S> s;
        std::vector<ClassIndex> y;
        int tries = 0;
        do {
          s = random_scores<S>(rng, K, rep == 0 ? 0.3 : 2.0);
          y = random_classes(rng, K, multilabel, 0.3);
        } while (kinks_near(loss, s, y, 3 * T::curvature_step) > 0 && ++tries < 1000);
        if (K <= 10) {
          Eigen::MatrixXd H(static_cast<Eigen::Index>(K), static_cast<Eigen::Index>(K));
          for (std::size_t k = 0; k < K; ++k) {
            Eigen::VectorXd e = Eigen::VectorXd::Zero(Eigen::Index(K));
            e[Eigen::Index(k)] = 1;
            H.col(Eigen::Index(k)) = fd_hessian_times(loss, s, y, e, T::curvature_step);
          }
          const Eigen::MatrixXd sym = (H + H.transpose()) / 2;
          const double top = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(sym).eigenvalues().maxCoeff();
          INFO(std::string(loss.name) << " K=" << K << " dense FD Hessian");
          CHECK(top <= L_bound * (1 + T::bound_rel) + T::curvature_rel);
        }
        const double top = fd_lambda_max(loss, s, y, T::curvature_step, rng);
        INFO(std::string(loss.name) << " K=" << K << " power iteration");
        CHECK(top <= L_bound * (1 + T::bound_rel) + T::curvature_rel);
      }
    });
  }
}

TEMPLATE_TEST_CASE("curvature bounds are attained (they are the suprema)", "[loss][bound]", float, double) {
  using S = TestType;
  using T = Tolerance<S>;
  Rng rng(43);
  for (const std::size_t K : class_counts()) {
    if (K < 2) continue;  // K = 1: the multiclass losses vanish; the bound is only safe there
    const std::vector<ClassIndex> y{0};
    // Squared hinge with every margin violated (s = 0): Hessian 2 Σ_r (e_r − e_y)(e_r − e_y)ᵀ.
    // The hinge losses are quadratic on the unit ball around s = 0 (every argument stays in
    // [−1, 3]), so a large step h = 0.1 is exact and keeps float rounding out of the FD.
    const std::vector<S> zero(K, S(0));
    const double quadratic_step = 0.1;
    CHECK(fd_lambda_max(SquaredHinge{}, zero, y, quadratic_step, rng) ==
          Approx(SquaredHinge::curvature_bound<double>(ClassIndex(K))).epsilon(T::bound_rel));
    CHECK(fd_lambda_max(OvrSquaredHinge{}, zero, y, quadratic_step, rng) == Approx(2.0).epsilon(T::bound_rel));
    // The Huberised hinge with every margin z_r = 1 inside its quadratic zone (δ = 2): the
    // squared hinge's Hessian scaled by 1/(2δ), λ_max = K/δ.
    const HuberHinge wide(2.0);
    CHECK(fd_lambda_max(wide, zero, y, quadratic_step, rng) ==
          Approx(wide.curvature_bound<double>(ClassIndex(K))).epsilon(T::bound_rel));
    CHECK(fd_lambda_max(LeastSquares{}, zero, y, quadratic_step, rng) == Approx(1.0).epsilon(T::bound_rel));
    // Logistic at p = (½, ½, 0, …): λ_max(diag(p) − ppᵀ) = ½.
    std::vector<S> half(K, S(-40));
    half[0] = half[1] = 0;
    CHECK(fd_lambda_max(Logistic{}, half, y, T::curvature_step, rng) == Approx(0.5).epsilon(10 * T::bound_rel));
  }
}

// ===== subgradients ==========================================================================

TEMPLATE_TEST_CASE("subgradients satisfy the subgradient inequality", "[loss][subgradient]", float, double) {
  using S = TestType;
  Rng rng(51);
  const auto check = [&](const auto& loss, const std::vector<S>& s, const std::vector<ClassIndex>& y) {
    const std::size_t K = s.size();
    std::vector<S> g(K);
    const double ls = loss.template subgradient<S>(s, y, g);
    for (int rep = 0; rep < 20; ++rep) {
      const double radius = rep % 2 ? 0.01 : 3.0;
      auto t = s;
      for (auto& v : t) v = static_cast<S>(v + radius * (2 * uniform_real(rng) - 1));
      double inner = 0;
      for (std::size_t k = 0; k < K; ++k) inner += double(g[k]) * (double(t[k]) - double(s[k]));
      const double lt = loss.template value<S>(t, y);
      INFO(std::string(loss.name) << " K=" << K << " |y|=" << y.size());
      CHECK(lt >= ls + inner - Tolerance<S>::value_rel * (1 + std::abs(lt) + std::abs(ls)) * std::sqrt(double(K)));
    }
  };
  for (const std::size_t K : class_counts()) {
    for (int rep = 0; rep < 10; ++rep) {
      check(CrammerSinger{}, random_scores<S>(rng, K, 2.0), random_classes(rng, K, false, 0));
      for (const double density : {0.0, 0.1, 0.5, 1.0})
        check(CrammerSinger{}, random_scores<S>(rng, K, 2.0), random_classes(rng, K, true, density));
      for_each_smooth_loss([&](auto loss, bool multilabel) {
        check(loss, random_scores<S>(rng, K, 2.0), random_classes(rng, K, multilabel, 0.3));
      });
    }
    if (K >= 3) {
      // Kinks: ties in the argmax and a margin exactly at 0.
      std::vector<S> s(K, S(-5));
      s[0] = S(1);
      s[1] = s[2] = S(0);  // 1 + s_1 − s_0 = 0, and classes 1, 2 tie
      check(CrammerSinger{}, s, {0});
      check(CrammerSinger{}, s, {0, 2});
    }
  }
}

TEST_CASE("the Crammer-Singer subgradient is the gradient where the loss is differentiable", "[loss][subgradient]") {
  Rng rng(53);
  for (const std::size_t K : class_counts()) {
    for (int rep = 0; rep < 10; ++rep) {
      const auto s = random_scores<double>(rng, K, 2.0);
      const auto y = random_classes(rng, K, rep % 2 == 1, 0.3);
      std::vector<double> g(K);
      const double l = CrammerSinger{}.subgradient<double>(s, y, g);
      const auto fd = fd_gradient(CrammerSinger{}, s, y, 1e-7);
      if (l < 1e-5 && l > 0) continue;  // within a step of the kink at 0
      for (std::size_t k = 0; k < K; ++k) CHECK(fd[k] == Approx(g[k]).margin(1e-6));
    }
  }
}

// ===== logistic extremes =====================================================================

TEMPLATE_TEST_CASE("the logistic loss is finite and exact at scores of +-1e6", "[loss][logistic]", float, double) {
  using S = TestType;
  const Logistic loss;
  const S big = S(1e6);
  std::vector<S> g(3), h(3);
  {
    const std::vector<S> s{big, -big, -big};
    const std::vector<ClassIndex> y0{0}, y1{1};
    CHECK(loss.value<S>(s, y0) == S(0));
    CHECK(loss.gradient<S>(s, y0, g) == S(0));
    CHECK(g == std::vector<S>{0, 0, 0});
    CHECK(loss.value<S>(s, y1) == S(2e6));
    CHECK(loss.gradient<S>(s, y1, g) == S(2e6));
    CHECK(g == std::vector<S>{1, -1, 0});
    loss.curvature<S>(s, y1, h);
    CHECK(h == std::vector<S>{0, 0, 0});
  }
  {
    const std::vector<S> s{big, big, -big};
    const std::vector<ClassIndex> y2{2}, y01{0, 1};
    CHECK(loss.value<S>(s, y2) == S(2e6) + std::log(S(2)));
    CHECK(loss.gradient<S>(s, y2, g) == S(2e6) + std::log(S(2)));
    CHECK(g == std::vector<S>{0.5, 0.5, -1});
    loss.curvature<S>(s, y2, h);
    CHECK(h == std::vector<S>{0.25, 0.25, 0});
    // Multilabel KL: p = q = (½, ½, 0) exactly, ℓ = 0.
    CHECK(std::abs(loss.value<S>(s, y01)) <= 4 * std::numeric_limits<S>::epsilon());
    loss.gradient<S>(s, y01, g);
    CHECK(g == std::vector<S>{0, 0, 0});
  }
  // Random ±1e6 scores for every K: finite value, gradient summing to 0, curvature in [0, ¼].
  Rng rng(71);
  for (const std::size_t K : class_counts()) {
    for (int rep = 0; rep < 10; ++rep) {
      std::vector<S> s(K);
      for (auto& v : s) v = uniform_real(rng) < 0.5 ? big : -big;
      if (rep % 2) s[uniform_index(rng, K)] = S(0);
      const auto y = random_classes(rng, K, rep % 3 == 2, 0.3);
      std::vector<S> gk(K), hk(K);
      const S l = loss.gradient<S>(s, y, gk);
      loss.curvature<S>(s, y, hk);
      CHECK(std::isfinite(l));
      CHECK(l >= S(0));
      double sum = 0;
      for (std::size_t k = 0; k < K; ++k) {
        CHECK(std::isfinite(gk[k]));
        CHECK(hk[k] >= S(0));
        CHECK(hk[k] <= S(0.25));
        sum += gk[k];
      }
      CHECK(std::abs(sum) <= 1e-5);
      CHECK(double(l) == Approx(double(brute_value(loss, s, y))).epsilon(Tolerance<S>::value_rel).margin(1e-6));
    }
  }
}

TEST_CASE("the logistic loss keeps its relative accuracy when it is tiny", "[loss][logistic]") {
  const std::vector<double> s{40, 0, -3};
  const std::vector<ClassIndex> y{0};
  const long double exact = std::log1p(std::exp(-40.0L) + std::exp(-43.0L));
  CHECK(Logistic{}.value<double>(s, y) == Approx(double(exact)).epsilon(1e-15));
  std::vector<double> g(3);
  Logistic{}.gradient<double>(s, y, g);
  CHECK(g[0] == Approx(-double(exact)).epsilon(1e-14));  // 1 − p_0 ≈ Z', no cancellation
}

// ===== K = 1 and no allocation ================================================================

TEMPLATE_TEST_CASE("K = 1 is degenerate but well defined", "[loss]", float, double) {
  using S = TestType;
  const std::vector<S> s{S(0.3)};
  const std::vector<ClassIndex> y{0};
  std::vector<S> g(1), h(1);
  CHECK(SquaredHinge{}.gradient<S>(s, y, g) == S(0));
  CHECK(g[0] == S(0));
  CHECK(Logistic{}.gradient<S>(s, y, g) == S(0));
  CHECK(g[0] == S(0));
  CHECK(CrammerSinger{}.subgradient<S>(s, y, g) == S(0));
  CHECK(g[0] == S(0));
  SquaredHinge{}.curvature<S>(s, y, h);
  CHECK(h[0] == S(0));
  CHECK(SquaredHinge::curvature_bound<S>(1) > S(0));
}

#if SPARSEMC_TEST_COUNT_ALLOCATIONS
TEST_CASE("per-sample calls do not allocate", "[loss]") {
  const std::size_t K = 1000;
  Rng rng(81);
  const auto s = random_scores<double>(rng, K, 2.0);
  const std::vector<ClassIndex> one{3};
  const auto many = random_classes(rng, K, true, 0.2);
  std::vector<double> g(K);
  double sink = 0;
  const auto run = [&] {
    sink += SquaredHinge{}.gradient<double>(s, one, g);
    SquaredHinge{}.curvature<double>(s, one, g);
    for (const auto* y : {&one, &many}) {
      sink += OvrSquaredHinge{}.gradient<double>(s, *y, g);
      OvrSquaredHinge{}.curvature<double>(s, *y, g);
      sink += Logistic{}.gradient<double>(s, *y, g);
      Logistic{}.curvature<double>(s, *y, g);
      sink += LeastSquares{}.gradient<double>(s, *y, g);
      sink += CrammerSinger{}.subgradient<double>(s, *y, g);
    }
  };
  const long before = allocation_count.load();
  run();
  const long after = allocation_count.load();
  CHECK(std::isfinite(sink));
  CHECK(after == before);
}
#endif
