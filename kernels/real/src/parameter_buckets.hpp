#pragma once
// Every parameter of the rank in one device block, with the gradients and the optimizer's state
// beside it, laid out bucket by bucket as the step program groups them (each bucket a contiguous
// range, its layers in the order backward finishes them, each layer's starting on a cache line,
// the zeros between them summed and updated with the rest): the program's gradient_allreduce op
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
// others' updated blocks after the update. With sharded weights (ZeRO-3) a rank holds only its
// blocks of the weights, and one layer's whole weights at a time: the program gathers a layer's
// before each of its passes into one buffer that every layer reads (the largest layer's size),
// as core's memory plan counts them. With sharded gradients (ZeRO-2 and 3, one backward pass per
// step: StepProgram::stages_gradients) a rank holds only its blocks of the gradients: backward
// writes a bucket's whole gradients into one of two buffers used in turn, which the program
// frees by waiting for the bucket before last once it posts a bucket; the wait copies the rank's
// blocks out. A tied table whose gradients a later layer writes first has a whole buffer of its
// own (gradient_buckets.hpp says the same).
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
  bool weights = false;    // only the rank's blocks of the weights held between passes (ZeRO-3)
  bool gradients = false;  // only the rank's blocks of the gradients held between buckets
  // Per layer: another layer writes its gradients before its own backward does (a tied table;
  // core's tables_written_early).
  std::vector<bool> written_early;
};

// Whether `program` gathers sharded weights before the layers' passes (memory.shard: weights
// over several ranks), which ParameterSharding::weights then holds in blocks.
bool gathers_sharded_weights(const StepProgram& program);

class ParameterBuckets {
 public:
  // Throws std::logic_error when a layer with parameters is in no bucket of `buckets`.
  ParameterBuckets(Device& device, std::vector<std::int64_t> floats_per_layer,
                   const std::vector<GradientBucket>& buckets, Optimizer optimizer,
                   bool accumulates, ParameterSharding sharding = {});

  // Host values per layer, copied to the device; gradients and optimizer state start at zero.
  void initialize(const std::function<void(std::size_t layer, std::span<float>)>& values);
  // With sharded weights: the buffer of the last gathered layer, the same for every layer.
  float* weights(std::size_t layer);
  float* gradients(std::size_t layer);
  // Where later micro-batches' backward writes layer's gradients (null without accumulation).
  float* accumulated_gradients(std::size_t layer);
  // Adds layer's accumulated gradients into its gradients.
  void accumulate(std::size_t layer);
  // In layer order, the whole values. With sharded weights every rank of `group` (the ranks
  // sharding them) calls it, as it gathers them.
  std::vector<float> host_weights(Communicator* group);
  std::vector<float> host_weights(std::size_t layer, Communicator* group);
  // The layer's summed gradients, whole; throws std::logic_error where they are sharded.
  std::vector<float> host_gradients(std::size_t layer);
  double allocated_bytes() const;

  // Posts bucket `bucket`'s all-reduce over `group` (null: one rank, nothing to sum).
  void start(int bucket, Communicator* group, ExecutionContext& context);
  // Sharded: posts bucket `bucket`'s reduce-scatter over `group` (of `ways` ranks), layer by
  // layer.
  void start_reduce_scatter(int bucket, Communicator& group, ExecutionContext& context);
  // Waits for the posted buckets up to `bucket` (every one: -1), in the order posted.
  void wait(int bucket, ExecutionContext& context);
  // Sharded, the rank's blocks only.
  void optimizer_step(float learning_rate, std::int64_t step, ExecutionContext& context);
  // Sharded: every layer's blocks from their owners, or one layer's (with sharded weights, into
  // the buffer weights() gives).
  void gather_all(Communicator& group);
  void gather(std::size_t layer, Communicator& group);
  bool sharded() const { return sharding_.ways > 1; }

 private:
  struct Range {
    std::int64_t offset = 0;
    std::int64_t floats = 0;
  };
  // A layer's block per rank (its floats over the ways, rounded up).
  std::int64_t block_floats(std::size_t layer) const;
  // Where the rank's block of layer's weights (gradients) is kept between passes (steps).
  float* own_weights(std::size_t layer);
  float* own_gradients(std::size_t layer);
  bool holds_weight_blocks() const { return sharded() && sharding_.weights; }
  bool stages_gradients() const { return sharded() && sharding_.gradients; }
  // Staged gradients: where each layer's whole gradients are written (gradient_of_).
  void place_staged_gradients();
  // Staged: the rank's blocks of a summed bucket's layers to their place between steps.
  void keep_own_gradients(std::size_t bucket);

  Device& device_;
  std::vector<std::int64_t> floats_;
  std::vector<std::int64_t> offsets_;
  std::vector<Range> buckets_;
  std::vector<std::vector<std::size_t>> bucket_layers_;
  std::vector<std::int64_t> state_offsets_;  // per layer, its blocks' place in the moments
  Optimizer optimizer_;
  ParameterSharding sharding_;
  std::int64_t total_ = 0;
  std::unique_ptr<DeviceMemory> weights_, gradients_, accumulated_, first_moment_, second_moment_;
  std::unique_ptr<DeviceMemory> gathered_;  // sharded weights: one layer's, whole
  std::vector<std::vector<std::unique_ptr<CommRequest>>> requests_;  // per bucket, in flight
  std::size_t waited_buckets_ = 0;                                   // this step
  std::vector<float*> gradient_of_;  // per layer, where backward writes its whole gradients
  // Staged gradients: two buckets' whole gradients, used in turn, and the early-written tables'.
  std::unique_ptr<DeviceMemory> staging_[2], table_gradients_;
};

}  // namespace tessera::kernels::real
