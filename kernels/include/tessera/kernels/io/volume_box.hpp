#pragma once
// The part of a sample one rank reads: a box over the volume's depth, height and width (every
// channel), as per-axis [begin, end). A spatially split convolution also needs halo planes from its
// neighbours; they are clipped at the volume's boundary, where the convolution pads instead.
#include <array>
#include <cstdint>
#include <string>

#include "tessera/core/strategy/parallel_strategy.hpp"

namespace tessera::kernels::io {

constexpr int kSpatialAxes = 3;  // depth, height, width
using SpatialExtents = std::array<std::int64_t, kSpatialAxes>;
using SpatialHalo = std::array<Halo, kSpatialAxes>;

// A sample's volume: channels x depth x height x width float32, C outermost.
struct VolumeShape {
  std::int64_t channels = 0;
  SpatialExtents spatial{};  // depth, height, width

  std::int64_t voxels() const;  // per channel
  std::int64_t floats() const { return channels * voxels(); }
  bool operator==(const VolumeShape&) const = default;
};

struct VolumeBox {
  SpatialExtents begin{};
  SpatialExtents end{};

  std::int64_t extent(int axis) const { return end[axis] - begin[axis]; }
  std::int64_t voxels() const;  // per channel
  bool operator==(const VolumeBox&) const = default;
};

VolumeBox whole_volume(const VolumeShape& shape);
// Part `part` of `parts` slabs along `axis`; when `parts` does not divide the extent the first
// slabs get one plane more.
VolumeBox slab(const VolumeShape& shape, int axis, std::int64_t part, std::int64_t parts);
// `box` widened by `halo` planes on each side, clipped to the volume.
VolumeBox with_halo(const VolumeBox& box, const SpatialHalo& halo, const VolumeShape& shape);
// Empty when `box` is non-empty and lies inside the volume, else what is wrong with it.
std::string box_problem(const VolumeBox& box, const VolumeShape& shape);

std::string describe(const VolumeShape& shape);  // "4x128x128x128 (C,D,H,W)"
std::string describe(const VolumeBox& box);      // "D[0,32) H[0,128) W[0,128)"

}  // namespace tessera::kernels::io
