#include "tessera/kernels/real/rank_layout.hpp"

#include <stdexcept>
#include <string>

namespace tessera::kernels::real {

RankLayout make_rank_layout(Communicator& world, const ParallelConfig& config) {
  if (world.size() != config.gpus()) {
    throw std::invalid_argument("the strategy needs " + std::to_string(config.gpus()) +
                                " ranks, the run has " + std::to_string(world.size()));
  }
  RankLayout layout;
  layout.shards = config.spatial_parts();
  layout.stages = config.model_degree;
  layout.replicas = config.data;
  const std::int64_t rank = world.rank();
  layout.shard = rank % layout.shards;
  layout.stage = (rank / layout.shards) % layout.stages;
  layout.replica = rank / (layout.shards * layout.stages);
  const auto colour = [](std::int64_t value) { return static_cast<int>(value); };
  layout.spatial_group =
      world.split(colour(layout.replica * layout.stages + layout.stage), world.rank());
  layout.data_group =
      world.split(colour(layout.stage * layout.shards + layout.shard), world.rank());
  layout.gradient_group = world.split(colour(layout.stage), world.rank());
  layout.stage_group =
      world.split(colour(layout.replica * layout.shards + layout.shard), colour(layout.stage));
  return layout;
}

}  // namespace tessera::kernels::real
