// The sampled softmax's classes: distinct, in the vocabulary, the same for the same seed, drawn
// log-uniformly (low ids more often), with the expected counts TensorFlow's sampler reports.
#include "log_uniform_sampler.hpp"  // kernels/real/src

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <stdexcept>

namespace tessera::kernels::real {
namespace {

TEST(LogUniformSampler, DrawsDistinctClassesOfTheVocabularyTheSameForTheSameSeed) {
  const auto first = sample_log_uniform(1000, 50, 7);
  ASSERT_EQ(first.classes.size(), 50u);
  EXPECT_EQ(std::set<std::int32_t>(first.classes.begin(), first.classes.end()).size(), 50u);
  for (const auto c : first.classes) {
    EXPECT_GE(c, 0);
    EXPECT_LT(c, 1000);
  }
  EXPECT_GE(first.draws, 50);
  EXPECT_EQ(sample_log_uniform(1000, 50, 7).classes, first.classes);
  EXPECT_NE(sample_log_uniform(1000, 50, 8).classes, first.classes);
}

TEST(LogUniformSampler, LowIdsComeUpMoreOftenAsTheDistributionSays) {
  // P(c < 10) = log(11) / log(1001) = 0.347 of the draws; one class each of 200 seeds.
  int low = 0;
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    low += sample_log_uniform(1000, 1, seed).classes.front() < 10 ? 1 : 0;
  }
  EXPECT_NEAR(low / 200.0, std::log(11.0) / std::log(1001.0), 0.1);
}

TEST(LogUniformSampler, ExpectedCountsFollowTheDrawsAndTheClassProbability) {
  SampledClasses sampled{.classes = {0}, .draws = 1, .vocabulary = 3};
  // One draw: Q(c) = P(c) = log((c + 2) / (c + 1)) / log(4).
  EXPECT_NEAR(sampled.log_expected_count(0), std::log(std::log(2.0) / std::log(4.0)), 1e-12);
  EXPECT_NEAR(sampled.log_expected_count(2), std::log(std::log(4.0 / 3.0) / std::log(4.0)), 1e-12);
  sampled.draws = 5;
  const double p = std::log(2.0) / std::log(4.0);
  EXPECT_NEAR(sampled.log_expected_count(0), std::log(1 - std::pow(1 - p, 5)), 1e-12);
}

TEST(LogUniformSampler, RefusesAsManyClassesAsTheVocabularyHas) {
  EXPECT_THROW(sample_log_uniform(10, 10, 1), std::invalid_argument);
  EXPECT_THROW(sample_log_uniform(10, 0, 1), std::invalid_argument);
}

}  // namespace
}  // namespace tessera::kernels::real
