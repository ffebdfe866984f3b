// The simulator backend end to end: one scenario point in, one result row (and a timeline) out.
// Every simulation runs in its own child process (simulate_point_isolated), as in `tessera run`.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "tessera/core/loading/scenario_loader.hpp"
#include "tessera/core/point/point_programs.hpp"
#include "tessera/core/result/sweep_runner.hpp"
#include "tessera/core/strategy/halo_copies.hpp"
#include "tessera/simulator/simulate_point.hpp"

namespace tessera {
namespace {

const std::string kClusters = TESSERA_TEST_DATA_DIR "/clusters";

LoadedScenario scenario(const std::string& text) {
  return load_scenario_text(text, "sim_test.yaml", kClusters);
}

std::vector<PointResult> simulate_all(const LoadedScenario& loaded) {
  std::vector<PointResult> results;
  for (const auto& point : loaded.points) {
    results.push_back(sim::simulate_point_isolated(loaded, point, {}).result);
  }
  return results;
}

TEST(SimBackend, IdenticalInputsGiveByteIdenticalResults) {
  const auto loaded = load_default_scenario();
  sim::SimulationOptions options;
  options.trace = true;
  const auto first = sim::simulate_point_isolated(loaded, loaded.points[2], options);
  const auto second = sim::simulate_point_isolated(loaded, loaded.points[2], options);
  EXPECT_EQ(results_to_csv({first.result}), results_to_csv({second.result}));
  EXPECT_EQ(first.trace.dump(), second.trace.dump());
}

TEST(SimBackend, BreakdownAddsUpToTheStepAndNamesItsSources) {
  const auto loaded = load_default_scenario();
  const auto result = sim::simulate_point_isolated(loaded, loaded.points[3], {}).result;
  EXPECT_GT(result.step_seconds, 0);
  EXPECT_NEAR(result.breakdown.total(), result.step_seconds, 1e-9 * result.step_seconds);
  EXPECT_GT(result.breakdown.compute_seconds, 0);
  EXPECT_GT(result.breakdown.allreduce_seconds, 0);  // 32 GPUs sum their gradients
  EXPECT_EQ(result.time_provenance, Provenance::simulated);
  EXPECT_EQ(result.compute_provenance, Provenance::roofline);
  EXPECT_EQ(result.memory_provenance, Provenance::estimated);
  EXPECT_NE(result.note.find("CM02"), std::string::npos);
  EXPECT_EQ(result.gpus, 32);
  EXPECT_DOUBLE_EQ(result.samples_per_second, 8 / result.step_seconds);
}

TEST(SimBackend, StrongScalingNeverSlowsDownWithFreeCommunication) {
  const auto loaded = scenario(R"(
name: strong
model: {zoo: cosmoflow, options: {width: 64}, mini_batch: 16}
platform: {cluster: free_network.yaml}
sweep: {scaling: strong, grow: data, gpus: [1, 2, 4, 8, 16]}
)");
  const auto results = simulate_all(loaded);
  for (std::size_t i = 1; i < results.size(); ++i) {
    EXPECT_LE(results[i].step_seconds, results[i - 1].step_seconds * (1 + 1e-12))
        << results[i].gpus << " GPUs";
  }
  EXPECT_LT(results.back().step_seconds, results.front().step_seconds / 4);
}

TEST(SimBackend, WeakScalingStaysFlatWithFreeCommunication) {
  const auto loaded = scenario(R"(
name: weak
model: {zoo: cosmoflow, options: {width: 64}, mini_batch: 1}
parallelism: {spatial: {grid: [4, 1, 1], until: pool4}}
platform: {cluster: free_network.yaml}
sweep: {scaling: weak, grow: data, gpus: [4, 8, 16, 32, 64]}
)");
  const auto results = simulate_all(loaded);
  for (const auto& result : results) {
    EXPECT_NEAR(result.step_seconds, results.front().step_seconds,
                1e-6 * results.front().step_seconds)
        << result.gpus << " GPUs";
  }
}

TEST(SimBackend, OnAFreeNetworkAHaloTakesThePackingAndUnpackingOfItsFaces) {
  const auto loaded = scenario(R"(
name: halo
model: {zoo: cosmoflow, options: {width: 64}, mini_batch: 1}
parallelism: {spatial: {grid: [2, 1, 1], until: pool4}}
platform: {cluster: free_network.yaml}
)");
  const auto& point = loaded.points.front();
  const auto result = sim::simulate_point_isolated(loaded, point, {}).result;
  // The first GPU has an upper neighbour, the second a lower one. A face goes one way only
  // where a window reaches one side (pooling), so their copies differ, and each may wait for the
  // other's packing: the halo time lies between the larger GPU's copies and both together.
  const auto programs = point_programs(loaded, point, nullptr).programs;
  double first = 0, second = 0;
  for (const auto& op : programs.front().ops) {
    first += halo_copy_seconds(op, false, true);
    second += halo_copy_seconds(op, true, false);
  }
  EXPECT_GT(first, 0.0);
  EXPECT_GT(second, 0.0);
  EXPECT_GE(result.breakdown.halo_seconds, std::max(first, second) - 1e-9);
  EXPECT_LE(result.breakdown.halo_seconds, first + second + 1e-9);
}

TEST(SimBackend, TraceHasATrackPerStreamForEachTracedGpu) {
  auto loaded = load_default_scenario();
  loaded.scenario.outputs.trace_gpus = {0, 5};
  sim::SimulationOptions options;
  options.trace = true;
  const auto trace = sim::simulate_point_isolated(loaded, loaded.points[1], options).trace;
  ASSERT_TRUE(trace.contains("traceEvents"));
  std::set<std::pair<int, int>> tracks;
  bool halo = false, allreduce = false, compute = false;
  for (const auto& event : trace["traceEvents"]) {
    if (event["ph"] != "X") continue;
    tracks.insert({event["pid"].get<int>(), event["tid"].get<int>()});
    halo |= event["cat"] == "halo";
    allreduce |= event["cat"] == "allreduce";
    compute |= event["cat"] == "compute";
    EXPECT_GE(event["dur"].get<double>(), 0.0);
    // Every duration says where it came from.
    const auto source = event["args"]["source"].get<std::string>();
    EXPECT_EQ(source, event["cat"] == "compute" ? "roofline" : "simulated") << event.dump();
  }
  EXPECT_TRUE(tracks.count({0, 0}) && tracks.count({5, 0}));  // compute streams
  EXPECT_TRUE(tracks.count({0, 1}));                          // communication stream
  EXPECT_TRUE(halo && allreduce && compute);
}

TEST(SimBackend, PointsThatDoNotFitAreReportedNotHidden) {
  const auto loaded = scenario(R"(
name: too-big
model: {zoo: cosmoflow, options: {width: 512}, mini_batch: 1}
platform: {cluster: free_network.yaml}
memory: {device_capacity: 16 GB}
)");
  const auto result = sim::simulate_point_isolated(loaded, loaded.points[0], {}).result;
  EXPECT_FALSE(result.fits);
  EXPECT_EQ(result.status, PointStatus::does_not_fit);
  EXPECT_NE(result.note.find("does not fit"), std::string::npos);
  EXPECT_GT(result.peak_memory_bytes, 16e9);
}

TEST(SimBackend, AnInterruptedSweepResumesWithoutRedoingFinishedPoints) {
  // Every epoch reads the file system: the data store's 7 draws a point would make this sweep of
  // the default study 4 times longer, and resuming does not depend on them.
  auto loaded = load_default_scenario();
  loaded.scenario.io.store = DataStore::none;
  const auto directory =
      std::filesystem::temp_directory_path() / ("tessera-resume-" + std::to_string(::getpid()));
  SweepRunOptions options;
  options.backend = "sim";
  options.output_directory = directory.string();
  int simulated = 0;
  auto runner = [&](const SweepPoint& point) {
    ++simulated;
    if (simulated == 4) throw std::runtime_error("interrupted");
    return sim::simulate_point_isolated(loaded, point, {}).result;
  };
  EXPECT_THROW(run_sweep(loaded, options, runner), std::runtime_error);
  EXPECT_EQ(simulated, 4);
  simulated = 0;
  auto resumed = run_sweep(loaded, options, [&](const SweepPoint& point) {
    ++simulated;
    return sim::simulate_point_isolated(loaded, point, {}).result;
  });
  EXPECT_EQ(resumed.resumed, 3u);
  EXPECT_EQ(simulated, static_cast<int>(loaded.points.size()) - 3);
  EXPECT_EQ(resumed.points.size(), loaded.points.size());
  // The per-layer times, in the JSON only, come back with the kept points.
  for (const auto& point : resumed.points) {
    ASSERT_FALSE(point.layer_compute.empty()) << "point " << point.point;
    EXPECT_EQ(point.layer_compute.back().layer, "optimizer");
  }

  // Results made under other settings (here another network model) are not resumed.
  options.settings = {{"network_model", "LV08"}};
  simulated = 0;
  auto changed = run_sweep(loaded, options, [&](const SweepPoint& point) {
    ++simulated;
    return resumed.points[point.index];
  });
  EXPECT_EQ(changed.resumed, 0u);
  EXPECT_EQ(simulated, static_cast<int>(loaded.points.size()));
  std::filesystem::remove_all(directory);
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

TEST(SimBackend, RunsOnAUsersSimGridPlatformFile) {
  const auto loaded = load_scenario_text(R"(
name: xml
model: {zoo: cosmoflow, options: {width: 64}, mini_batch: 1}
parallelism: {data: 4}
io: {format: hdf5}
platform:
  preset: v100_node
  simgrid_xml: {file: ../platforms/four_gpus.xml, gpu_hosts: "gpu-{i}", gpus_per_node: 4}
)",
                                         "xml.yaml", kClusters);
  const auto result = sim::simulate_point_isolated(loaded, loaded.points[0], {}).result;
  EXPECT_GT(result.step_seconds, 0);
  EXPECT_GT(result.breakdown.allreduce_seconds, 0);
  EXPECT_EQ(result.breakdown.io_seconds, 0);
  EXPECT_NE(result.note.find("reads not simulated"), std::string::npos);
}

TEST(SimBackend, AMissingHostInTheMappingFailsThePointNamingTheHost) {
  const auto loaded = load_scenario_text(R"(
name: xml
model: {zoo: cosmoflow, options: {width: 64}, mini_batch: 1}
parallelism: {data: 8}
platform:
  preset: v100_node
  simgrid_xml: {file: ../platforms/four_gpus.xml, gpu_hosts: "gpu-{i}"}
)",
                                         "xml.yaml", kClusters);
  // The command line refuses such a mapping before any point (exit 2); a simulation reached
  // without that check fails its point with the reason rather than stopping a sweep.
  const auto result = sim::simulate_point_isolated(loaded, loaded.points[0], {}).result;
  EXPECT_EQ(result.status, PointStatus::failed);
  EXPECT_NE(result.note.find("no host 'gpu-4'"), std::string::npos) << result.note;
}

}  // namespace
}  // namespace tessera
