// Each GPU model of a mixed cluster is timed by its own profile rows (point_programs.hpp): a
// mixed cluster's profiles are the files of each of its GPU models, loaded together.
#include "tessera/core/point/point_programs.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "tessera/core/loading/scenario_loader.hpp"
#include "tessera/core/strategy/memory_estimate.hpp"

namespace tessera {
namespace {

LoadedScenario resnet18_on_v100_and_p100() {
  return load_scenario_text(R"(
name: per-gpu-profiles
model: {zoo: resnet18, mini_batch: 16}
parallelism: {data: 32, data_split: proportional}
platform: {preset: v100_p100_mixed}
)",
                            "per_gpu_profiles.yaml", "");
}

// A profile row timing conv1's forward pass on `device` at the point's mini-batch.
ProfileDatabase conv1_forward_on(const LoadedScenario& loaded, const std::string& device,
                                 double seconds) {
  const auto& point = loaded.points.front();
  const auto index = *loaded.model.index_of("conv1");
  const auto& shard = point.plan.layers[index];
  ProfileDatabase profiles;
  profiles.add({.device = device,
                .op = "conv",
                .direction = Direction::forward,
                .shape = kernel_shape_key(loaded.model.layer("conv1").layer, shard.local_inputs,
                                          shard.local_output),
                .micro_batch = point.config.mini_batch,
                .algorithm = "implicit_gemm",
                .time_seconds = seconds});
  return profiles;
}

const StepOp& conv1_forward(const std::vector<StepProgram>& programs) {
  for (const auto& op : programs.front().ops) {
    if (op.kind == StepOpKind::compute && op.label == "conv1 forward") return op;
  }
  throw std::runtime_error("no conv1 forward op");
}

TEST(PointPrograms, EachGpuModelIsTimedByItsOwnProfileRows) {
  const auto loaded = resnet18_on_v100_and_p100();
  const auto& point = loaded.points.front();
  const auto& v100 = loaded.cluster.gpu_of_group(0);
  const auto& p100 = loaded.cluster.gpu_of_group(1);
  ASSERT_NE(v100.model, p100.model);
  const auto profiles = conv1_forward_on(loaded, p100.model, 0.123);
  const auto build =
      program_builder(loaded, point.plan, &profiles, ProgramRecipe{.scenario = &loaded.scenario});

  const auto p100_programs = build(p100, point.config.mini_batch);
  const auto& on_p100 = conv1_forward(p100_programs);
  EXPECT_DOUBLE_EQ(on_p100.seconds, 0.123);
  EXPECT_EQ(on_p100.provenance, Provenance::profile);
  // The V100 has no row of its own: its roofline, not the P100's measurement.
  const auto v100_programs = build(v100, point.config.mini_batch);
  EXPECT_EQ(conv1_forward(v100_programs).provenance, Provenance::roofline);
}

TEST(PointPrograms, AProfiledSlowGpuModelGetsASmallerShare) {
  const auto loaded = resnet18_on_v100_and_p100();
  const auto& point = loaded.points.front();
  const auto p100_share = [&](const ProfileDatabase* profiles) {
    const auto batches = point_batches_of_ranks(loaded, point, profiles);
    // Ranks 16..31 are the P100 nodes' GPUs (nodes numbered group by group, 8 GPUs each).
    return std::accumulate(batches.begin() + 16, batches.end(), std::int64_t{0});
  };
  const auto slow_p100 = conv1_forward_on(loaded, loaded.cluster.gpu_of_group(1).model, 1.0);
  EXPECT_LT(p100_share(&slow_p100), p100_share(nullptr));
  const auto batches = point_batches_of_ranks(loaded, point, &slow_p100);
  EXPECT_EQ(std::accumulate(batches.begin(), batches.end(), std::int64_t{0}),
            point.config.global_batch());
}

TEST(PointPrograms, MemoryIsThatOfTheGpuHoldingTheLargestShare) {
  const auto loaded = resnet18_on_v100_and_p100();
  const auto& point = loaded.points.front();
  const auto batches = point_batches_of_ranks(loaded, point, nullptr);
  const auto largest = *std::max_element(batches.begin(), batches.end());
  ASSERT_GT(largest, point.config.mini_batch);  // the V100s train more than 16 samples each
  const auto inputs = memory_inputs_of(loaded.scenario, loaded.device_capacity_bytes);
  const auto nominal = estimate_memory(loaded.model, point.plan, inputs);
  const auto at_largest =
      estimate_memory(loaded.model, plan_at_mini_batch(loaded, point.plan, largest), inputs);
  const auto memory = point_memory(loaded, point, batches);
  EXPECT_DOUBLE_EQ(memory.total_bytes, at_largest.total_bytes);
  EXPECT_GT(memory.total_bytes, nominal.total_bytes);
  // Equal shares: the point's own estimate.
  EXPECT_DOUBLE_EQ(point_memory(loaded, point, {}).total_bytes, nominal.total_bytes);
}

}  // namespace
}  // namespace tessera
