#include "tessera/kernels/real/rank_layout.hpp"

#include <stdexcept>
#include <string>

namespace tessera::kernels::real {

RankLayout make_rank_layout(Communicator& world, const ParallelConfig& config) {
  if (config.model_degree > 1) {
    throw std::invalid_argument("model-parallel stages (parallelism.model.degree " +
                                std::to_string(config.model_degree) +
                                ") are not yet supported by the real backend");
  }
  if (world.size() != config.gpus()) {
    throw std::invalid_argument("the strategy needs " + std::to_string(config.gpus()) +
                                " ranks, the run has " + std::to_string(world.size()));
  }
  RankLayout layout;
  layout.shards = config.spatial_parts();
  layout.replicas = config.data;
  layout.replica = world.rank() / layout.shards;
  layout.shard = world.rank() % layout.shards;
  layout.spatial_group = world.split(static_cast<int>(layout.replica), world.rank());
  layout.data_group = world.split(static_cast<int>(layout.shard), world.rank());
  layout.gradient_group = world.split(0, world.rank());
  return layout;
}

}  // namespace tessera::kernels::real
