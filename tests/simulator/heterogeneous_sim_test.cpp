// Heterogeneous clusters in the simulator: node groups with their own GPUs and links, and
// stragglers (one GPU's clock, one node's NICs), all played in full.
#include <gtest/gtest.h>

#include <string>

#include "simulate_first_point.hpp"
#include "tessera/core/loading/scenario_loader.hpp"
#include "tessera/simulator/simulate_point.hpp"

namespace tessera {
namespace {

LoadedScenario resnet18_on(const std::string& preset, std::int64_t data) {
  return load_scenario_text(R"(
name: heterogeneous
model: {zoo: resnet18, mini_batch: 32}
parallelism: {data: )" + std::to_string(data) +
                                R"(}
platform: {preset: )" + preset + R"(}
)",
                            "heterogeneous.yaml", "");
}

TEST(HeterogeneousSim, PNodesHoldTheMixedClusterBack) {
  const auto mixed = resnet18_on("v100_p100_mixed", 32);
  auto all_v100 = mixed;
  all_v100.cluster.groups[1].gpu = all_v100.cluster.groups[0].gpu;
  const auto slow = test::simulate_first_point(mixed);
  const auto fast = test::simulate_first_point(all_v100);
  EXPECT_NE(slow.note.find("full simulation"), std::string::npos) << slow.note;
  // The last GPU to finish is a P100: its kernels take the P100's roofline times (fp32 peak
  // 10.6 against 15.7 TFLOP/s, memory 732 against 900 GB/s).
  EXPECT_GT(slow.breakdown.compute_seconds, 1.2 * fast.breakdown.compute_seconds);
  EXPECT_GT(slow.step_seconds, fast.step_seconds);
}

TEST(HeterogeneousSim, ASlowClockStretchesThatGpusCompute) {
  auto loaded = resnet18_on("v100_p100_mixed", 32);
  loaded.cluster.groups[1] = loaded.cluster.groups[0];  // every node a V100 node
  loaded.cluster.groups[1].name = "v100-too";
  const auto nominal = test::simulate_first_point(loaded);
  loaded.cluster.stragglers = {{StragglerKind::gpu_clock, 5, 0.7}};
  const auto straggling = test::simulate_first_point(loaded);
  EXPECT_NEAR(straggling.breakdown.compute_seconds, nominal.breakdown.compute_seconds / 0.7,
              1e-9 * nominal.breakdown.compute_seconds);
  EXPECT_GT(straggling.step_seconds,
            nominal.step_seconds + 0.9 * (1 / 0.7 - 1) * nominal.breakdown.compute_seconds);
}

TEST(HeterogeneousSim, AHalfBandwidthNicSlowsTheAllreduce) {
  auto loaded = resnet18_on("v100_p100_mixed", 32);
  loaded.cluster.groups[1] = loaded.cluster.groups[0];
  loaded.cluster.groups[1].name = "v100-too";
  // Slow cables between the nodes: the gradient all-reduce dominates the step.
  loaded.cluster.network.link_bandwidth_bytes_per_second = 1e9;
  for (auto& group : loaded.cluster.groups) group.node.nic_bandwidth_bytes_per_second = 0.25e9;
  const auto nominal = test::simulate_first_point(loaded);
  loaded.cluster.stragglers = {{StragglerKind::nic_bandwidth, 2, 0.5}};
  const auto straggling = test::simulate_first_point(loaded);
  ASSERT_GT(nominal.breakdown.allreduce_seconds, 0.5 * nominal.step_seconds);
  EXPECT_GT(straggling.breakdown.allreduce_seconds, 1.3 * nominal.breakdown.allreduce_seconds);
  EXPECT_GT(straggling.step_seconds, nominal.step_seconds);
}

}  // namespace
}  // namespace tessera
