#include <gtest/gtest.h>

#include "tessera/kernels/layer_geometry.hpp"

namespace tessera::kernels {
namespace {

Layer convolution(std::int64_t out, std::int64_t kernel, std::int64_t stride, std::int64_t padding,
                  LayerKind kind = LayerKind::convolution) {
  ConvolutionParams params;
  params.out_channels = out;
  params.kernel = {kernel, kernel, kernel};
  params.stride = {stride, stride, stride};
  params.padding = {padding, padding, padding};
  params.dilation = {1, 1, 1};
  return {.name = "conv", .kind = kind, .params = params};
}

TEST(LayerGeometry, WholeVolumeConvolutionKeepsTheLayersShapes) {
  const auto geometry = convolution_geometry(convolution(16, 3, 1, 1), {1, 4, {128, 128, 128}},
                                             {1, 16, {128, 128, 128}});
  EXPECT_EQ(geometry.in_channels, 4);
  EXPECT_EQ(geometry.out_channels, 16);
  EXPECT_EQ(geometry.input_spatial, (std::vector<std::int64_t>{128, 128, 128}));
  EXPECT_EQ(with_output(geometry).output_spatial, geometry.output_spatial);
}

TEST(LayerGeometry, DepthSlabOfAStridedConvolutionReadsTheInputItsOutputNeeds) {
  // 4-way depth split of a 2x2x2 stride-2 convolution without padding: 32 planes give 16.
  const auto even =
      convolution_geometry(convolution(8, 2, 2, 0), {1, 4, {32, 64, 64}}, {1, 8, {16, 32, 32}});
  EXPECT_EQ(even.input_spatial[0], 32);
  // A slab of 31 planes whose shard owns 16 outputs reads the one halo plane they also need.
  const auto short_slab =
      convolution_geometry(convolution(8, 2, 2, 0), {1, 4, {31, 64, 64}}, {1, 8, {16, 32, 32}});
  EXPECT_EQ(short_slab.input_spatial[0], 32);
  EXPECT_EQ(with_output(short_slab).output_spatial, short_slab.output_spatial);
}

TEST(LayerGeometry, TransposedConvolutionChecksItsOutput) {
  const Layer up = convolution(8, 2, 2, 0, LayerKind::transposed_convolution);
  const auto geometry = convolution_geometry(up, {1, 16, {8, 8, 8}}, {1, 8, {16, 16, 16}});
  EXPECT_TRUE(geometry.transposed);
  EXPECT_EQ(with_output(geometry).output_spatial, geometry.output_spatial);
  EXPECT_THROW(convolution_geometry(up, {1, 16, {8, 8, 8}}, {1, 8, {17, 16, 16}}),
               std::invalid_argument);
}

TEST(LayerGeometry, PoolingShardReadsHaloPlanes) {
  PoolingParams params;
  params.kernel = {3, 3, 3};
  params.stride = {1, 1, 1};
  params.padding = {0, 0, 0};
  const Layer pool{.name = "pool", .kind = LayerKind::pooling, .params = params};
  const auto geometry = pooling_geometry(pool, {1, 16, {32, 64, 64}}, {1, 16, {32, 62, 62}});
  EXPECT_TRUE(geometry.max);
  EXPECT_EQ(geometry.input_spatial, (std::vector<std::int64_t>{34, 64, 64}));
  EXPECT_THROW(pooling_geometry(convolution(1, 1, 1, 0), {1, 1, {4}}, {1, 1, {4}}),
               std::invalid_argument);
}

}  // namespace
}  // namespace tessera::kernels
