#include "parameter_buckets.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "execution_context.hpp"
#include "tessera/kernels/layer_kernels.hpp"
#include "tessera/kernels/optimizer_update.hpp"

namespace tessera::kernels::real {
namespace {

std::size_t bytes_of(std::int64_t floats) {
  return static_cast<std::size_t>(std::max<std::int64_t>(floats, 1)) * sizeof(float);
}

// Each layer's weights and gradients start on a cache line (64 bytes): packed end to end, a
// layer after ResNet-18's classifier (5,130 floats) started 40 bytes into a line, and oneDNN's
// backward-filter GEMM writing its gradients ran 28% slower than on an aligned buffer
// (docs/measurements/2026-12-04-cpu-step-like-caches.md).
constexpr std::int64_t kLineFloats = 64 / sizeof(float);

std::int64_t line_aligned(std::int64_t floats) {
  return (floats + kLineFloats - 1) / kLineFloats * kLineFloats;
}

}  // namespace

ParameterBuckets::ParameterBuckets(Device& device, std::vector<std::int64_t> floats_per_layer,
                                   const std::vector<GradientBucket>& buckets, Optimizer optimizer,
                                   bool accumulates, ParameterSharding sharding)
    : device_(device),
      floats_(std::move(floats_per_layer)),
      offsets_(floats_.size(), -1),
      state_offsets_(floats_.size(), 0),
      optimizer_(optimizer),
      sharding_(std::move(sharding)) {
  std::int64_t state_floats = 0;
  for (const auto& bucket : buckets) {
    Range range{.offset = total_};
    for (std::size_t layer : bucket.layers) {
      const std::int64_t slot = block_floats(layer) * sharding_.ways;
      if (slot > 0) total_ = line_aligned(total_);
      offsets_.at(layer) = total_;
      state_offsets_.at(layer) = state_floats;
      total_ += slot;
      state_floats += block_floats(layer);
    }
    range.floats = total_ - range.offset;
    buckets_.push_back(range);
    bucket_layers_.push_back(bucket.layers);
  }
  // Unsharded, the optimizer's state lies as the weights do: the update runs over the whole
  // block, the zeros between layers included.
  if (!sharded()) {
    state_offsets_ = offsets_;
    state_floats = total_;
  }
  for (std::size_t i = 0; i < floats_.size(); ++i) {
    if (floats_[i] > 0 && offsets_[i] < 0) {
      throw std::logic_error("layer " + std::to_string(i) +
                             " has parameters but no gradient bucket of the step program");
    }
  }
  std::int64_t largest_layer = 0;
  for (std::size_t i = 0; i < floats_.size(); ++i) {
    largest_layer = std::max(largest_layer, block_floats(i) * sharding_.ways);
  }
  if (holds_weight_blocks()) {
    weights_ = device.allocate(bytes_of(state_floats));
    gathered_ = device.allocate(bytes_of(largest_layer));
  } else {
    weights_ = device.allocate(bytes_of(total_));
  }
  gradient_of_.assign(floats_.size(), nullptr);
  if (stages_gradients()) {
    gradients_ = device.allocate(bytes_of(state_floats));
    place_staged_gradients();
  } else {
    gradients_ = device.allocate(bytes_of(total_));
    for (std::size_t i = 0; i < floats_.size(); ++i) {
      if (offsets_[i] >= 0) gradient_of_[i] = gradients_->data() + offsets_[i];
    }
  }
  requests_.resize(buckets_.size());
  if (accumulates) accumulated_ = device.allocate(bytes_of(total_));
  if (optimizer != Optimizer::sgd) first_moment_ = device.allocate(bytes_of(state_floats));
  if (optimizer == Optimizer::adam) second_moment_ = device.allocate(bytes_of(state_floats));
}

void ParameterBuckets::place_staged_gradients() {
  const auto early = [&](std::size_t layer) {
    return layer < sharding_.written_early.size() && sharding_.written_early[layer];
  };
  // Per layer, its place in its bucket's buffer or among the tables'.
  std::vector<std::int64_t> place(floats_.size(), 0);
  std::int64_t largest_bucket = 0, tables = 0;
  for (const auto& layers : bucket_layers_) {
    std::int64_t filled = 0;
    for (std::size_t layer : layers) {
      auto& end = early(layer) ? tables : filled;
      place[layer] = end = line_aligned(end);
      end += block_floats(layer) * sharding_.ways;
    }
    largest_bucket = std::max(largest_bucket, filled);
  }
  for (std::size_t slot = 0; slot < std::min<std::size_t>(buckets_.size(), 2); ++slot) {
    staging_[slot] = device_.allocate(bytes_of(largest_bucket));
  }
  if (tables > 0) table_gradients_ = device_.allocate(bytes_of(tables));
  for (std::size_t b = 0; b < buckets_.size(); ++b) {
    for (std::size_t layer : bucket_layers_[b]) {
      gradient_of_[layer] =
          (early(layer) ? table_gradients_->data() : staging_[b % 2]->data()) + place[layer];
    }
  }
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
  if (holds_weight_blocks()) {
    std::vector<float> blocks(weights_->floats(), 0.0F);
    for (std::size_t i = 0; i < floats_.size(); ++i) {
      if (floats_[i] == 0) continue;  // in no bucket
      const auto own = host.begin() + offsets_[i] + sharding_.index * block_floats(i);
      std::copy(own, own + block_floats(i), blocks.begin() + state_offsets_[i]);
    }
    device_.copy_to_device(blocks.data(), weights_->data(), blocks.size());
  } else {
    device_.copy_to_device(host.data(), weights_->data(), host.size());
  }
  // Zero gradients also in the padding of sharded layers, which the reduce-scatter sums.
  for (auto* state :
       {gradients_.get(), accumulated_.get(), first_moment_.get(), second_moment_.get(),
        staging_[0].get(), staging_[1].get(), table_gradients_.get()}) {
    if (state != nullptr) device_.fill(state->data(), state->floats(), 0);
  }
  device_.synchronize();
}

float* ParameterBuckets::weights(std::size_t layer) {
  if (floats_[layer] == 0) return nullptr;
  return holds_weight_blocks() ? gathered_->data() : weights_->data() + offsets_[layer];
}

float* ParameterBuckets::own_weights(std::size_t layer) {
  return holds_weight_blocks()
             ? weights_->data() + state_offsets_[layer]
             : weights_->data() + offsets_[layer] + sharding_.index * block_floats(layer);
}
float* ParameterBuckets::gradients(std::size_t layer) {
  return floats_[layer] > 0 ? gradient_of_[layer] : nullptr;
}

float* ParameterBuckets::own_gradients(std::size_t layer) {
  return stages_gradients()
             ? gradients_->data() + state_offsets_[layer]
             : gradients_->data() + offsets_[layer] + sharding_.index * block_floats(layer);
}

float* ParameterBuckets::accumulated_gradients(std::size_t layer) {
  return floats_[layer] > 0 && accumulated_ ? accumulated_->data() + offsets_[layer] : nullptr;
}

void ParameterBuckets::accumulate(std::size_t layer) {
  if (floats_[layer] == 0 || !accumulated_) return;
  device_.layers().axpy(floats_[layer], 1.0F, accumulated_gradients(layer), gradients(layer));
}

std::vector<float> ParameterBuckets::host_weights(Communicator* group) {
  std::vector<float> in_layer_order;
  for (std::size_t i = 0; i < floats_.size(); ++i) {
    const auto values = host_weights(i, group);
    in_layer_order.insert(in_layer_order.end(), values.begin(), values.end());
  }
  return in_layer_order;
}

std::vector<float> ParameterBuckets::host_weights(std::size_t layer, Communicator* group) {
  std::vector<float> values(static_cast<std::size_t>(floats_.at(layer)));
  if (values.empty()) return values;
  if (holds_weight_blocks()) gather(layer, *group);
  device_.synchronize();
  device_.copy_to_host(weights(layer), values.data(), values.size());
  return values;
}

bool gathers_sharded_weights(const StepProgram& program) {
  return std::any_of(program.ops.begin(), program.ops.end(), [](const StepOp& op) {
    return op.kind == StepOpKind::group_allgather && op.group == CollectiveGroup::stage &&
           op.layer != SIZE_MAX;
  });
}

std::vector<float> ParameterBuckets::host_gradients(std::size_t layer) {
  if (sharding_.gradients) {
    throw std::logic_error("the gradients are sharded: a rank holds only its blocks");
  }
  std::vector<float> values(static_cast<std::size_t>(floats_.at(layer)));
  if (values.empty()) return values;
  device_.synchronize();
  device_.copy_to_host(gradients(layer), values.data(), values.size());
  return values;
}

double ParameterBuckets::allocated_bytes() const {
  double bytes = 0;
  for (const auto* block : {weights_.get(), gradients_.get(), accumulated_.get(),
                            first_moment_.get(), second_moment_.get(), gathered_.get(),
                            staging_[0].get(), staging_[1].get(), table_gradients_.get()}) {
    if (block != nullptr) bytes += static_cast<double>(block->bytes());
  }
  return bytes;
}

void ParameterBuckets::start(int bucket, Communicator* group, ExecutionContext& context) {
  context.record({.kind = StepOpKind::gradient_allreduce, .bucket = bucket});
  if (group == nullptr || group->size() == 1) return;
  const auto& range = buckets_.at(static_cast<std::size_t>(bucket));
  device_.synchronize();  // the bucket's gradients are written before the collective reads them
  requests_.at(static_cast<std::size_t>(bucket))
      .push_back(group->allreduce_sum_async(gradients_->data() + range.offset,
                                            static_cast<std::size_t>(range.floats)));
}

void ParameterBuckets::start_reduce_scatter(int bucket, Communicator& group,
                                            ExecutionContext& context) {
  context.record({.kind = StepOpKind::gradient_reduce_scatter, .bucket = bucket});
  const auto& layers = bucket_layers_.at(static_cast<std::size_t>(bucket));
  if (stages_gradients()) {
    // The buffer held another bucket's gradients: the padding the reduce-scatter sums is zeroed.
    for (std::size_t layer : layers) {
      const std::int64_t padding = block_floats(layer) * sharding_.ways - floats_[layer];
      if (padding > 0)
        device_.fill(gradient_of_[layer] + floats_[layer], static_cast<std::size_t>(padding), 0);
    }
  }
  device_.synchronize();
  for (std::size_t layer : layers) {
    if (floats_[layer] == 0) continue;
    requests_.at(static_cast<std::size_t>(bucket))
        .push_back(group.reduce_scatter_sum_async(gradient_of_[layer],
                                                  static_cast<std::size_t>(block_floats(layer))));
  }
}

void ParameterBuckets::gather(std::size_t layer, Communicator& group) {
  if (floats_.at(layer) == 0) return;
  const auto block = static_cast<std::size_t>(block_floats(layer));
  float* whole = weights(layer);
  device_.synchronize();
  if (holds_weight_blocks()) {
    device_.copy_on_device(own_weights(layer), whole + sharding_.index * block, block);
    device_.synchronize();
  }
  group.allgather(whole, block);
}

void ParameterBuckets::gather_all(Communicator& group) {
  for (std::size_t layer = 0; layer < floats_.size(); ++layer) gather(layer, group);
}

void ParameterBuckets::wait(int bucket, ExecutionContext& context) {
  std::size_t until = waited_buckets_;
  if (bucket >= 0) {
    until = static_cast<std::size_t>(bucket) + 1;
  } else {
    // Every posted bucket: those with requests, and the ones before them.
    for (std::size_t b = waited_buckets_; b < requests_.size(); ++b) {
      if (!requests_[b].empty()) until = b + 1;
    }
  }
  for (; waited_buckets_ < until; ++waited_buckets_) {
    kernels::wait_all(requests_[waited_buckets_]);
    requests_[waited_buckets_].clear();
    if (stages_gradients()) keep_own_gradients(waited_buckets_);
  }
  if (waited_buckets_ == buckets_.size()) waited_buckets_ = 0;  // the step's last
  context.record({.kind = StepOpKind::gradient_wait, .bucket = bucket});
}

void ParameterBuckets::keep_own_gradients(std::size_t bucket) {
  for (std::size_t layer : bucket_layers_.at(bucket)) {
    if (floats_[layer] == 0) continue;
    device_.copy_on_device(gradient_of_[layer] + sharding_.index * block_floats(layer),
                           own_gradients(layer), static_cast<std::size_t>(block_floats(layer)));
  }
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
      const auto moment = [&](DeviceMemory* state) {
        return state != nullptr ? state->data() + state_offsets_[layer] : nullptr;
      };
      optimizer_update(device_.layers(), optimizer_, block_floats(layer), learning_rate, step,
                       own_gradients(layer), own_weights(layer), moment(first_moment_.get()),
                       moment(second_moment_.get()));
    }
  }
  context.record({.kind = StepOpKind::update});
}

}  // namespace tessera::kernels::real
