// ZeRO played (memory.shard): reduce-scattered gradient buckets, the updated weights gathered
// after the update or each layer's weights before its passes, over the GPUs summing the same
// gradients, and the symmetric mode's scaled groups against the full simulation.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "simulate_first_point.hpp"
#include "tessera/core/loading/scenario_loader.hpp"
#include "tessera/simulator/simulate_point.hpp"

namespace tessera {
namespace {

LoadedScenario gpt(std::int64_t data, const std::string& shard, const std::string& platform,
                   const std::string& mode = "symmetric") {
  return load_scenario_text(
      "name: sharded\n"
      "model: {zoo: gpt2, options: {layers: 2, hidden: 512, heads: 8, sequence_length: 256, "
      "vocabulary: 1000}, mini_batch: 4}\n"
      "parallelism: {data: " +
          std::to_string(data) + "}\nmemory: {shard: " + shard + "}\nplatform: " + platform +
          // Buckets of a few layers: two of them whole are less than the gradients' 3/4.
          "\nsim: {mode: " + mode + ", gradient_bucket: 2 MiB}\n",
      "sharded.yaml", TESSERA_TEST_DATA_DIR "/clusters");
}

PointResult simulate_sharded(const LoadedScenario& loaded) {
  return test::simulate_first_point(loaded, 2);
}

TEST(ShardedSim, EachLevelSavesMemoryAndPaysItsGathers) {
  const std::string cluster = "{cluster: two_pcie_nodes.yaml}";
  const auto none = simulate_sharded(gpt(4, "none", cluster));
  const auto optimizer = simulate_sharded(gpt(4, "optimizer", cluster));
  const auto gradients = simulate_sharded(gpt(4, "gradients", cluster));
  const auto weights = simulate_sharded(gpt(4, "weights", cluster));
  EXPECT_LT(optimizer.peak_memory_bytes, none.peak_memory_bytes);
  EXPECT_LT(gradients.peak_memory_bytes, optimizer.peak_memory_bytes);
  EXPECT_LT(weights.peak_memory_bytes, gradients.peak_memory_bytes);
  // Half the gradient volume overlaps backward, the gather after the update does not; stage 3
  // gathers before every layer's passes, on the compute stream.
  EXPECT_GT(optimizer.breakdown.allreduce_seconds, 0);
  EXPECT_GT(weights.breakdown.allreduce_seconds, none.breakdown.allreduce_seconds);
  EXPECT_GT(weights.breakdown.allreduce_seconds, optimizer.breakdown.allreduce_seconds);
  EXPECT_LT(optimizer.breakdown.compute_seconds, none.breakdown.compute_seconds);  // the update
}

TEST(ShardedSim, CollectivesCostNothingOnAFreeNetwork) {
  const auto weights = simulate_sharded(gpt(8, "weights", "{cluster: free_network.yaml}"));
  EXPECT_LT(weights.breakdown.allreduce_seconds, 1e-9);
  EXPECT_NEAR(weights.step_seconds, weights.breakdown.compute_seconds,
              1e-9 + 1e-9 * weights.step_seconds);
}

TEST(ShardedSim, SymmetricModeAgreesWithTheFullSimulation) {
  for (const char* shard : {"optimizer", "weights"}) {
    const auto full = simulate_sharded(gpt(256, shard, "{preset: dgx_h100_superpod}", "full"));
    const auto symmetric =
        simulate_sharded(gpt(256, shard, "{preset: dgx_h100_superpod}", "symmetric"));
    ASSERT_NE(symmetric.note.find("symmetric simulation"), std::string::npos) << symmetric.note;
    EXPECT_LE(std::fabs(full.step_seconds - symmetric.step_seconds), 0.01 * full.step_seconds)
        << shard << ": full " << full.step_seconds << " s, symmetric " << symmetric.step_seconds;
  }
}

}  // namespace
}  // namespace tessera
