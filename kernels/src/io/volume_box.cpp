#include "tessera/kernels/io/volume_box.hpp"

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace tessera::kernels::io {

namespace {
constexpr std::array<char, kSpatialAxes> kAxisNames{'D', 'H', 'W'};
}

std::int64_t VolumeShape::voxels() const {
  return spatial[0] * spatial[1] * spatial[2];
}

std::int64_t VolumeBox::voxels() const {
  return extent(0) * extent(1) * extent(2);
}

VolumeBox whole_volume(const VolumeShape& shape) {
  return {.begin = {0, 0, 0}, .end = shape.spatial};
}

VolumeBox slab(const VolumeShape& shape, int axis, std::int64_t part, std::int64_t parts) {
  if (axis < 0 || axis >= kSpatialAxes || parts < 1 || part < 0 || part >= parts ||
      parts > shape.spatial[axis]) {
    throw std::invalid_argument("slab " + std::to_string(part) + " of " + std::to_string(parts) +
                                " along axis " + std::to_string(axis) + " of a " + describe(shape) +
                                " volume");
  }
  const std::int64_t extent = shape.spatial[axis];
  const std::int64_t base = extent / parts;
  const std::int64_t larger = extent % parts;  // the first `larger` slabs get one plane more
  VolumeBox box = whole_volume(shape);
  box.begin[axis] = part * base + std::min(part, larger);
  box.end[axis] = box.begin[axis] + base + (part < larger ? 1 : 0);
  return box;
}

VolumeBox with_halo(const VolumeBox& box, const SpatialHalo& halo, const VolumeShape& shape) {
  VolumeBox widened = box;
  for (int axis = 0; axis < kSpatialAxes; ++axis) {
    widened.begin[axis] = std::max<std::int64_t>(0, box.begin[axis] - halo[axis].lower);
    widened.end[axis] = std::min(shape.spatial[axis], box.end[axis] + halo[axis].upper);
  }
  return widened;
}

std::string box_problem(const VolumeBox& box, const VolumeShape& shape) {
  for (int axis = 0; axis < kSpatialAxes; ++axis) {
    if (box.begin[axis] < 0 || box.end[axis] > shape.spatial[axis] ||
        box.begin[axis] >= box.end[axis]) {
      return "sub-volume " + describe(box) + " is empty or outside the " + describe(shape) +
             " volume along " + kAxisNames[axis];
    }
  }
  return "";
}

std::string describe(const VolumeShape& shape) {
  std::ostringstream text;
  text << shape.channels << "x" << shape.spatial[0] << "x" << shape.spatial[1] << "x"
       << shape.spatial[2] << " (C,D,H,W)";
  return text.str();
}

std::string describe(const VolumeBox& box) {
  std::ostringstream text;
  for (int axis = 0; axis < kSpatialAxes; ++axis) {
    text << (axis ? " " : "") << kAxisNames[axis] << "[" << box.begin[axis] << "," << box.end[axis]
         << ")";
  }
  return text.str();
}

}  // namespace tessera::kernels::io
