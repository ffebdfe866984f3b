#pragma once
// Writes one sample file in the CosmoFlow layout (see sample_file_format.hpp), block by block so
// that a 4 x 512^3 volume (2 GiB) never has to sit in memory whole, or in the 3D U-Net layout.
#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "tessera/kernels/io/sample_file_format.hpp"

namespace tessera::kernels::io {

// Storage of `full`. Contiguous by default: a depth slab of a C,D,H,W volume is then C runs of
// consecutive bytes (one per channel), so a rank of a depth-split group reads its slab almost
// sequentially and HDF5 has no chunk index to walk. Chunks of `chunk_depth` whole planes (1 x
// chunk_depth x H x W) serve the same reads nearly as well when planes align with chunks, and
// split along height or width would want smaller chunks; the benchmark compares both.
// An int16 volume holds each value rounded to the nearest integer (clamped to int16's range).
struct VolumeLayout {
  std::int64_t chunk_depth = 0;  // 0: contiguous
  StoredDType dtype = StoredDType::float32;
};

// Fills `block` with planes [depth_begin, depth_end) of `channel`, H x W each, row-major.
using VolumeBlockFiller = std::function<void(std::int64_t channel, std::int64_t depth_begin,
                                             std::int64_t depth_end, std::span<float> block)>;

// Writes `path` through a temporary name and renames it on success, so a file with the final name
// is always complete. Throws std::runtime_error naming the file when HDF5 fails.
void write_sample_file(const std::string& path, const VolumeShape& shape, const Targets& targets,
                       const VolumeBlockFiller& fill, const VolumeLayout& layout = {});

// The same for a volume already in memory (C x D x H x W floats).
void write_sample_file(const std::string& path, const VolumeShape& shape, const Targets& targets,
                       std::span<const float> volume, const VolumeLayout& layout = {});

// A sample in the 3D U-Net layout: the volume and each voxel's class (D x H x W).
void write_segmentation_file(const std::string& path, const VolumeShape& shape,
                             std::span<const float> volume, std::span<const std::int32_t> labels,
                             const VolumeLayout& layout = {});

}  // namespace tessera::kernels::io
