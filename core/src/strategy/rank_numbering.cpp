#include "tessera/core/strategy/rank_numbering.hpp"

namespace tessera {

RankNumbering::RankNumbering(const ParallelConfig& config)
    : config_(config),
      parts_(static_cast<int>(config.spatial_parts())),
      stages_(static_cast<int>(config.model_degree)),
      tensor_(static_cast<int>(config.tensor)) {}

int RankNumbering::stage_of(int rank) const {
  return (rank / (tensor_ * parts_)) % stages_;
}

int RankNumbering::replica_of(int rank) const {
  return rank / (tensor_ * parts_ * stages_);
}

int RankNumbering::neighbour(int rank, int axis, int step) const {
  const auto& grid = config_.spatial_grid;
  int stride = 1;
  for (std::size_t a = grid.size(); a-- > static_cast<std::size_t>(axis) + 1;) {
    stride *= static_cast<int>(grid[a]);
  }
  const int index = spatial_index_of(rank);
  const int coordinate = (index / stride) % static_cast<int>(grid[static_cast<std::size_t>(axis)]);
  const int moved = coordinate + step;
  if (moved < 0 || moved >= static_cast<int>(grid[static_cast<std::size_t>(axis)])) return -1;
  return rank + step * stride * tensor_;
}

int RankNumbering::peer_in_stage(int rank, int stage) const {
  return ((replica_of(rank) * stages_ + stage) * parts_ + spatial_index_of(rank)) * tensor_ +
         tensor_index_of(rank);
}

std::vector<int> RankNumbering::table_group(int rank, const std::vector<int>& stages) const {
  std::vector<int> group;
  for (int stage : stages) group.push_back(peer_in_stage(rank, stage));
  return group;
}

std::vector<int> RankNumbering::spatial_group(int rank) const {
  std::vector<int> group;
  const int base = rank - spatial_index_of(rank) * tensor_;
  for (int s = 0; s < parts_; ++s) group.push_back(base + s * tensor_);
  return group;
}

std::vector<int> RankNumbering::tensor_group(int rank) const {
  std::vector<int> group;
  const int base = rank - tensor_index_of(rank);
  for (int t = 0; t < tensor_; ++t) group.push_back(base + t);
  return group;
}

std::vector<int> RankNumbering::stage_group(int stage, int tensor_index) const {
  std::vector<int> group;
  const int replicas = static_cast<int>(config_.data);
  for (int replica = 0; replica < replicas; ++replica) {
    for (int s = 0; s < parts_; ++s) {
      group.push_back(((replica * stages_ + stage) * parts_ + s) * tensor_ + tensor_index);
    }
  }
  return group;
}

}  // namespace tessera
