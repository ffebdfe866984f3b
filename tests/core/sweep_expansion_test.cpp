// Sweep expansion: how a scenario's sweep grows the data-parallel width or a spatial axis over its
// GPU counts, under strong and weak scaling, from files and from expand_sweep directly.
#include <gtest/gtest.h>

#include "test_support.hpp"

#include <stdexcept>
#include <string>

#include "tessera/core/common/input_error.hpp"
#include "tessera/core/loading/scenario_loader.hpp"
#include "tessera/core/loading/sweep.hpp"

namespace tessera {
namespace {

using test::input_error;
using test::layer_index;

const std::string kSweepGoodDir = std::string(TESSERA_TEST_DATA_DIR) + "/scenarios/good";
const std::string kSweepSourceDir = TESSERA_SOURCE_DIR;

TEST(SweepExpansion, StrongScalingGrowingDataKeepsTheGlobalBatch) {
  const auto loaded = load_scenario_text(
      "name: strong\nmodel: {zoo: resnet18, mini_batch: 64}\n"
      "sweep: {scaling: strong, grow: data, gpus: [1, 2, 4, 8]}\n",
      "strong.yaml", "");
  ASSERT_EQ(loaded.points.size(), 4u);
  const std::int64_t gpus[] = {1, 2, 4, 8};
  for (std::size_t i = 0; i < 4; ++i) {
    const auto& config = loaded.points[i].config;
    EXPECT_EQ(loaded.points[i].index, i);
    EXPECT_EQ(config.gpus(), gpus[i]);
    EXPECT_EQ(config.data, gpus[i]);
    EXPECT_EQ(config.mini_batch, 64 / gpus[i]);
    EXPECT_EQ(config.global_batch(), 64);
    EXPECT_EQ(loaded.points[i].plan.layers.front().local_batch, 64 / gpus[i]);
  }
}

TEST(SweepExpansion, GrowingSpatialDMultipliesTheDepthPartitions) {
  // Shipped: 64 replicas of CosmoFlow-512, depth split 1..32 ways, up to pool3.
  const auto loaded = load_scenario(kSweepSourceDir + "/scenarios/cosmoflow_strong_scaling.yaml");
  ASSERT_EQ(loaded.points.size(), 6u);
  for (std::size_t i = 0; i < loaded.points.size(); ++i) {
    const auto& config = loaded.points[i].config;
    const std::int64_t depth_parts = std::int64_t{1} << i;
    EXPECT_EQ(config.spatial_grid, (std::vector<std::int64_t>{depth_parts, 1, 1}));
    EXPECT_EQ(config.data, 64);
    EXPECT_EQ(config.mini_batch, 1);
    EXPECT_EQ(config.gpus(), 64 * depth_parts);
    const auto& input = loaded.points[i].plan.layers.front().local_output;
    EXPECT_EQ(input.spatial, (std::vector<std::int64_t>{512 / depth_parts, 512, 512}));
  }
}

TEST(SweepExpansion, GrowingSpatialWOfATwoDimensionalGrid) {
  const auto loaded = load_scenario(kSweepGoodDir + "/grid_2x2_small_cnn.yaml");
  ASSERT_EQ(loaded.points.size(), 3u);
  const std::size_t gpool = layer_index(loaded.model, "gpool");
  const std::size_t fc = layer_index(loaded.model, "fc");
  for (std::size_t i = 0; i < 3; ++i) {
    const auto& point = loaded.points[i];
    const std::int64_t w_parts = std::int64_t{2} << i;
    EXPECT_EQ(point.config.spatial_grid, (std::vector<std::int64_t>{2, w_parts}));
    EXPECT_EQ(point.config.data, 1);
    EXPECT_EQ(point.config.mini_batch, 16);  // growing a spatial axis keeps the replica's batch
    EXPECT_EQ(point.plan.spatial_end, gpool);
    EXPECT_EQ(point.plan.layers.front().local_output.spatial,
              (std::vector<std::int64_t>{16, 32 / w_parts}));
    EXPECT_FALSE(point.plan.layers[gpool].spatially_split);
    // Unsplit layers share the replica's samples among its GPUs.
    EXPECT_EQ(point.plan.layers[fc].local_batch, (16 + 2 * w_parts - 1) / (2 * w_parts));
  }
  // The 3x3 convolution needs one row and column from each neighbour.
  const auto& conv2 = loaded.points[0].plan.layers[layer_index(loaded.model, "conv2")];
  ASSERT_EQ(conv2.input_halo.size(), 2u);
  EXPECT_EQ(conv2.input_halo[0], (Halo{1, 1}));
  EXPECT_EQ(conv2.input_halo[1], (Halo{1, 1}));
  EXPECT_EQ(conv2.local_input_with_halo.spatial, (std::vector<std::int64_t>{18, 18}));
}

TEST(SweepExpansion, WeakScalingKeepsTheMiniBatch) {
  const auto loaded =
      load_scenario(kSweepSourceDir + "/scenarios/hybrid_model_parallel_resnet50.yaml");
  ASSERT_EQ(loaded.points.size(), 10u);
  for (std::size_t i = 0; i < loaded.points.size(); ++i) {
    const auto& config = loaded.points[i].config;
    EXPECT_EQ(config.model_degree, 2);
    EXPECT_EQ(config.data, std::int64_t{1} << i);
    EXPECT_EQ(config.mini_batch, 32);
    EXPECT_EQ(config.global_batch(), 32 * config.data);
    EXPECT_EQ(config.gpus(), 2 * config.data);
  }
}

TEST(SweepExpansion, ExpandSweepDirectly) {
  ParallelConfig base;
  base.data = 2;
  base.spatial_grid = {2, 1, 1};
  base.mini_batch = 3;

  SweepSection weak;
  weak.scaling = Scaling::weak;
  weak.gpus = {4, 8, 12};
  const auto weak_points = expand_sweep(weak, base, "f.yaml");
  ASSERT_EQ(weak_points.size(), 3u);
  EXPECT_EQ(weak_points[0].data, 2);
  EXPECT_EQ(weak_points[1].data, 4);
  EXPECT_EQ(weak_points[2].data, 6);
  for (const auto& point : weak_points) EXPECT_EQ(point.mini_batch, 3);

  SweepSection strong_h;
  strong_h.scaling = Scaling::strong;
  strong_h.grow = GrowAxis::spatial_h;
  strong_h.gpus = {8, 16};
  const auto h_points = expand_sweep(strong_h, base, "f.yaml");
  ASSERT_EQ(h_points.size(), 2u);
  EXPECT_EQ(h_points[0].spatial_grid, (std::vector<std::int64_t>{2, 2, 1}));
  EXPECT_EQ(h_points[1].spatial_grid, (std::vector<std::int64_t>{2, 4, 1}));
  EXPECT_EQ(h_points[1].data, 2);
  EXPECT_EQ(h_points[1].mini_batch, 3);

  SweepSection strong_data;
  strong_data.scaling = Scaling::strong;
  strong_data.gpus = {4, 8};  // 2 then 4 replicas sharing a global batch of 6
  strong_data.gpus_where = {{"f.yaml", 7, 10}, {"f.yaml", 7, 13}};
  const auto error = input_error([&] { (void)expand_sweep(strong_data, base, "f.yaml"); });
  EXPECT_EQ(error.key(), "sweep.gpus[1]");
  EXPECT_EQ(error.where().line, 7);
  EXPECT_EQ(error.where().column, 13);
}

}  // namespace
}  // namespace tessera
