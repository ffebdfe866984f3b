#pragma once
// What the partitioned convolution and pooling share: per local shard, the haloed input buffer
// (kept from forward for backward), the haloed input-gradient buffer and scratch memory, and the
// moves between them and the caller's dense shard tensors.
#include <cstdint>
#include <memory>
#include <vector>

#include "tessera/core/strategy/shard_window.hpp"
#include "tessera/kernels/device.hpp"
#include "tessera/kernels/halo_exchange.hpp"
#include "tessera/kernels/tensor_box.hpp"

namespace tessera::kernels {

// Device memory that grows to the largest request and is reused.
class Scratch {
 public:
  float* floats(Device& device, std::int64_t count);

 private:
  std::unique_ptr<DeviceMemory> memory_;
};

class WindowShards {
 public:
  // channels: of the input; the buffers hold batch x channels x the shard's buffer box.
  WindowShards(HaloExchange& exchange, WindowPlan plan, std::int64_t batch, std::int64_t channels);

  HaloExchange& exchange() { return exchange_; }
  Device& device() { return exchange_.device(); }
  const WindowPlan& plan() const { return plan_; }
  std::int64_t batch() const { return batch_; }
  std::size_t local_count() const { return shards_.size(); }
  const ShardWindow& window(std::size_t local) const;
  std::int64_t input_batch_channels() const { return batch_ * channels_; }

  // Zeroes each buffer and copies the shard's own planes in; the halos are the exchange's job.
  void load_inputs(const std::vector<const float*>& x);
  std::vector<float*> input_buffers();
  // Zeroed input-gradient buffers (shaped like the input buffers).
  std::vector<float*> zeroed_gradient_buffers();
  // Copies each shard's owned planes out of its gradient buffer into dx[i].
  void store_owned_gradients(const std::vector<float*>& dx);

  // `box` (global input coordinates) of local shard i's input buffer as a dense tensor: the
  // buffer itself when the box is all of it, else a copy in `scratch`.
  const float* dense_input(std::size_t local, const SpatialBox& box, Scratch& scratch);
  // Writes a dense gradient of `box` into local shard i's gradient buffer: the kernel writes
  // `target(...)` and `commit(...)` moves it in when it was not the buffer itself.
  float* gradient_target(std::size_t local, const SpatialBox& box, Scratch& scratch);
  void commit_gradient(std::size_t local, const SpatialBox& box, const float* target);

  void check_local_count(std::size_t given, const char* what) const;

 private:
  struct Shard {
    std::unique_ptr<DeviceMemory> input;
    std::unique_ptr<DeviceMemory> gradient;
  };
  TensorPlacement buffer_placement(std::size_t local) const;

  HaloExchange& exchange_;
  WindowPlan plan_;
  std::int64_t batch_;
  std::int64_t channels_;
  std::vector<Shard> shards_;
};

}  // namespace tessera::kernels
