// CPU element-wise, dropout, fully connected, bias and concat kernels against their definitions
// and (for the backward passes) central differences.
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

TEST(CpuLeakyRelu, ForwardAndBackwardFollowTheDefinition) {
  const auto x = random_values(257, 1);
  const auto dy = random_values(x.size(), 2);
  CpuLayerKernels kernels;
  for (const float slope : {0.0f, 0.1f}) {
    std::vector<float> y(x.size()), dx(x.size());
    kernels.leaky_relu_forward(static_cast<std::int64_t>(x.size()), slope, x.data(), y.data());
    kernels.leaky_relu_backward(static_cast<std::int64_t>(x.size()), slope, x.data(), dy.data(),
                                dx.data());
    for (std::size_t index = 0; index < x.size(); ++index) {
      const float derivative = x[index] > 0.0f ? 1.0f : slope;
      EXPECT_FLOAT_EQ(y[index], x[index] * derivative) << "slope " << slope << " at " << index;
      EXPECT_FLOAT_EQ(dx[index], dy[index] * derivative) << "slope " << slope << " at " << index;
    }
  }
}

// PyTorch's GELU (torch.nn.GELU(approximate=...)) and its derivative, in double.
double gelu_reference(double x, bool tanh_approximation) {
  if (!tanh_approximation) return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
  const double inner = std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x);
  return 0.5 * x * (1.0 + std::tanh(inner));
}

double gelu_derivative_reference(double x, bool tanh_approximation) {
  if (!tanh_approximation) {
    return 0.5 * (1.0 + std::erf(x / std::sqrt(2.0))) +
           x * std::exp(-0.5 * x * x) / std::sqrt(2 * M_PI);
  }
  const double t = std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x));
  return 0.5 * (1.0 + t) +
         0.5 * x * (1.0 - t * t) * std::sqrt(2.0 / M_PI) * (1.0 + 3 * 0.044715 * x * x);
}

TEST(CpuGelu, ForwardAndBackwardFollowPyTorchsDefinitions) {
  auto x = random_values(301, 12, -5.0f, 5.0f);
  const auto dy = random_values(x.size(), 13);
  const auto count = static_cast<std::int64_t>(x.size());
  CpuLayerKernels kernels;
  for (const bool tanh_approximation : {false, true}) {
    SCOPED_TRACE(tanh_approximation ? "tanh" : "erf");
    std::vector<float> y(x.size()), dx(x.size());
    kernels.gelu_forward(count, tanh_approximation, x.data(), y.data());
    kernels.gelu_backward(count, tanh_approximation, x.data(), dy.data(), dx.data());
    for (std::size_t i = 0; i < x.size(); ++i) {
      EXPECT_NEAR(y[i], gelu_reference(x[i], tanh_approximation), 1e-5) << "x " << x[i];
      EXPECT_NEAR(dx[i], dy[i] * gelu_derivative_reference(x[i], tanh_approximation), 1e-5)
          << "x " << x[i];
    }
    const auto loss = [&] {
      std::vector<float> out(x.size());
      kernels.gelu_forward(count, tanh_approximation, x.data(), out.data());
      return weighted_sum(out, dy);
    };
    expect_gradient_matches(dx, central_differences(x, loss, 1e-2f), 1e-3, "gelu dx");
  }
  // The two forms differ (by up to about 5e-4 near |x| = 2), so each is its own.
  std::vector<float> exact(x.size()), approximate(x.size());
  kernels.gelu_forward(count, false, x.data(), exact.data());
  kernels.gelu_forward(count, true, x.data(), approximate.data());
  EXPECT_NE(exact, approximate);
}

TEST(CpuDropout, MaskIsZeroOrInverseKeepWithTheRequestedRate) {
  const std::int64_t count = 100000;
  const float probability = 0.3f;
  const auto x = random_values(count, 3);
  std::vector<float> mask(count), y(count);
  CpuLayerKernels kernels;
  kernels.dropout_forward(count, probability, {.seed = 42, .per_sample = count}, x.data(),
                          mask.data(), y.data());
  std::int64_t dropped = 0;
  double mask_sum = 0.0;
  for (std::int64_t index = 0; index < count; ++index) {
    ASSERT_TRUE(mask[index] == 0.0f || mask[index] == 1.0f / (1.0f - probability)) << mask[index];
    EXPECT_EQ(y[index], x[index] * mask[index]);
    dropped += mask[index] == 0.0f ? 1 : 0;
    mask_sum += mask[index];
  }
  // Binomial(n, p): the dropped fraction is within 5 standard deviations (0.0072) of p.
  const double sigma = std::sqrt(probability * (1.0 - probability) / count);
  EXPECT_NEAR(static_cast<double>(dropped) / count, probability, 5 * sigma);
  // Inverted dropout keeps the expectation: the mean mask is 1 within the same bound scaled.
  EXPECT_NEAR(mask_sum / count, 1.0, 5 * sigma / (1.0 - probability));
}

TEST(CpuDropout, SameSeedSameMaskOtherSeedOtherMask) {
  const std::int64_t count = 4096;
  const auto x = random_values(count, 4);
  std::vector<float> first(count), second(count), other(count), y(count);
  CpuLayerKernels kernels;
  kernels.dropout_forward(count, 0.5f, {.seed = 7, .per_sample = count}, x.data(), first.data(),
                          y.data());
  kernels.dropout_forward(count, 0.5f, {.seed = 7, .per_sample = count}, x.data(), second.data(),
                          y.data());
  kernels.dropout_forward(count, 0.5f, {.seed = 8, .per_sample = count}, x.data(), other.data(),
                          y.data());
  EXPECT_EQ(first, second);
  std::int64_t differing = 0;
  for (std::int64_t index = 0; index < count; ++index) differing += first[index] != other[index];
  // Independent masks at p = 0.5 differ in half the positions (sigma 32).
  EXPECT_NEAR(static_cast<double>(differing), count / 2.0, 5 * 32.0);
  // A prefix of the tensor gets the prefix of the mask: the draw depends on (seed, index) only.
  std::vector<float> prefix(100);
  kernels.dropout_forward(100, 0.5f, {.seed = 7, .per_sample = 100}, x.data(), prefix.data(),
                          y.data());
  EXPECT_TRUE(std::equal(prefix.begin(), prefix.end(), first.begin()));
}

TEST(CpuDropout, ABatchInOneCallDrawsEachSampleAsItsOwnCall) {
  // Sample s of a call draws from stream first_sample + s: three samples at once give the masks
  // of three one-sample calls, whatever rank or call runs each (data parallelism stays exact).
  const std::int64_t per_sample = 257, samples = 3;
  const auto x = random_values(per_sample * samples, 12);
  std::vector<float> batched(x.size()), y(x.size()), alone(per_sample), y_alone(per_sample);
  CpuLayerKernels kernels;
  kernels.dropout_forward(per_sample * samples, 0.5f,
                          {.seed = 11, .first_sample = 40, .per_sample = per_sample}, x.data(),
                          batched.data(), y.data());
  for (std::int64_t s = 0; s < samples; ++s) {
    kernels.dropout_forward(
        per_sample, 0.5f,
        {.seed = 11, .first_sample = static_cast<std::uint64_t>(40 + s), .per_sample = per_sample},
        x.data() + s * per_sample, alone.data(), y_alone.data());
    EXPECT_TRUE(std::equal(alone.begin(), alone.end(), batched.begin() + s * per_sample)) << s;
  }
  // Two samples do not share a mask.
  EXPECT_FALSE(
      std::equal(batched.begin(), batched.begin() + per_sample, batched.begin() + per_sample));
  // A count that is not whole samples is a caller bug.
  EXPECT_THROW(kernels.dropout_forward(per_sample * samples - 1, 0.5f,
                                       {.seed = 11, .per_sample = per_sample}, x.data(),
                                       batched.data(), y.data()),
               std::invalid_argument);
}

TEST(CpuDropout, BackwardAppliesTheMaskAndBadProbabilityIsRejected) {
  const std::int64_t count = 64;
  const auto x = random_values(count, 5);
  const auto dy = random_values(count, 6);
  std::vector<float> mask(count), y(count), dx(count);
  CpuLayerKernels kernels;
  kernels.dropout_forward(count, 0.25f, {.seed = 9, .per_sample = count}, x.data(), mask.data(),
                          y.data());
  kernels.dropout_backward(count, mask.data(), dy.data(), dx.data());
  for (std::int64_t index = 0; index < count; ++index) {
    EXPECT_EQ(dx[index], dy[index] * mask[index]);
  }
  EXPECT_THROW(kernels.dropout_forward(count, 1.0f, {.seed = 9, .per_sample = count}, x.data(),
                                       mask.data(), y.data()),
               std::invalid_argument);
}

TEST(CpuFullyConnected, ForwardMatchesNaiveProduct) {
  const std::int64_t batch = 3, in = 5, out = 4;
  const auto x = random_values(batch * in, 10);
  const auto w = random_values(out * in, 11);
  const auto b = random_values(out, 12);
  std::vector<float> y(batch * out);
  CpuLayerKernels kernels;
  kernels.fully_connected_forward(batch, in, out, x.data(), w.data(), b.data(), y.data());
  for (std::int64_t sample = 0; sample < batch; ++sample) {
    for (std::int64_t unit = 0; unit < out; ++unit) {
      double expected = b[unit];
      for (std::int64_t input = 0; input < in; ++input) {
        expected += static_cast<double>(x[sample * in + input]) * w[unit * in + input];
      }
      EXPECT_NEAR(y[sample * out + unit], expected, 1e-5);
    }
  }
}

TEST(CpuFullyConnected, BackwardMatchesCentralDifferencesAndAccumulatesWithBetaOne) {
  const std::int64_t batch = 3, in = 6, out = 4;
  auto x = random_values(batch * in, 13);
  auto w = random_values(out * in, 14);
  auto b = random_values(out, 15);
  const auto dy = random_values(batch * out, 16);
  CpuLayerKernels kernels;
  std::vector<float> y(batch * out);
  const auto loss = [&] {
    kernels.fully_connected_forward(batch, in, out, x.data(), w.data(), b.data(), y.data());
    return weighted_sum(y, dy);
  };
  std::vector<float> dx(x.size()), dw(w.size()), db(b.size());
  kernels.fully_connected_backward_data(batch, in, out, dy.data(), w.data(), dx.data());
  kernels.fully_connected_backward_weights(batch, in, out, x.data(), dy.data(), dw.data(),
                                           db.data(), 0.0f);
  expect_gradient_matches(dx, central_differences(x, loss, 1e-2f), 1e-3, "fc dx");
  expect_gradient_matches(dw, central_differences(w, loss, 1e-2f), 1e-3, "fc dw");
  expect_gradient_matches(db, central_differences(b, loss, 1e-2f), 1e-3, "fc db");

  // beta = 1 adds the same gradient again.
  std::vector<float> dw_twice = dw, db_twice = db;
  kernels.fully_connected_backward_weights(batch, in, out, x.data(), dy.data(), dw_twice.data(),
                                           db_twice.data(), 1.0f);
  for (std::size_t index = 0; index < dw.size(); ++index) {
    EXPECT_NEAR(dw_twice[index], 2 * dw[index], 1e-6);
  }
  for (std::size_t index = 0; index < db.size(); ++index) {
    EXPECT_NEAR(db_twice[index], 2 * db[index], 1e-6);
  }
}

TEST(CpuBias, ForwardAddsPerChannelAndBackwardSumsOverBatchAndSpace) {
  const std::int64_t batch = 2, channels = 3, spatial = 10;
  const auto x = random_values(batch * channels * spatial, 17);
  const auto b = random_values(channels, 18);
  std::vector<float> y = x;
  CpuLayerKernels kernels;
  kernels.bias_forward(batch, channels, spatial, b.data(), y.data());
  for (std::size_t index = 0; index < y.size(); ++index) {
    EXPECT_EQ(y[index], x[index] + b[(index / spatial) % channels]);
  }
  std::vector<float> db{100.0f, 200.0f, 300.0f};
  kernels.bias_backward(batch, channels, spatial, x.data(), db.data(), 1.0f);
  for (std::int64_t channel = 0; channel < channels; ++channel) {
    double sum = 0.0;
    for (std::int64_t sample = 0; sample < batch; ++sample) {
      for (std::int64_t index = 0; index < spatial; ++index) {
        sum += x[(sample * channels + channel) * spatial + index];
      }
    }
    EXPECT_NEAR(db[channel], 100.0 * static_cast<double>(channel + 1) + sum, 1e-4);
  }
}

TEST(CpuConcat, ForwardInterleavesPerSampleAndBackwardSplitsBack) {
  const std::int64_t batch = 2, spatial = 3;
  const std::vector<std::int64_t> channels{2, 0, 1, 3};
  std::vector<std::vector<float>> inputs;
  std::vector<const float*> input_pointers;
  for (std::size_t index = 0; index < channels.size(); ++index) {
    inputs.push_back(
        random_values(batch * channels[index] * spatial, static_cast<std::uint32_t>(20 + index)));
    input_pointers.push_back(inputs.back().data());
  }
  const std::int64_t total = 6;
  std::vector<float> y(batch * total * spatial);
  CpuLayerKernels kernels;
  kernels.concat_forward(batch, spatial, input_pointers, channels, y.data());
  std::vector<float> expected;
  for (std::int64_t sample = 0; sample < batch; ++sample) {
    for (std::size_t index = 0; index < channels.size(); ++index) {
      const auto block = channels[index] * spatial;
      expected.insert(expected.end(), inputs[index].begin() + sample * block,
                      inputs[index].begin() + (sample + 1) * block);
    }
  }
  EXPECT_EQ(y, expected);

  std::vector<std::vector<float>> gradients;
  std::vector<float*> gradient_pointers;
  for (const auto& input : inputs) gradients.emplace_back(input.size(), -1.0f);
  for (auto& gradient : gradients) gradient_pointers.push_back(gradient.data());
  kernels.concat_backward(batch, spatial, y.data(), channels, gradient_pointers);
  for (std::size_t index = 0; index < inputs.size(); ++index) {
    EXPECT_EQ(gradients[index], inputs[index]) << "input " << index;
  }

  // A null gradient pointer skips that input; the others still get their own channels.
  std::vector<float> last(inputs.back().size(), -1.0f);
  kernels.concat_backward(batch, spatial, y.data(), channels,
                          {nullptr, nullptr, nullptr, last.data()});
  EXPECT_EQ(last, inputs.back());
}

TEST(CpuElementwise, AddAndAxpy) {
  const std::int64_t count = 1000;
  const auto a = random_values(count, 30);
  const auto b = random_values(count, 31);
  std::vector<float> sum(count), y = b;
  CpuLayerKernels kernels;
  kernels.add(count, a.data(), b.data(), sum.data());
  kernels.axpy(count, -0.5f, a.data(), y.data());
  for (std::int64_t index = 0; index < count; ++index) {
    EXPECT_EQ(sum[index], a[index] + b[index]);
    EXPECT_FLOAT_EQ(y[index], b[index] - 0.5f * a[index]);
  }
}

TEST(CpuElementwise, AxpyIsTheSameOnShortRunsAndLongOnes) {
  // A halo face's runs are short (a plain loop), a gradient bucket long (oneDNN's sum).
  CpuLayerKernels kernels;
  for (const std::int64_t count : {std::int64_t{1}, std::int64_t{257}, std::int64_t{1} << 20}) {
    const auto x = random_values(count, 40);
    const auto start = random_values(count, 41);
    auto y = start;
    kernels.axpy(count, 2.0f, x.data(), y.data());
    for (std::int64_t index = 0; index < count; ++index) {
      ASSERT_FLOAT_EQ(y[index], start[index] + 2.0f * x[index]) << count << " floats, at " << index;
    }
  }
}

}  // namespace
}  // namespace tessera::kernels
