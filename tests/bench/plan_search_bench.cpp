// Wall time of `tessera plan`'s whole search for CosmoFlow-512 on 2,048 GPUs of the Lassen preset
// (scenarios/cosmoflow_strong_scaling.yaml: global batch 64), in one process with one simulation
// at a time: enumerate every strategy, screen each (validity, memory, the compute critical-path
// bound), then simulate in waves of 8 in forked children. plan_search/1/S is the search as
// `tessera plan` runs it (branch and bound proving the best five), plan_search/2/S as
// `tessera plan --pareto` runs it (the Pareto front of step against memory proven too);
// plan_search/0/S simulates every valid candidate that fits (--exhaustive), the reference the
// bound saves against. S = 0: the space without tensor parallelism or ZeRO (8,616 candidates,
// as `tessera plan` searched it until 2026-11-27); S = 1: the whole space (94,026), which only
// the communication bound prunes (docs/measurements/2026-11-29-plan-communication-bound.md);
// its exhaustive evaluation would take hours and is not registered. plan_screening/T times the
// whole space's screening in T threads. plan_results_write/N writes plan.json and plan.csv of N
// decided candidates (rows like the whole space's pruned ones) as `tessera plan` rewrites them
// during its search, and counts the heap the write leaves free behind it: a simulation child
// forked later zeroes its actors' stacks wherever that free heap has room for them
// (docs/measurements/2026-12-06-plan-heap.md). Its target: nothing left free.
// The target: the best strategy in at most 60 s (run under `taskset -c 0` to hold it to one
// core).
#include <benchmark/benchmark.h>
#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "tessera/core/plan_search/plan_screen.hpp"
#include "tessera/core/plan_search/plan_search.hpp"
#include "tessera/core/plan_search/plan_store.hpp"
#include "tessera/simulator/plan_evaluation.hpp"

namespace {

// scenarios/cosmoflow_strong_scaling.yaml without its sweep: what `tessera plan ... --gpus 2048`
// reads from it.
const char* const kScenario = R"(
name: bench-plan-cosmoflow-512
model: {zoo: cosmoflow, options: {width: 512}, mini_batch: 1}
parallelism: {data: 64, spatial: {grid: [1, 1, 1], until: pool3}}
platform: {preset: lassen}
)";

double seconds(const timeval& time) {
  return static_cast<double>(time.tv_sec) + 1e-6 * static_cast<double>(time.tv_usec);
}

double children_cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_CHILDREN, &usage);
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

tessera::PlanSpaceOptions space_of(const tessera::LoadedScenario& loaded, bool whole) {
  auto space = tessera::default_space_options(loaded);
  space.gpus = {2048};
  if (!whole) {
    space.max_tensor_degree = 1;
    space.pinned.insert("memory.shard");  // the scenario's: none
  }
  return space;
}

void plan_screening(benchmark::State& state) {
  const auto loaded = tessera::load_scenario_text(kScenario, "bench.yaml", "");
  const auto candidates = tessera::enumerate_candidates(loaded, space_of(loaded, true));
  for (auto _ : state) {
    const auto screened = tessera::screen_candidates(loaded, candidates, nullptr,
                                                     static_cast<std::size_t>(state.range(0)));
    benchmark::DoNotOptimize(screened.data());
  }
  state.counters["candidates"] = static_cast<double>(candidates.size());
}

void plan_search(benchmark::State& state) {
  using Clock = std::chrono::steady_clock;
  const auto loaded = tessera::load_scenario_text(kScenario, "bench.yaml", "");
  const auto space = space_of(loaded, state.range(1) == 1);
  tessera::PlanSearchOptions options;
  options.exhaustive = state.range(0) == 0;
  options.pareto = state.range(0) == 2;
  tessera::PlanSearchResult search;
  double screening = 0, searching = 0;
  const double children_before = children_cpu_seconds();
  for (auto _ : state) {
    const auto start = Clock::now();
    auto screened =
        tessera::screen_candidates(loaded, tessera::enumerate_candidates(loaded, space), nullptr);
    screening = std::chrono::duration<double>(Clock::now() - start).count();
    search = tessera::search_plan(std::move(screened), options,
                                  tessera::sim::local_wave_evaluator(loaded, {}, 1));
    searching = search.wall_seconds;
    state.SetIterationTime(std::chrono::duration<double>(Clock::now() - start).count());
  }
  std::size_t invalid = 0, over_memory = 0, bounded = 0;
  for (const auto& outcome : search.outcomes) {
    invalid += outcome.status == tessera::CandidateStatus::invalid;
    over_memory += outcome.status == tessera::CandidateStatus::over_memory;
    bounded += outcome.status == tessera::CandidateStatus::bounded;
  }
  const auto iterations = static_cast<double>(state.iterations());
  state.counters["candidates"] = static_cast<double>(search.outcomes.size());
  state.counters["invalid"] = static_cast<double>(invalid);
  state.counters["over_memory"] = static_cast<double>(over_memory);
  state.counters["bounded"] = static_cast<double>(bounded);
  state.counters["simulated"] = static_cast<double>(search.simulated);
  state.counters["shared"] = static_cast<double>(search.shared);
  state.counters["screening_s"] = screening;
  state.counters["search_s"] = searching;
  state.counters["per_simulation_s"] =
      search.simulated > 0 ? searching / static_cast<double>(search.simulated) : 0;
  // The children's CPU time (user + system): the simulations' own cost, which a loaded machine's
  // wall time inflates.
  state.counters["children_cpu_s"] = (children_cpu_seconds() - children_before) / iterations;
  state.counters["best_step_s"] =
      search.ranking.empty() ? 0 : search.outcomes[search.ranking.front()].result.step_seconds;
}

// A decided candidate's row as the whole space's screening writes most of them: pruned, with
// its reason and strategy in the note and the digests of its inputs.
tessera::CandidateOutcome pruned_outcome(std::size_t index) {
  tessera::CandidateOutcome outcome;
  outcome.status = tessera::CandidateStatus::invalid;
  outcome.reason = "the split does not fit the model";
  auto& row = outcome.result;
  row.scenario = "cosmoflow-strong-scaling";
  row.point = static_cast<std::int64_t>(index);
  row.backend = "sim";
  row.gpus = 2048;
  row.spatial_grid = "1x1x64";
  row.status = tessera::PointStatus::skipped;
  row.note =
      "pruned (invalid): parallelism.spatial.grid: layer 'conv4' output extent W=32 is not "
      "divisible by 64 partitions; split fewer ways or end spatial parallelism earlier "
      "(parallelism.spatial.until); strategy: data 1 x grid 1x1x64 x model 4 x tensor 8, "
      "candidate " +
      std::to_string(index);
  const std::string digest = "93d872e59424db5960505cdd14052efb";
  row.inputs = {{"cluster", digest},
                {"model", digest},
                {"scenario", digest},
                {"settings", digest},
                {"version", "0.1.0 (executable " + digest + ")"},
                {"strategy",
                 "data=1;grid=1x1x64;until=;model=4;stages=;micro_batches=1;"
                 "schedule=gpipe;mini_batch=64;offload=dyn;workspace=" +
                     std::to_string(index)}};
  return outcome;
}

void plan_results_write(benchmark::State& state) {
  using Clock = std::chrono::steady_clock;
  tessera::PlanSearchResult search;
  for (std::int64_t i = 0; i < state.range(0); ++i) {
    search.outcomes.push_back(pruned_outcome(static_cast<std::size_t>(i)));
  }
  tessera::RunResult header;
  header.scenario = "cosmoflow-strong-scaling";
  header.backend = "sim";
  const auto directory = std::filesystem::temp_directory_path() /
                         ("tessera_plan_results_bench_" + std::to_string(::getpid()));
  std::filesystem::create_directories(directory);
  const auto files = tessera::plan_files(directory.string());
  double free_before = 0, free_after = 0, write = 0;
  for (auto _ : state) {
    free_before = static_cast<double>(::mallinfo2().fordblks);
    const auto start = Clock::now();
    tessera::write_plan_results(files, header, search);
    write = std::chrono::duration<double>(Clock::now() - start).count();
    free_after = static_cast<double>(::mallinfo2().fordblks);
    state.SetIterationTime(write);
  }
  std::filesystem::remove_all(directory);
  state.counters["write_s"] = write;
  state.counters["heap_left_free_bytes"] = free_after - free_before;
}

BENCHMARK(plan_search)
    ->Args({1, 0})
    ->Args({2, 0})
    ->Args({0, 0})
    ->Args({1, 1})
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kSecond);

BENCHMARK(plan_screening)->Arg(1)->Arg(2)->Iterations(1)->Unit(benchmark::kSecond);
BENCHMARK(plan_results_write)->Arg(94026)->UseManualTime()->Iterations(1)->Unit(benchmark::kSecond);

}  // namespace

BENCHMARK_MAIN();
