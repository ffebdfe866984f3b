#include <gtest/gtest.h>

#include <set>

#include "tessera/core/cost/cost_model.hpp"
#include "tessera/core/model/layer_cost.hpp"
#include "tessera/core/point/profile_plan.hpp"
#include "tessera/core/strategy/step_program.hpp"

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
  const auto updates = parameter_kernels_to_profile(loaded);
  ASSERT_FALSE(updates.empty());
  for (const ParameterKernelToProfile& update : updates) {
    profiles.add({.device = loaded.cluster.gpu.model,
                  .op = update.op,
                  .shape = update.shape,
                  .dtype = update.dtype,
                  .algorithm = "default",
                  .time_seconds = 2e-3});
  }
  ComputeCostModel costs(roofline_of(loaded.cluster.gpu), &profiles,
                         loaded.scenario.micro_batching.workspace_limit_bytes);
  for (const SweepPoint& point : loaded.points) {
    const StepOptions options{.dtype = loaded.scenario.model.dtype,
                              .optimizer = loaded.scenario.model.optimizer};
    for (const StepProgram& program :
         build_step_programs(loaded.model, point.plan, costs, options)) {
      for (const StepOp& op : program.ops) {
        if (op.kind != StepOpKind::compute) continue;
        EXPECT_EQ(op.provenance, Provenance::profile) << op.label << " at point " << point.index;
        for (const auto& window : op.window_plans) {
          EXPECT_EQ(window.source, WindowPlanSource::follows_layer)
              << op.label << ": " << window.kernel.shape << " at point " << point.index;
        }
        if (op.layer == SIZE_MAX) {
          EXPECT_EQ(op.seconds, 2e-3) << op.label;
        }
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
  std::set<std::string> conv1_shapes, conv1_windows;
  for (const KernelToProfile& kernel : kernels_to_profile(loaded)) {
    if (kernel.layer.name == "conv1" && kernel.direction == Direction::forward) {
      (kernel.window ? conv1_windows : conv1_shapes).insert(kernel.shape);
    }
  }
  EXPECT_EQ(conv1_shapes.size(), loaded.points.size());
  // Split points add the windows their partitioned kernels run, unpadded.
  EXPECT_FALSE(conv1_windows.empty());
  for (const auto& shape : conv1_windows)
    EXPECT_NE(shape.find(" p0x0x0 "), std::string::npos) << shape;
}

TEST(KernelsToProfile, CoverEveryStageOfModelParallelWorkers) {
  const auto loaded = load_scenario(std::string(TESSERA_SOURCE_DIR) +
                                    "/scenarios/hybrid_model_parallel_resnet50.yaml");
  expect_plan_covers_every_step(loaded);
  // Two stages of different sizes: two updates, summing to the whole model; then, the workers
  // being pipelined, a gradient sum at each distinct layer's parameter count.
  const auto kernels = parameter_kernels_to_profile(loaded);
  ASSERT_GE(kernels.size(), 2u);
  EXPECT_EQ(kernels[0].kernel, ParameterKernel::update);
  EXPECT_EQ(kernels[1].kernel, ParameterKernel::update);
  EXPECT_EQ(kernels[0].parameters + kernels[1].parameters,
            static_cast<double>(parameter_count(loaded.model)));
  EXPECT_EQ(kernels[0].op, "update_" + to_string(loaded.scenario.model.optimizer));
  ASSERT_GT(loaded.points.front().config.micro_batches, 1);
  std::set<double> layer_counts;
  for (const auto& layer : loaded.points.front().plan.layers) {
    if (layer.parameters > 0) layer_counts.insert(static_cast<double>(layer.parameters));
  }
  std::set<double> summed;
  for (std::size_t k = 2; k < kernels.size(); ++k) {
    EXPECT_EQ(kernels[k].kernel, ParameterKernel::gradient_sum);
    EXPECT_EQ(kernels[k].op, gradient_sum_op());
    EXPECT_EQ(kernels[k].shape, parameters_shape(kernels[k].parameters));
    summed.insert(kernels[k].parameters);
  }
  EXPECT_EQ(summed, layer_counts);
}

// Under mpirun each rank of a pipelined point times its own stage's kernels, and together the
// ranks time every kernel the point runs; at a point of another size every rank times everything.
TEST(KernelsToProfile, EachRankOfAPipelinedPointListsItsOwnStage) {
  const auto loaded =
      load_scenario(std::string(TESSERA_SOURCE_DIR) + "/scenarios/resnet18_pipeline_real_cpu.yaml");
  LoadedScenario two_ranks = loaded;
  two_ranks.points = {loaded.points.at(0)};
  ASSERT_EQ(two_ranks.points[0].config.gpus(), 2);
  std::set<std::string> all, both;
  for (const auto& kernel : kernels_to_profile(two_ranks)) all.insert(kernel_identity(kernel));
  std::set<std::string> layers_of[2];
  for (int rank : {0, 1}) {
    for (const auto& kernel : kernels_to_profile(two_ranks, {.rank = rank, .ranks = 2})) {
      both.insert(kernel_identity(kernel));
      layers_of[rank].insert(kernel.layer.name);
    }
    EXPECT_FALSE(layers_of[rank].empty()) << rank;
  }
  EXPECT_EQ(both, all);
  EXPECT_TRUE(layers_of[0].contains("conv1"));
  EXPECT_FALSE(layers_of[1].contains("conv1"));
  EXPECT_TRUE(layers_of[1].contains("fc"));
  EXPECT_FALSE(layers_of[0].contains("fc"));
  // So with the stages' updates and their layers' gradient sums: each rank its own stage's.
  std::set<std::string> parameter_kernels, per_rank;
  for (const auto& kernel : parameter_kernels_to_profile(two_ranks)) {
    parameter_kernels.insert(kernel.op + kernel.shape);
  }
  std::size_t listed = 0;
  for (int rank : {0, 1}) {
    for (const auto& kernel : parameter_kernels_to_profile(two_ranks, {.rank = rank, .ranks = 2})) {
      per_rank.insert(kernel.op + kernel.shape);
      ++listed;
    }
  }
  EXPECT_EQ(per_rank, parameter_kernels);
  EXPECT_LT(listed, 2 * parameter_kernels.size());
  // The 4-GPU point under 2 ranks: neither rank holds one stage of it, both list everything.
  LoadedScenario four_gpus = loaded;
  four_gpus.points = {loaded.points.at(1)};
  EXPECT_EQ(kernels_to_profile(four_gpus, {.rank = 1, .ranks = 2}).size(),
            kernels_to_profile(four_gpus).size());
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
