#pragma once
// Finite-difference checks for the kernel tests: a backward kernel is right when its gradient of
// a scalar loss matches central differences of the forward kernel's loss.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace tessera::kernels::testing {

// Uniform values in [low, high) from a fixed seed, so every run checks the same numbers.
inline std::vector<float> random_values(std::size_t count, std::uint32_t seed, float low = -1.0f,
                                        float high = 1.0f) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> distribution(low, high);
  std::vector<float> values(count);
  for (float& value : values) value = distribution(generator);
  return values;
}

// The loss the checks differentiate: sum_i y_i * weights_i, so d(loss)/dy = weights.
inline double weighted_sum(const std::vector<float>& y, const std::vector<float>& weights) {
  double sum = 0.0;
  for (std::size_t index = 0; index < y.size(); ++index) {
    sum += static_cast<double>(y[index]) * weights[index];
  }
  return sum;
}

// (loss(x + step e_i) - loss(x - step e_i)) / (2 step) for every i; `input` is perturbed in
// place and restored.
inline std::vector<double> central_differences(std::vector<float>& input,
                                               const std::function<double()>& loss, float step) {
  std::vector<double> gradient(input.size());
  for (std::size_t index = 0; index < input.size(); ++index) {
    const float original = input[index];
    input[index] = original + step;
    const double above = loss();
    input[index] = original - step;
    const double below = loss();
    input[index] = original;
    gradient[index] = (above - below) / (2.0 * static_cast<double>(step));
  }
  return gradient;
}

// Every entry within tolerance * max(1, |numerical|) of the finite difference.
inline void expect_gradient_matches(const std::vector<float>& analytical,
                                    const std::vector<double>& numerical, double tolerance,
                                    const std::string& what) {
  ASSERT_EQ(analytical.size(), numerical.size()) << what;
  for (std::size_t index = 0; index < analytical.size(); ++index) {
    EXPECT_NEAR(analytical[index], numerical[index],
                tolerance * std::max(1.0, std::abs(numerical[index])))
        << what << " entry " << index;
  }
}

}  // namespace tessera::kernels::testing
