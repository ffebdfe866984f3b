// Tensor parallelism played: the tensor group's all-reduces and gathers run as collectives on the
// cluster's links (inside a node, as ranks are numbered), each GPU computes its share of the
// layers, and the symmetric mode agrees with the full simulation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "simulate_first_point.hpp"
#include "tessera/core/loading/scenario_loader.hpp"
#include "tessera/simulator/simulate_point.hpp"

namespace tessera {
namespace {

LoadedScenario gpt(std::int64_t data, std::int64_t tensor, const std::string& platform,
                   const std::string& mode = "symmetric") {
  return load_scenario_text(
      "name: tensor\n"
      "model: {zoo: gpt2, options: {layers: 2, hidden: 512, heads: 8, sequence_length: 256, "
      "vocabulary: 1000}, mini_batch: 4}\n"
      "parallelism: {data: " +
          std::to_string(data) + ", tensor: " + std::to_string(tensor) +
          "}\n"
          "platform: " +
          platform + "\nsim: {mode: " + mode + "}\n",
      "tensor.yaml", TESSERA_TEST_DATA_DIR "/clusters");
}

PointResult simulate_tensor(const LoadedScenario& loaded, std::int64_t min_played_nodes = 2) {
  return test::simulate_first_point(loaded, min_played_nodes);
}

TEST(TensorSim, EachGpuComputesItsShareAndTheGroupCommunicates) {
  const auto alone = simulate_tensor(gpt(1, 1, "{cluster: two_pcie_nodes.yaml}"));
  const auto split = simulate_tensor(gpt(1, 2, "{cluster: two_pcie_nodes.yaml}"));
  EXPECT_EQ(split.gpus, 2);
  EXPECT_EQ(split.tensor_degree, 2);
  EXPECT_EQ(split.global_batch, alone.global_batch);
  EXPECT_LT(split.breakdown.compute_seconds, 0.75 * alone.breakdown.compute_seconds);
  EXPECT_EQ(alone.breakdown.other_communication_seconds, 0);
  EXPECT_GT(split.breakdown.other_communication_seconds, 0);
  EXPECT_LT(split.peak_memory_bytes, alone.peak_memory_bytes);
}

TEST(TensorSim, CollectivesCostNothingOnAFreeNetwork) {
  const auto split = simulate_tensor(gpt(2, 4, "{cluster: free_network.yaml}"));
  EXPECT_EQ(split.gpus, 8);
  EXPECT_LT(split.breakdown.other_communication_seconds, 1e-9);
  EXPECT_LT(split.breakdown.allreduce_seconds, 1e-9);
  EXPECT_NEAR(split.step_seconds, split.breakdown.compute_seconds,
              1e-9 + 1e-9 * split.step_seconds);
}

TEST(TensorSim, GroupsAcrossNodesPayTheNetwork) {
  // Two GPUs per node: a group of 2 stays inside one (PCIe), a group of 4 crosses the NICs.
  const auto inside = simulate_tensor(gpt(1, 2, "{cluster: two_pcie_nodes.yaml}"));
  const auto across = simulate_tensor(gpt(1, 4, "{cluster: two_pcie_nodes.yaml}"));
  // Each of the 4 moves less per all-reduce than each of the 2, yet the network costs more.
  EXPECT_GT(across.breakdown.other_communication_seconds,
            inside.breakdown.other_communication_seconds);
}

TEST(TensorSim, SymmetricModeAgreesWithTheFullSimulation) {
  const auto full = simulate_tensor(gpt(64, 4, "{preset: dgx_h100_superpod}", "full"));
  const auto symmetric = simulate_tensor(gpt(64, 4, "{preset: dgx_h100_superpod}", "symmetric"), 2);
  ASSERT_NE(symmetric.note.find("symmetric simulation"), std::string::npos) << symmetric.note;
  EXPECT_LE(std::fabs(full.step_seconds - symmetric.step_seconds), 0.01 * full.step_seconds)
      << "full " << full.step_seconds << " s, symmetric " << symmetric.step_seconds << " s";
}

}  // namespace
}  // namespace tessera
