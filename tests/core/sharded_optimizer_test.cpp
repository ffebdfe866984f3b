// ZeRO (memory.shard): what each GPU of a data-parallel group keeps of the weights, their
// gradients and the optimizer state, and the collectives the step program plays instead of the
// gradient all-reduce.
#include <gtest/gtest.h>

#include "test_support.hpp"

#include <algorithm>

#include "tessera/core/strategy/memory_plan.hpp"
#include "tessera/core/strategy/step_program.hpp"
#include "tessera/core/strategy/table_copies.hpp"
#include "tessera/core/zoo/model_zoo.hpp"

namespace tessera {
namespace {

using test::program_test_device;

constexpr std::int64_t kReplicas = 4;

struct Sharded {
  ModelGraph model;
  ShardPlan plan;
  ComputeCostModel costs{program_test_device(), nullptr, 0};
  StepProgram program;
  double stage_weight_bytes = 0;  // in each MemoryUse of the program's memory plan

  explicit Sharded(ShardLevel shard, std::int64_t micro_batches = 1,
                   ModelGraph sharded_model = test::tiny_gpt())
      : model(std::move(sharded_model)) {
    ParallelConfig config;
    config.data = kReplicas;
    config.mini_batch = 2;
    config.micro_batches = micro_batches;
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

  // The token embedding, whose table's gradients the tied head writes first in backward.
  std::size_t tied_table() const {
    const auto holder = table_copies(model, plan).holder;
    for (std::size_t i = 0; i < holder.size(); ++i) {
      if (holder[i] < i) return holder[i];
    }
    return SIZE_MAX;
  }
  double tied_table_bytes() const {
    return static_cast<double>(plan.layers.at(tied_table()).parameters) * 4;
  }

  // The largest bucket's gradients but the tied table's (which has a buffer of its own).
  double largest_bucket_bytes() const {
    double largest = 0;
    for (const auto& bucket : program.buckets) {
      double bytes = 0;
      for (std::size_t layer : bucket.layers) {
        if (layer != tied_table()) bytes += static_cast<double>(plan.layers[layer].parameters) * 4;
      }
      largest = std::max(largest, bytes);
    }
    return largest;
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
  // Every layer that reads weights, in forward and in backward; none after the update. The
  // tied head reads the token embedding's table, gathered for its passes too.
  const auto copies = table_copies(sharded.model, sharded.plan);
  int layers_reading_weights = 0, tied_readers = 0;
  for (std::size_t i = 0; i < sharded.plan.layers.size(); ++i) {
    const std::size_t holder = copies.holder[i];
    layers_reading_weights += sharded.plan.layers[holder].parameters > 0;
    tied_readers += holder != i;
  }
  ASSERT_EQ(tied_readers, 1);
  EXPECT_EQ(static_cast<int>(gathers.size()), 2 * layers_reading_weights);
  for (const auto* gather : gathers) {
    ASSERT_NE(gather->layer, SIZE_MAX);
    EXPECT_DOUBLE_EQ(gather->bytes,
                     static_cast<double>(sharded.plan.layers[gather->layer].parameters) * 4);
  }
  EXPECT_FALSE(sharded.ops(StepOpKind::gradient_reduce_scatter).empty());
}

// BERT's decoder reads the word embedding's table and has a bias of its own: both are gathered
// for each of its passes.
TEST(ShardedOptimizer, ATiedHeadGathersItsOwnBiasBesideTheTable) {
  const Sharded sharded(ShardLevel::weights, 1,
                        build_zoo_model("bert", {{"layers", "1"},
                                                 {"hidden", "64"},
                                                 {"heads", "4"},
                                                 {"sequence_length", "8"},
                                                 {"vocabulary", "48"}}));
  const std::size_t decoder = sharded.model.index_of("mlm_decoder").value();
  const std::size_t table = table_copies(sharded.model, sharded.plan).holder.at(decoder);
  ASSERT_NE(table, decoder);
  int own = 0, tables = 0;
  for (const auto* gather : sharded.ops(StepOpKind::group_allgather)) {
    if (gather->label.rfind("mlm_decoder gathers", 0) != 0) continue;
    if (gather->layer == decoder) {
      ++own;
      EXPECT_DOUBLE_EQ(gather->bytes, 48 * 4);  // the bias, one float per class
    } else {
      ++tables;
      EXPECT_EQ(gather->layer, table);
    }
  }
  EXPECT_EQ(own, 2);
  EXPECT_EQ(tables, 2);
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

  // Two buckets' gradients whole while they are summed, and the tied table's from the head's
  // backward on.
  const Sharded gradients(ShardLevel::gradients);
  EXPECT_DOUBLE_EQ(gradients.static_bytes(MemoryUse::weights), weights);
  ASSERT_GT(gradients.tied_table_bytes(), 0);
  EXPECT_DOUBLE_EQ(
      gradients.static_bytes(MemoryUse::weight_gradients),
      weights / kReplicas + 2 * gradients.largest_bucket_bytes() + gradients.tied_table_bytes());
  EXPECT_LT(gradients.static_bytes(MemoryUse::weight_gradients), weights);

  const Sharded all(ShardLevel::weights);
  EXPECT_DOUBLE_EQ(all.static_bytes(MemoryUse::weights), weights / kReplicas + largest);
  EXPECT_DOUBLE_EQ(all.static_bytes(MemoryUse::optimizer_state), 2 * weights / kReplicas);
}

// Backward writes bucket k + 1's gradients where bucket k - 1's were: the program frees that
// buffer by waiting for bucket k - 1 once it posts bucket k.
TEST(ShardedOptimizer, ShardedGradientsWaitForTheBucketBeforeLastAsEachIsPosted) {
  for (auto level : {ShardLevel::gradients, ShardLevel::weights}) {
    const Sharded sharded(level);
    ASSERT_TRUE(sharded.program.stages_gradients);
    const auto& ops = sharded.program.ops;
    int posted = 0;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (ops[i].kind != StepOpKind::gradient_reduce_scatter) continue;
      EXPECT_EQ(ops[i].bucket, posted++);
      if (ops[i].bucket == 0) continue;
      ASSERT_LT(i + 1, ops.size());
      EXPECT_EQ(ops[i + 1].kind, StepOpKind::gradient_wait);
      EXPECT_EQ(ops[i + 1].bucket, ops[i].bucket - 1);
    }
    ASSERT_GT(posted, 2);
    const auto waits = sharded.ops(StepOpKind::gradient_wait);
    ASSERT_EQ(static_cast<int>(waits.size()), posted);  // and the last one, for every bucket
    EXPECT_EQ(waits.back()->bucket, -1);
  }
  // Unsharded gradients are summed in place: nothing to free.
  const Sharded optimizer(ShardLevel::optimizer);
  for (const auto* wait : optimizer.ops(StepOpKind::gradient_wait)) EXPECT_EQ(wait->bucket, -1);
}

// Over several micro-batches the gradients add up whole until the last backward pass sums them.
TEST(ShardedOptimizer, GradientsAccumulatingOverMicroBatchesAreHeldWhole) {
  const Sharded accumulating(ShardLevel::gradients, 2);
  EXPECT_FALSE(accumulating.program.stages_gradients);
  EXPECT_DOUBLE_EQ(accumulating.static_bytes(MemoryUse::weight_gradients),
                   accumulating.program.parameters * 4);
  EXPECT_EQ(accumulating.ops(StepOpKind::gradient_wait).size(), 1u);
}

// The memory plan sizes the buckets in flight by the rule the program forms them with.
TEST(ShardedOptimizer, TheBucketsAreThoseTheProgramForms) {
  const Sharded sharded(ShardLevel::gradients);
  const auto buckets = gradient_buckets(sharded.plan, 0, 4096, DType::float32);
  ASSERT_EQ(buckets.size(), sharded.program.buckets.size());
  for (std::size_t b = 0; b < buckets.size(); ++b) {
    EXPECT_EQ(buckets[b].layers, sharded.program.buckets[b].layers);
    EXPECT_DOUBLE_EQ(buckets[b].bytes, sharded.program.buckets[b].bytes);
  }
}

// A table larger than the rest of the model together, gathered whole, costs more than sharding
// saves: the plan counts what ZeRO-3 holds, as the real ranks hold it, not the smaller whole.
TEST(ShardedOptimizer, ALayerLargerThanTheRestIsGatheredWholeAllTheSame) {
  const auto model = build_zoo_model(
      "gpt2", {{"layers", "1"}, {"hidden", "64"}, {"heads", "4"}, {"sequence_length", "8"}});
  ParallelConfig config;
  config.data = 2;
  config.mini_batch = 2;
  const auto plan = plan_shards(model, config, "", {});
  const ComputeCostModel costs{program_test_device(), nullptr, 0};
  StepOptions options;
  options.shard = ShardLevel::weights;
  const auto program = build_step_programs(model, plan, costs, options).at(0);
  double weights = 0;
  for (const auto& op : program.ops) {
    if (op.kind == StepOpKind::allocate && op.memory == MemoryUse::weights) weights += op.bytes;
  }
  std::int64_t largest = 0;
  for (const auto& layer : plan.layers) largest = std::max(largest, layer.parameters);
  EXPECT_DOUBLE_EQ(weights, program.parameters * 4 / 2 + static_cast<double>(largest) * 4);
  EXPECT_GT(weights, program.parameters * 4);
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
