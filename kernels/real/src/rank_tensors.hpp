#pragma once
// The rank's tensors for training: per layer its output and output gradient (device memory), its
// executor with its tensors bound, and how it reads each input: straight from the producer, or
// through the redistribution where the producer is split over the spatial group and the layer
// is not. Also the targets buffer and the parameters, laid out as the program's buckets.
//
// Layer outputs and their gradients come and go as the step program's memory ops say (the memory
// plan of memory_plan.hpp: vDNN's layer-by-layer allocation, and its copies to and from pinned
// host memory); the executors are rebound whenever a tensor they use moves. The parameters, their
// optimizer state, the input samples (which the loader fills between steps), the targets and the
// executors' own buffers stay for the whole run.
//
// A pipeline of micro-batches (parallelism.model.micro_batches) gives every micro-batch its own
// tensors and executors (each keeps what its backward needs: masks, statistics, pooling indices),
// all sharing the parameters. The rank runs the layers of its model-parallel stage only; tensors
// other stages produce are received into buffers of their own here.
#include <cstdint>
#include <memory>
#include <vector>

#include "execution_context.hpp"
#include "layer_executor.hpp"
#include "parameter_buckets.hpp"
#include "spatial_redistribution.hpp"
#include "tessera/core/model/model_graph.hpp"
#include "tessera/core/strategy/parallel_strategy.hpp"
#include "tessera/core/strategy/step_program.hpp"

namespace tessera::kernels::real {

struct InputLink {
  std::size_t producer = 0;
  bool wants_gradient = false;  // gradient_flows_to(producer): not for the input samples
  std::unique_ptr<SpatialRedistribution> gather;
  // Split over the tensor group by channels, all-gathered whole into `whole` before the layer's
  // forward; backward keeps this rank's channels of `whole_gradient`.
  bool tensor_gathered = false;
  std::unique_ptr<DeviceMemory> whole;           // the kept samples' whole activation
  std::unique_ptr<DeviceMemory> whole_gradient;  // its gradient
  std::unique_ptr<DeviceMemory> scratch;  // input gradient when the producer has other consumers
};

struct LayerState {
  std::unique_ptr<LayerExecutor> executor;  // null for layers of other stages
  std::unique_ptr<DeviceMemory> output;     // while the program holds it
  std::unique_ptr<DeviceMemory> gradient;   // of the output, likewise
  std::unique_ptr<DeviceMemory> host_copy;  // pinned host memory, once offloaded
  std::vector<InputLink> inputs;
  LocalShapes shapes;
  std::string name;
  std::int64_t consumer_edges = 0;
  bool is_input = false;
};

class RankTensors {
 public:
  RankTensors(const ModelGraph& model, const ShardPlan& plan, const StepProgram& program,
              ExecutionContext& context, Optimizer optimizer, std::uint64_t seed);

  std::size_t layer_count() const { return micro_.front().size(); }
  std::int64_t micro_batches() const { return static_cast<std::int64_t>(micro_.size()); }
  LayerState& layer(std::size_t i, std::int64_t micro_batch = 0) {
    return micro_.at(static_cast<std::size_t>(micro_batch)).at(i);
  }
  // Whether layer i runs on this rank (it belongs to the rank's model-parallel stage).
  bool runs_here(std::size_t i) const { return runs_here_.at(i); }
  // Layer i's output and its gradient in micro-batch k: its own buffers, or those of the in-place
  // ReLU that took them over (memory_plan.hpp); null while the program does not hold them.
  float* output_of(std::size_t i, std::int64_t micro_batch);
  float* gradient_of(std::size_t i, std::int64_t micro_batch);
  std::size_t output_floats(std::size_t i, std::int64_t micro_batch);

  ParameterBuckets& parameters() { return *parameters_; }
  const ParameterBuckets& parameters() const { return *parameters_; }
  // The replica's whole mini-batch: the input shard (null unless this rank's stage holds the
  // input) and the targets, a micro-batch's being its slice.
  float* samples() { return samples_ ? samples_->data() : nullptr; }
  std::int64_t sample_floats() const { return samples_floats_; }
  DeviceMemory& targets() { return *targets_; }
  // Of a micro-batch, the samples whose targets the losses take (first counted in the
  // micro-batch), and target values (floats: values or class labels) per sample.
  KeptSamples target_samples() const { return target_samples_; }
  std::int64_t targets_per_sample() const { return targets_per_sample_; }
  std::int64_t micro_batch_samples() const { return micro_batch_samples_; }
  const SpatialBox& input_box() const { return input_box_; }

  // The program's memory ops: an allocate or release of a layer's output or its gradient (other
  // uses stay allocated for the run); an offload or prefetch starts the copy on the device's
  // memory stream (Device::wait_for_copies completes it). Returns the change in the device's
  // bytes in use.
  double apply_memory_op(const StepOp& op);
  // Walks the program's allocations once, running nothing, so that tensors too large for the
  // device fail here (OutOfDeviceMemory) and not inside a step, where other ranks would wait.
  void rehearse(const StepProgram& program);

  // A tensor-group all-reduce of the program (op.group tensor) the layer's executor leaves to
  // the trainer: the partial sums of the layer's output (forward) or of its first input's
  // gradient (backward), where the layer wrote them.
  void sum_over_tensor_group(const StepOp& op, Communicator& group);
  // The program's all-gather over the tensor group of layer op.layer's input op.input: every
  // rank's channels of it, sample by sample, into the link's whole buffer.
  void gather_over_tensor_group(const StepOp& op, Communicator& group);

  // After layer i's backward in micro-batch k: the input gradients computed into scratch buffers
  // added into their producers' gradients. (Its parameter gradients are added into the step's by
  // the program's gradient_sum op.)
  void finish_backward(std::size_t i, std::int64_t micro_batch);

 private:
  std::unique_ptr<DeviceMemory> allocate(std::int64_t floats);
  void build_layers(const ModelGraph& model, const ShardPlan& plan, const StepProgram& program,
                    std::int64_t micro_batch);
  // Binds layer i's executor in micro-batch k to the tensors it uses as they are now.
  void bind(std::size_t i, std::int64_t micro_batch);
  void bind_around(std::size_t tensor, std::int64_t micro_batch);  // every layer using it

  ExecutionContext& context_;
  std::vector<std::vector<LayerState>> micro_;  // [micro-batch][layer]
  std::vector<bool> runs_here_;
  std::unique_ptr<ParameterBuckets> parameters_;
  std::unique_ptr<DeviceMemory> samples_, targets_;
  std::int64_t samples_floats_ = 0;
  SpatialBox input_box_;
  KeptSamples target_samples_;
  std::int64_t targets_per_sample_ = 0;
  std::int64_t micro_batch_samples_ = 1;
  std::int64_t writes_gradients_ = 0;  // the micro-batch whose backward comes first
  std::vector<std::vector<std::size_t>> consumers_;
  std::vector<std::size_t> owner_;  // whose buffers hold layer i's output and gradient
  std::vector<std::vector<std::size_t>> bound_to_;  // per buffer owner: the layers using it
};

// A block of memory seen through another: a micro-batch's slice of the samples.
class DeviceView final : public DeviceMemory {
 public:
  DeviceView(float* data, std::size_t floats) : data_(data), bytes_(floats * sizeof(float)) {}
  float* data() override { return data_; }
  std::size_t bytes() const override { return bytes_; }

 private:
  float* data_;
  std::size_t bytes_;
};

}  // namespace tessera::kernels::real
