#include "tessera/kernels/real/rank_layout.hpp"

#include <numeric>
#include <stdexcept>
#include <string>

#include "tessera/core/strategy/rank_numbering.hpp"

namespace tessera::kernels::real {

RankLayout make_rank_layout(Communicator& world, const ParallelConfig& config,
                            const std::vector<std::int64_t>& replica_batches) {
  if (world.size() != config.gpus()) {
    throw std::invalid_argument("the strategy needs " + std::to_string(config.gpus()) +
                                " ranks, the run has " + std::to_string(world.size()));
  }
  RankLayout layout;
  layout.shards = config.spatial_parts();
  layout.stages = config.model_degree;
  layout.replicas = config.data;
  layout.tensors = config.tensor;
  layout.global_rank = world.rank();
  // Numbered as the simulator numbers its GPUs.
  const RankNumbering numbering(config);
  layout.tensor = numbering.tensor_index_of(world.rank());
  layout.shard = numbering.spatial_index_of(world.rank());
  layout.stage = numbering.stage_of(world.rank());
  layout.replica = numbering.replica_of(world.rank());
  layout.global_batch = config.global_batch();
  layout.replica_batch = config.mini_batch;
  layout.samples_before = layout.replica * config.mini_batch;
  if (!replica_batches.empty()) {
    if (static_cast<std::int64_t>(replica_batches.size()) != layout.replicas) {
      throw std::invalid_argument("expected a batch for each of the " +
                                  std::to_string(layout.replicas) + " replicas, got " +
                                  std::to_string(replica_batches.size()));
    }
    const auto mine = replica_batches.begin() + layout.replica;
    layout.global_batch =
        std::accumulate(replica_batches.begin(), replica_batches.end(), std::int64_t{0});
    layout.replica_batch = *mine;
    layout.samples_before = std::accumulate(replica_batches.begin(), mine, std::int64_t{0});
  }
  // Every group but the tensor group keeps to one tensor index: its ranks hold the same part
  // of each split layer.
  const auto colour = [&](std::int64_t value) {
    return static_cast<int>(value * layout.tensors + layout.tensor);
  };
  layout.spatial_group =
      world.split(colour(layout.replica * layout.stages + layout.stage), world.rank());
  layout.data_group =
      world.split(colour(layout.stage * layout.shards + layout.shard), world.rank());
  layout.gradient_group = world.split(colour(layout.stage), world.rank());
  layout.stage_group = world.split(colour(layout.replica * layout.shards + layout.shard),
                                   static_cast<int>(layout.stage));
  layout.tensor_group =
      world.split(static_cast<int>((layout.replica * layout.stages + layout.stage) * layout.shards +
                                   layout.shard),
                  static_cast<int>(layout.tensor));
  return layout;
}

}  // namespace tessera::kernels::real
