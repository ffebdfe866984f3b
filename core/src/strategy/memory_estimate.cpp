#include "tessera/core/memory_estimate.hpp"

#include <algorithm>

#include "tessera/core/layer_cost.hpp"

namespace tessera {
namespace {

double optimizer_states(Optimizer optimizer) {
  switch (optimizer) {
    case Optimizer::sgd:
      return 0;
    case Optimizer::momentum:
      return 1;
    case Optimizer::adam:
      return 2;  // first and second moments
  }
  return 0;
}

double bytes_of(const TensorShape& shape, DType dtype) {
  return static_cast<double>(shape.elements()) * static_cast<double>(dtype_bytes(dtype));
}

struct StageMemory {
  double weights = 0, kept = 0, kept_offloadable = 0, largest_offloadable = 0, transient = 0;
};

std::vector<StageMemory> per_stage(const ModelGraph& model, const ShardPlan& plan, DType dtype,
                                   OffloadPolicy offload) {
  std::vector<StageMemory> stages(static_cast<std::size_t>(plan.stages));
  const auto& layers = model.layers();
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const auto& shard = plan.layers[i];
    auto& stage = stages[static_cast<std::size_t>(shard.stage)];
    const auto cost = layer_cost(layers[i].layer, shard.local_inputs, shard.local_output,
                                 shard.local_batch, dtype);
    stage.weights += static_cast<double>(cost.weight_bytes);
    stage.kept += static_cast<double>(cost.saved_for_backward_bytes);
    const double kept = kept_activation_bytes(model, plan, i, dtype);
    stage.kept += kept;
    // vDNN offloads feature maps: "all" every kept one, "conv" only those convolutions read.
    bool offloadable = offload == OffloadPolicy::all;
    if (offload == OffloadPolicy::conv) {
      for (auto consumer : model.consumers_of(i)) {
        offloadable |= layers[consumer].layer.kind == LayerKind::convolution;
      }
    }
    if (offloadable && kept > 0) {
      stage.kept_offloadable += kept;
      stage.largest_offloadable = std::max(stage.largest_offloadable, kept);
    }
    double gradient_pair = bytes_of(shard.local_output, dtype);
    for (const auto& input : shard.local_inputs) gradient_pair += bytes_of(input, dtype);
    stage.transient = std::max(stage.transient, gradient_pair);
  }
  return stages;
}

MemoryEstimate estimate_with(const ModelGraph& model, const ShardPlan& plan, const MemoryInputs& in,
                             OffloadPolicy offload) {
  MemoryEstimate best;
  const auto stages = per_stage(model, plan, in.dtype, offload);
  const auto& first = plan.layers.front();
  const double input_buffer = bytes_of(first.local_output, in.dtype);
  for (std::size_t s = 0; s < stages.size(); ++s) {
    const auto& stage = stages[s];
    MemoryEstimate e;
    e.weights_bytes = stage.weights;
    e.weight_gradients_bytes = stage.weights;
    e.optimizer_state_bytes = stage.weights * optimizer_states(in.optimizer);
    e.kept_activations_bytes = stage.kept - stage.kept_offloadable;
    e.offload_staging_bytes = 2 * stage.largest_offloadable;
    e.transient_bytes = stage.transient;
    e.workspace_bytes = in.workspace_bytes;
    e.input_buffers_bytes = s == 0 ? input_buffer * (in.prefetch ? 2 : 1) : 0;
    e.total_bytes = e.weights_bytes + e.weight_gradients_bytes + e.optimizer_state_bytes +
                    e.kept_activations_bytes + e.offload_staging_bytes + e.transient_bytes +
                    e.workspace_bytes + e.input_buffers_bytes;
    e.worst_stage = static_cast<int>(s);
    if (s == 0 || e.total_bytes > best.total_bytes) best = e;
  }
  best.capacity_bytes = in.capacity_bytes;
  best.fits = best.total_bytes <= in.capacity_bytes;
  best.offload_applied = offload;
  return best;
}

}  // namespace

double kept_activation_bytes(const ModelGraph& model, const ShardPlan& plan, std::size_t layer,
                             DType dtype) {
  const auto& layers = model.layers();
  bool kept = backward_needs(layers[layer].layer).output;
  double bytes = bytes_of(plan.layers[layer].local_output, dtype);
  for (auto consumer : model.consumers_of(layer)) {
    if (!backward_needs(layers[consumer].layer).input) continue;
    kept = true;
    const auto& shard = plan.layers[consumer];
    if (layers[consumer].input_indices.front() == layer && !shard.input_halo.empty()) {
      bytes = std::max(bytes, bytes_of(shard.local_input_with_halo, dtype));
    }
  }
  return kept ? bytes : 0.0;
}

MemoryInputs memory_inputs_of(const Scenario& scenario, double capacity_bytes) {
  return {.dtype = scenario.model.dtype,
          .optimizer = scenario.model.optimizer,
          .offload = scenario.memory.offload,
          .workspace_bytes = scenario.micro_batching.workspace_limit_bytes,
          .prefetch = scenario.io.prefetch,
          .capacity_bytes = capacity_bytes};
}

MemoryEstimate estimate_memory(const ModelGraph& model, const ShardPlan& plan,
                               const MemoryInputs& inputs) {
  if (inputs.offload != OffloadPolicy::dyn)
    return estimate_with(model, plan, inputs, inputs.offload);
  // vDNN's dynamic policy: the least offloading that fits.
  for (auto policy : {OffloadPolicy::none, OffloadPolicy::conv, OffloadPolicy::all}) {
    auto estimate = estimate_with(model, plan, inputs, policy);
    if (estimate.fits || policy == OffloadPolicy::all) return estimate;
  }
  return estimate_with(model, plan, inputs, OffloadPolicy::all);
}

}  // namespace tessera
