#pragma once
// The rank's tensors for training: per layer its output and output gradient (device memory), its
// executor with its tensors bound, and how it reads each input: straight from the producer, or
// through the redistribution where the producer is split over the spatial group and the layer
// is not. Also the targets buffer and the parameters, laid out as the program's buckets.
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
  std::unique_ptr<DeviceMemory> output;
  std::unique_ptr<DeviceMemory> gradient;  // of the output
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
  double allocated_bytes() const { return allocated_; }

  // Zeroes the gradients that several consumers add into (before a step's backward).
  void clear_accumulated_gradients();
  // After layer i's backward: the input gradients computed into scratch buffers added into their
  // producers' gradients.
  void accumulate_input_gradients(std::size_t i);

 private:
  std::unique_ptr<DeviceMemory> allocate(std::int64_t floats);

  ExecutionContext& context_;
  std::vector<LayerState> layers_;
  std::unique_ptr<ParameterBuckets> parameters_;
  std::unique_ptr<DeviceMemory> targets_;
  SpatialBox input_box_;
  KeptSamples dense_samples_;  // of the replica's mini-batch, the ones the dense part runs here
  KeptSamples target_samples_;
  std::int64_t targets_per_sample_ = 0;
  double allocated_ = 0;
};

}  // namespace tessera::kernels::real
