// Host-only parts of the CUDA backend: how geometries become cuDNN descriptors and how cuDNN's
// algorithms are named. Runs everywhere, GPU or not.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "cudnn_algorithm_names.hpp"
#include "cudnn_layout.hpp"
#include "cudnn_layout_check.hpp"

namespace tessera::kernels {
namespace {

using Ints = std::vector<int>;

ConvolutionGeometry geometry_3d() {
  ConvolutionGeometry geometry;
  geometry.in_channels = 4;
  geometry.out_channels = 16;
  geometry.input_spatial = {8, 10, 12};
  geometry.kernel = {3, 3, 3};
  geometry.stride = {1, 2, 1};
  geometry.padding = {1, 1, 0};
  geometry.dilation = {1, 1, 2};
  return with_output(geometry);
}

std::string message_of(const std::function<void()>& work) {
  try {
    work();
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return "(no exception)";
}

TEST(CudnnLayout, Plain3dConvolutionHasPackedNcdhwTensorsAndKcFilter) {
  const auto layout = cudnn_convolution_layout(geometry_3d(), 2);
  // Output: D (8+2-3)/1+1 = 8, H (10+2-3)/2+1 = 5, W (12-5)/1+1 = 8.
  EXPECT_EQ(layout.conv_input.dims, (Ints{2, 4, 8, 10, 12}));
  EXPECT_EQ(layout.conv_input.strides, (Ints{4 * 8 * 10 * 12, 8 * 10 * 12, 10 * 12, 12, 1}));
  EXPECT_EQ(layout.conv_output.dims, (Ints{2, 16, 8, 5, 8}));
  EXPECT_EQ(layout.conv_output.strides, (Ints{16 * 8 * 5 * 8, 8 * 5 * 8, 5 * 8, 8, 1}));
  EXPECT_EQ(layout.filter_dims, (Ints{16, 4, 3, 3, 3}));
  EXPECT_EQ(layout.padding, (Ints{1, 1, 0}));
  EXPECT_EQ(layout.stride, (Ints{1, 2, 1}));
  EXPECT_EQ(layout.dilation, (Ints{1, 1, 2}));
  EXPECT_EQ(layout.groups, 1);
}

TEST(CudnnLayout, TransposedConvolutionRunsThePlainOneFromItsOutputToItsInput) {
  ConvolutionGeometry geometry;
  geometry.transposed = true;
  geometry.in_channels = 8;
  geometry.out_channels = 6;
  geometry.groups = 2;
  geometry.input_spatial = {5, 7};
  geometry.kernel = {4, 3};
  geometry.stride = {2, 2};
  geometry.padding = {1, 1};
  geometry.dilation = {1, 1};
  geometry = with_output(geometry);  // (5-1)*2-2+3+1 = 10, (7-1)*2-2+2+1 = 13
  const auto layout = cudnn_convolution_layout(geometry, 3);
  EXPECT_EQ(layout.conv_input.dims, (Ints{3, 6, 10, 13}));
  EXPECT_EQ(layout.conv_output.dims, (Ints{3, 8, 5, 7}));
  // The header's transposed filter layout: in x out/groups x kernel.
  EXPECT_EQ(layout.filter_dims, (Ints{8, 3, 4, 3}));
  EXPECT_EQ(layout.groups, 2);
}

TEST(CudnnLayout, TransposedOutputMayCarryOutputPaddingWithinOneStride) {
  ConvolutionGeometry geometry;
  geometry.transposed = true;
  geometry.input_spatial = {4};
  geometry.output_spatial = {8};  // with_output gives 7; the 8th plane is output padding
  geometry.kernel = {3};
  geometry.stride = {2};
  geometry.padding = {1};
  geometry.dilation = {1};
  const auto layout = cudnn_convolution_layout(geometry, 1);
  EXPECT_EQ(layout.conv_input.dims, (Ints{1, 1, 1, 8}));
  EXPECT_EQ(layout.conv_output.dims, (Ints{1, 1, 1, 4}));
}

TEST(CudnnLayout, GroupedConvolutionFilterHasChannelsPerGroup) {
  auto geometry = geometry_3d();
  geometry.groups = 4;
  const auto layout = cudnn_convolution_layout(geometry, 1);
  EXPECT_EQ(layout.filter_dims, (Ints{16, 1, 3, 3, 3}));
  EXPECT_EQ(layout.groups, 4);
}

TEST(CudnnLayout, OneDimensionalProblemsGetAUnitHeightAxis) {
  ConvolutionGeometry geometry;
  geometry.in_channels = 2;
  geometry.out_channels = 3;
  geometry.input_spatial = {9};
  geometry.kernel = {3};
  geometry.stride = {2};
  geometry.padding = {1};
  geometry.dilation = {1};
  const auto layout = cudnn_convolution_layout(with_output(geometry), 4);
  EXPECT_EQ(layout.conv_input.dims, (Ints{4, 2, 1, 9}));
  EXPECT_EQ(layout.conv_output.dims, (Ints{4, 3, 1, 5}));
  EXPECT_EQ(layout.filter_dims, (Ints{3, 2, 1, 3}));
  EXPECT_EQ(layout.padding, (Ints{0, 1}));
  EXPECT_EQ(layout.stride, (Ints{1, 2}));
  EXPECT_EQ(layout.dilation, (Ints{1, 1}));
}

TEST(CudnnLayout, InconsistentGeometriesAreRejectedWithTheReason) {
  auto wrong_output = geometry_3d();
  wrong_output.output_spatial = {8, 5, 9};
  EXPECT_EQ(message_of([&] { cudnn_convolution_layout(wrong_output, 1); }),
            "convolution output 8x5x9 does not match its window: expected 8x5x8");

  auto bad_groups = geometry_3d();
  bad_groups.groups = 3;
  EXPECT_NE(message_of([&] {
              cudnn_convolution_layout(bad_groups, 1);
            }).find("not divisible by its 3 groups"),
            std::string::npos);

  auto missing_axis = geometry_3d();
  missing_axis.stride = {1, 1};
  EXPECT_EQ(message_of([&] { cudnn_convolution_layout(missing_axis, 1); }),
            "convolution stride has 2 axes, expected one per spatial axis (3)");

  auto huge = geometry_3d();
  huge.input_spatial = {2048, 2048, 1024};
  EXPECT_NE(message_of([&] {
              cudnn_convolution_layout(with_output(huge), 1);
            }).find("outside cuDNN's int range"),
            std::string::npos);
}

TEST(CudnnLayout, PoolingWindowsAndExtents) {
  PoolingGeometry pooling;
  pooling.channels = 5;
  pooling.input_spatial = {9, 8, 8};
  pooling.output_spatial = {5, 4, 4};
  pooling.kernel = {3, 2, 2};
  pooling.stride = {2, 2, 2};
  pooling.padding = {1, 0, 0};
  const auto layout = cudnn_pooling_layout(pooling, 2);
  EXPECT_EQ(layout.input.dims, (Ints{2, 5, 9, 8, 8}));
  EXPECT_EQ(layout.output.dims, (Ints{2, 5, 5, 4, 4}));
  EXPECT_EQ(layout.window, (Ints{3, 2, 2}));
  EXPECT_EQ(layout.padding, (Ints{1, 0, 0}));
  EXPECT_EQ(layout.stride, (Ints{2, 2, 2}));

  EXPECT_FALSE(layout.needs_padded_copy());

  pooling.output_spatial = {4, 4, 4};
  EXPECT_EQ(message_of([&] { cudnn_pooling_layout(pooling, 2); }),
            "pooling output 4x4x4 does not match its window: expected 5x4x4");
}

// GoogLeNet's 3x3 stride-2 max pooling of 112 rounds up to 56 (cuDNN's floor gives 55): it runs on
// a copy padded by one on the high side; an average pooling that rounds up is refused.
TEST(CudnnLayout, CeilModeMaxPoolingRunsOnAHighSidePaddedCopy) {
  PoolingGeometry pooling;
  pooling.channels = 64;
  pooling.input_spatial = {112, 112};
  pooling.output_spatial = {56, 56};
  pooling.kernel = {3, 3};
  pooling.stride = {2, 2};
  pooling.padding = {0, 0};
  const auto layout = cudnn_pooling_layout(pooling, 2);
  EXPECT_TRUE(layout.needs_padded_copy());
  EXPECT_EQ(layout.input.dims, (Ints{2, 64, 112, 112}));
  EXPECT_EQ(layout.padded_input.dims, (Ints{2, 64, 113, 113}));
  EXPECT_EQ(output_extent(113, 3, 2, 0, 1), 56);

  pooling.output_spatial = {56, 55};  // one axis rounds up, the other not
  EXPECT_EQ(cudnn_pooling_layout(pooling, 2).padded_input.dims, (Ints{2, 64, 113, 112}));

  pooling.output_spatial = {57, 56};  // two more than floor: no rounding gives it
  EXPECT_NE(message_of([&] { cudnn_pooling_layout(pooling, 2); }).find("does not match"),
            std::string::npos);

  pooling.output_spatial = {56, 56};
  pooling.max = false;
  EXPECT_NE(message_of([&] { cudnn_pooling_layout(pooling, 2); }).find("average pooling"),
            std::string::npos);
}

// cuDNN's own descriptor arithmetic (host-only calls, no GPU needed) agrees with the layouts:
// the plain convolution of conv_input by the filter gives conv_output, pooling gives output.
TEST(CudnnLayout, CudnnComputesTheSameOutputFromTheDescriptors) {
  std::vector<ConvolutionGeometry> geometries = {geometry_3d()};
  auto grouped = geometry_3d();
  grouped.groups = 4;
  geometries.push_back(grouped);
  ConvolutionGeometry transposed;
  transposed.transposed = true;
  transposed.in_channels = 8;
  transposed.out_channels = 6;
  transposed.groups = 2;
  transposed.input_spatial = {5, 7};
  transposed.kernel = {4, 3};
  transposed.stride = {2, 2};
  transposed.padding = {1, 1};
  transposed.dilation = {1, 1};
  geometries.push_back(with_output(transposed));
  ConvolutionGeometry one_d;
  one_d.in_channels = 2;
  one_d.out_channels = 3;
  one_d.input_spatial = {9};
  one_d.kernel = {3};
  one_d.stride = {2};
  one_d.padding = {1};
  one_d.dilation = {2};
  geometries.push_back(with_output(one_d));
  for (const ConvolutionGeometry& geometry : geometries) {
    const auto layout = cudnn_convolution_layout(geometry, 3);
    const auto from_cudnn = cudnn_convolution_output_dims(layout);
    if (!from_cudnn) GTEST_SKIP() << "no cuDNN in this build";
    EXPECT_EQ(*from_cudnn, layout.conv_output.dims);
  }

  PoolingGeometry pooling;
  pooling.channels = 5;
  pooling.input_spatial = {9, 8, 8};
  pooling.output_spatial = {5, 4, 4};
  pooling.kernel = {3, 2, 2};
  pooling.stride = {2, 2, 2};
  pooling.padding = {1, 0, 0};
  for (bool max : {true, false}) {
    const auto layout = cudnn_pooling_layout(pooling, 2);
    EXPECT_EQ(cudnn_pooling_output_dims(max, layout), layout.output.dims);
  }
}

TEST(CudnnAlgorithmNames, TransposedConvolutionsSwapForwardAndBackwardData) {
  EXPECT_EQ(cudnn_pass(false, Direction::forward), CudnnPass::forward);
  EXPECT_EQ(cudnn_pass(false, Direction::backward_data), CudnnPass::backward_data);
  EXPECT_EQ(cudnn_pass(true, Direction::forward), CudnnPass::backward_data);
  EXPECT_EQ(cudnn_pass(true, Direction::backward_data), CudnnPass::forward);
  EXPECT_EQ(cudnn_pass(true, Direction::backward_filter), CudnnPass::backward_filter);
}

TEST(CudnnAlgorithmNames, EveryNameRoundTripsToItsEnumerator) {
  for (CudnnPass pass :
       {CudnnPass::forward, CudnnPass::backward_data, CudnnPass::backward_filter}) {
    const auto& names = cudnn_algorithm_names(pass);
    for (int index = 0; index < static_cast<int>(names.size()); ++index) {
      EXPECT_EQ(cudnn_algorithm_index(pass, cudnn_algorithm_name(pass, index)), index);
    }
  }
  EXPECT_EQ(cudnn_algorithm_names(CudnnPass::forward).size(), 8u);
  EXPECT_EQ(cudnn_algorithm_names(CudnnPass::backward_data).size(), 6u);
  EXPECT_EQ(cudnn_algorithm_names(CudnnPass::backward_filter).size(), 7u);
  EXPECT_EQ(cudnn_algorithm_index(CudnnPass::forward, "IMPLICIT_PRECOMP_GEMM"), 1);
  EXPECT_EQ(cudnn_algorithm_index(CudnnPass::backward_filter, "FFT_TILING"), 6);
}

TEST(CudnnAlgorithmNames, UnknownNamesListTheKnownOnes) {
  EXPECT_EQ(message_of([] { cudnn_algorithm_index(CudnnPass::backward_data, "GEMM"); }),
            "unknown cuDNN backward-data algorithm 'GEMM': expected one of ALGO_0, ALGO_1, FFT, "
            "FFT_TILING, WINOGRAD, WINOGRAD_NONFUSED");
  EXPECT_THROW(cudnn_algorithm_name(CudnnPass::forward, 8), std::invalid_argument);
}

}  // namespace
}  // namespace tessera::kernels
