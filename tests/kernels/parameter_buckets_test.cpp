// The real backend's parameter block (kernels/real/src/parameter_buckets): each layer's weights
// and gradients start on a cache line whatever the sizes of the layers before it, and a layer's
// values come back as they went in.
#include "parameter_buckets.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "tessera/kernels/device.hpp"

namespace tessera::kernels::real {
namespace {

bool on_a_cache_line(const float* pointer) {
  return reinterpret_cast<std::uintptr_t>(pointer) % 64 == 0;
}

// Layer 0 has none, layer 1 the 5,130 of a 512-to-10 classifier with its bias (not a multiple of
// a line's 16 floats), then layers of 37 and 1,024.
const std::vector<std::int64_t> kFloatsPerLayer{0, 5130, 37, 1024};

TEST(ParameterBuckets, EachLayersWeightsAndGradientsStartOnACacheLine) {
  const auto device = open_cpu_device();
  const std::vector<GradientBucket> buckets{{.layers = {1, 2}}, {.layers = {3}}};
  for (const bool accumulates : {false, true}) {
    ParameterBuckets parameters(*device, kFloatsPerLayer, buckets, Optimizer::adam, accumulates);
    for (std::size_t layer = 1; layer < kFloatsPerLayer.size(); ++layer) {
      EXPECT_TRUE(on_a_cache_line(parameters.weights(layer))) << "layer " << layer;
      EXPECT_TRUE(on_a_cache_line(parameters.gradients(layer))) << "layer " << layer;
      if (accumulates) {
        EXPECT_TRUE(on_a_cache_line(parameters.accumulated_gradients(layer))) << layer;
      }
    }
  }
}

TEST(ParameterBuckets, ALayersValuesComeBackAsTheyWentIn) {
  const auto device = open_cpu_device();
  ParameterBuckets parameters(*device, kFloatsPerLayer, {{.layers = {3, 2, 1}}}, Optimizer::sgd,
                              false);
  parameters.initialize([](std::size_t layer, std::span<float> values) {
    std::iota(values.begin(), values.end(), static_cast<float>(1000 * layer));
  });
  for (std::size_t layer = 1; layer < kFloatsPerLayer.size(); ++layer) {
    const auto values = parameters.host_weights(layer, nullptr);
    ASSERT_EQ(values.size(), static_cast<std::size_t>(kFloatsPerLayer[layer]));
    EXPECT_EQ(values.front(), static_cast<float>(1000 * layer));
    EXPECT_EQ(values.back(), static_cast<float>(1000 * layer + values.size() - 1));
    const auto gradients = parameters.host_gradients(layer);
    EXPECT_EQ(gradients, std::vector<float>(gradients.size(), 0.0F));
  }
}

}  // namespace
}  // namespace tessera::kernels::real
