#pragma once
// Every parameter of the rank in one device block, with the gradients and the optimizer's state
// beside it, laid out bucket by bucket as the step program groups them (each bucket a contiguous
// range, its layers in the order backward finishes them): the program's gradient_allreduce op
// posts one bucket's sum over the gradient group while backward continues, gradient_wait waits
// for every posted one, update runs the optimizer.
//
// With several micro-batches (a pipeline) the first backward of a layer writes its gradients,
// each later one writes into a block of its own that accumulate() adds in.
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "tessera/core/scenario/scenario.hpp"
#include "tessera/core/strategy/step_program.hpp"
#include "tessera/kernels/communicator.hpp"
#include "tessera/kernels/device.hpp"

namespace tessera::kernels::real {

struct ExecutionContext;

class ParameterBuckets {
 public:
  // Throws std::logic_error when a layer with parameters is in no bucket of `buckets`.
  ParameterBuckets(Device& device, std::vector<std::int64_t> floats_per_layer,
                   const std::vector<GradientBucket>& buckets, Optimizer optimizer,
                   bool accumulates);

  // Host values per layer, copied to the device; gradients and optimizer state start at zero.
  void initialize(const std::function<void(std::size_t layer, std::span<float>)>& values);
  float* weights(std::size_t layer);
  float* gradients(std::size_t layer);
  // Where later micro-batches' backward writes layer's gradients (null without accumulation).
  float* accumulated_gradients(std::size_t layer);
  // Adds layer's accumulated gradients into its gradients.
  void accumulate(std::size_t layer);
  std::vector<float> host_weights() const;  // in layer order
  std::vector<float> host_weights(std::size_t layer) const;
  double allocated_bytes() const;

  // Posts bucket `bucket`'s all-reduce over `group` (null: one rank, nothing to sum).
  void start(int bucket, Communicator* group, ExecutionContext& context);
  void wait_all(ExecutionContext& context);
  void optimizer_step(float learning_rate, std::int64_t step, ExecutionContext& context);

 private:
  struct Range {
    std::int64_t offset = 0;
    std::int64_t floats = 0;
  };

  Device& device_;
  std::vector<std::int64_t> floats_;
  std::vector<std::int64_t> offsets_;
  std::vector<Range> buckets_;
  Optimizer optimizer_;
  std::int64_t total_ = 0;
  std::unique_ptr<DeviceMemory> weights_, gradients_, accumulated_, first_moment_, second_moment_;
  std::vector<std::unique_ptr<CommRequest>> requests_;
};

}  // namespace tessera::kernels::real
