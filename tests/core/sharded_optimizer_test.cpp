// ZeRO (memory.shard): what each GPU of a data-parallel group keeps of the weights, their
// gradients and the optimizer state, and the collectives the step program plays instead of the
// gradient all-reduce.
#include <gtest/gtest.h>

#include "test_support.hpp"

#include <algorithm>

#include "tessera/core/strategy/memory_plan.hpp"
#include "tessera/core/strategy/step_program.hpp"
#include "tessera/core/zoo/model_zoo.hpp"

namespace tessera {
namespace {

using test::program_test_device;

constexpr std::int64_t kReplicas = 4;

struct Sharded {
  ModelGraph model = test::tiny_gpt();
  ShardPlan plan;
  ComputeCostModel costs{program_test_device(), nullptr, 0};
  StepProgram program;
  double stage_weight_bytes = 0;  // in each MemoryUse of the program's memory plan

  explicit Sharded(ShardLevel shard) {
    ParallelConfig config;
    config.data = kReplicas;
    config.mini_batch = 2;
    plan = plan_shards(model, config, "", {});
    StepOptions options;
    options.shard = shard;
    options.gradient_bucket_bytes = 4096;  // several buckets
    program = build_step_programs(model, plan, costs, options).at(0);
  }

  std::vector<const StepOp*> ops(StepOpKind kind) const {
    std::vector<const StepOp*> found;
    for (const auto& op : program.ops) {
      if (op.kind == kind) found.push_back(&op);
    }
    return found;
  }

  double static_bytes(MemoryUse use) const {
    double bytes = 0;
    for (const auto& op : program.ops) {
      if (op.kind == StepOpKind::allocate && op.memory == use && op.layer == SIZE_MAX) {
        bytes += op.bytes;
      }
    }
    return bytes;
  }

  double largest_layer_bytes() const {
    std::int64_t largest = 0;
    for (const auto& layer : plan.layers) largest = std::max(largest, layer.parameters);
    return static_cast<double>(largest) * 4;
  }
};

TEST(ShardedOptimizer, UnshardedAllReducesEveryBucket) {
  const Sharded none(ShardLevel::none);
  EXPECT_GT(none.ops(StepOpKind::gradient_allreduce).size(), 1u);
  EXPECT_TRUE(none.ops(StepOpKind::gradient_reduce_scatter).empty());
  EXPECT_TRUE(none.ops(StepOpKind::group_allgather).empty());
}

TEST(ShardedOptimizer, OptimizerStateReduceScattersThenGathersTheUpdatedWeights) {
  const Sharded none(ShardLevel::none);
  for (auto level : {ShardLevel::optimizer, ShardLevel::gradients}) {
    const Sharded sharded(level);
    EXPECT_TRUE(sharded.ops(StepOpKind::gradient_allreduce).empty());
    ASSERT_EQ(sharded.ops(StepOpKind::gradient_reduce_scatter).size(),
              none.ops(StepOpKind::gradient_allreduce).size());
    const auto gathers = sharded.ops(StepOpKind::group_allgather);
    ASSERT_EQ(gathers.size(), 1u);
    EXPECT_EQ(gathers[0]->group, CollectiveGroup::stage);
    EXPECT_DOUBLE_EQ(gathers[0]->bytes, sharded.program.parameters * 4);
    // After the update, which covers a quarter of the weights.
    const auto update = sharded.ops(StepOpKind::update).at(0);
    EXPECT_LT(update, gathers[0]);
    EXPECT_LT(update->seconds, none.ops(StepOpKind::update).at(0)->seconds);
  }
}

TEST(ShardedOptimizer, ShardedWeightsAreGatheredBeforeEachLayersPasses) {
  const Sharded sharded(ShardLevel::weights);
  const auto gathers = sharded.ops(StepOpKind::group_allgather);
  int layers_with_weights = 0;
  for (const auto& layer : sharded.plan.layers) layers_with_weights += layer.parameters > 0;
  // Every layer with weights, in forward and in backward; none after the update.
  EXPECT_EQ(static_cast<int>(gathers.size()), 2 * layers_with_weights);
  for (const auto* gather : gathers) {
    ASSERT_NE(gather->layer, SIZE_MAX);
    EXPECT_DOUBLE_EQ(gather->bytes,
                     static_cast<double>(sharded.plan.layers[gather->layer].parameters) * 4);
  }
  EXPECT_FALSE(sharded.ops(StepOpKind::gradient_reduce_scatter).empty());
}

TEST(ShardedOptimizer, EachLevelKeepsAShareOfWhatItNames) {
  const Sharded none(ShardLevel::none);
  const double weights = none.static_bytes(MemoryUse::weights);
  ASSERT_DOUBLE_EQ(weights, none.program.parameters * 4);
  ASSERT_DOUBLE_EQ(none.static_bytes(MemoryUse::weight_gradients), weights);
  ASSERT_DOUBLE_EQ(none.static_bytes(MemoryUse::optimizer_state), 2 * weights);  // adam
  const double largest = none.largest_layer_bytes();

  const Sharded optimizer(ShardLevel::optimizer);
  EXPECT_DOUBLE_EQ(optimizer.static_bytes(MemoryUse::weights), weights);
  EXPECT_DOUBLE_EQ(optimizer.static_bytes(MemoryUse::weight_gradients), weights);
  EXPECT_DOUBLE_EQ(optimizer.static_bytes(MemoryUse::optimizer_state), 2 * weights / kReplicas);

  const Sharded gradients(ShardLevel::gradients);
  EXPECT_DOUBLE_EQ(gradients.static_bytes(MemoryUse::weights), weights);
  EXPECT_DOUBLE_EQ(gradients.static_bytes(MemoryUse::weight_gradients),
                   weights / kReplicas + largest);

  const Sharded all(ShardLevel::weights);
  EXPECT_DOUBLE_EQ(all.static_bytes(MemoryUse::weights), weights / kReplicas + largest);
  EXPECT_DOUBLE_EQ(all.static_bytes(MemoryUse::optimizer_state), 2 * weights / kReplicas);
}

TEST(ShardedOptimizer, OneReplicaHasNothingToShard) {
  ParallelConfig config;
  config.mini_batch = 2;
  const auto model = build_zoo_model("resnet18", {{"image_size", "32"}, {"classes", "10"}});
  const auto plan = plan_shards(model, config, "", {});
  const ComputeCostModel costs{program_test_device(), nullptr, 0};
  StepOptions options;
  options.shard = ShardLevel::weights;
  const auto program = build_step_programs(model, plan, costs, options).at(0);
  EXPECT_TRUE(std::none_of(program.ops.begin(), program.ops.end(), [](const auto& op) {
    return op.kind == StepOpKind::group_allgather || op.kind == StepOpKind::gradient_reduce_scatter;
  }));
}

}  // namespace
}  // namespace tessera
