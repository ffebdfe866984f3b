#pragma once
// What one GPU holds in device memory over a training step, layer by layer, and what it moves to
// host memory: the one rule the step program, the memory estimate and both backends follow.
//
// Memory is allocated and released layer by layer from a pool (vDNN's sliding window;
// memory.allocation: network_wide instead holds every tensor for the whole step, as the
// frameworks vDNN compares with did): a layer's output comes into use at its forward and is
// released after its last forward consumer, or, when backward needs it, after its last backward
// user; an output gradient lives from the backward of the layer's first consumer to run backward to
// the end of the layer's own. Weights, their gradients, optimizer state, the kernel workspace and
// the input buffers stay for the whole step.
//
// Offloading (Rhu et al., vDNN, MICRO 2016): an offloaded feature map is copied device to host
// during the forward of its last forward consumer (on a memory stream, overlapping that layer's
// kernels); at the layer's end both streams synchronise and the device copy is released. In
// backward, while layer i runs, the nearest offloaded feature map not yet brought back whose first
// backward user is still to come is copied host to device; the search never passes the next
// convolution. Streams synchronise at each layer's end; a feature map a layer needs and that is
// not back yet is fetched before the layer runs (a stall).
//   all:  feature maps read by a convolution or a pooling layer (the classifier's inputs stay);
//   conv: feature maps read by a convolution;
//   dyn:  the first that fits the device: no offloading, conv, all, then all with the
//         memory-optimal algorithms (no kernel workspace).
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "tessera/core/common/dtype.hpp"
#include "tessera/core/model/model_graph.hpp"
#include "tessera/core/scenario/scenario.hpp"
#include "tessera/core/strategy/parallel_strategy.hpp"

namespace tessera {

// What a block of device memory holds.
enum class MemoryUse {
  weights,
  weight_gradients,
  optimizer_state,
  workspace,
  input_buffers,
  activations,
  activation_gradients,
  layer_state,  // what a layer keeps for its own backward: pooling indices, dropout masks
};
inline constexpr int kMemoryUses = 8;
std::string to_string(MemoryUse use);
// What vDNN moves and what its paper's memory figures count: layer outputs, their gradients, and
// what layers keep for their own backward (not weights, optimizer state, workspace or input).
bool holds_feature_maps(MemoryUse use);

enum class MemoryEventKind {
  allocate,        // `bytes` of `use` come into use (for activations: `tensor`'s output)
  release,         // and are released
  offload_start,   // copy `tensor`'s output (`bytes`) device to host on the memory stream
  offload_wait,    // the layer's end: wait for the memory stream
  prefetch_start,  // copy `tensor`'s output host to device on the memory stream
  prefetch_wait,   // the layer's end: wait for the memory stream
};

struct MemoryEvent {
  MemoryEventKind kind = MemoryEventKind::allocate;
  MemoryUse use = MemoryUse::activations;
  std::size_t tensor = SIZE_MAX;  // the layer whose output (or its gradient) it is
  double bytes = 0;
  // Of at_start and at_end events: the micro-batch whose tensor it is (every micro-batch of a
  // pipeline holds its own); the per-layer events are the same for every micro-batch.
  std::int64_t micro_batch = 0;
};

// Where in a layer's pass an event sits. after_recompute: at a recomputed segment's last layer,
// once the segment's forward has run again and before that layer's backward.
enum class MemoryMoment {
  before_forward,
  after_forward,
  before_backward,
  after_recompute,
  after_backward
};
inline constexpr std::size_t kMemoryMoments = 5;

// What a scenario says about memory, and the device's capacity.
struct MemoryInputs {
  DType dtype = DType::float32;
  Optimizer optimizer = Optimizer::adam;
  OffloadPolicy offload = OffloadPolicy::none;
  MemoryAllocation allocation = MemoryAllocation::layer_wise;
  ShardLevel shard = ShardLevel::none;
  RecomputePolicy recompute = RecomputePolicy::none;
  double workspace_bytes = 0;
  bool prefetch = true;
  double capacity_bytes = 0;
  // Sharded gradients are held whole per bucket while summed (gradient_buckets.hpp).
  double gradient_bucket_bytes = 25.0 * 1024 * 1024;
};

// The policy that runs: dyn resolved to the first that fits (memory_optimal_algorithms: kernels
// with no workspace, the dynamic policy's last resort).
struct OffloadDecision {
  OffloadPolicy policy = OffloadPolicy::none;
  bool memory_optimal_algorithms = false;
};

struct StageMemoryPlan {
  int stage = 0;
  OffloadDecision decision;
  std::vector<MemoryEvent> at_start;  // what stays for the whole step
  std::vector<MemoryEvent> at_end;    // after the last pass (network-wide allocation's releases)
  // Per layer of the model (empty for layers of other stages), per MemoryMoment.
  std::vector<std::array<std::vector<MemoryEvent>, kMemoryMoments>> at_layer;
  // Per layer, the last layer of its recomputed segment (memory.recompute;
  // recompute_segments.hpp), before whose backward the segment's forward runs again.
  std::vector<std::optional<std::size_t>> recomputed_segment_end;
  std::vector<std::size_t> offloaded;  // tensors (producing layers) copied to host and back
  double offloaded_bytes = 0;          // per step, each way

  const std::vector<MemoryEvent>& at(std::size_t layer, MemoryMoment moment) const {
    return at_layer[layer][static_cast<std::size_t>(moment)];
  }
};

// The events of `stage` under a resolved decision (its policy is not dyn).
StageMemoryPlan plan_stage_memory(const ModelGraph& model, const ShardPlan& plan, int stage,
                                  const MemoryInputs& inputs, const OffloadDecision& decision);

// The decisions a policy stands for, in the order dyn tries them: none, conv, all, then all with
// the memory-optimal algorithms; any other policy, itself alone.
std::vector<OffloadDecision> offload_candidates(OffloadPolicy policy);

// The scenario's policy for this plan: the first of its candidates whose every stage's estimated
// peak fits `capacity_bytes` (the last where none does).
OffloadDecision decide_offload(const ModelGraph& model, const ShardPlan& plan,
                               const MemoryInputs& inputs);

// ReLUs run in place, as the frameworks run them: where a ReLU is its input's only reader, the
// input's producer does not need it in backward, and no redistribution lies between them, the
// ReLU's output takes its input's buffer (and in backward its input gradient its output
// gradient's). For every layer, the ReLU that takes its output's buffer over, if one does.
std::vector<std::optional<std::size_t>> in_place_successors(const ModelGraph& model,
                                                            const ShardPlan& plan);

// Bytes of the activation a layer's consumers keep for backward, on one GPU (halo planes included
// when a consumer reads it with halos); 0 when no backward needs it.
double kept_activation_bytes(const ModelGraph& model, const ShardPlan& plan, std::size_t layer,
                             DType dtype);

}  // namespace tessera
