#pragma once
// A synthetic data set in the CosmoFlow layout whose targets a network can learn from the volume.
//
// The relation. Sample i of seed s draws its four targets t0..t3 uniformly in [-1, 1]; every
// channel c of its D x H x W volume is
//     v_c(d, h, w) = t0 + t1 cos(2 pi d / D) + t2 cos(2 pi h / H) + t3 cos(2 pi w / W) + n_c(d, h,
//     w)
// where n is white noise, uniform with unit variance, independent per voxel and channel. The
// cosines are orthogonal to each other and to the constant over the grid (any extent >= 3), so
// each target is a fixed linear function of the volume, up to noise that shrinks as 1/sqrt(voxels):
//     t0 = mean(v),  t1 = 2 mean(v cos(2 pi d / D)),  t2 = 2 mean(v cos(2 pi h / H)), ...
// (estimate_targets below). A convolution stack with pooling can learn it, so training loss falls;
// each rank of a spatial split sees part of every pattern. Everything is deterministic in (s, i):
// a counter-based generator, no library distribution whose output differs between platforms.
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "tessera/kernels/io/sample_file_format.hpp"
#include "tessera/kernels/io/sample_writer.hpp"

namespace tessera::kernels::io {

struct SyntheticDatasetSpec {
  std::string directory;
  std::int64_t samples = 0;
  std::int64_t width = 0;  // D = H = W
  std::int64_t channels = 4;
  std::uint64_t seed = 0;
  VolumeLayout layout;
};

inline constexpr std::int64_t kMinimumSyntheticWidth = 4;

Targets synthetic_targets(std::uint64_t seed, std::int64_t sample);
// Fills planes [depth_begin, depth_end) of `channel` of sample `sample` (see the relation above).
void fill_synthetic_planes(std::uint64_t seed, std::int64_t sample, const VolumeShape& shape,
                           const Targets& targets, std::int64_t channel, std::int64_t depth_begin,
                           std::int64_t depth_end, std::span<float> planes);
// The inverse of the relation: the four projections of a whole C x D x H x W volume.
Targets estimate_targets(const VolumeShape& shape, std::span<const float> volume);

// "sample_000042.h5"
std::string synthetic_sample_file_name(std::int64_t sample);

// Checks the spec's sample count, width and channels and creates `spec.directory` if needed;
// throws tessera::InputError naming the option that is off (--samples, --width, --channels,
// --output).
void prepare_synthetic_dataset(const SyntheticDatasetSpec& spec);

// Creates `spec.directory` if needed and writes samples 0..samples-1; returns their paths. Throws
// tessera::InputError for a bad spec (naming the option) and std::runtime_error when writing
// fails. `progress` (may be empty) is called after each file.
std::vector<std::string> generate_synthetic_dataset(
    const SyntheticDatasetSpec& spec,
    const std::function<void(std::int64_t written, const std::string& path)>& progress = {});

}  // namespace tessera::kernels::io
