#pragma once
// Helpers for testing convolution kernels on any Device against reference_convolution.hpp:
// random tensors, host <-> device copies, and a comparison whose tolerance scales with the size of
// the terms summed (see within_rounding()).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "reference_convolution.hpp"
#include "tessera/kernels/convolution_kernels.hpp"
#include "tessera/kernels/device.hpp"

namespace tessera::kernels::testing {

inline std::vector<float> random_floats(std::int64_t count, unsigned seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> values(static_cast<std::size_t>(count));
  for (float& value : values) value = uniform(generator);
  return values;
}

inline std::vector<float> absolute(std::span<const float> values) {
  std::vector<float> result(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) result[i] = std::fabs(values[i]);
  return result;
}

inline std::unique_ptr<DeviceMemory> upload(Device& device, std::span<const float> values) {
  auto memory = device.allocate(values.size() * sizeof(float));
  device.copy_to_device(values.data(), memory->data(), values.size());
  return memory;
}

inline std::vector<float> download(Device& device, DeviceMemory& memory) {
  std::vector<float> values(memory.floats());
  device.copy_to_host(memory.data(), values.data(), values.size());
  return values;
}

// |got - expected| <= relative * magnitude element-wise, where magnitude[i] is the sum of the
// absolute values of the terms that make expected[i] (the reference run on |inputs|). Summing n
// float32 terms in any order errs by at most about n * 2^-24 of that sum (Higham, "Accuracy and
// Stability of Numerical Algorithms", 4.2), so relative = 1e-4 allows n up to ~1,600 terms,
// more than any test shape here sums, while a wrong, missing or doubled tap is one whole term off.
inline ::testing::AssertionResult within_rounding(std::span<const float> got,
                                                  std::span<const float> expected,
                                                  std::span<const float> magnitude,
                                                  double relative = 1e-4) {
  if (got.size() != expected.size() || got.size() != magnitude.size()) {
    return ::testing::AssertionFailure() << "sizes differ: " << got.size() << " vs "
                                         << expected.size() << " vs " << magnitude.size();
  }
  std::size_t failures = 0;
  std::ostringstream first_failures;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double allowed = relative * double{magnitude[i]} + 1e-30;
    const double error = std::fabs(double{got[i]} - double{expected[i]});
    if (!(error <= allowed)) {  // also catches NaN
      if (failures < 5) {
        first_failures << "\n  [" << i << "] got " << got[i] << ", expected " << expected[i]
                       << " (error " << error << " > " << allowed << ")";
      }
      ++failures;
    }
  }
  if (failures == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << failures << " of " << got.size() << " elements differ:" << first_failures.str();
}

// Random inputs of one direction in ConvolutionKernels' pointer order (forward: x, w; backward-
// data: dy, w; backward-filter: x, dy), with the reference result and its magnitude.
struct DirectionTensors {
  std::vector<float> first_input;
  std::vector<float> second_input;
  std::vector<float> expected;
  std::vector<float> magnitude;
};

inline DirectionTensors direction_tensors(const ConvolutionGeometry& geometry, std::int64_t batch,
                                          Direction direction, unsigned seed) {
  const std::vector<float> x = random_floats(batch * geometry.input_floats_per_sample(), seed);
  const std::vector<float> w = random_floats(geometry.filter_floats(), seed + 1);
  const std::vector<float> dy =
      random_floats(batch * geometry.output_floats_per_sample(), seed + 2);
  switch (direction) {
    case Direction::forward:
      return {x, w, reference_forward(geometry, batch, x, w),
              reference_forward(geometry, batch, absolute(x), absolute(w))};
    case Direction::backward_data:
      return {dy, w, reference_backward_data(geometry, batch, dy, w),
              reference_backward_data(geometry, batch, absolute(dy), absolute(w))};
    case Direction::backward_filter:
      return {x, dy, reference_backward_filter(geometry, batch, x, dy),
              reference_backward_filter(geometry, batch, absolute(x), absolute(dy))};
  }
  throw std::logic_error("unknown direction");
}

// The ConvolutionKernels call of `direction`, with its inputs in the order above.
inline void run_direction(ConvolutionKernels& kernels, const ConvolutionGeometry& geometry,
                          std::int64_t batch, Direction direction, const std::string& algorithm,
                          const float* first_input, const float* second_input, float* result,
                          float beta, DeviceMemory* workspace) {
  switch (direction) {
    case Direction::forward:
      return kernels.forward(geometry, batch, algorithm, first_input, second_input, result, beta,
                             workspace);
    case Direction::backward_data:
      return kernels.backward_data(geometry, batch, algorithm, first_input, second_input, result,
                                   beta, workspace);
    case Direction::backward_filter:
      return kernels.backward_filter(geometry, batch, algorithm, first_input, second_input, result,
                                     beta, workspace);
  }
}

// A named problem of a parameterised convolution test.
struct Case {
  const char* name;
  ConvolutionGeometry geometry;
  std::int64_t batch;
};

// The same kernel, stride, padding and dilation on every spatial axis; output from with_output().
inline ConvolutionGeometry geometry(std::int64_t in, std::int64_t out,
                                    std::vector<std::int64_t> input, std::int64_t kernel,
                                    std::int64_t stride, std::int64_t padding,
                                    std::int64_t dilation = 1, std::int64_t groups = 1,
                                    bool transposed = false) {
  const std::size_t rank = input.size();
  return with_output({.transposed = transposed,
                      .in_channels = in,
                      .out_channels = out,
                      .groups = groups,
                      .input_spatial = std::move(input),
                      .kernel = std::vector<std::int64_t>(rank, kernel),
                      .stride = std::vector<std::int64_t>(rank, stride),
                      .padding = std::vector<std::int64_t>(rank, padding),
                      .dilation = std::vector<std::int64_t>(rank, dilation)});
}

}  // namespace tessera::kernels::testing
