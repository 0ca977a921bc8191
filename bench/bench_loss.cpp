// Loss kernels over a batch of samples: gradient (and curvature) of each smooth loss and the
// Crammer–Singer subgradient, for K = 3, 100, 1000. Items/second = samples/second.
#include <benchmark/benchmark.h>

#include <sparsemc/core/rng.hpp>
#include <sparsemc/loss/losses.hpp>

#include <cstddef>
#include <span>
#include <vector>

namespace {

using namespace sparsemc;

constexpr std::size_t kSamples = 256;

// Scores around the margins (uniform in [−2, 2]) and one class per sample, or ~5 for multilabel.
struct Batch {
  std::size_t K;
  std::vector<double> scores;
  std::vector<std::vector<ClassIndex>> classes;
  Batch(std::size_t K_, bool multilabel) : K(K_), scores(kSamples * K_), classes(kSamples) {
    Rng rng(1);
    for (auto& v : scores) v = 4 * uniform_real(rng) - 2;
    for (auto& y : classes) {
      if (!multilabel) {
        y.push_back(static_cast<ClassIndex>(uniform_index(rng, K)));
        continue;
      }
      for (std::size_t k = 0; k < K; ++k)
        if (uniform_real(rng) * static_cast<double>(K) < 5.0) y.push_back(static_cast<ClassIndex>(k));
    }
  }
  [[nodiscard]] std::span<const double> s(std::size_t i) const { return {scores.data() + i * K, K}; }
};

template <class L>
void Gradient(benchmark::State& state) {
  const Batch batch(static_cast<std::size_t>(state.range(0)), false);
  std::vector<double> g(batch.K);
  for (auto _ : state)
    for (std::size_t i = 0; i < kSamples; ++i) benchmark::DoNotOptimize(L{}.gradient(batch.s(i), batch.classes[i], std::span<double>(g)));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kSamples));
}

template <class L>
void Curvature(benchmark::State& state) {
  const Batch batch(static_cast<std::size_t>(state.range(0)), false);
  std::vector<double> h(batch.K);
  for (auto _ : state)
    for (std::size_t i = 0; i < kSamples; ++i) {
      L{}.curvature(batch.s(i), batch.classes[i], std::span<double>(h));
      benchmark::DoNotOptimize(h.data());
    }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kSamples));
}

void CrammerSingerSubgradient(benchmark::State& state) {
  const Batch batch(static_cast<std::size_t>(state.range(0)), false);
  std::vector<double> g(batch.K);
  for (auto _ : state)
    for (std::size_t i = 0; i < kSamples; ++i)
      benchmark::DoNotOptimize(CrammerSinger{}.subgradient(batch.s(i), batch.classes[i], std::span<double>(g)));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kSamples));
}

}  // namespace

BENCHMARK_TEMPLATE(Gradient, SquaredHinge)->Arg(3)->Arg(100)->Arg(1000);
BENCHMARK_TEMPLATE(Gradient, HuberHinge)->Arg(3)->Arg(100)->Arg(1000);
BENCHMARK_TEMPLATE(Gradient, OvrSquaredHinge)->Arg(3)->Arg(100)->Arg(1000);
BENCHMARK_TEMPLATE(Gradient, Logistic)->Arg(3)->Arg(100)->Arg(1000);
BENCHMARK_TEMPLATE(Gradient, LeastSquares)->Arg(3)->Arg(100)->Arg(1000);
BENCHMARK_TEMPLATE(Curvature, SquaredHinge)->Arg(3)->Arg(100)->Arg(1000);
BENCHMARK_TEMPLATE(Curvature, Logistic)->Arg(3)->Arg(100)->Arg(1000);
BENCHMARK(CrammerSingerSubgradient)->Arg(3)->Arg(100)->Arg(1000);

BENCHMARK_MAIN();
