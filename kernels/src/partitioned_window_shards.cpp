#include "partitioned_window_shards.hpp"

#include <stdexcept>
#include <string>

namespace tessera::kernels {

float* Scratch::floats(Device& device, std::int64_t count) {
  const auto bytes = static_cast<std::size_t>(count) * sizeof(float);
  if (!memory_ || memory_->bytes() < bytes) {
    memory_.reset();
    memory_ = device.allocate(bytes);
  }
  return memory_->data();
}

WindowShards::WindowShards(HaloExchange& exchange, WindowPlan plan, std::int64_t batch,
                           std::int64_t channels)
    : exchange_(exchange), plan_(std::move(plan)), batch_(batch), channels_(channels) {
  if (batch < 1 || channels < 1) {
    throw std::invalid_argument("partitioned layer needs a batch and channels of at least 1");
  }
  for (std::size_t local = 0; local < exchange_.local_shards().size(); ++local) {
    const auto floats = static_cast<std::size_t>(buffer_placement(local).floats());
    shards_.push_back(
        {device().allocate(floats * sizeof(float)), device().allocate(floats * sizeof(float))});
  }
}

const ShardWindow& WindowShards::window(std::size_t local) const {
  return plan_.shard(exchange_.local_shards()[local]);
}

TensorPlacement WindowShards::buffer_placement(std::size_t local) const {
  return {batch_ * channels_, window(local).buffer};
}

void WindowShards::check_local_count(std::size_t given, const char* what) const {
  if (given != shards_.size()) {
    throw std::invalid_argument(std::string(what) + ": expected one tensor per local shard (" +
                                std::to_string(shards_.size()) + "), got " + std::to_string(given));
  }
}

void WindowShards::load_inputs(const std::vector<const float*>& x) {
  check_local_count(x.size(), "partitioned layer input");
  for (std::size_t local = 0; local < shards_.size(); ++local) {
    auto& buffer = *shards_[local].input;
    device().fill(buffer.data(), buffer.floats(), 0.0f);
    const TensorPlacement owned{batch_ * channels_, window(local).owned};
    copy_box(device(), x[local], owned, buffer.data(), buffer_placement(local), owned.spatial);
  }
}

std::vector<float*> WindowShards::input_buffers() {
  std::vector<float*> buffers;
  for (auto& shard : shards_) buffers.push_back(shard.input->data());
  return buffers;
}

std::vector<float*> WindowShards::zeroed_gradient_buffers() {
  std::vector<float*> buffers;
  for (auto& shard : shards_) {
    device().fill(shard.gradient->data(), shard.gradient->floats(), 0.0f);
    buffers.push_back(shard.gradient->data());
  }
  return buffers;
}

void WindowShards::store_owned_gradients(const std::vector<float*>& dx) {
  check_local_count(dx.size(), "partitioned layer input gradient");
  for (std::size_t local = 0; local < shards_.size(); ++local) {
    const TensorPlacement owned{batch_ * channels_, window(local).owned};
    copy_box(device(), shards_[local].gradient->data(), buffer_placement(local), dx[local], owned,
             owned.spatial);
  }
}

const float* WindowShards::dense_input(std::size_t local, const SpatialBox& box, Scratch& scratch) {
  if (box == window(local).buffer) return shards_[local].input->data();
  const TensorPlacement dense{batch_ * channels_, box};
  float* copy = scratch.floats(device(), dense.floats());
  copy_box(device(), shards_[local].input->data(), buffer_placement(local), copy, dense, box);
  return copy;
}

float* WindowShards::gradient_target(std::size_t local, const SpatialBox& box, Scratch& scratch) {
  if (box == window(local).buffer) return shards_[local].gradient->data();
  return scratch.floats(device(), batch_ * channels_ * box.volume());
}

void WindowShards::commit_gradient(std::size_t local, const SpatialBox& box, const float* target) {
  if (target == shards_[local].gradient->data()) return;
  copy_box(device(), target, {batch_ * channels_, box}, shards_[local].gradient->data(),
           buffer_placement(local), box);
}

}  // namespace tessera::kernels
