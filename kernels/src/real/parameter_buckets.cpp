#include "parameter_buckets.hpp"

#include "tessera/kernels/layer_kernels.hpp"
#include "tessera/kernels/optimizer_update.hpp"

namespace tessera::kernels::real {

ParameterBuckets::ParameterBuckets(Device& device, std::vector<std::int64_t> floats_per_layer,
                                   Optimizer optimizer, double bucket_bytes)
    : device_(device),
      floats_(std::move(floats_per_layer)),
      offsets_(floats_.size(), 0),
      bucket_of_(floats_.size(), -1),
      optimizer_(optimizer) {
  for (std::size_t i = floats_.size(); i-- > 0;) {
    if (floats_[i] == 0) continue;
    if (buckets_.empty() ||
        static_cast<double>(buckets_.back().floats) * sizeof(float) >= bucket_bytes) {
      buckets_.push_back({.offset = total_});
    }
    offsets_[i] = total_;
    total_ += floats_[i];
    buckets_.back().floats += floats_[i];
    ++buckets_.back().layers;
    bucket_of_[i] = static_cast<int>(buckets_.size()) - 1;
  }
  const auto bytes = static_cast<std::size_t>(std::max<std::int64_t>(total_, 1)) * sizeof(float);
  weights_ = device.allocate(bytes);
  gradients_ = device.allocate(bytes);
  if (optimizer != Optimizer::sgd) first_moment_ = device.allocate(bytes);
  if (optimizer == Optimizer::adam) second_moment_ = device.allocate(bytes);
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
  for (auto* state : {gradients_.get(), first_moment_.get(), second_moment_.get()}) {
    if (state != nullptr) device_.fill(state->data(), state->floats(), 0);
  }
  device_.synchronize();
}

float* ParameterBuckets::weights(std::size_t layer) {
  return weights_->data() + offsets_[layer];
}
float* ParameterBuckets::gradients(std::size_t layer) {
  return gradients_->data() + offsets_[layer];
}

std::vector<float> ParameterBuckets::host_weights() const {
  std::vector<float> all(static_cast<std::size_t>(total_));
  device_.copy_to_host(weights_->data(), all.data(), all.size());
  std::vector<float> in_layer_order;
  in_layer_order.reserve(all.size());
  for (std::size_t i = 0; i < floats_.size(); ++i) {
    const auto begin = all.begin() + offsets_[i];
    in_layer_order.insert(in_layer_order.end(), begin, begin + floats_[i]);
  }
  return in_layer_order;
}

double ParameterBuckets::allocated_bytes() const {
  double bytes = 0;
  for (const auto* block :
       {weights_.get(), gradients_.get(), first_moment_.get(), second_moment_.get()}) {
    if (block != nullptr) bytes += static_cast<double>(block->bytes());
  }
  return bytes;
}

void ParameterBuckets::begin_backward(Communicator* data_group) {
  group_ = data_group;
  requests_.clear();
  for (auto& bucket : buckets_) bucket.pending = bucket.layers;
}

void ParameterBuckets::layer_done(std::size_t layer) {
  if (bucket_of_[layer] < 0) return;
  auto& bucket = buckets_[static_cast<std::size_t>(bucket_of_[layer])];
  if (--bucket.pending > 0 || group_ == nullptr) return;
  device_.synchronize();  // the bucket's gradients are written before the collective reads them
  requests_.push_back(group_->allreduce_sum_async(gradients_->data() + bucket.offset,
                                                  static_cast<std::size_t>(bucket.floats)));
}

void ParameterBuckets::finish_backward() {
  wait_all(requests_);
  requests_.clear();
}

void ParameterBuckets::optimizer_step(float learning_rate, std::int64_t step) {
  optimizer_update(device_.layers(), optimizer_, total_, learning_rate, step, gradients_->data(),
                   weights_->data(), first_moment_ ? first_moment_->data() : nullptr,
                   second_moment_ ? second_moment_->data() : nullptr);
}

}  // namespace tessera::kernels::real
