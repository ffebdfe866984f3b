#pragma once
// The program one GPU plays for one training step, derived once from the model and the strategy:
// forward and backward compute of its shard, halo exchanges with its spatial neighbours,
// batch-norm statistics and the redistribution inside its spatial group, the partial sums and
// gathers of its tensor group, transfers between model-parallel stages, bucketed gradient
// all-reduces overlapped with backward, the optimizer update, and the read of the next sample's
// shard. Both backends play it op by op: the simulator's actors
// (simulator/src/play/step_player.cpp) and the real trainer (kernels/real/src/program_player.cpp),
// which records the ops it executed so that a test holds them to this list. Neither re-derives the
// schedule (docs/design/step-program.md).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tessera/core/common/layer_compute_time.hpp"
#include "tessera/core/common/provenance.hpp"
#include "tessera/core/cost/cost_model.hpp"
#include "tessera/core/micro_batching/micro_batch_plan.hpp"
#include "tessera/core/micro_batching/network_micro_batch_plan.hpp"
#include "tessera/core/micro_batching/window_kernel_plan.hpp"
#include "tessera/core/model/model_graph.hpp"
#include "tessera/core/scenario/scenario.hpp"
#include "tessera/core/strategy/gradient_buckets.hpp"
#include "tessera/core/strategy/input_source.hpp"
#include "tessera/core/strategy/memory_plan.hpp"
#include "tessera/core/strategy/parallel_strategy.hpp"
#include "tessera/core/strategy/step_part.hpp"

namespace tessera {

enum class OpCategory { compute, halo, allreduce, other_communication, io, offload };
std::string to_string(OpCategory category);

enum class StepOpKind {
  compute,          // `seconds` of layer `layer`'s `direction` (`part` of it) on the compute stream
  halo_start,       // exchange with both neighbours along `axis` (asynchronous): `direction`
                    // forward fills the input halos, backward_data returns gradient halos;
                    // `seconds`: packing the faces sent (halo_copy_seconds)
  halo_wait,        // wait for the exchange `exchange`; `seconds`: unpacking the faces received
  group_allreduce,  // blocking all-reduce of `bytes` in `group`: the spatial group's batch-norm
                    // sums, the tensor group's partial sums (tensor_split.hpp)
  group_alltoall,   // blocking all-to-all, `bytes` to each peer of the spatial group: forward
                    // the activations, backward_data their gradients (the redistribution)
  group_allgather,  // blocking all-gather in `group` of a tensor of `bytes` in all, each member
                    // holding its share: the tensor group's split channels before a layer that
                    // needs them whole; over the stage group, sharded weights (memory.shard)
                    // before a layer's passes or after the update
  stage_send,  // layer `layer`'s output (forward) or its gradient (backward) to stage `peer_stage`
               // (asynchronous: the step ends when it has arrived)
  stage_recv,  // the same from stage `peer_stage`: waiting for it is a pipeline bubble, moving
               // it communication
  gradient_allreduce,  // queue bucket `bucket` (`bytes`) on the communication stream (asynchronous)
  gradient_reduce_scatter,  // the same, reduce-scattered: each GPU keeps the sum of its shard
                            // (sharded optimizer state, memory.shard)
  gradient_wait,            // wait for every queued bucket; where `bucket` is set (StepProgram::
                            // stages_gradients), for the buckets up to that one
  read_start,  // start reading the shards of the next step's `samples` samples, `bytes` in all,
               // from `source` (asynchronous)
  read_wait,   // wait for that read
  update,      // the optimizer step over the stage's parameters (compute stream)
  // Device memory (memory_plan.hpp), taking no time: `bytes` of `memory` come into use or are
  // released; for activations and their gradients, layer `layer`'s output.
  allocate,
  release,
  // vDNN's memory stream: copy layer `layer`'s output (`bytes`) device to host or host to device
  // (asynchronous), and, at a layer's end, wait for the memory stream.
  offload_start,
  offload_wait,
  prefetch_start,
  prefetch_wait,
};
std::string to_string(StepOpKind kind);

// The GPUs a group collective spans: the spatial group of a replica, every GPU of the stage
// holding the same tensor shard, or the tensor group splitting the layers.
// table: the stages holding a tied table (table_copies.hpp), their GPUs of one replica and
// tensor shard.
enum class CollectiveGroup { spatial, stage, tensor, table };

struct StepOp {
  StepOpKind kind = StepOpKind::compute;
  OpCategory category = OpCategory::compute;
  std::string label;                         // e.g. "conv1 forward (interior)"
  std::size_t layer = SIZE_MAX;              // model layer, if any
  Direction direction = Direction::forward;  // compute, halo and group ops: the pass
  StepPart part = StepPart::whole;           // compute ops
  // A forward op run again before its segment's backward (memory.recompute), and the tensor
  // group's and sharded weights' collectives it needs again.
  bool recomputed = false;
  double seconds = 0;  // compute time; halo ops: their faces' copies on the device
  // Halo ops: what every GPU of the group copies whole besides its faces (halo_copies.hpp): a
  // split window layer's shard loaded into its haloed window buffer (the forward's first start),
  // or the owned part of the window's input gradient stored back (the backward's last wait).
  double window_seconds = 0;
  Provenance provenance = Provenance::none;
  double bytes = 0;           // communication or I/O volume (see kind)
  int axis = -1;              // halo: spatial axis
  double bytes_to_lower = 0;  // halo: planes for the lower neighbour
  double bytes_to_upper = 0;  // halo: planes for the upper neighbour
  int exchange = -1;          // halo: pairs a start with its wait
  int peer_stage = -1;        // stage_send / stage_recv
  int input = -1;             // group_allgather over the tensor group: the layer's input gathered
  int bucket = -1;  // gradient_allreduce / reduce_scatter: index into StepProgram::buckets
  CollectiveGroup group = CollectiveGroup::spatial;  // group_allreduce / allgather: over whom
  InputSource source = InputSource::none;            // read_start: where the samples come from
  std::int64_t samples = 0;                          // read_start: how many samples it reads of
  MemoryUse memory = MemoryUse::activations;         // allocate / release: what the bytes hold
  // The pipeline's micro-batch the op works on (parallel_strategy.hpp; 0 with one micro-batch):
  // each micro-batch has its own activations and messages between stages.
  std::int64_t micro_batch = 0;
  // Convolution kernels: the micro-batches and algorithms the kernel runs as (the network plan
  // of network_micro_batch_plan.hpp; `seconds` is their time, times the fraction for interior or
  // boundary parts). Empty for other ops.
  MicroBatchPlan micro_batches;
  // A spatially split convolution runs windows (window_kernels.hpp), not the shard's problem:
  // with profiles, every distinct window of every shard with its plan (window_kernel_plan.hpp),
  // which the real backend runs as given; `seconds` is then the timed shard's windows' time
  // where all of them are profiled. Empty without profiles: the library picks.
  std::vector<WindowKernelPlan> window_plans;
  // Compute and update ops: the kernel's work as the roofline counts it (cost_model.hpp's
  // CostEstimate, times the part's fraction), a Chakra trace's num_ops and tensor_size.
  double flops = 0;
  double memory_bytes = 0;
};

struct StepOptions {
  DType dtype = DType::float32;
  Optimizer optimizer = Optimizer::adam;
  double gradient_bucket_bytes = 25.0 * 1024 * 1024;
  // Where this step's samples come from (input_source.hpp); none: no read at all.
  InputSource input_source = InputSource::file_system;
  bool prefetch = true;
  bool read_sub_volume = true;
  StoredDType stored_dtype = StoredDType::float32;  // of the volumes a read moves
  bool overlap_halo = true;  // compute the interior while halos are in flight
  // Gradient buckets all-reduced beside backward; false: each waits where it is queued.
  bool overlap_gradient_allreduce = true;
  // vDNN's copies on a copy engine beside compute; false: each is waited for where it starts (a
  // CPU rank copies on its own cores).
  bool overlap_memory_copies = true;
  // Batch-norm statistics summed over every GPU of the stage instead of the spatial group.
  bool batch_norm_over_replicas = false;
  // Device memory: the offload policy applied (dyn resolved by decide_offload) and the kernel
  // workspace pool (memory_plan.hpp).
  OffloadDecision offload;
  MemoryAllocation allocation = MemoryAllocation::layer_wise;
  double workspace_bytes = 0;
  // ZeRO (memory.shard): what the GPUs summing the same gradients keep 1/N of.
  ShardLevel shard = ShardLevel::none;
  RecomputePolicy recompute = RecomputePolicy::none;
};

struct StepProgram {
  int stage = 0;
  std::vector<StepOp> ops;
  std::vector<GradientBucket> buckets;    // of this stage's parameters
  double parameters = 0;                  // parameters held by this stage
  std::int64_t allreduce_group_size = 1;  // GPUs summing this stage's gradients
  // Sharded gradients held whole only while their bucket is reduce-scattered, two buckets at a
  // time (gradient_buckets.hpp's stages_gradients).
  bool stages_gradients = false;
  // Per layer of this stage holding a tied table that other stages hold copies of
  // (table_copies.hpp): the stages its table-group all-reduce sums over, ascending.
  std::map<std::size_t, std::vector<int>> table_stages;
  // The kernel workspace the convolutions run within: the pool its memory plan counts
  // (StepOptions::workspace_bytes, micro_batching_under's limit), algorithms chosen within it;
  // none for a program built op by op: no limit.
  std::optional<double> workspace_limit_bytes;
};

// The options a scenario gives its step programs, on devices that can or cannot all-reduce and
// copy beside compute, with samples from `input_source` (input_source.hpp), under the offload
// decision made for the point (decide_offload): the simulator and the real backend build their
// programs with it, so that both play the same one.
StepOptions step_options_of(const Scenario& scenario, bool overlaps_communication,
                            InputSource input_source, const OffloadDecision& offload);

// The micro-batching settings the kernels run under: the scenario's, with no workspace where the
// dynamic offload policy fell back to the memory-optimal algorithms.
MicroBatchingSection micro_batching_under(const Scenario& scenario, const OffloadDecision& offload);

// One program per model-parallel stage; every GPU of a stage plays the same one (ranks without a
// neighbour along an axis skip that side of a halo exchange). Convolution kernels are timed by
// the micro-batching plan made from the cost model's profiles and micro-batching settings.
std::vector<StepProgram> build_step_programs(const ModelGraph& model, const ShardPlan& plan,
                                             const ComputeCostModel& costs,
                                             const StepOptions& options);
// The same with a micro-batching plan made elsewhere (by plan_network from other profiles, or a
// test's), which the convolution ops then run as.
std::vector<StepProgram> build_step_programs(const ModelGraph& model, const ShardPlan& plan,
                                             const ComputeCostModel& costs,
                                             const StepOptions& options,
                                             const NetworkMicroBatchPlan& micro_batching);

// The parameters each model-parallel stage holds and updates, by stage: what the program's
// optimizer update is timed over, and so what `tessera profile` measures the update at.
std::vector<double> stage_parameters(const ModelGraph& model, const ShardPlan& plan);

// The compute time of every layer's forward and backward pass in the programs (each layer is in
// one stage's), then the optimizer update (the slowest stage's), as result_schema.hpp records it.
// Layers without a compute op (the input) are left out.
std::vector<LayerComputeTime> layer_compute_times(const ModelGraph& model,
                                                  const std::vector<StepProgram>& programs);

}  // namespace tessera
