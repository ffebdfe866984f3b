#pragma once
// Training a model for real on this rank's device, one rank per device, by playing core's step
// program (step_program.hpp) op by op: the same program the simulator plays. Every rule that
// decides what runs (the layers' passes and their parts, the halo exchanges and their order, the
// batch-norm sums and the redistribution before the dense layers, the gradient buckets, where
// samples are read) comes from the program; the trainer decides only how, on this device and
// over these ranks.
//
// After the redistribution the spatial group runs plain data parallelism: each rank takes whole
// samples of the replica's mini-batch (spatial_redistribution.hpp; with fewer samples than ranks,
// several ranks hold the same sample) and the losses are scaled so that every sample counts once.
// Every rank's parameter gradients are partial (its planes of the split layers, its samples of
// the dense ones), and the program's bucketed all-reduce over all ranks sums them. The run is
// exact: 1 rank, data parallelism and spatial splits give the same losses and weights up to
// float32 rounding (tests/kernels_mpi/real_trainer_mpi_test.cpp), and so do pipelined stages,
// tensor groups (each rank runs its part of every split layer, core's tensor_local_model),
// sharded parameters (ZeRO) and recomputation (pipeline_, tensor_, zero_mpi_test.cpp and
// tests/kernels_real/real_recompute_test.cpp).
#include <cstdint>
#include <memory>
#include <vector>

#include "tessera/core/model/model_graph.hpp"
#include "tessera/core/result/result_schema.hpp"
#include "tessera/core/result/timeline.hpp"
#include "tessera/core/scenario/scenario.hpp"
#include "tessera/core/strategy/parallel_strategy.hpp"
#include "tessera/core/strategy/step_program.hpp"
#include "tessera/kernels/convolution_runner.hpp"
#include "tessera/kernels/real/rank_layout.hpp"
#include "tessera/kernels/real/step_input_source.hpp"

namespace tessera::kernels {
class Device;
}

namespace tessera::kernels::real {

struct TrainerOptions {
  Optimizer optimizer = Optimizer::adam;
  float learning_rate = 0;  // 0: the optimizer's usual default (sgd 0.01, momentum 0.01, adam 1e-3)
  std::uint64_t seed = 1;   // initial weights and dropout masks
  // Only the convolution algorithms the library reports as deterministic (real.deterministic):
  // two runs give the same bits. Plans naming another algorithm fall back to the library's first
  // deterministic one.
  bool deterministic = false;
};

// One op as the rank executed it, recorded where the work happened (the layer's kernels, the
// halo exchange, the gradient buckets): the fields a step program's op says what to do with.
struct ExecutedOp {
  StepOpKind kind = StepOpKind::compute;
  std::size_t layer = SIZE_MAX;
  Direction direction = Direction::forward;
  StepPart part = StepPart::whole;
  int axis = -1;
  int bucket = -1;
  bool operator==(const ExecutedOp&) const = default;
};
// The op as the program states it, in the same fields (halo waits and gradient ops carry only
// their kind and what identifies them).
ExecutedOp expected_execution(const StepOp& op);

struct StepReport {
  double loss = 0;  // the global batch's loss (averaged over the data-parallel replicas)
  double step_seconds = 0;
  StepBreakdown breakdown;  // exposed time per category; idle = step minus the others
  // Every layer's forward, then every layer's backward, then the update (result_schema.hpp).
  std::vector<LayerComputeTime> layer_compute;
  // Where this step's read took its samples from (none: no read op, synthetic samples).
  InputSource read_source = InputSource::none;
  std::vector<ExecutedOp> executed;     // in order
  std::vector<TimelineEvent> timeline;  // from the step's start; gpu = the rank in the world
  MemoryTimeline memory;                // device bytes held over the step
  double offloaded_bytes = 0;           // copied to host memory (vDNN's offloads)
};

class Trainer {
 public:
  // `plan` must be the plan of `model` for the layout's configuration and `program` the step
  // program of the layout's stage for it. Throws std::invalid_argument naming the layer for
  // layers the real backend cannot run yet, and OutOfDeviceMemory when the device cannot hold
  // the rank's tensors at the program's peak (its allocations are walked through once here).
  Trainer(const ModelGraph& model, const ShardPlan& plan, StepProgram program, Device& device,
          RankLayout& layout, const TrainerOptions& options);
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  // Planes of the input layer this rank holds (global coordinates of the sample).
  std::vector<std::int64_t> input_first() const;
  std::vector<std::int64_t> input_count() const;

  // One training step, taking its samples from `source` where the program reads them (its
  // read ops, timed as I/O; the first step's samples, before a prefetching program's first
  // read, are fetched before the step) or, for a program that reads nothing (synthetic samples,
  // standing for data already on the device), at the step's start, untimed.
  StepReport step(StepInputSource& source);

  // Every parameter of the rank's stage, in layer order, copied to the host.
  std::vector<float> parameters() const;
  // Layer i's parameters (empty where the layer has none or runs on another stage).
  std::vector<float> parameters_of(std::size_t layer) const;
  // The gradients of the layer's parameters the last step summed (what the update took), copied
  // to the host; throws std::logic_error where memory.shard splits the gradients.
  std::vector<float> gradients_of(std::size_t layer) const;
  // From the next step on, these layers' outputs are kept as the forward pass leaves them
  // (tessera model-check's ReLU sides); kept_output_of gives the last step's, its micro-batches
  // in order. Throws std::logic_error for a layer not named.
  void keep_outputs_of(const std::vector<std::size_t>& layers);
  std::vector<float> kept_output_of(std::size_t layer) const;
  // This rank's part of layer i's parameters given the whole layer's (the layer split over a
  // tensor group; the values themselves otherwise): what parameters_of holds of them.
  std::vector<float> part_of(std::size_t layer, const std::vector<float>& whole) const;
  // The most device memory this rank has held at once (tensors, parameters, optimizer state).
  double peak_bytes() const;
  const StepProgram& program() const;
  // Convolution problems run so far on the library's choice: without a plan from the program
  // (every one without profiles; with them, windows the profile did not measure), or with one
  // naming an algorithm this device does not offer (a profile of another device or library).
  ConvolutionPlanCounts convolution_plan_counts() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace tessera::kernels::real
