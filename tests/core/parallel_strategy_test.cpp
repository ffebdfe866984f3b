// Shard plans of CosmoFlow (local shapes, halos, unsplit layers), strategy errors and
// model-parallel stage assignment. The halos themselves: window_halo_test.cpp.
#include <gtest/gtest.h>

#include "test_support.hpp"

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "tessera/core/model/graph_builder.hpp"
#include "tessera/core/model/layer_cost.hpp"
#include "tessera/core/model/shape_inference.hpp"
#include "tessera/core/strategy/parallel_strategy.hpp"
#include "tessera/core/zoo/model_zoo.hpp"

namespace tessera {
namespace {

using test::contains;

using Grid = std::vector<std::int64_t>;

// ---------------------------------------------------------------------------------------------
// plan_shards on CosmoFlow

ModelGraph cosmoflow(std::int64_t width = 128) {
  return build_zoo_model("cosmoflow", {{"width", std::to_string(width)}});
}

ParallelConfig spatial_config(Grid grid, std::int64_t mini_batch = 1) {
  ParallelConfig config;
  config.spatial_grid = std::move(grid);
  config.mini_batch = mini_batch;
  return config;
}

std::size_t index(const ModelGraph& model, const std::string& name) {
  auto found = model.index_of(name);
  if (!found) throw std::logic_error("no layer " + name);
  return *found;
}

TensorShape shape(std::int64_t n, std::int64_t c, std::vector<std::int64_t> spatial) {
  return TensorShape{n, c, std::move(spatial)};
}

TEST(PlanShards, CosmoflowDepthSplitLocalShapes) {
  const auto model = cosmoflow();
  const auto plan = plan_shards(model, spatial_config({4, 1, 1}), "pool5", {});
  EXPECT_EQ(plan.config.spatial_parts(), 4);
  EXPECT_EQ(plan.config.gpus(), 4);
  EXPECT_EQ(plan.spatial_end, index(model, "pool5"));
  ASSERT_EQ(plan.layers.size(), model.layers().size());
  EXPECT_EQ(plan.stages, 1);

  const auto& input = plan.layers[index(model, "input")];
  EXPECT_TRUE(input.spatially_split);
  EXPECT_EQ(input.local_output, shape(1, 4, {32, 128, 128}));

  const auto& conv1 = plan.layers[index(model, "conv1")];
  EXPECT_TRUE(conv1.spatially_split);
  EXPECT_EQ(conv1.local_batch, 1);
  EXPECT_EQ(conv1.local_output, shape(1, 16, {32, 128, 128}));
  ASSERT_EQ(conv1.local_inputs.size(), 1u);
  EXPECT_EQ(conv1.local_inputs[0], shape(1, 4, {32, 128, 128}));
  EXPECT_EQ(conv1.local_input_with_halo, shape(1, 4, {34, 128, 128}));

  EXPECT_EQ(plan.layers[index(model, "pool1")].local_output, shape(1, 16, {16, 64, 64}));
  EXPECT_EQ(plan.layers[index(model, "conv4")].local_output, shape(1, 128, {2, 8, 8}));
  EXPECT_EQ(plan.layers[index(model, "conv4")].local_input_with_halo, shape(1, 64, {5, 16, 16}));
  EXPECT_EQ(plan.layers[index(model, "conv5")].local_output, shape(1, 256, {1, 4, 4}));
  EXPECT_EQ(plan.layers[index(model, "conv5")].local_input_with_halo, shape(1, 128, {3, 4, 4}));
}

TEST(PlanShards, CosmoflowLayersFromUntilRunUnsplit) {
  const auto model = cosmoflow();
  const auto plan = plan_shards(model, spatial_config({4, 1, 1}), "pool5", {});
  const auto end = index(model, "pool5");
  for (std::size_t i = 0; i < model.layers().size(); ++i) {
    const auto& shard = plan.layers[i];
    EXPECT_EQ(shard.spatially_split, i < end) << model.layers()[i].layer.name;
    if (i >= end) {
      EXPECT_TRUE(shard.input_halo.empty()) << model.layers()[i].layer.name;
      EXPECT_EQ(shard.local_output, model.layers()[i].output_shape.with_batch(1))
          << model.layers()[i].layer.name;
    }
  }
  EXPECT_EQ(plan.layers[end].local_output, shape(1, 256, {2, 2, 2}));
  EXPECT_EQ(plan.layers[index(model, "fc1")].local_output, shape(1, 2048, {}));
}

TEST(PlanShards, CosmoflowHalosFollowTheReferenceFacts) {
  const auto model = cosmoflow();
  const auto plan = plan_shards(model, spatial_config({4, 1, 1}), "pool5", {});
  const Halo none{0, 0};
  const Halo same{1, 1};        // 3^3 "same" convolution: floor(3/2) planes each side
  const Halo stride_two{1, 0};  // stride 2 on even slabs: one plane from below
  const std::map<std::string, Halo> depth_halo{
      {"conv1", same},       {"pool1", stride_two}, {"conv2", same},
      {"pool2", stride_two}, {"conv3", same},       {"pool3", stride_two},
      {"conv4", stride_two}, {"pool4", stride_two}, {"conv5", same}};
  for (const auto& [name, halo] : depth_halo) {
    const auto& shard = plan.layers[index(model, name)];
    ASSERT_EQ(shard.input_halo.size(), 3u) << name;
    EXPECT_EQ(shard.input_halo[0], halo) << name;
    EXPECT_EQ(shard.input_halo[1], none) << name;  // unsplit axes need nothing
    EXPECT_EQ(shard.input_halo[2], none) << name;
    auto with_halo = shard.local_inputs.front();
    with_halo.spatial[0] += halo.lower + halo.upper;
    EXPECT_EQ(shard.local_input_with_halo, with_halo) << name;
  }
  // Element-wise layers have no halo even when split.
  for (const std::string name : {"input", "act1", "act4", "act5"}) {
    const auto& shard = plan.layers[index(model, name)];
    EXPECT_TRUE(shard.input_halo.empty()) << name;
  }
}

TEST(PlanShards, CosmoflowTwoAxisSplit) {
  const auto model = cosmoflow();
  const auto plan = plan_shards(model, spatial_config({2, 2, 1}), "pool5", {});
  const auto& conv1 = plan.layers[index(model, "conv1")];
  EXPECT_EQ(conv1.local_output, shape(1, 16, {64, 64, 128}));
  ASSERT_EQ(conv1.input_halo.size(), 3u);
  EXPECT_EQ(conv1.input_halo[0], (Halo{1, 1}));
  EXPECT_EQ(conv1.input_halo[1], (Halo{1, 1}));
  EXPECT_EQ(conv1.input_halo[2], (Halo{0, 0}));
  EXPECT_EQ(conv1.local_input_with_halo, shape(1, 4, {66, 66, 128}));
  const auto& pool1 = plan.layers[index(model, "pool1")];
  EXPECT_EQ(pool1.input_halo[0], (Halo{1, 0}));
  EXPECT_EQ(pool1.input_halo[1], (Halo{1, 0}));
  EXPECT_EQ(pool1.input_halo[2], (Halo{0, 0}));
}

TEST(PlanShards, SplitLayersKeepTheMiniBatchAndUnsplitLayersShareIt) {
  const auto model = cosmoflow();
  const auto plan = plan_shards(model, spatial_config({4, 1, 1}, 8), "pool5", {});
  EXPECT_EQ(plan.config.global_batch(), 8);
  const auto& conv1 = plan.layers[index(model, "conv1")];
  EXPECT_EQ(conv1.local_batch, 8);
  EXPECT_EQ(conv1.local_output, shape(8, 16, {32, 128, 128}));
  const auto& fc1 = plan.layers[index(model, "fc1")];
  EXPECT_EQ(fc1.local_batch, 2);  // 8 samples over the 4 GPUs of the spatial group
  EXPECT_EQ(fc1.local_output, shape(2, 2048, {}));
}

TEST(PlanShards, UnsplitPlanKeepsFullShapes) {
  const auto model = cosmoflow();
  ParallelConfig config;
  config.data = 4;
  config.mini_batch = 2;
  const auto plan = plan_shards(model, config, "", {});
  EXPECT_EQ(plan.config.spatial_grid, (Grid{1, 1, 1}));
  EXPECT_EQ(plan.config.gpus(), 4);
  EXPECT_EQ(plan.config.global_batch(), 8);
  EXPECT_EQ(plan.spatial_end, 0u);
  for (std::size_t i = 0; i < model.layers().size(); ++i) {
    EXPECT_FALSE(plan.layers[i].spatially_split);
    EXPECT_EQ(plan.layers[i].local_batch, 2);
    EXPECT_EQ(plan.layers[i].local_output, model.layers()[i].output_shape.with_batch(2));
    EXPECT_TRUE(plan.layers[i].input_halo.empty());
  }
}

TEST(PlanShards, GridToString) {
  EXPECT_EQ(grid_to_string({4, 1, 1}), "4x1x1");
  EXPECT_EQ(grid_to_string({2, 2}), "2x2");
  EXPECT_EQ(grid_to_string({}), "1");
}

// ---------------------------------------------------------------------------------------------
// Strategy errors

template <typename Call>
StrategyError strategy_error(Call call) {
  try {
    call();
  } catch (const StrategyError& error) {
    return error;
  }
  ADD_FAILURE() << "expected a StrategyError";
  return StrategyError("", "");
}

TEST(PlanShardsErrors, IndivisibleExtent) {
  const auto model = cosmoflow();
  // Without `until` spatial parallelism runs to fc1, but pool5's output (2^3) cannot be split 4
  // ways.
  const auto error = strategy_error([&] { plan_shards(model, spatial_config({4, 1, 1}), "", {}); });
  EXPECT_EQ(error.key(), "parallelism.spatial.grid");
  EXPECT_TRUE(contains(error.what(), "pool5")) << error.what();
  EXPECT_TRUE(contains(error.what(), "not divisible by 4")) << error.what();

  const auto odd = strategy_error([&] { plan_shards(model, spatial_config({3, 1, 1}), "", {}); });
  EXPECT_EQ(odd.key(), "parallelism.spatial.grid");
  EXPECT_TRUE(contains(odd.what(), "not divisible by 3")) << odd.what();
}

TEST(PlanShardsErrors, CosmoflowWidth16SplitSixteenWays) {
  const auto model = cosmoflow(16);
  // pool1 halves 16 planes to 8, which cannot be split 16 ways.
  const auto error = strategy_error([&] {
    plan_shards(model, spatial_config({16, 1, 1}), "", {});
  });
  EXPECT_EQ(error.key(), "parallelism.spatial.grid");
  // Stopping before pool1 is fine: conv1's one-plane halo fits the one-plane slab.
  const auto plan = plan_shards(model, spatial_config({16, 1, 1}), "pool1", {});
  EXPECT_EQ(plan.layers[index(model, "conv1")].input_halo[0], (Halo{1, 1}));
  EXPECT_EQ(plan.layers[index(model, "conv1")].local_input_with_halo, shape(1, 4, {3, 16, 16}));
}

ModelGraph wide_kernel_model(ConvolutionParams params) {
  GraphBuilder b("wide");
  auto x = b.input("input", 1, {16, 16});
  x = b.conv("conv", x, std::move(params));
  x = b.relu("relu", x);
  x = b.fully_connected("fc", x, 4);
  b.mse_loss("loss", x);
  return std::move(b).build();
}

TEST(PlanShardsErrors, HaloWiderThanSlab) {
  const auto five = wide_kernel_model({.out_channels = 2, .kernel = {5}, .padding = {2}});
  const auto error = strategy_error([&] { plan_shards(five, spatial_config({16, 1}), "", {}); });
  EXPECT_EQ(error.key(), "parallelism.spatial.grid");
  EXPECT_TRUE(contains(error.what(), "'conv'")) << error.what();
  EXPECT_TRUE(contains(error.what(), "halo of 2 planes along H")) << error.what();
  EXPECT_TRUE(contains(error.what(), "slab of 1")) << error.what();
  // Eight ways the slab has two planes: enough.
  const auto plan = plan_shards(five, spatial_config({8, 1}), "", {});
  EXPECT_EQ(plan.layers[1].input_halo[0], (Halo{2, 2}));

  const auto dilated =
      wide_kernel_model({.out_channels = 2, .kernel = {3}, .padding = {2}, .dilation = {2}});
  const auto dilated_error = strategy_error([&] {
    plan_shards(dilated, spatial_config({1, 16}), "", {});
  });
  EXPECT_TRUE(contains(dilated_error.what(), "along W")) << dilated_error.what();
}

TEST(PlanShardsErrors, UntilAfterTheFirstDenseLayer) {
  const auto model = cosmoflow();
  const auto error = strategy_error([&] {
    plan_shards(model, spatial_config({4, 1, 1}), "fc2", {});
  });
  EXPECT_EQ(error.key(), "parallelism.spatial.until");
  EXPECT_TRUE(contains(error.what(), "fc1")) << error.what();
}

TEST(PlanShardsErrors, UntilUnknownOrInput) {
  const auto model = cosmoflow();
  const auto unknown = strategy_error([&] {
    plan_shards(model, spatial_config({4, 1, 1}), "pool9", {});
  });
  EXPECT_EQ(unknown.key(), "parallelism.spatial.until");
  EXPECT_TRUE(contains(unknown.what(), "'pool9'")) << unknown.what();
  const auto input = strategy_error([&] {
    plan_shards(model, spatial_config({4, 1, 1}), "input", {});
  });
  EXPECT_EQ(input.key(), "parallelism.spatial.until");
}

TEST(PlanShardsErrors, GridOfTheWrongRank) {
  const auto model = cosmoflow();
  const auto error = strategy_error([&] { plan_shards(model, spatial_config({4, 1}), "", {}); });
  EXPECT_EQ(error.key(), "parallelism.spatial.grid");
  EXPECT_TRUE(contains(error.what(), "expected 3 entries")) << error.what();
}

ParallelConfig model_config(std::int64_t degree) {
  ParallelConfig config;
  config.model_degree = degree;
  return config;
}

TEST(PlanShardsErrors, BadStageStarts) {
  const auto model = cosmoflow();
  const std::string key = "parallelism.model.stages";
  EXPECT_EQ(strategy_error([&] { plan_shards(model, model_config(2), "", {"nope"}); }).key(), key);
  EXPECT_EQ(strategy_error([&] { plan_shards(model, model_config(2), "", {"input"}); }).key(), key);
  // Wrong count.
  EXPECT_EQ(strategy_error([&] { plan_shards(model, model_config(3), "", {"conv3"}); }).key(), key);
  EXPECT_EQ(strategy_error([&] {
              plan_shards(model, model_config(2), "", {"conv3", "fc1"});
            }).key(),
            key);
  // Out of order, or repeated.
  EXPECT_EQ(strategy_error([&] {
              plan_shards(model, model_config(3), "", {"fc1", "conv3"});
            }).key(),
            key);
  EXPECT_EQ(strategy_error([&] {
              plan_shards(model, model_config(3), "", {"conv3", "conv3"});
            }).key(),
            key);
  // Stages without model parallelism.
  EXPECT_EQ(strategy_error([&] { plan_shards(model, model_config(1), "", {"conv3"}); }).key(), key);
  const std::string message =
      strategy_error([&] { plan_shards(model, model_config(2), "", {"nope"}); }).what();
  EXPECT_TRUE(contains(message, "'nope'")) << message;
}

TEST(PlanShardsErrors, MoreStagesThanLayers) {
  const auto model = cosmoflow();
  const auto degree = static_cast<std::int64_t>(model.layers().size());
  const auto error = strategy_error([&] { plan_shards(model, model_config(degree), "", {}); });
  EXPECT_EQ(error.key(), "parallelism.model.degree");
  // One layer per stage (besides the input) is the most.
  EXPECT_NO_THROW(plan_shards(model, model_config(degree - 1), "", {}));
}

// ---------------------------------------------------------------------------------------------
// Model-parallel stages

TEST(PlanShardsStages, BalancedAssignmentIsContiguousAndUsesEveryStage) {
  const auto model = cosmoflow();
  std::vector<double> work;
  double total = 0, largest = 0;
  for (const auto& layer : model.layers()) {
    work.push_back(layer_cost(layer, 1, DType::float32).flops.forward + 1.0);
    total += work.back();
    largest = std::max(largest, work.back());
  }
  const auto most = static_cast<std::int64_t>(model.layers().size()) - 1;
  for (std::int64_t degree = 1; degree <= most; ++degree) {
    const auto plan = plan_shards(model, model_config(degree), "", {});
    EXPECT_EQ(plan.stages, degree);
    EXPECT_EQ(plan.config.gpus(), degree);
    std::vector<double> stage_work(static_cast<std::size_t>(degree), 0.0);
    int previous = 0;
    for (std::size_t i = 0; i < plan.layers.size(); ++i) {
      const int stage = plan.layers[i].stage;
      ASSERT_GE(stage, 0) << "degree " << degree;
      ASSERT_LT(stage, degree) << "degree " << degree;
      EXPECT_GE(stage, previous) << "degree " << degree << " layer " << i;
      EXPECT_LE(stage, previous + 1) << "degree " << degree << " layer " << i;
      previous = stage;
      stage_work[static_cast<std::size_t>(stage)] += work[i];
    }
    EXPECT_EQ(plan.layers.front().stage, 0);
    EXPECT_EQ(plan.layers.back().stage, degree - 1) << "degree " << degree;
    // Contiguous stages cut at the first layer reaching each share: no stage exceeds its share by
    // more than one layer.
    for (std::int64_t s = 0; s < degree; ++s) {
      EXPECT_LE(stage_work[static_cast<std::size_t>(s)],
                total / static_cast<double>(degree) + largest)
          << "degree " << degree << " stage " << s;
    }
  }
}

TEST(PlanShardsStages, ExplicitStageStarts) {
  const auto model = cosmoflow();
  const auto plan = plan_shards(model, model_config(3), "", {"conv3", "fc1"});
  EXPECT_EQ(plan.stages, 3);
  const auto conv3 = index(model, "conv3"), fc1 = index(model, "fc1");
  for (std::size_t i = 0; i < plan.layers.size(); ++i) {
    const int expected = i < conv3 ? 0 : i < fc1 ? 1 : 2;
    EXPECT_EQ(plan.layers[i].stage, expected) << model.layers()[i].layer.name;
  }
}

TEST(PlanShardsStages, CombinesWithSpatialSplit) {
  const auto model = cosmoflow();
  ParallelConfig config = spatial_config({2, 1, 1}, 2);
  config.data = 2;
  config.model_degree = 2;
  const auto plan = plan_shards(model, config, "pool5", {"conv6"});
  EXPECT_EQ(plan.config.gpus(), 8);
  EXPECT_EQ(plan.layers[index(model, "conv1")].stage, 0);
  EXPECT_EQ(plan.layers[index(model, "conv6")].stage, 1);
  EXPECT_EQ(plan.layers[index(model, "conv1")].local_output, shape(2, 16, {64, 128, 128}));
  EXPECT_EQ(plan.layers[index(model, "fc1")].local_batch, 1);
}

}  // namespace
}  // namespace tessera
