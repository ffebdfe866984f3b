#include "tessera/kernels/io/synthetic_dataset.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <numbers>

#include "tessera/core/common/counter_hash.hpp"
#include "tessera/core/common/input_error.hpp"

namespace tessera::kernels::io {

// Noise is counter-based (counter_hash.hpp): any voxel's is a pure function of (seed, sample,
// channel, voxel), so planes can be generated in any order.
namespace {

// Uniform in [0, 1) from the top 53 bits.
double unit_uniform(std::uint64_t bits) {
  return static_cast<double>(bits >> 11) * 0x1.0p-53;
}

std::vector<double> cosine_table(std::int64_t extent) {
  std::vector<double> table(static_cast<std::size_t>(extent));
  for (std::int64_t i = 0; i < extent; ++i) {
    table[static_cast<std::size_t>(i)] =
        std::cos(2.0 * std::numbers::pi * static_cast<double>(i) / static_cast<double>(extent));
  }
  return table;
}

constexpr std::int64_t kTargetStream = -1;  // channels use streams 0..C-1

}  // namespace

Targets synthetic_targets(std::uint64_t seed, std::int64_t sample) {
  const std::uint64_t key = counter_key(seed, sample, kTargetStream);
  Targets targets{};
  for (int k = 0; k < kTargetCount; ++k) {
    targets[k] = static_cast<float>(
        2.0 * unit_uniform(split_mix64_step(key + static_cast<std::uint64_t>(k))) - 1.0);
  }
  return targets;
}

void fill_synthetic_planes(std::uint64_t seed, std::int64_t sample, const VolumeShape& shape,
                           const Targets& targets, std::int64_t channel, std::int64_t depth_begin,
                           std::int64_t depth_end, std::span<float> planes) {
  const auto [depth, height, width] = shape.spatial;
  const auto cos_d = cosine_table(depth), cos_h = cosine_table(height), cos_w = cosine_table(width);
  const std::uint64_t key = counter_key(seed, sample, channel);
  const double noise_scale = 2.0 * std::sqrt(3.0);  // uniform on [-sqrt 3, sqrt 3]: unit variance
  std::size_t out = 0;
  for (std::int64_t d = depth_begin; d < depth_end; ++d) {
    for (std::int64_t h = 0; h < height; ++h) {
      const double smooth_dh = targets[0] + targets[1] * cos_d[static_cast<std::size_t>(d)] +
                               targets[2] * cos_h[static_cast<std::size_t>(h)];
      const std::uint64_t row = static_cast<std::uint64_t>((d * height + h) * width);
      for (std::int64_t w = 0; w < width; ++w, ++out) {
        const double noise =
            noise_scale *
            (unit_uniform(split_mix64_step(key + row + static_cast<std::uint64_t>(w))) - 0.5);
        planes[out] =
            static_cast<float>(smooth_dh + targets[3] * cos_w[static_cast<std::size_t>(w)] + noise);
      }
    }
  }
}

Targets estimate_targets(const VolumeShape& shape, std::span<const float> volume) {
  const auto [depth, height, width] = shape.spatial;
  const auto cos_d = cosine_table(depth), cos_h = cosine_table(height), cos_w = cosine_table(width);
  std::array<double, kTargetCount> sums{};
  std::size_t index = 0;
  for (std::int64_t c = 0; c < shape.channels; ++c) {
    for (std::int64_t d = 0; d < depth; ++d) {
      for (std::int64_t h = 0; h < height; ++h) {
        for (std::int64_t w = 0; w < width; ++w, ++index) {
          const double value = volume[index];
          sums[0] += value;
          sums[1] += value * cos_d[static_cast<std::size_t>(d)];
          sums[2] += value * cos_h[static_cast<std::size_t>(h)];
          sums[3] += value * cos_w[static_cast<std::size_t>(w)];
        }
      }
    }
  }
  const double count = static_cast<double>(shape.floats());
  return {static_cast<float>(sums[0] / count), static_cast<float>(2.0 * sums[1] / count),
          static_cast<float>(2.0 * sums[2] / count), static_cast<float>(2.0 * sums[3] / count)};
}

std::string synthetic_sample_file_name(std::int64_t sample) {
  char name[32];
  std::snprintf(name, sizeof name, "sample_%06lld.h5", static_cast<long long>(sample));
  return name;
}

void prepare_synthetic_dataset(const SyntheticDatasetSpec& spec) {
  const SourceLocation where{.file = spec.directory};
  if (spec.directory.empty()) throw InputError(where, "--output", "expected a directory");
  if (spec.samples < 1) {
    throw InputError(where, "--samples",
                     "expected at least 1, got " + std::to_string(spec.samples));
  }
  if (spec.width < kMinimumSyntheticWidth) {
    throw InputError(where, "--width",
                     "expected at least " + std::to_string(kMinimumSyntheticWidth) + ", got " +
                         std::to_string(spec.width));
  }
  if (spec.channels < 1) {
    throw InputError(where, "--channels",
                     "expected at least 1, got " + std::to_string(spec.channels));
  }
  std::error_code error;
  std::filesystem::create_directories(spec.directory, error);
  if (error || !std::filesystem::is_directory(spec.directory)) {
    throw InputError(where, "--output",
                     "cannot create the directory" + (error ? ": " + error.message() : ""));
  }
}

std::vector<std::string> generate_synthetic_dataset(
    const SyntheticDatasetSpec& spec,
    const std::function<void(std::int64_t, const std::string&)>& progress) {
  prepare_synthetic_dataset(spec);
  const VolumeShape shape{.channels = spec.channels,
                          .spatial = {spec.width, spec.width, spec.width}};
  std::vector<std::string> paths;
  for (std::int64_t sample = 0; sample < spec.samples; ++sample) {
    const Targets targets = synthetic_targets(spec.seed, sample);
    const auto fill = [&](std::int64_t channel, std::int64_t depth_begin, std::int64_t depth_end,
                          std::span<float> planes) {
      fill_synthetic_planes(spec.seed, sample, shape, targets, channel, depth_begin, depth_end,
                            planes);
    };
    paths.push_back(
        (std::filesystem::path(spec.directory) / synthetic_sample_file_name(sample)).string());
    write_sample_file(paths.back(), shape, targets, fill, spec.layout);
    if (progress) progress(sample + 1, paths.back());
  }
  return paths;
}

}  // namespace tessera::kernels::io
