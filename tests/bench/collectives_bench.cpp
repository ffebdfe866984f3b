// Wall time of simulating a ring all-reduce of 100 MB over many GPUs: aggregated granularity at
// 256, 1024 and 2048 GPUs, message granularity at 256 for comparison.
//
// Platform: one star zone, every GPU with its own split-duplex link (100 Gb/s, 1 us each way, so
// 2 us per route); CM02 network model without cross-traffic. SimGrid allows one Engine per
// process, so every iteration forks a child that builds the platform and runs the collective; the
// reported time is the child's wall time for both (manual time), with counters for the simulation
// alone, the simulated time and its error against 2(p-1)/p * S/B + 2(p-1) * a.
#include <benchmark/benchmark.h>

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include "tessera/simulator/collectives/collectives.hpp"
#include "tessera/simulator/fabric.hpp"

namespace {

namespace s4u = simgrid::s4u;
using tessera::sim::AllreduceAlgorithm;
using tessera::sim::CollectiveContext;
using tessera::sim::Fabric;
using tessera::sim::Granularity;

constexpr double kBytes = 100e6;
constexpr double kBandwidth = 12.5e9;  // bytes/s per link direction
constexpr double kLinkLatency = 1e-6;  // seconds per link

struct Measurement {
  double build_seconds = 0;      // wall: engine and platform
  double run_seconds = 0;        // wall: the simulation
  double simulated_seconds = 0;  // simulated time of the all-reduce
};

Measurement simulate(int gpus, Granularity granularity) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  static std::string name = "collectives_bench";
  static std::string log = "--log=root.thres:critical";
  std::array<char*, 3> argv{name.data(), log.data(), nullptr};
  int argc = 2;
  s4u::Engine engine(&argc, argv.data());
  s4u::Engine::set_config("network/model:CM02");
  s4u::Engine::set_config("network/crosstraffic:0");
  auto* zone = s4u::create_star_zone("star");
  std::vector<s4u::Host*> hosts;
  for (int gpu = 0; gpu < gpus; ++gpu) {
    const std::string host_name = "gpu" + std::to_string(gpu);
    s4u::Host* host = zone->create_host(host_name, 1e12);
    s4u::Link* link =
        zone->create_split_duplex_link(host_name + "-link", kBandwidth)->set_latency(kLinkLatency);
    zone->add_route(host->get_netpoint(), nullptr, nullptr, nullptr,
                    {s4u::LinkInRoute(link, s4u::LinkInRoute::Direction::UP)}, true);
    hosts.push_back(host);
  }
  zone->seal();
  const Fabric fabric(hosts);
  const CollectiveContext context{fabric, 1, 1, granularity};
  std::vector<int> members(hosts.size());
  for (std::size_t i = 0; i < members.size(); ++i) members[i] = static_cast<int>(i);
  Measurement measurement;
  for (std::size_t index = 0; index < members.size(); ++index) {
    s4u::Actor::create("member", hosts[index], [&, index] {
      tessera::sim::allreduce(context, members, index, kBytes, AllreduceAlgorithm::ring);
      measurement.simulated_seconds =
          std::max(measurement.simulated_seconds, s4u::Engine::get_clock());
    });
  }
  const auto built = Clock::now();
  engine.run();
  const auto ran = Clock::now();
  measurement.build_seconds = std::chrono::duration<double>(built - start).count();
  measurement.run_seconds = std::chrono::duration<double>(ran - built).count();
  return measurement;
}

// Runs `simulate` in a forked child; returns false if the child failed.
bool simulate_in_child(int gpus, Granularity granularity, Measurement& measurement) {
  std::array<int, 2> pipe_ends{};
  if (::pipe(pipe_ends.data()) != 0) return false;
  const pid_t pid = ::fork();
  if (pid < 0) return false;
  if (pid == 0) {
    ::close(pipe_ends[0]);
    const Measurement result = simulate(gpus, granularity);
    const auto written = ::write(pipe_ends[1], &result, sizeof result);
    std::_Exit(written == static_cast<ssize_t>(sizeof result) ? 0 : 1);
  }
  ::close(pipe_ends[1]);
  const auto read = ::read(pipe_ends[0], &measurement, sizeof measurement);
  ::close(pipe_ends[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return read == static_cast<ssize_t>(sizeof measurement) && WIFEXITED(status) &&
         WEXITSTATUS(status) == 0;
}

void RingAllreduce100MB(benchmark::State& state) {
  const int gpus = static_cast<int>(state.range(0));
  const auto granularity = static_cast<Granularity>(state.range(1));
  Measurement total;
  for (auto _ : state) {
    Measurement measurement;
    if (!simulate_in_child(gpus, granularity, measurement)) {
      state.SkipWithError("the simulation failed");
      return;
    }
    state.SetIterationTime(measurement.build_seconds + measurement.run_seconds);
    total.build_seconds += measurement.build_seconds;
    total.run_seconds += measurement.run_seconds;
    total.simulated_seconds = measurement.simulated_seconds;
  }
  const double p = gpus;
  const double formula = 2 * (p - 1) / p * kBytes / kBandwidth + 2 * (p - 1) * 2 * kLinkLatency;
  const auto iterations = static_cast<double>(state.iterations());
  state.counters["build_wall_s"] = total.build_seconds / iterations;
  state.counters["run_wall_s"] = total.run_seconds / iterations;
  state.counters["simulated_s"] = total.simulated_seconds;
  state.counters["error_vs_formula"] = std::abs(total.simulated_seconds - formula) / formula;
  state.SetLabel(granularity == Granularity::message ? "message" : "aggregated");
}

constexpr auto kAggregated = static_cast<int64_t>(Granularity::aggregated);
constexpr auto kMessage = static_cast<int64_t>(Granularity::message);

BENCHMARK(RingAllreduce100MB)
    ->ArgNames({"gpus", "granularity"})
    ->Args({256, kAggregated})
    ->Args({1024, kAggregated})
    ->Args({2048, kAggregated})
    ->Iterations(5)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(RingAllreduce100MB)
    ->ArgNames({"gpus", "granularity"})
    ->Args({256, kMessage})
    ->Iterations(2)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
