// Tensor distribution (uneven shards, numbering, neighbours, scatter/gather) and the in-process
// halo exchange: halos hold the neighbours' planes, edges and corners included, and the adjoint
// exchange is the exact transpose of the fill.
#include <gtest/gtest.h>

#include <numeric>

#include "partitioned_test_support.hpp"
#include "tessera/kernels/tensor_scatter.hpp"

namespace tessera::kernels {
namespace {

using testing::cpu_device;
using testing::DeviceTensors;
using testing::random_values;

TEST(TensorDistribution, FirstShardsTakeTheRemainderPlanes) {
  const TensorDistribution distribution({16, 10, 7}, {3, 4, 1});
  EXPECT_EQ(distribution.shard_count(), 12);
  // D: 16 = 6 + 5 + 5; H: 10 = 3 + 3 + 2 + 2.
  EXPECT_EQ(distribution.owned(0), (SpatialBox{{0, 0, 0}, {6, 3, 7}}));
  EXPECT_EQ(distribution.owned(distribution.shard_at({1, 2, 0})),
            (SpatialBox{{6, 6, 0}, {5, 2, 7}}));
  EXPECT_EQ(distribution.owned(11), (SpatialBox{{11, 8, 0}, {5, 2, 7}}));
  EXPECT_EQ(distribution.coordinates(7), (std::vector<std::int64_t>{1, 3, 0}));
  EXPECT_EQ(distribution.neighbour(7, 0, Side::lower), 3);
  EXPECT_EQ(distribution.neighbour(7, 0, Side::upper), 11);
  EXPECT_EQ(distribution.neighbour(7, 1, Side::upper), std::nullopt);
  EXPECT_EQ(distribution.neighbour(7, 2, Side::lower), std::nullopt);
}

TEST(TensorDistribution, RejectsGridsThatDoNotFit) {
  EXPECT_THROW(TensorDistribution({16, 16}, {2, 2, 2}), std::invalid_argument);
  EXPECT_THROW(TensorDistribution({4, 16, 16}, {5, 1, 1}), std::invalid_argument);
  EXPECT_THROW(TensorDistribution({4, 16, 16}, {0, 1, 1}), std::invalid_argument);
}

TEST(TensorDistribution, ScatterThenGatherGivesTheTensorBack) {
  Device& device = cpu_device();
  const TensorDistribution distribution({9, 5, 6}, {2, 2, 3});
  const std::int64_t batch_channels = 3;
  const auto whole = random_values(static_cast<std::size_t>(3 * 9 * 5 * 6), 3);
  DeviceTensors memory(device);
  std::vector<float*> shards;
  for (std::int64_t shard = 0; shard < distribution.shard_count(); ++shard) {
    shards.push_back(memory.add_zeros(batch_channels * distribution.owned(shard).volume()));
  }
  scatter(device, distribution, batch_channels, whole.data(), shards);
  std::vector<float> back(whole.size(), 0.0f);
  gather(device, distribution, batch_channels, {shards.begin(), shards.end()}, back.data());
  EXPECT_EQ(back, whole);
}

// Buffers for every shard of a plan, owned planes loaded from `whole`.
struct LoadedBuffers {
  std::vector<float*> buffers;
  std::vector<std::int64_t> floats;
};

LoadedBuffers load(DeviceTensors& memory, const WindowPlan& plan, std::int64_t batch_channels,
                   const std::vector<float>& whole) {
  Device& device = cpu_device();
  LoadedBuffers loaded;
  float* all = memory.add(whole);
  const TensorPlacement all_placement{batch_channels, plan.input().whole()};
  for (std::int64_t shard = 0; shard < plan.input().shard_count(); ++shard) {
    const ShardWindow& window = plan.shard(shard);
    const TensorPlacement placement{batch_channels, window.buffer};
    loaded.floats.push_back(placement.floats());
    loaded.buffers.push_back(memory.add_zeros(placement.floats()));
    copy_box(device, all, all_placement, loaded.buffers.back(), placement, window.owned);
  }
  return loaded;
}

TEST(HaloExchange, FillsFacesEdgesAndCornersOnATwoByTwoByTwoGrid) {
  const std::int64_t batch_channels = 2;
  const TensorDistribution distribution({7, 6, 9}, {2, 2, 2});
  const WindowPlan plan(LayerKind::convolution, distribution,
                        {{3, 1, 1, 1}, {3, 1, 1, 1}, {5, 1, 2, 1}},
                        BoundaryPadding::zeros_in_buffer);
  std::vector<float> whole(static_cast<std::size_t>(batch_channels * 7 * 6 * 9));
  std::iota(whole.begin(), whole.end(), 1.0f);  // every voxel distinct and non-zero
  DeviceTensors memory(cpu_device());
  auto loaded = load(memory, plan, batch_channels, whole);
  auto exchange = in_process_halo_exchange(cpu_device(), distribution.shard_count());
  exchange_halos(*exchange, plan, HaloDirection::fill, batch_channels, loaded.buffers);

  for (std::int64_t shard = 0; shard < distribution.shard_count(); ++shard) {
    const SpatialBox& buffer = plan.shard(shard).buffer;
    const auto actual = memory.read(loaded.buffers[shard], loaded.floats[shard]);
    // Inside the volume the buffer holds the tensor, outside it the zero padding.
    const SpatialBox inside = intersection(buffer, distribution.whole());
    const auto expected_inside =
        testing::host_box(whole, {batch_channels, distribution.whole()}, inside);
    const auto actual_inside = testing::host_box(actual, {batch_channels, buffer}, inside);
    EXPECT_EQ(actual_inside, expected_inside) << "shard " << shard;
    double total = 0, total_inside = 0;
    for (float value : actual) total += value;
    for (float value : actual_inside) total_inside += value;
    EXPECT_EQ(total, total_inside) << "padding of shard " << shard << " is not zero";
  }
}

// <fill(x), g> == <x, adjoint(g)> over every shard: add_adjoint is the transpose of fill.
TEST(HaloExchange, AdjointIsTheTransposeOfTheFill) {
  const std::int64_t batch_channels = 2;
  for (const auto& grid : {std::vector<std::int64_t>{3, 1, 1}, {2, 2, 2}, {1, 3, 2}}) {
    const TensorDistribution distribution({10, 9, 8}, grid);
    const WindowPlan plan(LayerKind::pooling, distribution,
                          {{3, 2, 1, 1}, {3, 2, 1, 1}, {3, 2, 1, 1}},
                          BoundaryPadding::kernel_padding);
    DeviceTensors memory(cpu_device());
    const auto x = random_values(static_cast<std::size_t>(batch_channels * 10 * 9 * 8), 11);
    auto filled = load(memory, plan, batch_channels, x);
    auto exchange = in_process_halo_exchange(cpu_device(), distribution.shard_count());
    exchange_halos(*exchange, plan, HaloDirection::fill, batch_channels, filled.buffers);
    std::vector<float*> gradients;
    double forward_product = 0;
    for (std::int64_t shard = 0; shard < distribution.shard_count(); ++shard) {
      const auto g = random_values(static_cast<std::size_t>(filled.floats[shard]),
                                   100 + static_cast<std::uint32_t>(shard));
      gradients.push_back(memory.add(g));
      const auto fx = memory.read(filled.buffers[shard], filled.floats[shard]);
      for (std::size_t i = 0; i < g.size(); ++i) forward_product += double(fx[i]) * g[i];
    }
    exchange_halos(*exchange, plan, HaloDirection::add_adjoint, batch_channels, gradients);
    double adjoint_product = 0;
    for (std::int64_t shard = 0; shard < distribution.shard_count(); ++shard) {
      const ShardWindow& window = plan.shard(shard);
      const auto g = memory.read(gradients[shard], filled.floats[shard]);
      const auto g_owned = testing::host_box(g, {batch_channels, window.buffer}, window.owned);
      const auto x_owned =
          testing::host_box(x, {batch_channels, distribution.whole()}, window.owned);
      for (std::size_t i = 0; i < g_owned.size(); ++i)
        adjoint_product += double(x_owned[i]) * g_owned[i];
    }
    EXPECT_NEAR(forward_product, adjoint_product, 1e-4 * std::abs(forward_product))
        << testing::grid_name(grid);
  }
}

// The core's per-shard halo, widest over the shards of an evenly split axis, is window_halo.
TEST(HaloExchange, ShardHalosAgreeWithTheCoresWindowHalo) {
  for (std::int64_t parts : {2, 4, 8}) {
    for (std::int64_t kernel : {1, 3, 5}) {
      for (std::int64_t stride : {1, 2}) {
        const TensorDistribution distribution({32}, {parts});
        const WindowPlan plan(LayerKind::convolution, distribution,
                              {{kernel, stride, kernel / 2, 1}}, BoundaryPadding::zeros_in_buffer);
        Halo widest;
        for (std::int64_t shard = 0; shard < parts; ++shard) {
          widest.lower = std::max(widest.lower, plan.shard(shard).halo[0].lower);
          widest.upper = std::max(widest.upper, plan.shard(shard).halo[0].upper);
        }
        EXPECT_EQ(widest, window_halo(LayerKind::convolution, 32, plan.output().global_spatial()[0],
                                      parts, kernel, stride, kernel / 2, 1));
      }
    }
  }
}

}  // namespace
}  // namespace tessera::kernels
