// A loss of your own: one-vs-rest logistic regression (LIBLINEAR's -s 0 / -s 7 loss, one binary
// logistic problem per class), written as a sparsemc loss policy, checked against the concepts
// at compile time, evaluated by hand on one sample, and then trained with FISTA and with block
// coordinate descent on the bundled dna data next to the built-in multinomial Logistic.
//
//   ℓ(s, y) = Σ_r log(1 + exp(−Y_r s_r)),   Y_r = +1 for the sample's classes, −1 for the others
//
// so that ∂ℓ/∂s_r = −Y_r σ(−Y_r s_r) (σ the sigmoid), the Hessian is diagonal with entries
// σ(s_r)σ(−s_r) ≤ ¼, and ℓ*(a) = Σ_r β_r log β_r + (1 − β_r) log(1 − β_r) for a_r = −Y_r β_r,
// β_r ∈ [0, 1] (the binary logistic loss's conjugate, class by class).
//
// The policy declares only what the solvers ask for. It owns no kernel, so BlockCD runs it
// through its members per sample (loss/kernels/block_kernel.hpp's generic kernel); a loss that
// wants BlockCD's or SCD's full speed also declares a BlockKernel / CoordinateKernel as the
// built-in losses do (loss/squared_hinge.hpp). Being a sum of one term per class, it declares
// `separates_classes`: with an entrywise penalty BlockCD and SCD then solve its classes side by
// side on every core.
//
// Run: ./example_custom_loss [train.libsvm test.libsvm]   (defaults: the repo's data/dna.scale{,.t})
#include <sparsemc/io/libsvm.hpp>
#include <sparsemc/loss/losses.hpp>
#include <sparsemc/model/metrics.hpp>
#include <sparsemc/penalty/l1l2.hpp>
#include <sparsemc/solver/bcd/block_cd.hpp>
#include <sparsemc/solver/fista/prox_gradient.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <span>
#include <string>
#include <string_view>

#include "data_dir.hpp"

namespace {

struct OvrLogistic {
  static constexpr std::string_view name = "ovr-logistic";
  static constexpr bool supports_multilabel = true;
  // One term per class (ClassSeparableLoss): class-by-class solves over the threads.
  static constexpr bool separates_classes = true;
  // The dual side, for the duality gap every solver stops on (solver/duality_gap.hpp): the
  // sign of a_r is fixed by Y_r, class by class.
  static constexpr sparsemc::DualDomain dual_domain = sparsemc::DualDomain::signed_per_class;

  template <sparsemc::RealScalar Scalar>
  Scalar value(std::span<const Scalar> s, sparsemc::ClassSet y) const noexcept {
    Scalar sum = 0;
    for (std::size_t r = 0; r < s.size(); ++r) sum += softplus(-sign<Scalar>(y, r) * s[r]);
    return sum;
  }

  template <sparsemc::RealScalar Scalar>
  Scalar gradient(std::span<const Scalar> s, sparsemc::ClassSet y, std::span<Scalar> g) const noexcept {
    Scalar sum = 0;
    for (std::size_t r = 0; r < s.size(); ++r) {
      const Scalar Y = sign<Scalar>(y, r);
      sum += softplus(-Y * s[r]);
      g[r] = -Y * sigmoid(-Y * s[r]);
    }
    return sum;
  }

  template <sparsemc::RealScalar Scalar>
  void curvature(std::span<const Scalar> s, sparsemc::ClassSet, std::span<Scalar> h) const noexcept {
    for (std::size_t r = 0; r < s.size(); ++r) h[r] = sigmoid(s[r]) * sigmoid(-s[r]);
  }

  template <sparsemc::RealScalar Scalar>
  static constexpr Scalar curvature_bound(sparsemc::ClassIndex) noexcept {
    return Scalar(0.25);
  }

  template <sparsemc::RealScalar Scalar>
  Scalar subgradient(std::span<const Scalar> s, sparsemc::ClassSet y, std::span<Scalar> g) const noexcept {
    return gradient(s, y, g);
  }

  // ℓ*(a, y) = Σ_r β log β + (1 − β) log(1 − β), β = −Y_r a_r ∈ [0, 1] (+∞ outside; 0 log 0 = 0).
  template <sparsemc::RealScalar Scalar>
  double conjugate(std::span<const Scalar> a, sparsemc::ClassSet y) const noexcept {
    double sum = 0;
    for (std::size_t r = 0; r < a.size(); ++r) {
      const double beta = -sign<double>(y, r) * static_cast<double>(a[r]);
      if (beta < 0 || beta > 1) return std::numeric_limits<double>::infinity();
      if (beta > 0) sum += beta * std::log(beta);
      if (beta < 1) sum += (1 - beta) * std::log1p(-beta);
    }
    return sum;
  }

 private:
  template <class Scalar>
  static Scalar sign(sparsemc::ClassSet y, std::size_t r) noexcept {
    return std::binary_search(y.begin(), y.end(), static_cast<sparsemc::ClassIndex>(r)) ? Scalar(1) : Scalar(-1);
  }
  template <class Scalar>
  static Scalar softplus(Scalar u) noexcept {  // log(1 + e^u) without overflow
    return std::max(u, Scalar(0)) + std::log1p(std::exp(-std::abs(u)));
  }
  template <class Scalar>
  static Scalar sigmoid(Scalar u) noexcept {
    return u >= 0 ? Scalar(1) / (Scalar(1) + std::exp(-u)) : std::exp(u) / (Scalar(1) + std::exp(u));
  }
};

// The concepts say what the policy can be used for: a smooth loss (FISTA, BlockCD, SCD) ...
static_assert(sparsemc::SmoothLoss<OvrLogistic, double> && sparsemc::SmoothLoss<OvrLogistic, float>,
              "OvrLogistic must provide value, gradient, curvature and curvature_bound");
// ... whose fits are certified by the duality gap (it has a conjugate) ...
static_assert(sparsemc::ConjugateLoss<OvrLogistic, double> && sparsemc::ConjugateLoss<OvrLogistic, float>,
              "OvrLogistic must provide conjugate and dual_domain");
// ... separable over the classes, and neither a generalised linear loss of GLS nor a separation
// ranking loss of the dual solvers.
static_assert(sparsemc::ClassSeparableLoss<OvrLogistic> && !sparsemc::GeneralizedLinearLoss<OvrLogistic> &&
              !sparsemc::SeparationRankingLoss<OvrLogistic>);
static_assert(sparsemc::BlockCDAccepts<OvrLogistic, sparsemc::L1L2> &&
              !sparsemc::BlockCDAccepts<sparsemc::CrammerSinger, sparsemc::L1L2>);

// Fits (1) with `solver` on the data in the layout it takes (FISTA: rows, BlockCD: columns) and
// prints one line: objective, gap, test accuracy, rows kept.
template <int Order, class Solver, class Train, class Test>
bool train_and_report(const char* what, const Solver& solver, const Train& train, const Test& test,
                      sparsemc::Result<double>& result) {
  using namespace sparsemc;
  result = solver.fit(train.template problem<Order>());
  const double accuracy = metrics::accuracy(result.model.predict_classes(test.csr()), test.labels().view());
  std::printf("%-24s status %-10s epochs %5lld  objective %.8f  gap %.1e  test accuracy %.4f  rows %lld of %lld\n",
              what, std::string(to_string(result.info.status)).c_str(), static_cast<long long>(result.info.epochs),
              result.info.objective, result.info.duality_gap, accuracy,
              static_cast<long long>(result.model.nnz_rows()), static_cast<long long>(train.n_features()));
  return result.info.status == Status::converged && accuracy > 0.8;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace sparsemc;

  // 1. One sample by hand: K = 3, class 1, scores s: the terms log(1 + e^{s_0}), log(1 + e^{−s_1}),
  //    log(1 + e^{s_2}).
  const OvrLogistic loss;
  const std::array<double, 3> s{0.5, 1.0, -2.0};
  const std::array<ClassIndex, 1> y{1};
  std::array<double, 3> g{}, h{};
  const double value = loss.gradient<double>(s, y, g);
  loss.curvature<double>(s, y, h);
  std::printf("ovr-logistic at s = (0.5, 1, -2), y = 1: value %.4f, gradient (%.3f, %.3f, %.3f), "
              "curvature (%.3f, %.3f, %.3f)\n",
              value, g[0], g[1], g[2], h[0], h[1], h[2]);
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

  // 2. Training: any smooth policy plugs into any solver whose concept it meets.
  const std::string train_path = argc > 2 ? argv[1] : sparsemc_examples::data_dir() + "/dna.scale";
  const std::string test_path = argc > 2 ? argv[2] : sparsemc_examples::data_dir() + "/dna.scale.t";
  const auto train = io::read_libsvm<double>(train_path);
  const auto test = io::read_libsvm<double>(test_path, {.n_features = train.n_features(), .labels = train.encoder()});
  std::printf("%s: %lld samples, %lld features, %d classes; group lasso lambda = 1e-2\n", train_path.c_str(),
              static_cast<long long>(train.n_samples()), static_cast<long long>(train.n_features()),
              static_cast<int>(train.n_classes()));
  const L1L2 penalty{.lambda = 1e-2, .mu = 0};
  Result<double> fista, bcd, multinomial;
  bool ok = train_and_report<Eigen::RowMajor>(
      "ovr-logistic, fista", ProxGradient(loss, penalty, ProxGradientOptions{.tol = 1e-6}), train, test, fista);
  ok = train_and_report<Eigen::ColMajor>(
           "ovr-logistic, bcd-ls", BlockCD(loss, penalty, BlockCDOptions<TsengYun>{.tol = 1e-6}), train, test, bcd) &&
       ok;
  ok = train_and_report<Eigen::ColMajor>("logistic, bcd-ls", BlockCD(Logistic{}, penalty, BlockCDOptions<TsengYun>{}),
                                         train, test, multinomial) &&
       ok;
  // Two solvers of the same problem agree within their certificates.
  const double apart = std::abs(fista.info.objective - bcd.info.objective);
  std::printf("|F(fista) - F(bcd-ls)| = %.2e <= gap(fista) + gap(bcd-ls) = %.2e\n", apart,
              fista.info.duality_gap + bcd.info.duality_gap);
  ok = ok && apart <= fista.info.duality_gap + bcd.info.duality_gap;
  return worst < 1e-6 && ok ? 0 : 1;
}
