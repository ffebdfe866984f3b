// Losses and optimizers against values computed by hand (in the comments) and, for the
// cross-entropy gradient, central differences.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "cpu/cpu_layer_kernels.hpp"
#include "gradient_check.hpp"

namespace tessera::kernels {
namespace {

TEST(CpuSoftmaxCrossEntropy, MatchesHandComputedLossAndGradient) {
  // Sample 0: logits (1, 2, 3), label 2: log(e + e^2 + e^3) - 3 = 0.40760596.
  // Sample 1: logits (1, 1, 1), label 0: log 3 = 1.09861229. Mean 0.75310913.
  const std::vector<float> logits{1, 2, 3, 1, 1, 1};
  std::vector<float> dlogits(6);
  CpuLayerKernels kernels;
  const double loss =
      kernels.softmax_cross_entropy(2, 3, 1, logits.data(), {2, 0}, dlogits.data(), 0.5f);
  EXPECT_NEAR(loss, 2 * 0.75310913, 2e-7);  // the sum; the gradient is scaled by 1 / batch
  // (softmax - one-hot) / batch; softmax(1, 2, 3) = (0.09003057, 0.24472847, 0.66524096).
  const std::vector<float> expected{0.09003057f / 2,    0.24472847f / 2, (0.66524096f - 1) / 2,
                                    (1.0f / 3 - 1) / 2, 1.0f / 6,        1.0f / 6};
  for (std::size_t index = 0; index < expected.size(); ++index) {
    EXPECT_NEAR(dlogits[index], expected[index], 1e-7) << index;
  }
}

TEST(CpuSoftmaxCrossEntropy, LargeLogitsStayFiniteAndShiftInvariant) {
  const std::vector<float> logits{1001, 1002, 1003, -1000, -1000, -1000};
  CpuLayerKernels kernels;
  const double loss = kernels.softmax_cross_entropy(2, 3, 1, logits.data(), {2, 0}, nullptr, 1);
  EXPECT_NEAR(loss, 2 * 0.75310913, 2e-6);
}

TEST(CpuSoftmaxCrossEntropy, GradientMatchesCentralDifferences) {
  const std::int64_t batch = 4, classes = 5;
  auto logits = testing::random_values(batch * classes, 1, -3.0f, 3.0f);
  const std::vector<std::int32_t> labels{0, 4, 2, 2};
  CpuLayerKernels kernels;
  std::vector<float> dlogits(logits.size());
  kernels.softmax_cross_entropy(batch, classes, 1, logits.data(), labels, dlogits.data(), 1);
  const auto loss = [&] {
    return kernels.softmax_cross_entropy(batch, classes, 1, logits.data(), labels, nullptr, 1);
  };
  testing::expect_gradient_matches(dlogits, testing::central_differences(logits, loss, 1e-2f), 1e-4,
                                   "cross-entropy dlogits");
}

// A label per position (segmentation): logits batch x classes x positions, each position its
// own softmax over the classes, the same as classifying every position alone.
TEST(CpuSoftmaxCrossEntropy, PerPositionEqualsClassifyingEachPosition) {
  const std::int64_t batch = 2, classes = 3, positions = 5;
  const auto logits = testing::random_values(batch * classes * positions, 7, -3.0f, 3.0f);
  std::vector<std::int32_t> labels(static_cast<std::size_t>(batch * positions));
  for (std::size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<std::int32_t>(i % 3);
  CpuLayerKernels kernels;
  std::vector<float> dlogits(logits.size());
  const double loss = kernels.softmax_cross_entropy(batch, classes, positions, logits.data(),
                                                    labels, dlogits.data(), 0.25f);
  double expected = 0;
  for (std::int64_t s = 0; s < batch; ++s) {
    for (std::int64_t p = 0; p < positions; ++p) {
      std::vector<float> row(static_cast<std::size_t>(classes)), gradient(row.size());
      for (std::int64_t c = 0; c < classes; ++c) {
        row[static_cast<std::size_t>(c)] =
            logits[static_cast<std::size_t>((s * classes + c) * positions + p)];
      }
      expected += kernels.softmax_cross_entropy(
          1, classes, 1, row.data(), {labels[static_cast<std::size_t>(s * positions + p)]},
          gradient.data(), 0.25f);
      for (std::int64_t c = 0; c < classes; ++c) {
        EXPECT_FLOAT_EQ(dlogits[static_cast<std::size_t>((s * classes + c) * positions + p)],
                        gradient[static_cast<std::size_t>(c)]);
      }
    }
  }
  EXPECT_NEAR(loss, expected, 1e-12 * expected);
}

TEST(CpuSoftmaxCrossEntropy, LabelOutOfRangeNamesSampleAndRange) {
  const std::vector<float> logits(6);
  CpuLayerKernels kernels;
  try {
    kernels.softmax_cross_entropy(2, 3, 1, logits.data(), {0, 3}, nullptr, 1);
    FAIL() << "accepted label 3 for 3 classes";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("sample 1 is 3, expected 0 to 2"), std::string::npos)
        << error.what();
  }
}

TEST(CpuMseLoss, MatchesHandComputedLossAndGradient) {
  // Differences (0, 2, -2): loss 8/3, gradient 2 * difference / 3.
  const std::vector<float> prediction{1, 2, 3}, target{1, 0, 5};
  std::vector<float> gradient(3);
  CpuLayerKernels kernels;
  EXPECT_NEAR(kernels.mse_loss(3, prediction.data(), target.data(), gradient.data()), 8.0 / 3,
              1e-12);
  EXPECT_FLOAT_EQ(gradient[0], 0.0f);
  EXPECT_FLOAT_EQ(gradient[1], 4.0f / 3);
  EXPECT_FLOAT_EQ(gradient[2], -4.0f / 3);
}

TEST(CpuSgd, TwoStepsWithMomentumAndWeightDecayMatchHandComputation) {
  // lr 0.1, momentum 0.9, weight decay 0.01, w = 1, g = 0.5 twice:
  // v1 = 0.5 + 0.01 * 1 = 0.51, w1 = 1 - 0.051 = 0.949;
  // v2 = 0.9 * 0.51 + 0.5 + 0.01 * 0.949 = 0.96849, w2 = 0.949 - 0.096849 = 0.852151.
  std::vector<float> w{1.0f}, velocity{0.0f};
  const std::vector<float> g{0.5f};
  CpuLayerKernels kernels;
  kernels.sgd_update(1, 0.1f, 0.9f, 0.01f, g.data(), w.data(), velocity.data());
  EXPECT_FLOAT_EQ(velocity[0], 0.51f);
  EXPECT_FLOAT_EQ(w[0], 0.949f);
  kernels.sgd_update(1, 0.1f, 0.9f, 0.01f, g.data(), w.data(), velocity.data());
  EXPECT_FLOAT_EQ(velocity[0], 0.96849f);
  EXPECT_FLOAT_EQ(w[0], 0.852151f);
}

TEST(CpuSgd, PlainStepNeedsNoVelocity) {
  std::vector<float> w{1.0f, -2.0f};
  const std::vector<float> g{0.5f, 1.0f};
  CpuLayerKernels kernels;
  kernels.sgd_update(2, 0.1f, 0.0f, 0.01f, g.data(), w.data(), nullptr);
  EXPECT_FLOAT_EQ(w[0], 1.0f - 0.1f * 0.51f);
  EXPECT_FLOAT_EQ(w[1], -2.0f - 0.1f * (1.0f - 0.02f));
}

TEST(CpuAdam, TwoStepsWithBiasCorrectionMatchHandComputation) {
  // lr 0.1, betas (0.9, 0.999), eps 1e-8, w = 1. Step 1, g = 0.5: m = 0.05, v = 0.00025,
  // m_hat = 0.5, v_hat = 0.25, w = 1 - 0.1 * 0.5 / 0.5 = 0.9.
  // Step 2, g = -1: m = -0.055, v = 0.00124975, m_hat = -0.055 / 0.19 = -0.28947368,
  // v_hat = 0.00124975 / 0.001999 = 0.62518759, w = 0.9 + 0.1 * 0.28947368 / 0.79068805
  // = 0.93661035.
  std::vector<float> w{1.0f}, m{0.0f}, v{0.0f};
  CpuLayerKernels kernels;
  const std::vector<float> first{0.5f}, second{-1.0f};
  kernels.adam_update(1, 0.1f, 0.9f, 0.999f, 1e-8f, 1, first.data(), w.data(), m.data(), v.data());
  EXPECT_FLOAT_EQ(m[0], 0.05f);
  // 1 - beta2 in float is 1e-3 only to 1.3e-5 relative (0.999f is not 0.999).
  EXPECT_NEAR(v[0], 0.00025f, 0.00025f * 2e-5f);
  EXPECT_FLOAT_EQ(w[0], 0.9f);
  kernels.adam_update(1, 0.1f, 0.9f, 0.999f, 1e-8f, 2, second.data(), w.data(), m.data(), v.data());
  EXPECT_FLOAT_EQ(m[0], -0.055f);
  EXPECT_NEAR(v[0], 0.00124975f, 0.00124975f * 2e-5f);
  EXPECT_NEAR(w[0], 0.93661035f, 2e-6);
  EXPECT_THROW(kernels.adam_update(1, 0.1f, 0.9f, 0.999f, 1e-8f, 0, first.data(), w.data(),
                                   m.data(), v.data()),
               std::invalid_argument);
}

// Every element as the one-element update computes it, whether the loop runs in vector lanes
// (the optimizers compile without errno, so the compiler vectorizes them) or in its remainder.
TEST(CpuAdam, ALongUpdateMatchesTheUpdateOfEachElementAlone) {
  constexpr std::size_t kCount = 1037;  // not a multiple of any vector width
  std::vector<float> g(kCount), w(kCount), m(kCount), v(kCount);
  for (std::size_t i = 0; i < kCount; ++i) {
    g[i] = std::sin(0.37f * static_cast<float>(i));
    w[i] = std::cos(0.11f * static_cast<float>(i));
    m[i] = 0.01f * g[i];
    v[i] = 0.001f * static_cast<float>(i % 7);
  }
  auto w_alone = w, m_alone = m, v_alone = v;
  CpuLayerKernels kernels;
  kernels.adam_update(static_cast<std::int64_t>(kCount), 1e-3f, 0.9f, 0.999f, 1e-8f, 3, g.data(),
                      w.data(), m.data(), v.data());
  for (std::size_t i = 0; i < kCount; ++i) {
    kernels.adam_update(1, 1e-3f, 0.9f, 0.999f, 1e-8f, 3, &g[i], &w_alone[i], &m_alone[i],
                        &v_alone[i]);
    ASSERT_EQ(w[i], w_alone[i]) << "element " << i;
    ASSERT_EQ(m[i], m_alone[i]) << "element " << i;
    ASSERT_EQ(v[i], v_alone[i]) << "element " << i;
  }
}

}  // namespace
}  // namespace tessera::kernels
