// The split batch-norm: sums against a double reference, the split property (partial sums of a
// batch or spatial partition add up to the single-call sums, exactly), and the composed forward
// and backward against central differences.
#include <gtest/gtest.h>

#include <cmath>

#include "cpu/cpu_layer_kernels.hpp"
#include "gradient_check.hpp"

namespace tessera::kernels {
namespace {

using testing::central_differences;
using testing::expect_gradient_matches;
using testing::random_values;
using testing::weighted_sum;

constexpr double kEpsilon = 1e-5;

struct Statistics {
  std::vector<double> mean;
  std::vector<double> inv_std;
};

// What the caller does between the two halves: mean and 1/sqrt(var + eps) from group sums.
Statistics statistics_from(const ChannelSums& sums, double count) {
  Statistics statistics;
  for (std::size_t channel = 0; channel < sums.first.size(); ++channel) {
    const double mean = sums.first[channel] / count;
    const double variance = sums.second[channel] / count - mean * mean;
    statistics.mean.push_back(mean);
    statistics.inv_std.push_back(1.0 / std::sqrt(variance + kEpsilon));
  }
  return statistics;
}

// Multiples of 1/64 in [-4, 4): every sum and sum of squares below is exact in double, so the
// split property must hold bit for bit whatever the order of additions. (With arbitrary floats
// the split and single-call sums differ only by the rounding of double additions, ~1e-16.)
std::vector<float> dyadic_values(std::size_t count, std::uint32_t seed) {
  auto values = random_values(count, seed, -4.0f, 4.0f);
  for (float& value : values) value = std::round(value * 64.0f) / 64.0f;
  return values;
}

// Copies depth slices [begin, end) of an N x C x D x HW tensor into a dense shard, as a
// spatially partitioned layer holds them.
std::vector<float> depth_shard(const std::vector<float>& full, std::int64_t planes,
                               std::int64_t depth, std::int64_t plane_area, std::int64_t begin,
                               std::int64_t end) {
  std::vector<float> shard;
  for (std::int64_t plane = 0; plane < planes; ++plane) {
    const auto first = full.begin() + (plane * depth + begin) * plane_area;
    shard.insert(shard.end(), first, first + (end - begin) * plane_area);
  }
  return shard;
}

void add_into(ChannelSums& total, const ChannelSums& part) {
  for (std::size_t channel = 0; channel < total.first.size(); ++channel) {
    total.first[channel] += part.first[channel];
    total.second[channel] += part.second[channel];
  }
}

TEST(CpuBatchNorm, SumsMatchDoubleReference) {
  const std::int64_t batch = 3, channels = 4, spatial = 50;
  const auto x = random_values(batch * channels * spatial, 1, -2.0f, 3.0f);
  CpuLayerKernels kernels;
  const ChannelSums sums = kernels.batch_norm_sums(batch, channels, spatial, x.data());
  for (std::int64_t channel = 0; channel < channels; ++channel) {
    double sum = 0.0, squares = 0.0;
    for (std::int64_t sample = 0; sample < batch; ++sample) {
      for (std::int64_t index = 0; index < spatial; ++index) {
        const double value = x[(sample * channels + channel) * spatial + index];
        sum += value;
        squares += value * value;
      }
    }
    EXPECT_NEAR(sums.first[channel], sum, 1e-12 * std::abs(sum) + 1e-12);
    EXPECT_NEAR(sums.second[channel], squares, 1e-12 * squares);
  }
}

TEST(CpuBatchNorm, ApplyIsScaleTimesNormalisedPlusShift) {
  const std::int64_t batch = 2, channels = 3, spatial = 7;
  const auto x = random_values(batch * channels * spatial, 2);
  const std::vector<double> mean{0.1, -0.2, 0.3}, inv_std{2.0, 0.5, 1.5};
  const std::vector<float> scale{1.5f, -1.0f, 0.25f}, shift{0.0f, 2.0f, -1.0f};
  std::vector<float> y(x.size());
  CpuLayerKernels kernels;
  kernels.batch_norm_apply(batch, channels, spatial, x.data(), mean, inv_std, scale.data(),
                           shift.data(), y.data());
  for (std::size_t index = 0; index < x.size(); ++index) {
    const std::size_t channel = (index / spatial) % channels;
    const double expected =
        scale[channel] * (x[index] - mean[channel]) * inv_std[channel] + shift[channel];
    EXPECT_NEAR(y[index], expected, 1e-5) << index;
  }
}

TEST(CpuBatchNorm, BatchSplitInTwoCallsAddsUpToTheSingleCallExactly) {
  const std::int64_t batch = 4, channels = 3, spatial = 33;
  const auto x = dyadic_values(batch * channels * spatial, 3);
  const auto dy = dyadic_values(x.size(), 4);
  const std::vector<double> mean{0.5, -0.25, 0.0}, inv_std{1.0, 2.0, 0.5};  // dyadic too
  const std::int64_t first_batch = 1, sample_floats = channels * spatial;
  const float* second_x = x.data() + first_batch * sample_floats;
  const float* second_dy = dy.data() + first_batch * sample_floats;
  CpuLayerKernels kernels;

  ChannelSums split = kernels.batch_norm_sums(first_batch, channels, spatial, x.data());
  add_into(split, kernels.batch_norm_sums(batch - first_batch, channels, spatial, second_x));
  const ChannelSums single = kernels.batch_norm_sums(batch, channels, spatial, x.data());
  EXPECT_EQ(split.first, single.first);
  EXPECT_EQ(split.second, single.second);

  ChannelSums split_backward = kernels.batch_norm_backward_sums(first_batch, channels, spatial,
                                                                x.data(), dy.data(), mean, inv_std);
  add_into(split_backward, kernels.batch_norm_backward_sums(batch - first_batch, channels, spatial,
                                                            second_x, second_dy, mean, inv_std));
  const ChannelSums single_backward = kernels.batch_norm_backward_sums(
      batch, channels, spatial, x.data(), dy.data(), mean, inv_std);
  EXPECT_EQ(split_backward.first, single_backward.first);
  EXPECT_EQ(split_backward.second, single_backward.second);
}

TEST(CpuBatchNorm, DepthSplitAcrossTwoShardsGivesTheSingleCallResultExactly) {
  // N x C x D x (H W) split along D as 3 + 2 slices, as a 2-way spatial partition holds it.
  const std::int64_t batch = 2, channels = 3, depth = 5, plane_area = 6, split_depth = 3;
  const std::int64_t planes = batch * channels;
  const auto x = dyadic_values(planes * depth * plane_area, 5);
  const auto dy = dyadic_values(x.size(), 6);
  const std::vector<float> scale{1.0f, 0.5f, -2.0f}, shift{0.0f, 1.0f, 0.25f};
  CpuLayerKernels kernels;
  struct Shard {
    std::int64_t spatial;
    std::vector<float> x, dy;
  };
  const std::vector<Shard> shards{
      {split_depth * plane_area, depth_shard(x, planes, depth, plane_area, 0, split_depth),
       depth_shard(dy, planes, depth, plane_area, 0, split_depth)},
      {(depth - split_depth) * plane_area,
       depth_shard(x, planes, depth, plane_area, split_depth, depth),
       depth_shard(dy, planes, depth, plane_area, split_depth, depth)}};
  const std::int64_t spatial = depth * plane_area;
  const double count = static_cast<double>(batch * spatial);

  // Forward: the all-reduced shard sums are the full sums, hence the same statistics.
  ChannelSums group_sums =
      kernels.batch_norm_sums(batch, channels, shards[0].spatial, shards[0].x.data());
  add_into(group_sums,
           kernels.batch_norm_sums(batch, channels, shards[1].spatial, shards[1].x.data()));
  const ChannelSums full_sums = kernels.batch_norm_sums(batch, channels, spatial, x.data());
  EXPECT_EQ(group_sums.first, full_sums.first);
  EXPECT_EQ(group_sums.second, full_sums.second);
  // Dyadic statistics keep the backward sums exact too (statistics_from's would round).
  const Statistics stats{{0.5, -0.25, 0.0}, {1.0, 2.0, 0.5}};

  // Backward: shard sums add up to the full sums, and each shard's dx is the full dx's slices.
  ChannelSums group_backward;
  for (const Shard& shard : shards) {
    const ChannelSums part = kernels.batch_norm_backward_sums(
        batch, channels, shard.spatial, shard.x.data(), shard.dy.data(), stats.mean, stats.inv_std);
    if (group_backward.first.empty()) {
      group_backward = part;
    } else {
      add_into(group_backward, part);
    }
  }
  const ChannelSums full_backward = kernels.batch_norm_backward_sums(
      batch, channels, spatial, x.data(), dy.data(), stats.mean, stats.inv_std);
  EXPECT_EQ(group_backward.first, full_backward.first);
  EXPECT_EQ(group_backward.second, full_backward.second);

  std::vector<float> full_dx(x.size()), full_dscale(channels), full_dshift(channels);
  kernels.batch_norm_backward_apply(batch, channels, spatial, x.data(), dy.data(), stats.mean,
                                    stats.inv_std, scale.data(), full_backward, count,
                                    full_dx.data(), full_dscale.data(), full_dshift.data());
  std::int64_t depth_begin = 0;
  for (const Shard& shard : shards) {
    std::vector<float> dx(shard.x.size()), dscale(channels), dshift(channels);
    kernels.batch_norm_backward_apply(
        batch, channels, shard.spatial, shard.x.data(), shard.dy.data(), stats.mean, stats.inv_std,
        scale.data(), group_backward, count, dx.data(), dscale.data(), dshift.data());
    const std::int64_t depth_end = depth_begin + shard.spatial / plane_area;
    EXPECT_EQ(dx, depth_shard(full_dx, planes, depth, plane_area, depth_begin, depth_end));
    EXPECT_EQ(dscale, full_dscale);
    EXPECT_EQ(dshift, full_dshift);
    depth_begin = depth_end;
  }
}

TEST(CpuBatchNorm, ComposedBackwardMatchesCentralDifferences) {
  const std::int64_t batch = 3, channels = 2, spatial = 5;
  const double count = static_cast<double>(batch * spatial);
  auto x = random_values(batch * channels * spatial, 7, -1.0f, 2.0f);
  auto scale = random_values(channels, 8, 0.5f, 1.5f);
  auto shift = random_values(channels, 9);
  const auto weights = random_values(x.size(), 10);
  CpuLayerKernels kernels;
  std::vector<float> y(x.size());
  const auto loss = [&] {
    const Statistics stats =
        statistics_from(kernels.batch_norm_sums(batch, channels, spatial, x.data()), count);
    kernels.batch_norm_apply(batch, channels, spatial, x.data(), stats.mean, stats.inv_std,
                             scale.data(), shift.data(), y.data());
    return weighted_sum(y, weights);
  };

  const Statistics stats =
      statistics_from(kernels.batch_norm_sums(batch, channels, spatial, x.data()), count);
  const ChannelSums backward_sums = kernels.batch_norm_backward_sums(
      batch, channels, spatial, x.data(), weights.data(), stats.mean, stats.inv_std);
  std::vector<float> dx(x.size()), dscale(channels), dshift(channels);
  kernels.batch_norm_backward_apply(batch, channels, spatial, x.data(), weights.data(), stats.mean,
                                    stats.inv_std, scale.data(), backward_sums, count, dx.data(),
                                    dscale.data(), dshift.data());

  expect_gradient_matches(dx, central_differences(x, loss, 1e-2f), 2e-3, "batch-norm dx");
  expect_gradient_matches(dscale, central_differences(scale, loss, 1e-2f), 2e-3,
                          "batch-norm dscale");
  expect_gradient_matches(dshift, central_differences(shift, loss, 1e-2f), 2e-3,
                          "batch-norm dshift");
}

// A batch-norm reading the model's input has no input gradient to write: dx null.
TEST(CpuBatchNorm, BackwardWithoutAnInputGradientWritesOnlyTheParameterGradients) {
  const std::int64_t batch = 2, channels = 3, spatial = 4;
  const double count = static_cast<double>(batch * spatial);
  const auto x = random_values(batch * channels * spatial, 11);
  const auto dy = random_values(x.size(), 12);
  const auto scale = random_values(channels, 13, 0.5f, 1.5f);
  CpuLayerKernels kernels;
  const Statistics stats =
      statistics_from(kernels.batch_norm_sums(batch, channels, spatial, x.data()), count);
  const ChannelSums sums = kernels.batch_norm_backward_sums(batch, channels, spatial, x.data(),
                                                            dy.data(), stats.mean, stats.inv_std);
  std::vector<float> dx(x.size()), dscale(channels), dshift(channels);
  kernels.batch_norm_backward_apply(batch, channels, spatial, x.data(), dy.data(), stats.mean,
                                    stats.inv_std, scale.data(), sums, count, dx.data(),
                                    dscale.data(), dshift.data());
  std::vector<float> alone_dscale(channels), alone_dshift(channels);
  kernels.batch_norm_backward_apply(batch, channels, spatial, x.data(), dy.data(), stats.mean,
                                    stats.inv_std, scale.data(), sums, count, nullptr,
                                    alone_dscale.data(), alone_dshift.data());
  EXPECT_EQ(alone_dscale, dscale);
  EXPECT_EQ(alone_dshift, dshift);
}

TEST(CpuBatchNorm, StatisticsOfTheWrongLengthAreRejected) {
  CpuLayerKernels kernels;
  std::vector<float> x(12), y(12);
  EXPECT_THROW(kernels.batch_norm_apply(1, 3, 4, x.data(), {0.0, 0.0}, {1.0, 1.0, 1.0}, nullptr,
                                        nullptr, y.data()),
               std::invalid_argument);
}

}  // namespace
}  // namespace tessera::kernels
