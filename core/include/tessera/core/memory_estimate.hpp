#pragma once
// Per-GPU memory of one training step under a strategy: weights, their gradients and optimizer
// state for the GPU's stage; the activations kept for backward (with halo planes); the largest
// transient gradient pair; kernel workspace; the input sample buffers. Offloading (vDNN) moves kept
// activations to host memory and leaves two staging buffers behind.
#include <cstdint>
#include <string>

#include "tessera/core/dtype.hpp"
#include "tessera/core/parallel_strategy.hpp"
#include "tessera/core/scenario.hpp"

namespace tessera {

struct MemoryEstimate {
  double weights_bytes = 0;
  double weight_gradients_bytes = 0;
  double optimizer_state_bytes = 0;
  double kept_activations_bytes = 0;  // resident between forward and backward
  double offload_staging_bytes = 0;
  double transient_bytes = 0;  // largest gradient pair of one layer in backward
  double workspace_bytes = 0;
  double input_buffers_bytes = 0;  // current sample shard, and the prefetched one
  double total_bytes = 0;
  double capacity_bytes = 0;
  bool fits = false;
  int worst_stage = 0;
  OffloadPolicy offload_applied = OffloadPolicy::none;  // dyn resolves to one of the others
};

struct MemoryInputs {
  DType dtype = DType::float32;
  Optimizer optimizer = Optimizer::adam;
  OffloadPolicy offload = OffloadPolicy::none;
  double workspace_bytes = 0;
  bool prefetch = true;
  double capacity_bytes = 0;
};

// What a scenario says about memory: its dtype, optimizer, offload policy, workspace and prefetch.
MemoryInputs memory_inputs_of(const Scenario& scenario, double capacity_bytes);

MemoryEstimate estimate_memory(const ModelGraph& model, const ShardPlan& plan,
                               const MemoryInputs& inputs);

// Bytes of the activation a layer's consumers keep for backward, on one GPU (halo planes included
// when a consumer reads it with halos).
double kept_activation_bytes(const ModelGraph& model, const ShardPlan& plan, std::size_t layer,
                             DType dtype);

}  // namespace tessera
