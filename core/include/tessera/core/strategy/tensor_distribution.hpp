#pragma once
// How a dense N x C x (D x) H x W tensor is split over a grid of shards along its spatial axes:
// shard boxes (uneven extents allowed, the first extent % parts shards one plane larger, as
// shard_planes says), shard numbering and neighbours.
#include <cstdint>
#include <optional>
#include <vector>

#include "tessera/core/strategy/spatial_box.hpp"

namespace tessera {

enum class Side { lower, upper };
inline Side opposite(Side side) {
  return side == Side::lower ? Side::upper : Side::lower;
}

class TensorDistribution {
 public:
  // Throws std::invalid_argument unless `grid` has one entry >= 1 per spatial axis, each no
  // larger than the axis's extent (every shard holds at least one plane).
  TensorDistribution(std::vector<std::int64_t> global_spatial, std::vector<std::int64_t> grid);

  int spatial_rank() const { return static_cast<int>(global_spatial_.size()); }
  const std::vector<std::int64_t>& global_spatial() const { return global_spatial_; }
  const std::vector<std::int64_t>& grid() const { return grid_; }
  std::int64_t shard_count() const;
  SpatialBox whole() const;

  // Shards are numbered row-major over the grid (the last axis fastest), as ranks of a spatial
  // group are.
  std::vector<std::int64_t> coordinates(std::int64_t shard) const;
  std::int64_t shard_at(const std::vector<std::int64_t>& coordinates) const;
  SpatialBox owned(std::int64_t shard) const;  // global coordinates
  // The shard beside `shard` along `axis`, none at the volume's boundary.
  std::optional<std::int64_t> neighbour(std::int64_t shard, int axis, Side side) const;

 private:
  std::vector<std::int64_t> global_spatial_;
  std::vector<std::int64_t> grid_;
};

}  // namespace tessera
