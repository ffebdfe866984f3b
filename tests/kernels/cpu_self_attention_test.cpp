// The CPU self-attention against a naive reference of its definition (PyTorch's
// MultiheadAttention with one in_proj for Q, K, V, over N x C x T) and its backward against
// central differences, causal and not.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "cpu/cpu_sequence_kernels.hpp"
#include "gradient_check.hpp"

namespace tessera::kernels {
namespace {

using testing::central_differences;
using testing::expect_gradient_matches;
using testing::random_values;
using testing::weighted_sum;

constexpr std::int64_t kBatch = 2, kChannels = 6, kSteps = 5, kHeads = 2;

struct Operands {
  std::vector<float> x = random_values(kBatch * kChannels * kSteps, 51);
  std::vector<float> qkv = random_values(3 * kChannels * kChannels, 52, -0.5f, 0.5f);
  std::vector<float> qkv_bias = random_values(3 * kChannels, 53);
  std::vector<float> output = random_values(kChannels * kChannels, 54, -0.5f, 0.5f);
  std::vector<float> output_bias = random_values(kChannels, 55);
  SelfAttentionWeights weights() const {
    return {qkv.data(), qkv_bias.data(), output.data(), output_bias.data()};
  }
};

// y[n, :, i] by the definition, in double.
std::vector<double> reference(const Operands& o, bool causal) {
  const std::int64_t c = kChannels, t = kSteps, d = c / kHeads;
  std::vector<double> y(o.x.size());
  for (std::int64_t n = 0; n < kBatch; ++n) {
    std::vector<double> qkv(3 * c * t);
    for (std::int64_t r = 0; r < 3 * c; ++r)
      for (std::int64_t i = 0; i < t; ++i) {
        double sum = o.qkv_bias[r];
        for (std::int64_t k = 0; k < c; ++k) sum += o.qkv[r * c + k] * o.x[(n * c + k) * t + i];
        qkv[r * t + i] = sum;
      }
    std::vector<double> heads(c * t, 0.0);
    for (std::int64_t h = 0; h < kHeads; ++h)
      for (std::int64_t i = 0; i < t; ++i) {
        std::vector<double> p(t, 0.0);
        double largest = -1e300, total = 0;
        const std::int64_t seen = causal ? i + 1 : t;
        for (std::int64_t j = 0; j < seen; ++j) {
          for (std::int64_t e = 0; e < d; ++e) {
            p[j] += qkv[(h * d + e) * t + i] * qkv[(c + h * d + e) * t + j];
          }
          p[j] /= std::sqrt(static_cast<double>(d));
          largest = std::max(largest, p[j]);
        }
        for (std::int64_t j = 0; j < seen; ++j) total += p[j] = std::exp(p[j] - largest);
        for (std::int64_t j = 0; j < seen; ++j)
          for (std::int64_t e = 0; e < d; ++e) {
            heads[(h * d + e) * t + i] += p[j] / total * qkv[(2 * c + h * d + e) * t + j];
          }
      }
    for (std::int64_t r = 0; r < c; ++r)
      for (std::int64_t i = 0; i < t; ++i) {
        double sum = o.output_bias[r];
        for (std::int64_t k = 0; k < c; ++k) sum += o.output[r * c + k] * heads[k * t + i];
        y[(n * c + r) * t + i] = sum;
      }
  }
  return y;
}

class CpuSelfAttention : public ::testing::TestWithParam<bool> {};

TEST_P(CpuSelfAttention, ForwardFollowsTheDefinitionAndBackwardMatchesCentralDifferences) {
  const bool causal = GetParam();
  Operands o;
  const SelfAttentionShape shape{kBatch, kChannels, kSteps, kHeads, causal};
  CpuSequenceKernels kernels;
  std::vector<float> workspace(kernels.self_attention_workspace_floats(shape));
  std::vector<float> y(o.x.size());
  kernels.self_attention_forward(shape, o.x.data(), o.weights(), y.data(), workspace.data());
  const auto expected = reference(o, causal);
  for (std::size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], expected[i], 1e-5) << i;

  const auto dy = random_values(y.size(), 56);
  std::vector<float> dx(o.x.size()), dqkv(o.qkv.size()), dqkv_bias(o.qkv_bias.size()),
      doutput(o.output.size()), doutput_bias(o.output_bias.size());
  kernels.self_attention_backward(
      shape, o.x.data(), o.weights(), workspace.data(), dy.data(), dx.data(),
      {dqkv.data(), dqkv_bias.data(), doutput.data(), doutput_bias.data()});
  const auto loss = [&] {
    std::vector<float> out(o.x.size()), scratch(workspace.size());
    kernels.self_attention_forward(shape, o.x.data(), o.weights(), out.data(), scratch.data());
    return weighted_sum(out, dy);
  };
  expect_gradient_matches(dx, central_differences(o.x, loss, 1e-2f), 2e-3, "dx");
  expect_gradient_matches(dqkv, central_differences(o.qkv, loss, 1e-2f), 2e-3, "dqkv");
  expect_gradient_matches(dqkv_bias, central_differences(o.qkv_bias, loss, 1e-2f), 2e-3,
                          "dqkv_bias");
  expect_gradient_matches(doutput, central_differences(o.output, loss, 1e-2f), 2e-3, "doutput");
  expect_gradient_matches(doutput_bias, central_differences(o.output_bias, loss, 1e-2f), 2e-3,
                          "doutput_bias");
}

INSTANTIATE_TEST_SUITE_P(Masks, CpuSelfAttention, ::testing::Bool(),
                         [](const auto& param) { return param.param ? "causal" : "full"; });

TEST(CpuSelfAttentionArguments, HeadsMustDivideTheChannels) {
  CpuSequenceKernels kernels;
  Operands o;
  std::vector<float> y(o.x.size()), workspace(1000);
  EXPECT_THROW(kernels.self_attention_forward({kBatch, kChannels, kSteps, 4, false}, o.x.data(),
                                              o.weights(), y.data(), workspace.data()),
               std::invalid_argument);
}

}  // namespace
}  // namespace tessera::kernels
