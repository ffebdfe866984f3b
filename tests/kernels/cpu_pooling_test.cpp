// CPU pooling against a naive loop reference (forward) and central differences (backward).
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <numeric>
#include <stdexcept>

#include "cpu/cpu_layer_kernels.hpp"
#include "gradient_check.hpp"

namespace tessera::kernels {
namespace {

using testing::central_differences;
using testing::expect_gradient_matches;
using testing::random_values;
using testing::weighted_sum;

std::int64_t positions_in(const std::vector<std::int64_t>& values) {
  return std::accumulate(values.begin(), values.end(), std::int64_t{1}, std::multiplies<>());
}

// The geometry with missing leading axes filled in as extent 1, kernel 1: always 3 axes.
std::vector<std::int64_t> as_3d(std::vector<std::int64_t> values, std::int64_t fill) {
  values.insert(values.begin(), 3 - values.size(), fill);
  return values;
}

// Max or average (padding excluded) over each window, straight from the definition.
std::vector<float> reference_pooling(const PoolingGeometry& geometry, std::int64_t batch,
                                     const std::vector<float>& x) {
  const auto in = as_3d(geometry.input_spatial, 1);
  const auto out = as_3d(geometry.output_spatial, 1);
  const auto kernel = as_3d(geometry.kernel, 1);
  const auto stride = as_3d(geometry.stride, 1);
  const auto padding = as_3d(geometry.padding, 0);
  std::vector<float> y;
  for (std::int64_t plane = 0; plane < batch * geometry.channels; ++plane) {
    const float* input = x.data() + plane * in[0] * in[1] * in[2];
    for (std::int64_t od = 0; od < out[0]; ++od) {
      for (std::int64_t oh = 0; oh < out[1]; ++oh) {
        for (std::int64_t ow = 0; ow < out[2]; ++ow) {
          float maximum = -std::numeric_limits<float>::infinity();
          double sum = 0.0;
          int inside = 0;
          for (std::int64_t kd = 0; kd < kernel[0]; ++kd) {
            for (std::int64_t kh = 0; kh < kernel[1]; ++kh) {
              for (std::int64_t kw = 0; kw < kernel[2]; ++kw) {
                const std::int64_t d = od * stride[0] - padding[0] + kd;
                const std::int64_t h = oh * stride[1] - padding[1] + kh;
                const std::int64_t w = ow * stride[2] - padding[2] + kw;
                if (d < 0 || h < 0 || w < 0 || d >= in[0] || h >= in[1] || w >= in[2]) continue;
                const float value = input[(d * in[1] + h) * in[2] + w];
                maximum = std::max(maximum, value);
                sum += value;
                ++inside;
              }
            }
          }
          y.push_back(geometry.max ? maximum : static_cast<float>(sum / inside));
        }
      }
    }
  }
  return y;
}

PoolingGeometry max_pool_2d() {
  // 3x3 windows, stride 2, padding 1 on a 7x6 plane (ResNet's stem pooling, shrunk).
  return {true, 3, {7, 6}, {4, 3}, {3, 3}, {2, 2}, {1, 1}};
}

PoolingGeometry avg_pool_3d() {
  return {false, 2, {4, 5, 3}, {3, 3, 2}, {2, 3, 2}, {2, 2, 2}, {1, 1, 1}};
}

// Distinct values 0.05 apart in shuffled order: no window has a tie, so max pooling is
// differentiable at every input and a finite difference of 0.01 never changes the argmax.
std::vector<float> distinct_values(std::size_t count) {
  std::vector<float> values(count);
  for (std::size_t index = 0; index < count; ++index)
    values[index] = 0.05f * static_cast<float>(index) - 1.0f;
  std::shuffle(values.begin(), values.end(), std::mt19937(7));
  return values;
}

void expect_forward_matches_reference(const PoolingGeometry& geometry, std::int64_t batch,
                                      CpuLayerKernels& kernels) {
  const auto x =
      random_values(batch * geometry.channels * positions_in(geometry.input_spatial), 11);
  std::vector<float> y(batch * geometry.channels * positions_in(geometry.output_spatial));
  kernels.pooling_forward(geometry, batch, x.data(), y.data());
  const auto expected = reference_pooling(geometry, batch, x);
  ASSERT_EQ(y.size(), expected.size());
  for (std::size_t index = 0; index < y.size(); ++index) {
    EXPECT_NEAR(y[index], expected[index], 1e-6) << "output " << index;
  }
}

void expect_forward_matches_reference(const PoolingGeometry& geometry, std::int64_t batch) {
  CpuLayerKernels kernels;
  expect_forward_matches_reference(geometry, batch, kernels);
}

void expect_backward_matches_central_differences(const PoolingGeometry& geometry,
                                                 std::int64_t batch) {
  CpuLayerKernels kernels;
  auto x = distinct_values(batch * geometry.channels * positions_in(geometry.input_spatial));
  std::vector<float> y(batch * geometry.channels * positions_in(geometry.output_spatial));
  const auto dy = random_values(y.size(), 5);
  const auto loss = [&] {
    kernels.pooling_forward(geometry, batch, x.data(), y.data());
    return weighted_sum(y, dy);
  };
  loss();
  std::vector<float> dx(x.size(), 123.0f);  // poisoned: every entry must be written
  kernels.pooling_backward(geometry, batch, x.data(), y.data(), dy.data(), dx.data());
  expect_gradient_matches(dx, central_differences(x, loss, 0.01f), 1e-3, "pooling dx");
}

TEST(CpuPooling, MaxPooling2dWithStrideAndPaddingMatchesReference) {
  expect_forward_matches_reference(max_pool_2d(), 2);
}

TEST(CpuPooling, AveragePooling3dExcludesPaddingLikeReference) {
  expect_forward_matches_reference(avg_pool_3d(), 2);
}

TEST(CpuPooling, CeilModeOutputExtentIsAccepted) {
  // 5 -> 3 with kernel 2, stride 2 is ceil mode: the last window holds one input element.
  expect_forward_matches_reference({true, 2, {5, 5}, {3, 3}, {2, 2}, {2, 2}, {0, 0}}, 1);
  expect_forward_matches_reference({false, 2, {5, 5}, {3, 3}, {2, 2}, {2, 2}, {0, 0}}, 1);
}

TEST(CpuPooling, MaxPooling3dMatchesReference) {
  expect_forward_matches_reference({true, 2, {4, 4, 4}, {2, 2, 2}, {2, 2, 2}, {2, 2, 2}, {0, 0, 0}},
                                   2);
}

// One channel keeps the number of forward calls (two per input element) small.
PoolingGeometry single_channel(PoolingGeometry geometry) {
  geometry.channels = 1;
  return geometry;
}

TEST(CpuPooling, MaxBackwardMatchesCentralDifferences) {
  expect_backward_matches_central_differences(single_channel(max_pool_2d()), 1);
  expect_backward_matches_central_differences(
      {true, 1, {2, 4, 4}, {1, 2, 2}, {2, 2, 2}, {2, 2, 2}, {0, 0, 0}}, 1);
}

TEST(CpuPooling, AverageBackwardMatchesCentralDifferences) {
  expect_backward_matches_central_differences(single_channel(avg_pool_3d()), 1);
}

TEST(CpuPooling, OneInstanceRunsShapesOfEverySizeInTurn) {
  // The instance keeps its layout buffers between calls: larger, smaller, then larger again.
  CpuLayerKernels kernels;
  expect_forward_matches_reference(avg_pool_3d(), 2, kernels);
  expect_forward_matches_reference({true, 1, {5}, {2}, {3}, {2}, {0}}, 1, kernels);
  expect_forward_matches_reference(max_pool_2d(), 2, kernels);
  expect_forward_matches_reference(avg_pool_3d(), 2, kernels);
}

TEST(CpuPooling, InconsistentOutputExtentIsRejectedWithTheExpectedValues) {
  CpuLayerKernels kernels;
  std::vector<float> buffer(1000);
  PoolingGeometry geometry = max_pool_2d();
  geometry.output_spatial = {5, 3};
  try {
    kernels.pooling_forward(geometry, 1, buffer.data(), buffer.data());
    FAIL() << "accepted an output extent that does not follow from the geometry";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("output extent 5"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("expected 4 or 4"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace tessera::kernels
