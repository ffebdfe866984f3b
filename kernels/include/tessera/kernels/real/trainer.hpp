#pragma once
// Training a model for real on this rank's device, one rank per device: the rank's shard of the
// layers before the plan's spatial end (partitioned convolutions and pooling with halo
// exchanges, batch-norm sums all-reduced in the spatial group), the redistribution before the
// first unsplit layer, the dense layers, the loss, backward with the gradients all-reduced in
// buckets over every rank while backward continues, and the optimizer step.
//
// After the redistribution the spatial group runs plain data parallelism, as the step program
// plays it: each rank takes whole samples of the replica's mini-batch (spatial_redistribution.hpp;
// with fewer samples than ranks, several ranks hold the same sample) and the losses are scaled so
// that every sample counts once. Every rank's parameter gradients are partial (its planes of the
// split layers, its samples of the dense ones), and one all-reduce over all ranks sums them, as
// the step program's gradient all-reduce over data x spatial GPUs. The run is
// exact: 1 rank, data parallelism and spatial splits give the same losses and weights up to
// float32 rounding (tests/kernels_mpi/real_trainer_mpi_test.cpp).
#include <cstdint>
#include <memory>
#include <vector>

#include "tessera/core/model_graph.hpp"
#include "tessera/core/network_micro_batch_plan.hpp"
#include "tessera/core/parallel_strategy.hpp"
#include "tessera/core/result_schema.hpp"
#include "tessera/core/scenario.hpp"
#include "tessera/kernels/real/rank_layout.hpp"

namespace tessera::kernels {
class Device;
}

namespace tessera::kernels::real {

struct TrainerOptions {
  Optimizer optimizer = Optimizer::adam;
  float learning_rate = 0;  // 0: the optimizer's usual default (sgd 0.01, momentum 0.01, adam 1e-3)
  double gradient_bucket_bytes = 25.0 * 1024 * 1024;
  std::uint64_t seed = 1;  // initial weights and dropout masks
  // The conv kernels' micro-batching plan (may be null: every kernel undivided, the library's
  // first algorithm). Kernels planned from profiles run as their micro-batches and algorithms;
  // spatially split layers run them on their haloed windows (convolution_runner.hpp).
  const NetworkMicroBatchPlan* micro_batching = nullptr;
};

// One step's input on this rank: its samples (the replica's mini-batch) over its shard's planes
// of the input layer, and the targets of those samples (host memory).
struct StepInput {
  std::vector<float> volume;   // mini_batch x C x shard planes
  std::vector<float> targets;  // mini_batch x target values
};

struct StepReport {
  double loss = 0;  // the global batch's loss (averaged over the data-parallel replicas)
  double step_seconds = 0;
  StepBreakdown breakdown;  // exposed time per category; idle = step minus the others
  // Every layer's forward, then every layer's backward, then the update (result_schema.hpp).
  std::vector<LayerComputeTime> layer_compute;
};

class Trainer {
 public:
  // `plan` must be the plan of `model` for the layout's configuration. Throws
  // std::invalid_argument naming the layer for layers the real backend cannot run yet, and
  // OutOfDeviceMemory when the device cannot hold the rank's tensors.
  Trainer(const ModelGraph& model, const ShardPlan& plan, Device& device, RankLayout& layout,
          const TrainerOptions& options);
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  // Planes of the input layer this rank holds (global coordinates of the sample).
  std::vector<std::int64_t> input_first() const;
  std::vector<std::int64_t> input_count() const;

  // One training step; `io_seconds` is what producing `input` cost (counted as I/O).
  StepReport step(const StepInput& input, double io_seconds = 0);

  // Every parameter, in layer order, copied to the host.
  std::vector<float> parameters() const;
  // Bytes this rank allocated on its device (tensors, parameters, optimizer state).
  double allocated_bytes() const;

 private:
  void build(const ModelGraph& model, const ShardPlan& plan, const TrainerOptions& options);
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace tessera::kernels::real
