#include "parameter_buckets.hpp"

#include <stdexcept>
#include <string>

#include "execution_context.hpp"
#include "tessera/kernels/layer_kernels.hpp"
#include "tessera/kernels/optimizer_update.hpp"

namespace tessera::kernels::real {

ParameterBuckets::ParameterBuckets(Device& device, std::vector<std::int64_t> floats_per_layer,
                                   const std::vector<GradientBucket>& buckets, Optimizer optimizer,
                                   bool accumulates, ParameterSharding sharding)
    : device_(device),
      floats_(std::move(floats_per_layer)),
      offsets_(floats_.size(), -1),
      state_offsets_(floats_.size(), 0),
      stale_(floats_.size(), false),
      optimizer_(optimizer),
      sharding_(sharding) {
  std::int64_t state_floats = 0;
  for (const auto& bucket : buckets) {
    Range range{.offset = total_};
    for (std::size_t layer : bucket.layers) {
      const std::int64_t slot = block_floats(layer) * sharding_.ways;
      offsets_.at(layer) = total_;
      state_offsets_.at(layer) = state_floats;
      total_ += slot;
      range.floats += slot;
      state_floats += block_floats(layer);
    }
    buckets_.push_back(range);
    bucket_layers_.push_back(bucket.layers);
  }
  for (std::size_t i = 0; i < floats_.size(); ++i) {
    if (floats_[i] > 0 && offsets_[i] < 0) {
      throw std::logic_error("layer " + std::to_string(i) +
                             " has parameters but no gradient bucket of the step program");
    }
  }
  const auto bytes_of = [](std::int64_t floats) {
    return static_cast<std::size_t>(std::max<std::int64_t>(floats, 1)) * sizeof(float);
  };
  weights_ = device.allocate(bytes_of(total_));
  gradients_ = device.allocate(bytes_of(total_));
  if (accumulates) accumulated_ = device.allocate(bytes_of(total_));
  if (optimizer != Optimizer::sgd) first_moment_ = device.allocate(bytes_of(state_floats));
  if (optimizer == Optimizer::adam) second_moment_ = device.allocate(bytes_of(state_floats));
}

std::int64_t ParameterBuckets::block_floats(std::size_t layer) const {
  return (floats_.at(layer) + sharding_.ways - 1) / sharding_.ways;
}

void ParameterBuckets::initialize(
    const std::function<void(std::size_t, std::span<float>)>& values) {
  std::vector<float> host(static_cast<std::size_t>(total_), 0.0F);
  for (std::size_t i = 0; i < floats_.size(); ++i) {
    if (floats_[i] == 0) continue;
    values(i, std::span<float>(host).subspan(static_cast<std::size_t>(offsets_[i]),
                                             static_cast<std::size_t>(floats_[i])));
  }
  device_.copy_to_device(host.data(), weights_->data(), host.size());
  // Zero gradients also in the padding of sharded layers, which the reduce-scatter sums.
  for (auto* state :
       {gradients_.get(), accumulated_.get(), first_moment_.get(), second_moment_.get()}) {
    if (state != nullptr) device_.fill(state->data(), state->floats(), 0);
  }
  device_.synchronize();
}

float* ParameterBuckets::weights(std::size_t layer) {
  return floats_[layer] > 0 ? weights_->data() + offsets_[layer] : nullptr;
}
float* ParameterBuckets::gradients(std::size_t layer) {
  return floats_[layer] > 0 ? gradients_->data() + offsets_[layer] : nullptr;
}

float* ParameterBuckets::accumulated_gradients(std::size_t layer) {
  return floats_[layer] > 0 && accumulated_ ? accumulated_->data() + offsets_[layer] : nullptr;
}

void ParameterBuckets::accumulate(std::size_t layer) {
  if (floats_[layer] == 0 || !accumulated_) return;
  device_.layers().axpy(floats_[layer], 1.0F, accumulated_gradients(layer), gradients(layer));
}

std::vector<float> ParameterBuckets::host_weights() const {
  std::vector<float> all(static_cast<std::size_t>(total_));
  device_.copy_to_host(weights_->data(), all.data(), all.size());
  std::vector<float> in_layer_order;
  in_layer_order.reserve(all.size());
  for (std::size_t i = 0; i < floats_.size(); ++i) {
    if (floats_[i] == 0) continue;
    const auto begin = all.begin() + offsets_[i];
    in_layer_order.insert(in_layer_order.end(), begin, begin + floats_[i]);
  }
  return in_layer_order;
}

std::vector<float> ParameterBuckets::host_weights(std::size_t layer) const {
  std::vector<float> values(static_cast<std::size_t>(floats_.at(layer)));
  if (!values.empty()) {
    device_.copy_to_host(weights_->data() + offsets_[layer], values.data(), values.size());
  }
  return values;
}

double ParameterBuckets::allocated_bytes() const {
  double bytes = 0;
  for (const auto* block : {weights_.get(), gradients_.get(), accumulated_.get(),
                            first_moment_.get(), second_moment_.get()}) {
    if (block != nullptr) bytes += static_cast<double>(block->bytes());
  }
  return bytes;
}

void ParameterBuckets::start(int bucket, Communicator* group, ExecutionContext& context) {
  context.record({.kind = StepOpKind::gradient_allreduce, .bucket = bucket});
  if (group == nullptr || group->size() == 1) return;
  const auto& range = buckets_.at(static_cast<std::size_t>(bucket));
  device_.synchronize();  // the bucket's gradients are written before the collective reads them
  requests_.push_back(group->allreduce_sum_async(gradients_->data() + range.offset,
                                                 static_cast<std::size_t>(range.floats)));
}

void ParameterBuckets::start_reduce_scatter(int bucket, Communicator& group,
                                            ExecutionContext& context) {
  context.record({.kind = StepOpKind::gradient_reduce_scatter, .bucket = bucket});
  device_.synchronize();
  for (std::size_t layer : bucket_layers_.at(static_cast<std::size_t>(bucket))) {
    if (floats_[layer] == 0) continue;
    requests_.push_back(group.reduce_scatter_sum_async(
        gradients_->data() + offsets_[layer], static_cast<std::size_t>(block_floats(layer))));
  }
}

void ParameterBuckets::gather(std::size_t layer, Communicator& group) {
  if (floats_.at(layer) == 0) return;
  device_.synchronize();
  group.allgather(weights_->data() + offsets_[layer],
                  static_cast<std::size_t>(block_floats(layer)));
  stale_[layer] = false;
}

void ParameterBuckets::gather_stale(Communicator& group) {
  for (std::size_t layer = 0; layer < floats_.size(); ++layer) {
    if (stale_[layer]) gather(layer, group);
  }
}

void ParameterBuckets::gather_all(Communicator& group) {
  for (std::size_t layer = 0; layer < floats_.size(); ++layer) gather(layer, group);
}

void ParameterBuckets::wait_all(ExecutionContext& context) {
  kernels::wait_all(requests_);
  requests_.clear();
  context.record({.kind = StepOpKind::gradient_wait});
}

void ParameterBuckets::optimizer_step(float learning_rate, std::int64_t step,
                                      ExecutionContext& context) {
  if (!sharded()) {
    optimizer_update(device_.layers(), optimizer_, total_, learning_rate, step, gradients_->data(),
                     weights_->data(), first_moment_ ? first_moment_->data() : nullptr,
                     second_moment_ ? second_moment_->data() : nullptr);
  } else {
    for (std::size_t layer = 0; layer < floats_.size(); ++layer) {
      if (floats_[layer] == 0) continue;
      const std::int64_t own = offsets_[layer] + sharding_.index * block_floats(layer);
      const auto moment = [&](DeviceMemory* state) {
        return state != nullptr ? state->data() + state_offsets_[layer] : nullptr;
      };
      optimizer_update(device_.layers(), optimizer_, block_floats(layer), learning_rate, step,
                       gradients_->data() + own, weights_->data() + own,
                       moment(first_moment_.get()), moment(second_moment_.get()));
      stale_[layer] = true;
    }
  }
  context.record({.kind = StepOpKind::update});
}

}  // namespace tessera::kernels::real
