#include <gtest/gtest.h>

#include <set>

#include "tessera/core/profile_plan.hpp"
#include "tessera/core/step_program.hpp"

namespace tessera {
namespace {

// A database holding one row per kernel the plan lists must answer every compute op of every
// sweep point: the profiler measures exactly what the simulator looks up.
void expect_plan_covers_every_step(const LoadedScenario& loaded) {
  const auto kernels = kernels_to_profile(loaded);
  ASSERT_FALSE(kernels.empty());
  ProfileDatabase profiles;
  for (const KernelToProfile& kernel : kernels) {
    EXPECT_EQ(kernel.micro_batches.back(), kernel.batch);
    profiles.add({.device = loaded.cluster.gpu.model,
                  .op = kernel.op,
                  .direction = kernel.direction,
                  .shape = kernel.shape,
                  .dtype = kernel.dtype,
                  .micro_batch = kernel.batch,
                  .algorithm = "test",
                  .time_seconds = 1e-3,
                  .workspace_bytes = 0});
  }
  ComputeCostModel costs(roofline_of(loaded.cluster.gpu), &profiles,
                         loaded.scenario.micro_batching.workspace_limit_bytes);
  for (const SweepPoint& point : loaded.points) {
    for (const StepProgram& program : build_step_programs(loaded.model, point.plan, costs, {})) {
      for (const StepOp& op : program.ops) {
        if (op.kind != StepOpKind::compute || op.layer == SIZE_MAX) continue;
        EXPECT_EQ(op.provenance, Provenance::profile) << op.label << " at point " << point.index;
      }
    }
  }
}

TEST(KernelsToProfile, CoverEveryComputeOpOfTheDefaultStudy) {
  expect_plan_covers_every_step(load_default_scenario());
}

TEST(KernelsToProfile, CoverEveryShardOfAStrongScalingStudy) {
  const auto loaded =
      load_scenario(std::string(TESSERA_SOURCE_DIR) + "/scenarios/cosmoflow_strong_scaling.yaml");
  expect_plan_covers_every_step(loaded);
  // The grid grows along depth, so conv1 runs a different shard at every point.
  std::set<std::string> conv1_shapes;
  for (const KernelToProfile& kernel : kernels_to_profile(loaded)) {
    if (kernel.layer.name == "conv1" && kernel.direction == Direction::forward) {
      conv1_shapes.insert(kernel.shape);
    }
  }
  EXPECT_EQ(conv1_shapes.size(), loaded.points.size());
}

TEST(KernelsToProfile, ListsEachKernelOnceAndMicroBatchesOnlyConvolutions) {
  const auto loaded =
      load_scenario(std::string(TESSERA_SOURCE_DIR) + "/scenarios/microbatching_alexnet.yaml");
  std::set<std::string> keys;
  for (const KernelToProfile& kernel : kernels_to_profile(loaded)) {
    EXPECT_TRUE(keys.insert(kernel.shape + to_string(kernel.direction)).second) << kernel.shape;
    const bool convolution = kernel.layer.kind == LayerKind::convolution;
    EXPECT_EQ(kernel.micro_batches.size() > 1, convolution && kernel.batch > 1) << kernel.shape;
    if (kernel.layer.kind == LayerKind::relu) {
      EXPECT_NE(kernel.direction, Direction::backward_filter);
    }
  }
}

}  // namespace
}  // namespace tessera
