#pragma once
// Every parameter of the rank in one device block, with the gradients and the optimizer's state
// beside it, laid out bucket by bucket as the step program groups them (each bucket a contiguous
// range, its layers in the order backward finishes them): the program's gradient_allreduce op
// posts one bucket's sum over the gradient group while backward continues, gradient_wait waits
// for every posted one, update runs the optimizer.
//
// With several micro-batches (a pipeline) the first backward of a layer writes its gradients,
// each later one writes into a block of its own that accumulate() adds in.
//
// Sharded (ZeRO, memory.shard), the N ranks summing the gradients split every layer's
// parameters into N equal blocks (the layer's range padded to a multiple of N): the program's
// reduce-scatter leaves each rank the summed gradients of its blocks, the update runs on its
// blocks only with optimizer state for them alone (1/N), and the program's gathers bring the
// others' updated blocks, after the update or (sharded weights) before each layer's passes. The
// weights and gradients stay whole in their blocks here, so only the optimizer state's share of
// memory is saved on a real rank; the simulator counts the gradients' and weights' too.
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

// This rank's place among the ranks that shard the parameters (ways 1: not sharded).
struct ParameterSharding {
  int ways = 1;
  int index = 0;
};

class ParameterBuckets {
 public:
  // Throws std::logic_error when a layer with parameters is in no bucket of `buckets`.
  ParameterBuckets(Device& device, std::vector<std::int64_t> floats_per_layer,
                   const std::vector<GradientBucket>& buckets, Optimizer optimizer,
                   bool accumulates, ParameterSharding sharding = {});

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
  // Sharded: posts bucket `bucket`'s reduce-scatter over `group` (of `ways` ranks), layer by
  // layer.
  void start_reduce_scatter(int bucket, Communicator& group, ExecutionContext& context);
  void wait_all(ExecutionContext& context);
  // Sharded, the rank's blocks only.
  void optimizer_step(float learning_rate, std::int64_t step, ExecutionContext& context);
  // Sharded: every layer's blocks from their owners, or one layer's; or those of the layers
  // whose others' blocks are older than the last update (to read the weights between steps).
  void gather_all(Communicator& group);
  void gather(std::size_t layer, Communicator& group);
  void gather_stale(Communicator& group);
  bool sharded() const { return sharding_.ways > 1; }

 private:
  struct Range {
    std::int64_t offset = 0;
    std::int64_t floats = 0;
  };
  // A layer's block per rank (its floats over the ways, rounded up).
  std::int64_t block_floats(std::size_t layer) const;

  Device& device_;
  std::vector<std::int64_t> floats_;
  std::vector<std::int64_t> offsets_;
  std::vector<Range> buckets_;
  std::vector<std::vector<std::size_t>> bucket_layers_;
  std::vector<std::int64_t> state_offsets_;  // per layer, its blocks' place in the moments
  std::vector<bool> stale_;                  // per layer: others' blocks not gathered since
  Optimizer optimizer_;
  ParameterSharding sharding_;
  std::int64_t total_ = 0;
  std::unique_ptr<DeviceMemory> weights_, gradients_, accumulated_, first_moment_, second_moment_;
  std::vector<std::unique_ptr<CommRequest>> requests_;
};

}  // namespace tessera::kernels::real
