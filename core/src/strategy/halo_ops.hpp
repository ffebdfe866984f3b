#pragma once
// One halo exchange of a split window layer along one axis, as the step ops that start it and
// wait for it: the plane bytes for each neighbour, and the device copies that pack the faces
// sent and unpack those received (halo_copies.hpp). The program writer (step_program.cpp) says
// when each runs.
#include <cstddef>

#include "tessera/core/cost/cost_model.hpp"
#include "tessera/core/model/model_graph.hpp"
#include "tessera/core/strategy/parallel_strategy.hpp"
#include "tessera/core/strategy/step_program.hpp"

namespace tessera {

struct HaloExchangeOps {
  StepOp start;
  StepOp wait;
};

// Forward, my lower neighbour needs my first planes for its upper halo and vice versa; backward,
// the gradient of my halo planes goes back to their owners and is summed there.
HaloExchangeOps halo_exchange_ops(const ResolvedLayer& layer, const LayerShard& shard,
                                  std::size_t index, int axis, Direction direction, int exchange,
                                  DType dtype, const ComputeCostModel& costs);

// A split window layer's shard copied into its haloed window buffer, which is zeroed first (the
// first forward exchange's window_seconds), and the owned part of the window's input gradient
// copied out (the last backward wait's).
CostEstimate window_load_time(const LayerShard& shard, DType dtype, const ComputeCostModel& costs);
CostEstimate window_store_time(const LayerShard& shard, DType dtype, const ComputeCostModel& costs);

}  // namespace tessera
