#include <gtest/gtest.h>

#include "tessera/kernels/convolution_kernels.hpp"

namespace tessera::kernels {
namespace {

TEST(ConvolutionGeometry, OutputExtentFollowsTheUsualFormula) {
  EXPECT_EQ(output_extent(128, 3, 1, 1, 1), 128);
  EXPECT_EQ(output_extent(128, 3, 2, 1, 1), 64);
  EXPECT_EQ(output_extent(227, 11, 4, 0, 1), 55);
  EXPECT_EQ(output_extent(64, 3, 1, 2, 2), 64);
  EXPECT_THROW(output_extent(2, 5, 1, 0, 1), std::invalid_argument);
}

TEST(ConvolutionGeometry, TransposedOutputInvertsTheConvolution) {
  ConvolutionGeometry down{.in_channels = 4,
                           .out_channels = 8,
                           .input_spatial = {32, 32, 32},
                           .kernel = {2, 2, 2},
                           .stride = {2, 2, 2},
                           .padding = {0, 0, 0},
                           .dilation = {1, 1, 1}};
  down = with_output(down);
  EXPECT_EQ(down.output_spatial, (std::vector<std::int64_t>{16, 16, 16}));
  ConvolutionGeometry up = down;
  up.transposed = true;
  up.input_spatial = down.output_spatial;
  up = with_output(up);
  EXPECT_EQ(up.output_spatial, down.input_spatial);
}

TEST(ConvolutionGeometry, CountsFloats) {
  ConvolutionGeometry geometry = with_output({.in_channels = 4,
                                              .out_channels = 16,
                                              .groups = 2,
                                              .input_spatial = {10, 12},
                                              .kernel = {3, 3},
                                              .stride = {1, 1},
                                              .padding = {1, 1},
                                              .dilation = {1, 1}});
  EXPECT_EQ(geometry.input_floats_per_sample(), 4 * 10 * 12);
  EXPECT_EQ(geometry.output_floats_per_sample(), 16 * 10 * 12);
  EXPECT_EQ(geometry.filter_floats(), 16 * 2 * 9);
}

}  // namespace
}  // namespace tessera::kernels
