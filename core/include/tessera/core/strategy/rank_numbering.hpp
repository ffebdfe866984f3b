#pragma once
// Where each GPU rank sits in the strategy, for both backends:
//   rank = ((replica * stages + stage) * spatial_parts + spatial index) * tensor + tensor index,
// so a tensor group (the chattiest: collectives in every layer) shares a node whenever it fits in
// one, then a spatial group (the halo-heavy one), ranks filling nodes in order, and a replica's
// stages follow one another. Spatial indices are row-major over the grid ((D,) H, W), as
// TensorDistribution numbers shards.
#include <cstdint>
#include <vector>

#include "tessera/core/strategy/parallel_strategy.hpp"

namespace tessera {

class RankNumbering {
 public:
  explicit RankNumbering(const ParallelConfig& config);

  int gpus() const { return static_cast<int>(config_.gpus()); }
  int stage_of(int rank) const;
  int replica_of(int rank) const;
  int spatial_index_of(int rank) const { return (rank / tensor_) % parts_; }
  int tensor_index_of(int rank) const { return rank % tensor_; }
  // Neighbour along `axis` at `step` (-1 lower, +1 upper), or -1 at the volume's edge.
  int neighbour(int rank, int axis, int step) const;
  // The rank holding `stage` in the same replica, spatial position and tensor shard.
  int peer_in_stage(int rank, int stage) const;
  // The ranks holding `stages` in the same replica, spatial position and tensor shard, in the
  // order given: a tied table's holders (table_copies.hpp).
  std::vector<int> table_group(int rank, const std::vector<int>& stages) const;
  // All ranks of this rank's spatial group (same tensor shard), in spatial-index order.
  std::vector<int> spatial_group(int rank) const;
  // All ranks of this rank's tensor group, in tensor-index order.
  std::vector<int> tensor_group(int rank) const;
  // All ranks holding `stage` and tensor shard `tensor_index`: they sum the same gradients.
  std::vector<int> stage_group(int stage, int tensor_index) const;

 private:
  ParallelConfig config_;
  int parts_ = 1;
  int stages_ = 1;
  int tensor_ = 1;
};

}  // namespace tessera
