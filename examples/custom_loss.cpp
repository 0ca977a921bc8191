// A loss of your own: the Huberised (smoothed) Weston–Watkins hinge, written as a sparsemc
// loss policy, checked against the SmoothLoss concept at compile time, evaluated by hand on
// one sample, and then trained with the reference solver ProxGradient (FISTA) on the bundled
// dna data next to the built-in SquaredHinge.
//
//   ℓ(s, y) = Σ_{r≠y} φ(1 − s_y + s_r),   φ(z) = 0 (z ≤ 0), z²/(2δ) (0 < z ≤ δ), z − δ/2 (z > δ)
//
// φ is the Huber-smoothed hinge: linear (robust to outliers, like the hinge) for large
// violations and quadratic near the margin, so ℓ is differentiable with a Lipschitz gradient:
//   ∂ℓ/∂s_r = φ'(z_r) = clamp(z_r/δ, 0, 1) (r ≠ y),   ∂ℓ/∂s_y = −Σ_{r≠y} φ'(z_r),
//   generalised Hessian = Σ_r φ''(z_r)(e_r − e_y)(e_r − e_y)ᵀ with φ'' = [0 < z < δ]/δ,
//   diagonal h_r = φ''(z_r), h_y = Σ_r φ''(z_r), and λ_max ≤ K/δ (the eigenvalues of
//   Σ_{r≠y}(e_r − e_y)(e_r − e_y)ᵀ are 0, 1 and K; see SquaredHinge in loss/squared_hinge.hpp).
//
// Run: ./example_custom_loss [train.libsvm test.libsvm]   (defaults: the repo's data/dna.scale{,.t})
#include <sparsemc/io/libsvm.hpp>
#include <sparsemc/loss/losses.hpp>
#include <sparsemc/model/metrics.hpp>
#include <sparsemc/penalty/l1l2.hpp>
#include <sparsemc/solver/fista/prox_gradient.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <span>
#include <string>
#include <string_view>

namespace {

// The whole policy: what ProxGradient asks for (SmoothLoss), nothing more. A loss may carry
// parameters as data members, but curvature_bound is static, so δ is a compile-time constant.
struct HuberHinge {
  static constexpr std::string_view name = "huber-hinge";
  static constexpr bool supports_multilabel = false;
  static constexpr double delta = 0.5;  // δ: width of the quadratic zone
  // The dual side, for the duality gap every solver stops on (solver/duality_gap.hpp):
  // dual vectors are a = Σ_{r≠y} β_r (e_r − e_y) with β_r = φ'(z_r) ∈ [0, 1], so the domain
  // contains {q − e_y : q in the simplex}.
  static constexpr sparsemc::DualDomain dual_domain = sparsemc::DualDomain::shifted_simplex;

  template <sparsemc::RealScalar Scalar>
  Scalar value(std::span<const Scalar> s, sparsemc::ClassSet y) const noexcept {
    const auto c = static_cast<std::size_t>(y[0]);
    Scalar sum = 0;
    for (std::size_t r = 0; r < s.size(); ++r)
      if (r != c) sum += phi(Scalar(1) - s[c] + s[r]);
    return sum;
  }

  template <sparsemc::RealScalar Scalar>
  Scalar gradient(std::span<const Scalar> s, sparsemc::ClassSet y, std::span<Scalar> g) const noexcept {
    const auto c = static_cast<std::size_t>(y[0]);
    const auto d = static_cast<Scalar>(delta);
    Scalar sum = 0, slope_sum = 0;
    for (std::size_t r = 0; r < s.size(); ++r) {
      if (r == c) continue;
      const Scalar z = Scalar(1) - s[c] + s[r];
      sum += phi(z);
      g[r] = std::clamp(z / d, Scalar(0), Scalar(1));
      slope_sum += g[r];
    }
    g[c] = -slope_sum;
    return sum;
  }

  template <sparsemc::RealScalar Scalar>
  void curvature(std::span<const Scalar> s, sparsemc::ClassSet y, std::span<Scalar> h) const noexcept {
    const auto c = static_cast<std::size_t>(y[0]);
    const auto d = static_cast<Scalar>(delta);
    Scalar total = 0;
    for (std::size_t r = 0; r < s.size(); ++r) {
      if (r == c) continue;
      const Scalar z = Scalar(1) - s[c] + s[r];
      h[r] = (z > Scalar(0) && z < d) ? Scalar(1) / d : Scalar(0);
      total += h[r];
    }
    h[c] = total;
  }

  // ℓ*(a, y) = Σ_{r≠y} φ*(β_r), φ*(v) = δv²/2 − v on [0, 1] (+∞ outside): the conjugate of
  // φ(1 + ·) summed over the margins (Fenchel–Young: ℓ(s) + ℓ*(∇ℓ(s)) = ⟨∇ℓ(s), s⟩).
  template <sparsemc::RealScalar Scalar>
  double conjugate(std::span<const Scalar> a, sparsemc::ClassSet y) const noexcept {
    const auto c = static_cast<std::size_t>(y[0]);
    double sum = 0;
    for (std::size_t r = 0; r < a.size(); ++r) {
      if (r == c) continue;
      const auto beta = static_cast<double>(a[r]);
      if (beta < 0 || beta > 1) return std::numeric_limits<double>::infinity();
      sum += 0.5 * delta * beta * beta - beta;
    }
    return sum;
  }

  template <sparsemc::RealScalar Scalar>
  static constexpr Scalar curvature_bound(sparsemc::ClassIndex K) noexcept {
    return static_cast<Scalar>(K) / static_cast<Scalar>(delta);
  }

 private:
  template <class Scalar>
  static Scalar phi(Scalar z) noexcept {
    const auto d = static_cast<Scalar>(delta);
    if (z <= Scalar(0)) return Scalar(0);
    if (z <= d) return z * z / (Scalar(2) * d);
    return z - d / Scalar(2);
  }
};

// The concepts say what the policy can be used for: a smooth loss (FISTA, BCD, SCD) ...
static_assert(sparsemc::SmoothLoss<HuberHinge, double> && sparsemc::SmoothLoss<HuberHinge, float>,
              "HuberHinge must provide value, gradient, curvature and curvature_bound");
// ... whose fits are certified by the duality gap (it has a conjugate) ...
static_assert(sparsemc::ConjugateLoss<HuberHinge, double> && sparsemc::ConjugateLoss<HuberHinge, float>,
              "HuberHinge must provide conjugate and dual_domain");
// ... but not one with a prox (it has none), unlike the nonsmooth built-in CrammerSinger.
static_assert(!sparsemc::ProximableLoss<HuberHinge, double>);
static_assert(sparsemc::ProximableLoss<sparsemc::CrammerSinger, double>);

// Fits (1) with `loss` + group lasso and prints one line: objective, test accuracy, rows kept.
template <class Loss, class Train, class Test>
bool train_and_report(const Loss& loss, const Train& train, const Test& test) {
  using namespace sparsemc;
  const ProxGradient solver(loss, L1L2{.lambda = 1e-2, .mu = 0},
                            ProxGradientOptions{.tol = 1e-5, .max_epochs = 5000, .fit_intercept = true});
  const Result<double> result = solver.fit(train.template problem<Eigen::RowMajor>());
  const double accuracy =
      metrics::accuracy(result.model.predict_classes(test.csr()), test.labels().view());
  std::printf("%-14s status %-10s epochs %5lld  objective %.8f  test accuracy %.4f  nonzero rows %lld of %lld\n",
              std::string(Loss::name).c_str(), std::string(to_string(result.info.status)).c_str(),
              static_cast<long long>(result.info.epochs), result.info.objective, accuracy,
              static_cast<long long>(result.model.nnz_rows()), static_cast<long long>(train.n_features()));
  return result.info.status == Status::converged && accuracy > 0.8;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace sparsemc;

  // 1. One sample by hand: K = 3, true class 1, scores s. Margins z_r = 1 − s_1 + s_r are
  //    z_0 = 0.25 (inside the quadratic zone: φ = 0.0625, φ' = 0.5, φ'' = 2), z_2 = −2 (φ = 0).
  const HuberHinge loss;
  const std::array<double, 3> s{0.25, 1.0, -2.0};
  const std::array<ClassIndex, 1> y{1};
  std::array<double, 3> g{}, h{};
  const double value = loss.gradient<double>(s, y, g);
  loss.curvature<double>(s, y, h);
  std::printf("huber-hinge at s = (0.25, 1, -2), y = 1: value %.4f, gradient (%.3f, %.3f, %.3f), "
              "curvature (%.3f, %.3f, %.3f), bound %.1f\n",
              value, g[0], g[1], g[2], h[0], h[1], h[2], HuberHinge::curvature_bound<double>(3));
  // The gradient agrees with central differences of the value.
  double worst = 0;
  for (std::size_t k = 0; k < s.size(); ++k) {
    std::array<double, 3> up = s, down = s;
    up[k] += 1e-6;
    down[k] -= 1e-6;
    worst = std::max(worst, std::abs((loss.value<double>(up, y) - loss.value<double>(down, y)) / 2e-6 - g[k]));
  }
  std::printf("largest |gradient - finite difference| = %.2e\n", worst);
  // The conjugate meets Fenchel–Young with equality at the gradient.
  const double fenchel_young = value + loss.conjugate<double>(g, y) - (g[0] * s[0] + g[1] * s[1] + g[2] * s[2]);
  std::printf("Fenchel-Young residual l(s) + l*(g) - <g, s> = %.2e\n", fenchel_young);
  worst = std::max(worst, std::abs(fenchel_young));

  // 2. Training: any smooth policy plugs into any solver that asks for SmoothLoss.
  const std::string train_path = argc > 2 ? argv[1] : SPARSEMC_REPO_DATA "/dna.scale";
  const std::string test_path = argc > 2 ? argv[2] : SPARSEMC_REPO_DATA "/dna.scale.t";
  const auto train = io::read_libsvm<double>(train_path);
  const auto test = io::read_libsvm<double>(test_path, {.n_features = train.n_features(), .labels = train.encoder()});
  std::printf("%s: %lld samples, %lld features, %d classes; group lasso lambda = 1e-2\n", train_path.c_str(),
              static_cast<long long>(train.n_samples()), static_cast<long long>(train.n_features()),
              static_cast<int>(train.n_classes()));
  const bool huber_ok = train_and_report(loss, train, test);
  const bool hinge_ok = train_and_report(SquaredHinge{}, train, test);
  const bool ok = huber_ok && hinge_ok;
  return worst < 1e-6 && ok ? 0 : 1;
}
