#pragma once
// Every parameter of the rank in one device block, with the gradients and the optimizer's state
// beside it. Layers are laid out in reverse order, so that backward finishes contiguous ranges:
// gradient buckets of about `bucket_bytes` (whole layers, as the step program's buckets) are
// all-reduced over the data-parallel group as soon as their last layer is done, while backward
// continues, and waited for before the optimizer step.
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "tessera/core/scenario.hpp"
#include "tessera/kernels/communicator.hpp"
#include "tessera/kernels/device.hpp"

namespace tessera::kernels::real {

class ParameterBuckets {
 public:
  ParameterBuckets(Device& device, std::vector<std::int64_t> floats_per_layer, Optimizer optimizer,
                   double bucket_bytes);

  // Host values per layer, copied to the device; gradients and optimizer state start at zero.
  void initialize(const std::function<void(std::size_t layer, std::span<float>)>& values);
  float* weights(std::size_t layer);
  float* gradients(std::size_t layer);
  std::vector<float> host_weights() const;  // in layer order
  double allocated_bytes() const;
  std::size_t bucket_count() const { return buckets_.size(); }

  // data_group null: a single replica, nothing to all-reduce.
  void begin_backward(Communicator* data_group);
  void layer_done(std::size_t layer);
  void finish_backward();
  void optimizer_step(float learning_rate, std::int64_t step);

 private:
  struct Bucket {
    std::int64_t offset = 0;
    std::int64_t floats = 0;
    int layers = 0;
    int pending = 0;
  };

  Device& device_;
  std::vector<std::int64_t> floats_;
  std::vector<std::int64_t> offsets_;
  std::vector<int> bucket_of_;  // -1 for layers without parameters
  std::vector<Bucket> buckets_;
  Optimizer optimizer_;
  std::int64_t total_ = 0;
  std::unique_ptr<DeviceMemory> weights_, gradients_, first_moment_, second_moment_;
  Communicator* group_ = nullptr;
  std::vector<std::unique_ptr<CommRequest>> requests_;
};

}  // namespace tessera::kernels::real
