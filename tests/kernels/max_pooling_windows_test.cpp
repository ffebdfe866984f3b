// The max-pooling element functions the CUDA kernels run (max_pooling_windows.hpp), run here on
// the host over every element and held to the CPU's pooling (oneDNN): the same outputs bit for
// bit, and the same input gradients, on 1D to 3D geometries with padding and ceil-mode extents.
#include "max_pooling_windows.hpp"

#include <gtest/gtest.h>

#include <numeric>
#include <string>

#include "cpu/cpu_layer_kernels.hpp"
#include "cudnn_layout.hpp"
#include "gradient_check.hpp"

namespace tessera::kernels {
namespace {

using testing::random_values;

std::int64_t positions_in(const std::vector<std::int64_t>& values) {
  return std::accumulate(values.begin(), values.end(), std::int64_t{1}, std::multiplies<>());
}

PoolingGeometry max_pooling(std::vector<std::int64_t> input, std::vector<std::int64_t> output,
                            std::int64_t kernel, std::int64_t stride, std::int64_t padding) {
  const std::size_t rank = input.size();
  return {true,
          3,
          std::move(input),
          std::move(output),
          std::vector<std::int64_t>(rank, kernel),
          std::vector<std::int64_t>(rank, stride),
          std::vector<std::int64_t>(rank, padding)};
}

std::string name_of(const PoolingGeometry& geometry) {
  std::string name = "in";
  for (auto extent : geometry.input_spatial) name += " " + std::to_string(extent);
  name += " out";
  for (auto extent : geometry.output_spatial) name += " " + std::to_string(extent);
  return name + " k" + std::to_string(geometry.kernel[0]) + " s" +
         std::to_string(geometry.stride[0]) + " p" + std::to_string(geometry.padding[0]);
}

// The GPU tests' geometries (cuda_layer_kernels_test.cpp), a 1D one, and MLPerf CosmoFlow's
// pool1 shrunk: 2x2x2 windows, stride 2, an odd extent rounded up.
std::vector<PoolingGeometry> geometries() {
  return {max_pooling({9, 8}, {5, 4}, 3, 2, 1),        max_pooling({6, 6, 6}, {3, 3, 3}, 2, 2, 0),
          max_pooling({7, 5, 6}, {4, 3, 3}, 3, 2, 1),  max_pooling({12, 12}, {6, 6}, 3, 2, 0),
          max_pooling({8, 7, 10}, {4, 3, 5}, 3, 2, 0), max_pooling({11}, {6}, 3, 2, 1),
          max_pooling({7, 7, 7}, {4, 4, 4}, 2, 2, 0)};
}

TEST(MaxPoolingWindows, OutputsAreTheCpuPoolingsBitForBit) {
  CpuLayerKernels cpu;
  constexpr std::int64_t batch = 2;
  for (const PoolingGeometry& geometry : geometries()) {
    SCOPED_TRACE(name_of(geometry));
    ASSERT_NO_THROW(cudnn_pooling_layout(geometry, batch));  // a geometry the GPU path accepts
    const auto x = random_values(batch * 3 * positions_in(geometry.input_spatial), 3);
    std::vector<float> expected(batch * 3 * positions_in(geometry.output_spatial));
    cpu.pooling_forward(geometry, batch, x.data(), expected.data());
    const PoolingWindows windows = pooling_windows(geometry);
    ASSERT_EQ(static_cast<std::size_t>(batch * 3 * windows.out_volume()), expected.size());
    for (std::size_t o = 0; o < expected.size(); ++o) {
      ASSERT_EQ(max_pooling_output(windows, x.data(), static_cast<std::int64_t>(o)), expected[o])
          << "output " << o;
    }
  }
}

TEST(MaxPoolingWindows, InputGradientsAreTheCpuPoolings) {
  CpuLayerKernels cpu;
  constexpr std::int64_t batch = 2;
  for (const PoolingGeometry& geometry : geometries()) {
    SCOPED_TRACE(name_of(geometry));
    const auto x = random_values(batch * 3 * positions_in(geometry.input_spatial), 5);
    std::vector<float> y(batch * 3 * positions_in(geometry.output_spatial));
    cpu.pooling_forward(geometry, batch, x.data(), y.data());
    const auto dy = random_values(y.size(), 6);
    std::vector<float> expected(x.size());
    cpu.pooling_backward(geometry, batch, x.data(), y.data(), dy.data(), expected.data());
    const PoolingWindows windows = pooling_windows(geometry);
    for (std::size_t i = 0; i < expected.size(); ++i) {
      // Overlapping windows sum two or more gradients, maybe in another order than oneDNN's.
      ASSERT_NEAR(max_pooling_input_gradient(windows, x.data(), y.data(), dy.data(),
                                             static_cast<std::int64_t>(i)),
                  expected[i], 1e-6)
          << "input " << i;
    }
  }
}

TEST(MaxPoolingWindows, CoveringOutputsAreThoseWhoseWindowHoldsTheCell) {
  for (std::int64_t kernel = 1; kernel <= 4; ++kernel) {
    for (std::int64_t stride = 1; stride <= 3; ++stride) {
      for (std::int64_t padding = 0; padding < kernel; ++padding) {
        for (std::int64_t in = kernel; in <= 9; ++in) {
          const std::int64_t floor_out = (in + 2 * padding - kernel) / stride + 1;
          for (std::int64_t out : {floor_out, floor_out + 1}) {
            if ((out - 1) * stride >= in + padding) continue;  // a window past the input
            const PoolingAxis axis{in, out, kernel, stride, padding};
            for (std::int64_t i = 0; i < in; ++i) {
              std::int64_t first = 0, last = 0;
              covering_outputs(axis, i, first, last);
              for (std::int64_t o = 0; o < out; ++o) {
                std::int64_t begin = 0, end = 0;
                window_cells(axis, o, begin, end);
                const bool holds = begin <= i && i < end;
                EXPECT_EQ(holds, first <= o && o <= last)
                    << "k" << kernel << " s" << stride << " p" << padding << " in " << in << " out "
                    << out << " cell " << i << " output " << o;
              }
            }
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace tessera::kernels
