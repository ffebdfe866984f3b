#pragma once
// Boxes of spatial planes: per axis, planes [first, first + count) of a D x H x W (or H x W)
// volume, in global coordinates. A shard's own planes, its halo, the window a kernel reads and
// the outputs it computes are all boxes.
#include <cstdint>
#include <string>
#include <vector>

namespace tessera {

struct SpatialBox {
  std::vector<std::int64_t> first;
  std::vector<std::int64_t> count;

  int spatial_rank() const { return static_cast<int>(first.size()); }
  std::int64_t volume() const;  // voxels
  bool empty() const { return volume() == 0; }
  std::int64_t last(int axis) const { return first[axis] + count[axis] - 1; }
  bool operator==(const SpatialBox&) const = default;
};

SpatialBox intersection(const SpatialBox& a, const SpatialBox& b);
bool contains(const SpatialBox& outer, const SpatialBox& inner);
std::string to_string(const SpatialBox& box);  // "[0,8)x[2,4)"

}  // namespace tessera
