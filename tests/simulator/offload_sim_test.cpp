// vDNN in the simulator, end to end: offloading lengthens the step by the copies it cannot hide,
// lowers the peak and the average memory, reports both, and the trace shows the copies and the
// memory in use.
#include <gtest/gtest.h>

#include <string>

#include "tessera/core/loading/scenario_loader.hpp"
#include "tessera/simulator/simulate_point.hpp"

namespace tessera {
namespace {

sim::SimulationOutcome simulate_vgg(const std::string& policy, bool trace = false) {
  const auto loaded = load_scenario_text(R"(
name: vdnn-test
model: {zoo: vgg16, mini_batch: 32, optimizer: momentum}
memory: {offload: )" + policy + R"(}
platform: {preset: titanx_workstation}
outputs: {trace_gpus: [0]}
)",
                                         "vdnn.yaml", ".");
  sim::SimulationOptions options;
  options.trace = trace;
  return sim::simulate_point_isolated(loaded, loaded.points.at(0), options);
}

TEST(OffloadSimulation, OffloadingCostsTimeAndSavesMemory) {
  const auto none = simulate_vgg("none").result;
  const auto all = simulate_vgg("all").result;
  EXPECT_EQ(none.breakdown.offload_seconds, 0);
  EXPECT_EQ(none.offloaded_bytes, 0);
  EXPECT_GT(all.breakdown.offload_seconds, 0);
  EXPECT_GT(all.offloaded_bytes, 1e9);
  EXPECT_GT(all.step_seconds, none.step_seconds);
  EXPECT_NEAR(all.step_seconds - none.step_seconds, all.breakdown.offload_seconds,
              1e-9 * all.step_seconds);
  EXPECT_LT(all.peak_memory_bytes, none.peak_memory_bytes);
  EXPECT_LT(all.average_memory_bytes, none.average_memory_bytes);
  EXPECT_GT(all.average_memory_bytes, 0);
  EXPECT_LE(all.average_memory_bytes, all.peak_memory_bytes);
  EXPECT_NE(all.note.find("offload all"), std::string::npos) << all.note;
}

TEST(OffloadSimulation, TheTraceShowsTheCopiesAndTheMemoryInUse) {
  const auto outcome = simulate_vgg("all", true);
  int copies = 0, samples = 0, by_use_samples = 0;
  double peak = 0, feature_map_peak = 0;
  for (const auto& event : outcome.trace["traceEvents"]) {
    if (event["ph"] == "X" && event["tid"] == 3) ++copies;
    if (event["ph"] == "C" && event["name"] == "device memory in use") {
      ++samples;
      peak = std::max(peak, event["args"]["bytes"].get<double>());
    }
    if (event["ph"] == "C" && event["name"] == "device memory by use") {
      ++by_use_samples;
      feature_map_peak = std::max(feature_map_peak, event["args"]["activations"].get<double>());
      EXPECT_GT(event["args"]["weights"].get<double>(), 0);  // there from the step's start
    }
  }
  EXPECT_GT(copies, 10);
  EXPECT_GT(samples, 50);
  EXPECT_DOUBLE_EQ(peak, outcome.result.peak_memory_bytes);
  // The same samples by use, which add up to the total (checked in core's timeline test).
  EXPECT_EQ(by_use_samples, samples);
  EXPECT_GT(feature_map_peak, 0);
}

}  // namespace
}  // namespace tessera
