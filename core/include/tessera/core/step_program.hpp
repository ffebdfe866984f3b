#pragma once
// The program one GPU plays for one training step, derived once from the model and the strategy:
// forward and backward compute of its shard, halo exchanges with its spatial neighbours,
// batch-norm statistics and the redistribution inside its spatial group, transfers between
// model-parallel stages, bucketed gradient all-reduces overlapped with backward, the optimizer
// update, and the read of the next sample's shard. The simulator plays it; so will the real
// backend. Neither re-derives the model.
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/core/cost_model.hpp"
#include "tessera/core/micro_batch_plan.hpp"
#include "tessera/core/model_graph.hpp"
#include "tessera/core/parallel_strategy.hpp"
#include "tessera/core/result_schema.hpp"
#include "tessera/core/scenario.hpp"

namespace tessera {

enum class OpCategory { compute, halo, allreduce, other_communication, io, offload };
std::string to_string(OpCategory category);

enum class StepOpKind {
  compute,          // `seconds` on the compute stream
  halo_start,       // send to and receive from both neighbours along `axis` (asynchronous)
  halo_wait,        // wait for the exchange `exchange`
  group_allreduce,  // blocking all-reduce of `bytes` in the spatial group (batch-norm statistics)
  group_alltoall,   // blocking all-to-all, `bytes` to each peer of the spatial group
  stage_send,       // activations (forward) or gradients (backward) to stage `peer_stage`
  stage_recv,       // from stage `peer_stage`
  gradient_allreduce,  // queue a bucket of `bytes` on the communication stream (asynchronous)
  gradient_wait,       // wait for every queued bucket
  read_start,          // start reading the next sample's shard, `bytes` (asynchronous)
  read_wait,           // wait for that read
};
std::string to_string(StepOpKind kind);

struct StepOp {
  StepOpKind kind = StepOpKind::compute;
  OpCategory category = OpCategory::compute;
  std::string label;                         // e.g. "conv1 forward (interior)"
  std::size_t layer = SIZE_MAX;              // model layer, if any
  Direction direction = Direction::forward;  // compute of a layer: its pass
  double seconds = 0;                        // compute time
  Provenance provenance = Provenance::none;
  double bytes = 0;           // communication or I/O volume (see kind)
  int axis = -1;              // halo: spatial axis
  double bytes_to_lower = 0;  // halo: planes for the lower neighbour
  double bytes_to_upper = 0;  // halo: planes for the upper neighbour
  int exchange = -1;          // halo: pairs a start with its wait
  int peer_stage = -1;        // stage_send / stage_recv
  // Convolution kernels: the micro-batches and algorithms the kernel runs as (the network plan
  // of network_micro_batch_plan.hpp; `seconds` is their time, times the fraction for interior or
  // boundary parts). Empty for other ops.
  MicroBatchPlan micro_batches;
};

struct StepOptions {
  DType dtype = DType::float32;
  Optimizer optimizer = Optimizer::adam;
  double gradient_bucket_bytes = 25.0 * 1024 * 1024;
  bool prefetch = true;
  bool read_sub_volume = true;
  bool overlap_halo = true;  // compute the interior while halos are in flight
  // Gradient buckets all-reduced beside backward; false: each waits where it is queued.
  bool overlap_gradient_allreduce = true;
};

struct StepProgram {
  int stage = 0;
  std::vector<StepOp> ops;
  double parameters = 0;                  // parameters held by this stage
  std::int64_t allreduce_group_size = 1;  // GPUs summing this stage's gradients
};

// One program per model-parallel stage; every GPU of a stage plays the same one (ranks without a
// neighbour along an axis skip that side of a halo exchange). Convolution kernels are timed by
// the micro-batching plan made from the cost model's profiles and micro-batching settings.
std::vector<StepProgram> build_step_programs(const ModelGraph& model, const ShardPlan& plan,
                                             const ComputeCostModel& costs,
                                             const StepOptions& options);

// The parameters each model-parallel stage holds and updates, by stage: what the program's
// optimizer update is timed over, and so what `tessera profile` measures the update at.
std::vector<double> stage_parameters(const ModelGraph& model, const ShardPlan& plan);

// The compute time of every layer's forward and backward pass in the programs (each layer is in
// one stage's), then the optimizer update (the slowest stage's), as result_schema.hpp records it.
std::vector<LayerComputeTime> layer_compute_times(const ModelGraph& model,
                                                  const std::vector<StepProgram>& programs);

}  // namespace tessera
