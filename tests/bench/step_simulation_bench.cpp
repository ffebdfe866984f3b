// Wall time and peak memory of simulating one training step: CosmoFlow-512 with hybrid data +
// 4-way depth parallelism on a Lassen-like cluster (nodes added beyond Lassen's 795 for the
// largest sizes), from 64 to 16,384 GPUs. Each point runs in a fresh process (one SimGrid engine
// per process); the reported time is the child's own wall time for building the platform and
// playing the step, and max_rss_bytes its peak resident memory.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include "tessera/core/scenario_loader.hpp"
#include "tessera/simulator/simulate_point.hpp"

namespace {

const char* const kScenario = R"(
name: bench-cosmoflow-512
model: {zoo: cosmoflow, options: {width: 512}, mini_batch: 1}
parallelism: {data: 1, spatial: {grid: [4, 1, 1], until: pool5}}
platform: {preset: lassen}
)";

void simulate_step(benchmark::State& state) {
  const auto gpus = state.range(0);
  auto loaded = tessera::load_scenario_text(kScenario, "bench.yaml", "");
  loaded.cluster.nodes = std::max<std::int64_t>(loaded.cluster.nodes, gpus / 4);
  auto point = loaded.points.front();
  point.config.data = gpus / 4;
  point.plan.config.data = gpus / 4;
  double simulated_step = 0;
  for (auto _ : state) {
    const auto outcome = tessera::sim::simulate_point_isolated(loaded, point, {});
    state.SetIterationTime(outcome.wall_seconds);
    simulated_step = outcome.result.step_seconds;
  }
  rusage usage{};
  getrusage(RUSAGE_CHILDREN, &usage);
  state.counters["simulated_step_s"] = simulated_step;
  state.counters["max_rss_bytes"] = static_cast<double>(usage.ru_maxrss) * 1024.0;
}

BENCHMARK(simulate_step)
    ->RangeMultiplier(2)
    ->Range(64, 16384)
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
