// The CPU layer normalisation against its definition (PyTorch's LayerNorm over the channels of
// each position, epsilon 1e-5) and its backward against central differences.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "cpu/cpu_layer_kernels.hpp"
#include "gradient_check.hpp"

namespace tessera::kernels {
namespace {

using testing::central_differences;
using testing::expect_gradient_matches;
using testing::random_values;
using testing::weighted_sum;

constexpr std::int64_t kNormBatch = 3, kNormChannels = 5, kNormPositions = 7;
constexpr std::size_t kLayerNormFloats = kNormBatch * kNormChannels * kNormPositions;

TEST(CpuLayerNorm, ForwardNormalisesEachPositionOverItsChannels) {
  const auto x = random_values(kLayerNormFloats, 31, -2.0f, 3.0f);
  const auto scale = random_values(kNormChannels, 32);
  const auto shift = random_values(kNormChannels, 33);
  std::vector<float> y(kLayerNormFloats), mean(kNormBatch * kNormPositions),
      inv_std(kNormBatch * kNormPositions);
  CpuLayerKernels kernels;
  kernels.layer_norm_forward(kNormBatch, kNormChannels, kNormPositions, x.data(), scale.data(),
                             shift.data(), y.data(), mean.data(), inv_std.data());
  for (std::int64_t n = 0; n < kNormBatch; ++n) {
    for (std::int64_t t = 0; t < kNormPositions; ++t) {
      double sum = 0, squares = 0;
      for (std::int64_t c = 0; c < kNormChannels; ++c)
        sum += x[(n * kNormChannels + c) * kNormPositions + t];
      const double m = sum / kNormChannels;
      for (std::int64_t c = 0; c < kNormChannels; ++c) {
        const double d = x[(n * kNormChannels + c) * kNormPositions + t] - m;
        squares += d * d;
      }
      const double r = 1.0 / std::sqrt(squares / kNormChannels + 1e-5);
      EXPECT_NEAR(mean[n * kNormPositions + t], m, 1e-6);
      EXPECT_NEAR(inv_std[n * kNormPositions + t], r, 1e-5 * r);
      for (std::int64_t c = 0; c < kNormChannels; ++c) {
        const std::size_t i = (n * kNormChannels + c) * kNormPositions + t;
        EXPECT_NEAR(y[i], (x[i] - m) * r * scale[c] + shift[c], 1e-5);
      }
    }
  }
}

TEST(CpuLayerNorm, BackwardMatchesCentralDifferences) {
  auto x = random_values(kLayerNormFloats, 34, -2.0f, 3.0f);
  auto scale = random_values(kNormChannels, 35, 0.5f, 1.5f);
  auto shift = random_values(kNormChannels, 36);
  const auto weights = random_values(kLayerNormFloats, 37);  // d(loss)/dy
  CpuLayerKernels kernels;
  std::vector<float> y(kLayerNormFloats), mean(kNormBatch * kNormPositions),
      inv_std(kNormBatch * kNormPositions);
  const auto loss = [&] {
    kernels.layer_norm_forward(kNormBatch, kNormChannels, kNormPositions, x.data(), scale.data(),
                               shift.data(), y.data(), mean.data(), inv_std.data());
    return weighted_sum(y, weights);
  };
  loss();
  std::vector<float> dx(kLayerNormFloats), dscale(kNormChannels, 9.0f), dshift(kNormChannels, 9.0f);
  kernels.layer_norm_backward(kNormBatch, kNormChannels, kNormPositions, x.data(), weights.data(),
                              mean.data(), inv_std.data(), scale.data(), dx.data(), dscale.data(),
                              dshift.data(), 0.0f);
  expect_gradient_matches(dx, central_differences(x, loss, 1e-2f), 2e-3, "dx");
  expect_gradient_matches(dscale, central_differences(scale, loss, 1e-2f), 2e-3, "dscale");
  expect_gradient_matches(dshift, central_differences(shift, loss, 1e-2f), 2e-3, "dshift");
  // beta 1 adds to what is there; without scale and shift there are no such gradients.
  std::vector<float> again = dscale;
  kernels.layer_norm_backward(kNormBatch, kNormChannels, kNormPositions, x.data(), weights.data(),
                              mean.data(), inv_std.data(), scale.data(), nullptr, again.data(),
                              std::vector<float>(kNormChannels).data(), 1.0f);
  for (std::int64_t c = 0; c < kNormChannels; ++c) EXPECT_NEAR(again[c], 2 * dscale[c], 1e-5);
  EXPECT_THROW(kernels.layer_norm_forward(kNormBatch, 0, kNormPositions, x.data(), nullptr, nullptr,
                                          y.data(), mean.data(), inv_std.data()),
               std::invalid_argument);
}

}  // namespace
}  // namespace tessera::kernels
