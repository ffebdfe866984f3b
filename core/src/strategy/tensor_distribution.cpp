#include "tessera/core/strategy/tensor_distribution.hpp"

#include <stdexcept>
#include <string>

#include "tessera/core/strategy/parallel_strategy.hpp"

namespace tessera {

TensorDistribution::TensorDistribution(std::vector<std::int64_t> global_spatial,
                                       std::vector<std::int64_t> grid)
    : global_spatial_(std::move(global_spatial)), grid_(std::move(grid)) {
  if (grid_.size() != global_spatial_.size()) {
    throw std::invalid_argument("spatial grid has " + std::to_string(grid_.size()) +
                                " entries, expected one per spatial axis (" +
                                std::to_string(global_spatial_.size()) + ")");
  }
  for (std::size_t axis = 0; axis < grid_.size(); ++axis) {
    if (grid_[axis] < 1 || grid_[axis] > global_spatial_[axis]) {
      throw std::invalid_argument("spatial grid entry " + std::to_string(axis) + " is " +
                                  std::to_string(grid_[axis]) + ", expected 1 to the extent " +
                                  std::to_string(global_spatial_[axis]));
    }
  }
}

std::int64_t TensorDistribution::shard_count() const {
  std::int64_t shards = 1;
  for (std::int64_t parts : grid_) shards *= parts;
  return shards;
}

SpatialBox TensorDistribution::whole() const {
  return {std::vector<std::int64_t>(global_spatial_.size(), 0), global_spatial_};
}

std::vector<std::int64_t> TensorDistribution::coordinates(std::int64_t shard) const {
  if (shard < 0 || shard >= shard_count()) {
    throw std::out_of_range("shard " + std::to_string(shard) + " of " +
                            std::to_string(shard_count()));
  }
  std::vector<std::int64_t> at(grid_.size());
  for (std::size_t axis = grid_.size(); axis-- > 0;) {
    at[axis] = shard % grid_[axis];
    shard /= grid_[axis];
  }
  return at;
}

std::int64_t TensorDistribution::shard_at(const std::vector<std::int64_t>& coordinates) const {
  std::int64_t shard = 0;
  for (std::size_t axis = 0; axis < grid_.size(); ++axis) {
    shard = shard * grid_[axis] + coordinates[axis];
  }
  return shard;
}

SpatialBox TensorDistribution::owned(std::int64_t shard) const {
  const auto at = coordinates(shard);
  SpatialBox box;
  for (std::size_t axis = 0; axis < grid_.size(); ++axis) {
    const PlaneSpan span = shard_planes(global_spatial_[axis], grid_[axis], at[axis]);
    box.first.push_back(span.first);
    box.count.push_back(span.count);
  }
  return box;
}

std::optional<std::int64_t> TensorDistribution::neighbour(std::int64_t shard, int axis,
                                                          Side side) const {
  auto at = coordinates(shard);
  at[axis] += side == Side::lower ? -1 : 1;
  if (at[axis] < 0 || at[axis] >= grid_[axis]) return std::nullopt;
  return shard_at(at);
}

}  // namespace tessera
