// Wall time and peak memory of simulating one training step: CosmoFlow-512 with hybrid data +
// 4-way depth parallelism on a Lassen-like cluster (nodes added beyond Lassen's 795 for the
// largest sizes), from 64 to 16,384 GPUs, in both simulation modes: simulate_step/<GPUs>/1 is the
// symmetric mode (the default: a few nodes play for all), simulate_step/<GPUs>/0 plays every GPU.
// simulate_message_level_step/<GPUs> plays 3D U-Net's collectives message by message.
// simulate_pipeline_step/<micro-batches> plays a GPT with tensor x pipeline parallelism on DGX
// A100 nodes for a growing number of micro-batches: its cpu_s_per_micro_batch should stay flat
// (a SimGrid list that grew with the step's un-waited transfers once made it grow linearly).
// Each point runs in a fresh process (one SimGrid engine per process); the reported time is the
// child's own wall time for building the platform and playing the step, child_cpu_s its CPU time
// (what to compare on a loaded machine), and max_rss_bytes the peak resident memory of the
// children so far (run one point per process for its own peak).
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <ctime>
#include <map>
#include <queue>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "tessera/core/loading/scenario_loader.hpp"
#include "tessera/simulator/simulate_point.hpp"

namespace {

const char* const kScenario = R"(
name: bench-cosmoflow-512
model: {zoo: cosmoflow, options: {width: 512}, mini_batch: 1}
parallelism: {data: 1, spatial: {grid: [4, 1, 1], until: pool5}}
platform: {preset: lassen}
)";

double seconds(const timeval& time) {
  return static_cast<double>(time.tv_sec) + 1e-6 * static_cast<double>(time.tv_usec);
}

// The CPU time (user + system) of the children that ended since `before`, per iteration of
// `state`: the wall time on an idle core; a loaded machine stretches the wall time but not this.
double child_cpu_seconds(const rusage& before, const benchmark::State& state) {
  rusage usage{};
  getrusage(RUSAGE_CHILDREN, &usage);
  return (seconds(usage.ru_utime) + seconds(usage.ru_stime) - seconds(before.ru_utime) -
          seconds(before.ru_stime)) /
         static_cast<double>(state.iterations());
}

// Whether the simulation failed (its child crashed, say): the benchmark then reports the
// reason instead of timing a step that was not played.
bool failed(benchmark::State& state, const tessera::sim::SimulationOutcome& outcome) {
  if (outcome.result.status != tessera::PointStatus::failed) return false;
  state.SkipWithError(outcome.result.note.c_str());
  return true;
}

// The peak resident memory of the children so far.
double children_max_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_CHILDREN, &usage);
  return static_cast<double>(usage.ru_maxrss) * 1024.0;
}

void simulate_step(benchmark::State& state) {
  const auto gpus = state.range(0);
  auto loaded = tessera::load_scenario_text(kScenario, "bench.yaml", "");
  loaded.cluster.nodes = std::max<std::int64_t>(loaded.cluster.nodes, gpus / 4);
  loaded.scenario.sim.mode = state.range(1) == 1 ? "symmetric" : "full";
  auto point = loaded.points.front();
  point.config.data = gpus / 4;
  point.plan.config.data = gpus / 4;
  double simulated_step = 0;
  rusage before{};
  getrusage(RUSAGE_CHILDREN, &before);
  for (auto _ : state) {
    const auto outcome = tessera::sim::simulate_point_isolated(loaded, point, {});
    if (failed(state, outcome)) break;
    state.SetIterationTime(outcome.wall_seconds);
    simulated_step = outcome.result.step_seconds;
  }
  state.counters["simulated_step_s"] = simulated_step;
  state.counters["child_cpu_s"] = child_cpu_seconds(before, state);
  state.counters["max_rss_bytes"] = children_max_rss_bytes();
}

// Message-level collectives play every message with short-lived actors: 3D U-Net-256 split
// 2x2x2, 8 to 64 GPUs (each actor's stack once stayed resident: 12 GB at 32 GPUs).
void simulate_message_level_step(benchmark::State& state) {
  const auto gpus = state.range(0);
  auto loaded = tessera::load_scenario_text(R"(
name: bench-unet3d-message-level
model: {zoo: unet3d, options: {width: 256}, mini_batch: 1}
parallelism: {spatial: {grid: [2, 2, 2]}}
platform: {preset: lassen}
)",
                                            "bench.yaml", "");
  auto point = loaded.points.front();
  point.config.data = gpus / 8;
  point.plan.config.data = gpus / 8;
  tessera::sim::SimulationOptions options;
  options.granularity = tessera::sim::Granularity::message;
  rusage before{};
  getrusage(RUSAGE_CHILDREN, &before);
  for (auto _ : state) {
    const auto outcome = tessera::sim::simulate_point_isolated(loaded, point, options);
    if (failed(state, outcome)) break;
    state.SetIterationTime(outcome.wall_seconds);
  }
  state.counters["child_cpu_s"] = child_cpu_seconds(before, state);
  state.counters["max_rss_bytes"] = children_max_rss_bytes();
}

std::string pipeline_scenario(std::int64_t micro_batches) {
  const auto count = std::to_string(micro_batches);
  return "name: bench-gpt-pipeline\n"
         "model:\n"
         "  zoo: gpt2\n"
         "  options: {layers: 16, hidden: 2048, heads: 16, sequence_length: 1024}\n"
         "  mini_batch: " +
         count +
         "\n"
         "  dtype: float16\n"
         "parallelism: {data: 1, tensor: 8, model: {degree: 8, micro_batches: " +
         count +
         ", schedule: 1f1b}}\n"
         "platform: {preset: dgx_a100_selene}\n";
}

void simulate_pipeline_step(benchmark::State& state) {
  const auto micro_batches = state.range(0);
  const auto loaded =
      tessera::load_scenario_text(pipeline_scenario(micro_batches), "bench.yaml", "");
  const auto& point = loaded.points.front();
  rusage before{};
  getrusage(RUSAGE_CHILDREN, &before);
  for (auto _ : state) {
    const auto outcome = tessera::sim::simulate_point_isolated(loaded, point, {});
    if (failed(state, outcome)) break;
    state.SetIterationTime(outcome.wall_seconds);
  }
  state.counters["cpu_s_per_micro_batch"] =
      child_cpu_seconds(before, state) / static_cast<double>(micro_batches);
}

void every_size(benchmark::internal::Benchmark* benchmark) {
  for (std::int64_t gpus = 64; gpus <= 16384; gpus *= 2) benchmark->Args({gpus, 1});
  for (std::int64_t gpus = 64; gpus <= 16384; gpus *= 2) benchmark->Args({gpus, 0});
}

// A fixed piece of work of a simulator's kind (an event queue, maps keyed by flow, small
// allocations), independent of Tessera's code: its CPU time measures the machine, so that
// simulate_step's time divided by it compares across machines and runs
// (tests/bench/check_step_ratio.py fails CI when the ratio grows past its recorded baseline).
void reference_work(benchmark::State& state) {
  double cpu_seconds = 0;
  std::uint64_t checksum = 0;
  for (auto _ : state) {
    timespec start{}, end{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &start);
    std::mt19937_64 random(42);
    std::priority_queue<std::pair<double, std::uint64_t>> events;
    std::unordered_map<std::uint64_t, std::vector<double>> flows;
    std::map<std::uint64_t, double> remaining;
    for (std::uint64_t step = 0; step < 1'500'000; ++step) {
      const std::uint64_t flow = random() % 200'000;
      events.emplace(static_cast<double>(random() % 1'000'000), flow);
      flows[flow].push_back(static_cast<double>(step));
      remaining[flow] += 1.0;
      if (events.size() > 50'000) {
        const auto [time, done] = events.top();
        events.pop();
        checksum += static_cast<std::uint64_t>(time) ^ done;
        remaining.erase(done);
        flows.erase(done);
      }
    }
    checksum += flows.size() + remaining.size();
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &end);
    cpu_seconds = static_cast<double>(end.tv_sec - start.tv_sec) +
                  1e-9 * static_cast<double>(end.tv_nsec - start.tv_nsec);
    state.SetIterationTime(cpu_seconds);
  }
  benchmark::DoNotOptimize(checksum);
  state.counters["cpu_s"] = cpu_seconds;
}

BENCHMARK(reference_work)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);

BENCHMARK(simulate_step)
    ->Apply(every_size)
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

BENCHMARK(simulate_message_level_step)
    ->Arg(8)
    ->Arg(32)
    ->Arg(64)
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK(simulate_pipeline_step)
    ->Arg(32)
    ->Arg(128)
    ->Arg(512)
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
