// Kernels of sparsemc/prox/ and the penalty proxes, for rows of K = 10 … 10^4 entries.
// Each iteration copies a fresh Gaussian row into the work vector (the projections are in
// place), so every figure includes one O(K) copy. BM_SimplexBySort is the textbook O(K log K)
// sort-based projection, kept here as the baseline the O(K) projection is compared with.

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <span>
#include <vector>

#include <sparsemc/core/rng.hpp>
#include <sparsemc/penalty/penalties.hpp>
#include <sparsemc/prox/bi_simplex.hpp>
#include <sparsemc/prox/epigraph_max.hpp>
#include <sparsemc/prox/group_soft_threshold.hpp>
#include <sparsemc/prox/simplex.hpp>

namespace {

template <class Scalar>
std::vector<Scalar> gaussian_row(std::size_t K, std::uint64_t seed) {
  sparsemc::Rng rng(seed);
  std::vector<Scalar> v(K);
  for (auto& x : v) {
    const double u1 = 1.0 - sparsemc::uniform_real(rng), u2 = sparsemc::uniform_real(rng);
    x = static_cast<Scalar>(std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2));
  }
  return v;
}

/// Runs `kernel(work)` on a fresh copy of a Gaussian row each iteration.
template <class Scalar, class Kernel>
void run_on_rows(benchmark::State& state, Kernel kernel) {
  const auto K = static_cast<std::size_t>(state.range(0));
  const auto source = gaussian_row<Scalar>(K, 1);
  std::vector<Scalar> work(K);
  for (auto _ : state) {
    std::copy(source.begin(), source.end(), work.begin());
    kernel(std::span<Scalar>(work));
    benchmark::DoNotOptimize(work.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(K));
}

template <class Scalar>
void BM_ProjectSimplex(benchmark::State& state) {
  std::vector<Scalar> scratch;
  run_on_rows<Scalar>(state, [&](std::span<Scalar> v) { sparsemc::prox::project_simplex(v, Scalar(1), scratch); });
}

/// Baseline: sort a copy in decreasing order, take the largest ρ with u_ρ > (Σ_{i≤ρ} u_i − a)/ρ.
template <class Scalar>
void BM_SimplexBySort(benchmark::State& state) {
  std::vector<Scalar> sorted;
  run_on_rows<Scalar>(state, [&](std::span<Scalar> v) {
    sorted.assign(v.begin(), v.end());
    std::sort(sorted.begin(), sorted.end(), std::greater<>());
    double sum = 0, tau = 0;
    for (std::size_t k = 0; k < sorted.size(); ++k) {
      sum += sorted[k];
      const double candidate = (sum - 1.0) / static_cast<double>(k + 1);
      if (sorted[k] > candidate) tau = candidate;
    }
    for (Scalar& x : v) x = std::max(x - static_cast<Scalar>(tau), Scalar(0));
  });
}

template <class Scalar>
void BM_ProjectL1Ball(benchmark::State& state) {
  std::vector<Scalar> scratch;
  const auto radius = static_cast<Scalar>(0.1 * static_cast<double>(state.range(0)));  // about a fifth of ‖v‖₁
  run_on_rows<Scalar>(state, [&](std::span<Scalar> v) { sparsemc::prox::project_l1_ball(v, radius, scratch); });
}

template <class Scalar>
void BM_EpigraphMax(benchmark::State& state) {
  std::vector<Scalar> scratch;
  std::vector<Scalar> margins(static_cast<std::size_t>(state.range(0)), Scalar(1));  // Crammer–Singer r
  margins[0] = 0;
  run_on_rows<Scalar>(state, [&](std::span<Scalar> u) {
    Scalar zeta = 0;
    sparsemc::prox::project_epigraph_max(u, zeta, margins, scratch);
    benchmark::DoNotOptimize(zeta);
  });
}

/// PD-Sparse's block: K negative labels against 3 positive ones, C = 1.
template <class Scalar>
void BM_BiSimplex(benchmark::State& state) {
  std::vector<Scalar> scratch, positive(3);
  const std::vector<Scalar> positive_source{Scalar(0.4), Scalar(0.1), Scalar(-0.2)};
  run_on_rows<Scalar>(state, [&](std::span<Scalar> negative) {
    std::copy(positive_source.begin(), positive_source.end(), positive.begin());
    benchmark::DoNotOptimize(sparsemc::prox::project_bi_simplex(negative, std::span<Scalar>(positive), Scalar(1), scratch));
  });
}

template <class Scalar>
void BM_GroupSoftThreshold(benchmark::State& state) {
  const auto threshold = static_cast<Scalar>(0.5 * std::sqrt(static_cast<double>(state.range(0))));
  run_on_rows<Scalar>(state, [&](std::span<Scalar> v) { sparsemc::prox::group_soft_threshold(v, threshold); });
}

template <class Scalar>
void BM_ProxL1(benchmark::State& state) {
  const sparsemc::L1 penalty{.lambda = 0.5, .mu = 0.1};
  run_on_rows<Scalar>(state, [&](std::span<Scalar> v) { penalty.prox(v, Scalar(1)); });
}

template <class Scalar>
void BM_ProxL1L2(benchmark::State& state) {
  const sparsemc::L1L2 penalty{.lambda = 0.5 * std::sqrt(static_cast<double>(state.range(0))), .mu = 0.1};
  run_on_rows<Scalar>(state, [&](std::span<Scalar> v) { penalty.prox(v, Scalar(1)); });
}

template <class Scalar>
void BM_ProxL1Linf(benchmark::State& state) {
  const sparsemc::L1Linf penalty{.lambda = 0.1 * static_cast<double>(state.range(0)), .mu = 0.1};
  run_on_rows<Scalar>(state, [&](std::span<Scalar> v) { penalty.prox(v, Scalar(1)); });
}

/// The exact optimality violation of an L1Linf row with ties (the prox output) and a gradient.
template <class Scalar>
void BM_ViolationL1Linf(benchmark::State& state) {
  const auto K = static_cast<std::size_t>(state.range(0));
  const sparsemc::L1Linf penalty{.lambda = 0.1 * static_cast<double>(K), .mu = 0.1};
  auto w = gaussian_row<Scalar>(K, 2);
  penalty.prox(std::span<Scalar>(w), Scalar(1));
  const auto g = gaussian_row<Scalar>(K, 3);
  for (auto _ : state) {
    benchmark::DoNotOptimize(penalty.violation(std::span<const Scalar>(w), std::span<const Scalar>(g)));
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(K));
}

}  // namespace

#define SPARSEMC_PROX_BENCH(name)                                         \
  BENCHMARK_TEMPLATE(name, double)->RangeMultiplier(10)->Range(10, 10000); \
  BENCHMARK_TEMPLATE(name, float)->RangeMultiplier(10)->Range(10, 10000)

SPARSEMC_PROX_BENCH(BM_ProjectSimplex);
SPARSEMC_PROX_BENCH(BM_SimplexBySort);
SPARSEMC_PROX_BENCH(BM_ProjectL1Ball);
SPARSEMC_PROX_BENCH(BM_EpigraphMax);
SPARSEMC_PROX_BENCH(BM_BiSimplex);
SPARSEMC_PROX_BENCH(BM_GroupSoftThreshold);
SPARSEMC_PROX_BENCH(BM_ProxL1);
SPARSEMC_PROX_BENCH(BM_ProxL1L2);
SPARSEMC_PROX_BENCH(BM_ProxL1Linf);
SPARSEMC_PROX_BENCH(BM_ViolationL1Linf);

BENCHMARK_MAIN();
