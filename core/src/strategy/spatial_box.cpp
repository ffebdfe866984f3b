#include "tessera/core/strategy/spatial_box.hpp"

#include <algorithm>

namespace tessera {

std::int64_t SpatialBox::volume() const {
  std::int64_t voxels = 1;
  for (std::int64_t planes : count) voxels *= std::max<std::int64_t>(planes, 0);
  return voxels;
}

SpatialBox intersection(const SpatialBox& a, const SpatialBox& b) {
  SpatialBox result = a;
  for (int axis = 0; axis < a.spatial_rank(); ++axis) {
    const std::int64_t first = std::max(a.first[axis], b.first[axis]);
    const std::int64_t end = std::min(a.first[axis] + a.count[axis], b.first[axis] + b.count[axis]);
    result.first[axis] = first;
    result.count[axis] = std::max<std::int64_t>(0, end - first);
  }
  return result;
}

bool contains(const SpatialBox& outer, const SpatialBox& inner) {
  for (int axis = 0; axis < inner.spatial_rank(); ++axis) {
    if (inner.count[axis] == 0) return true;
    if (inner.first[axis] < outer.first[axis] || inner.last(axis) > outer.last(axis)) return false;
  }
  return true;
}

std::string to_string(const SpatialBox& box) {
  std::string text;
  for (int axis = 0; axis < box.spatial_rank(); ++axis) {
    text += (axis ? "x[" : "[") + std::to_string(box.first[axis]) + "," +
            std::to_string(box.first[axis] + box.count[axis]) + ")";
  }
  return text;
}

}  // namespace tessera
