#pragma once
// Where one rank of a real run sits, numbered by core's RankNumbering (rank_numbering.hpp) as the
// simulator numbers its GPUs, and the communicators of its groups.
#include <cstdint>
#include <memory>
#include <vector>

#include "tessera/core/strategy/parallel_strategy.hpp"
#include "tessera/kernels/communicator.hpp"

namespace tessera::kernels::real {

struct RankLayout {
  std::int64_t replica = 0;  // data-parallel replica
  std::int64_t stage = 0;    // model-parallel stage within the replica
  std::int64_t shard = 0;    // index in the spatial group
  std::int64_t tensor = 0;   // index in the tensor group (parallelism.tensor)
  std::int64_t replicas = 1;
  std::int64_t stages = 1;
  std::int64_t shards = 1;
  std::int64_t tensors = 1;
  // Samples of a step: the whole run's, this replica's, and those of the replicas before it
  // (the replica trains samples samples_before .. samples_before + replica_batch - 1 of each
  // step's global batch).
  std::int64_t global_batch = 1;
  std::int64_t replica_batch = 1;
  std::int64_t samples_before = 0;
  // The global batch over this replica's: the replicas when every replica has the mini-batch.
  // What a replica's loss and batch statistics are weighed by, so that its samples count as many
  // as any other replica's.
  double replica_batch_ratio() const {
    return static_cast<double>(global_batch) / static_cast<double>(replica_batch);
  }
  // Every group below holds ranks of one tensor index, but the tensor group itself.
  // Ranks of this replica and stage (batch-norm sums, halos, the gather before the dense layers).
  std::unique_ptr<Communicator> spatial_group;
  // Ranks holding the same stage and shard in every replica.
  std::unique_ptr<Communicator> data_group;
  // Every rank of this stage: each holds partial parameter gradients of the stage's layers (its
  // planes of the split layers, its samples of the dense ones), and one bucketed all-reduce over
  // all sums them.
  std::unique_ptr<Communicator> gradient_group;
  // This replica's ranks of the same shard, one per stage, ordered by stage: activations and
  // their gradients pass between stages here (its rank is the stage).
  std::unique_ptr<Communicator> stage_group;
  // The ranks splitting this replica's, stage's and shard's layers (tensor_split.hpp), ordered by
  // tensor index: the partial sums and gathers of split layers.
  std::unique_ptr<Communicator> tensor_group;
  // This rank's number among all (RankNumbering), as the simulator numbers its GPU.
  int global_rank = 0;
};

// `replica_batches`: each replica's samples per step where they differ (data_split:
// proportional); empty: config.mini_batch each. Throws std::invalid_argument when `world` does
// not have exactly config.gpus() ranks, or there is not one batch per replica.
RankLayout make_rank_layout(Communicator& world, const ParallelConfig& config,
                            const std::vector<std::int64_t>& replica_batches = {});

}  // namespace tessera::kernels::real
