#pragma once
// Where one rank of a real run sits: ranks are numbered replica-major, rank = replica x
// spatial_parts + shard, so the ranks of a spatial group are neighbours (on one node when ranks
// fill nodes in order) and shard numbers follow TensorDistribution's row-major grid order.
#include <cstdint>
#include <memory>

#include "tessera/core/parallel_strategy.hpp"
#include "tessera/kernels/communicator.hpp"

namespace tessera::kernels::real {

struct RankLayout {
  std::int64_t replica = 0;  // data-parallel replica
  std::int64_t shard = 0;    // index in the spatial group
  std::int64_t replicas = 1;
  std::int64_t shards = 1;
  // Ranks of this replica (batch-norm sums, halos, the gather before the dense layers).
  std::unique_ptr<Communicator> spatial_group;
  // Ranks holding the same shard in every replica.
  std::unique_ptr<Communicator> data_group;
  // Every rank of the run: each holds partial parameter gradients (its planes of the split layers,
  // its samples of the dense ones), and one bucketed all-reduce over all sums them.
  std::unique_ptr<Communicator> gradient_group;
};

// Throws std::invalid_argument when `world` does not have exactly config.gpus() ranks, or when
// model_degree > 1 (model-parallel stages are not yet supported by the real backend).
RankLayout make_rank_layout(Communicator& world, const ParallelConfig& config);

}  // namespace tessera::kernels::real
