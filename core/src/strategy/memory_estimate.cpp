#include "tessera/core/strategy/memory_estimate.hpp"

#include "tessera/core/strategy/memory_peak.hpp"

namespace tessera {

MemoryInputs memory_inputs_of(const Scenario& scenario, double capacity_bytes) {
  return {.dtype = scenario.model.dtype,
          .optimizer = scenario.model.optimizer,
          .offload = scenario.memory.offload,
          .allocation = scenario.memory.allocation,
          .shard = scenario.memory.shard,
          .recompute = scenario.memory.recompute,
          .workspace_bytes = scenario.micro_batching.workspace_limit_bytes,
          .prefetch = scenario.io.prefetch,
          .capacity_bytes = capacity_bytes,
          .gradient_bucket_bytes = scenario.sim.gradient_bucket_bytes};
}

MemoryEstimate estimate_memory(const ModelGraph& model, const ShardPlan& plan,
                               const MemoryInputs& inputs) {
  const auto decision = decide_offload(model, plan, inputs);
  MemoryEstimate best;
  for (int stage = 0; stage < plan.stages; ++stage) {
    const auto memory = plan_stage_memory(model, plan, stage, inputs, decision);
    const auto peak = peak_of(model, plan, memory);
    if (stage > 0 && peak.total_bytes <= best.total_bytes) continue;
    auto use = [&](MemoryUse kind) { return peak.by_use[static_cast<std::size_t>(kind)]; };
    best = {.weights_bytes = use(MemoryUse::weights),
            .weight_gradients_bytes = use(MemoryUse::weight_gradients),
            .optimizer_state_bytes = use(MemoryUse::optimizer_state),
            .workspace_bytes = use(MemoryUse::workspace),
            .input_buffers_bytes = use(MemoryUse::input_buffers),
            .activations_bytes = use(MemoryUse::activations) + use(MemoryUse::layer_state),
            .activation_gradients_bytes = use(MemoryUse::activation_gradients),
            .total_bytes = peak.total_bytes,
            .worst_stage = stage,
            .offloaded_bytes = memory.offloaded_bytes,
            .host_bytes = peak.host_bytes};
    for (auto tensor : memory.offloaded) {
      best.offloaded_layers.push_back(model.layers()[tensor].layer.name);
    }
  }
  best.capacity_bytes = inputs.capacity_bytes;
  best.fits = best.total_bytes <= inputs.capacity_bytes;
  best.offload = decision;
  return best;
}

}  // namespace tessera
