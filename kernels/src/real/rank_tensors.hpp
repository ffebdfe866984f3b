#pragma once
// The rank's tensors for training: per layer its output and output gradient (device memory), its
// executor with its tensors bound, and how it reads each input: straight from the producer, or
// through the redistribution where the producer is split over the spatial group and the layer
// is not. Also the targets buffer and the parameters, laid out as the program's buckets.
//
// Layer outputs and their gradients come and go as the step program's memory ops say (the memory
// plan of memory_plan.hpp: vDNN's layer-by-layer allocation, and its copies to and from pinned
// host memory); the executors are rebound whenever a tensor they use moves. The parameters, their
// optimizer state, the input samples (the input layer's output, which the loader fills between
// steps), the targets and the executors' own buffers stay for the whole run.
#include <cstdint>
#include <memory>
#include <vector>

#include "execution_context.hpp"
#include "layer_executor.hpp"
#include "parameter_buckets.hpp"
#include "spatial_redistribution.hpp"
#include "tessera/core/model_graph.hpp"
#include "tessera/core/parallel_strategy.hpp"
#include "tessera/core/step_program.hpp"

namespace tessera::kernels::real {

struct InputLink {
  std::size_t producer = 0;
  std::unique_ptr<SpatialRedistribution> gather;
  std::unique_ptr<DeviceMemory> whole;           // the kept samples' whole activation
  std::unique_ptr<DeviceMemory> whole_gradient;  // its gradient
  std::unique_ptr<DeviceMemory> scratch;  // input gradient when the producer has other consumers
};

struct LayerState {
  std::unique_ptr<LayerExecutor> executor;
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

  std::vector<LayerState>& layers() { return layers_; }
  LayerState& layer(std::size_t i) { return layers_.at(i); }
  ParameterBuckets& parameters() { return *parameters_; }
  const ParameterBuckets& parameters() const { return *parameters_; }
  DeviceMemory& targets() { return *targets_; }
  // Of the replica's mini-batch, the samples whose targets the losses take, and target values
  // (floats: values or class labels) per sample.
  KeptSamples target_samples() const { return target_samples_; }
  std::int64_t targets_per_sample() const { return targets_per_sample_; }
  const SpatialBox& input_box() const { return input_box_; }
  KeptSamples dense_samples() const { return dense_samples_; }
  // The program's memory ops: an allocate or release of a layer's output or its gradient (other
  // uses stay allocated for the run); an offload or prefetch starts the copy on the device's
  // memory stream (Device::wait_for_copies completes it). Returns the change in the device's
  // bytes in use.
  double apply_memory_op(const StepOp& op);
  // Walks the program's allocations once, running nothing, so that tensors too large for the
  // device fail here (OutOfDeviceMemory) and not inside a step, where other ranks would wait.
  void rehearse(const StepProgram& program);
  // After layer i's backward: the input gradients computed into scratch buffers added into their
  // producers' gradients.
  void accumulate_input_gradients(std::size_t i);

 private:
  std::unique_ptr<DeviceMemory> allocate(std::int64_t floats);
  // Binds layer i's executor to the tensors it uses as they are now (null where not held).
  void bind(std::size_t i);
  void bind_around(std::size_t tensor);  // the tensor's producer and consumers

  ExecutionContext& context_;
  std::vector<LayerState> layers_;
  std::unique_ptr<ParameterBuckets> parameters_;
  std::unique_ptr<DeviceMemory> targets_;
  SpatialBox input_box_;
  KeptSamples dense_samples_;  // of the replica's mini-batch, the ones the dense part runs here
  KeptSamples target_samples_;
  std::int64_t targets_per_sample_ = 0;
  std::vector<std::vector<std::size_t>> consumers_;
  double allocated_ = 0;  // for the whole run
};

}  // namespace tessera::kernels::real
