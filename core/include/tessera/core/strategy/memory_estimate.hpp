#pragma once
// Per-GPU device memory of one training step under a strategy: the peak of the memory plan
// (memory_plan.hpp: layer-by-layer allocation, vDNN offloading) on the busiest stage, and what it
// was made of at that moment.
#include <string>
#include <vector>

#include "tessera/core/scenario/scenario.hpp"
#include "tessera/core/strategy/memory_plan.hpp"
#include "tessera/core/strategy/parallel_strategy.hpp"

namespace tessera {

struct MemoryEstimate {
  double weights_bytes = 0;
  double weight_gradients_bytes = 0;
  double optimizer_state_bytes = 0;
  double workspace_bytes = 0;
  double input_buffers_bytes = 0;  // current sample shard, and the prefetched one
  double activations_bytes = 0;    // at the peak: feature maps and what layers keep for backward
  double activation_gradients_bytes = 0;  // at the peak
  double total_bytes = 0;                 // the peak
  double capacity_bytes = 0;
  bool fits = false;
  int worst_stage = 0;
  OffloadDecision offload;     // the policy applied (dyn resolved)
  double offloaded_bytes = 0;  // copied to host and back per step (each way), worst stage
  std::vector<std::string> offloaded_layers;  // whose outputs are offloaded, worst stage
  double host_bytes = 0;                      // the most held in pinned host memory at once
};

// What a scenario says about memory: its dtype, optimizer, offload policy, workspace and prefetch.
MemoryInputs memory_inputs_of(const Scenario& scenario, double capacity_bytes);

MemoryEstimate estimate_memory(const ModelGraph& model, const ShardPlan& plan,
                               const MemoryInputs& inputs);

}  // namespace tessera
