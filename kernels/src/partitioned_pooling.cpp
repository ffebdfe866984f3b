#include "tessera/kernels/partitioned_pooling.hpp"

#include <stdexcept>
#include <string>

#include "partitioned_window_shards.hpp"

namespace tessera::kernels {
namespace {

std::vector<WindowAxis> window_axes(const PoolingGeometry& whole) {
  const std::size_t rank = whole.input_spatial.size();
  if (whole.kernel.size() != rank || whole.stride.size() != rank || whole.padding.size() != rank ||
      whole.output_spatial.size() != rank) {
    throw std::invalid_argument(
        "pooling geometry needs one kernel, stride, padding and output extent per axis");
  }
  std::vector<WindowAxis> axes;
  for (std::size_t axis = 0; axis < rank; ++axis) {
    axes.push_back({whole.kernel[axis], whole.stride[axis], whole.padding[axis], 1});
  }
  return axes;
}

}  // namespace

// Per local shard: the kernel's whole output on its window (the kept outputs and the dropped
// ones), which backward needs, and scratch memory.
struct PartitionedPooling::State {
  std::vector<std::unique_ptr<DeviceMemory>> kernel_output;
  std::vector<Scratch> input, output_gradient, gradient;
};

PartitionedPooling::PartitionedPooling(HaloExchange& exchange, const PoolingGeometry& whole,
                                       std::vector<std::int64_t> grid, std::int64_t batch)
    : whole_(whole), state_(std::make_unique<State>()) {
  WindowPlan plan(LayerKind::pooling, TensorDistribution(whole_.input_spatial, std::move(grid)),
                  window_axes(whole_), BoundaryPadding::kernel_padding);
  if (plan.output().global_spatial() != whole_.output_spatial) {
    throw std::invalid_argument(
        "pooling output_spatial does not match its input, kernel, "
        "stride and padding");
  }
  shards_ = std::make_unique<WindowShards>(exchange, std::move(plan), batch, whole_.channels);
  for (std::size_t local = 0; local < shards_->local_count(); ++local) {
    const auto floats =
        shards_->input_batch_channels() * shards_->window(local).kernel_outputs.volume();
    state_->kernel_output.push_back(
        exchange.device().allocate(static_cast<std::size_t>(floats) * sizeof(float)));
  }
  state_->input.resize(shards_->local_count());
  state_->output_gradient.resize(shards_->local_count());
  state_->gradient.resize(shards_->local_count());
}

PartitionedPooling::~PartitionedPooling() = default;

const WindowPlan& PartitionedPooling::plan() const {
  return shards_->plan();
}

PoolingGeometry PartitionedPooling::window_geometry(const ShardWindow& shard) const {
  PoolingGeometry geometry = whole_;
  geometry.input_spatial = shard.window.count;
  geometry.output_spatial = shard.kernel_outputs.count;
  geometry.padding = shard.kernel_padding;
  return geometry;
}

void PartitionedPooling::load_inputs(const std::vector<const float*>& x) {
  shards_->load_inputs(x);
}

void PartitionedPooling::start_halo(HaloDirection direction, int axis) {
  shards_->exchange().start(
      plan(), axis, direction, shards_->input_batch_channels(),
      direction == HaloDirection::fill ? shards_->input_buffers() : gradient_buffers_);
}

void PartitionedPooling::finish_halo() {
  shards_->exchange().finish();
}

void PartitionedPooling::forward_outputs(const std::vector<float*>& y) {
  shards_->check_local_count(y.size(), "partitioned pooling output");
  Device& device = shards_->device();
  const std::int64_t batch_channels = shards_->input_batch_channels();
  for (std::size_t local = 0; local < y.size(); ++local) {
    const ShardWindow& shard = shards_->window(local);
    const float* window = shards_->dense_input(local, shard.window, state_->input[local]);
    float* computed = state_->kernel_output[local]->data();
    device.layers().pooling_forward(window_geometry(shard), shards_->batch(), window, computed);
    copy_box(device, computed, {batch_channels, shard.kernel_outputs}, y[local],
             {batch_channels, shard.outputs}, shard.outputs);
  }
}

void PartitionedPooling::forward(const std::vector<const float*>& x, const std::vector<float*>& y) {
  shards_->check_local_count(y.size(), "partitioned pooling output");
  load_inputs(x);
  for (const int axis : exchange_axes(plan().input().spatial_rank(), HaloDirection::fill)) {
    start_halo(HaloDirection::fill, axis);
    finish_halo();
  }
  forward_outputs(y);
}

void PartitionedPooling::backward_data(const std::vector<const float*>& dy) {
  shards_->check_local_count(dy.size(), "partitioned pooling output gradient");
  Device& device = shards_->device();
  const std::int64_t batch_channels = shards_->input_batch_channels();
  gradient_buffers_ = shards_->zeroed_gradient_buffers();
  for (std::size_t local = 0; local < dy.size(); ++local) {
    const ShardWindow& shard = shards_->window(local);
    const TensorPlacement computed{batch_channels, shard.kernel_outputs};
    const float* kernel_dy = dy[local];
    if (!(shard.kernel_outputs == shard.outputs)) {
      // The dropped outputs get a zero gradient, so they add nothing to dx.
      float* padded = state_->output_gradient[local].floats(device, computed.floats());
      device.fill(padded, static_cast<std::size_t>(computed.floats()), 0.0f);
      copy_box(device, dy[local], {batch_channels, shard.outputs}, padded, computed, shard.outputs);
      kernel_dy = padded;
    }
    const float* window = shards_->dense_input(local, shard.window, state_->input[local]);
    float* target = shards_->gradient_target(local, shard.window, state_->gradient[local]);
    device.layers().pooling_backward(window_geometry(shard), shards_->batch(), window,
                                     state_->kernel_output[local]->data(), kernel_dy, target);
    shards_->commit_gradient(local, shard.window, target);
  }
}

void PartitionedPooling::store_input_gradients(const std::vector<float*>& dx) {
  shards_->store_owned_gradients(dx);
}

void PartitionedPooling::backward(const std::vector<const float*>& dy,
                                  const std::vector<float*>& dx) {
  backward_data(dy);
  for (const int axis : exchange_axes(plan().input().spatial_rank(), HaloDirection::add_adjoint)) {
    start_halo(HaloDirection::add_adjoint, axis);
    finish_halo();
  }
  store_input_gradients(dx);
}

}  // namespace tessera::kernels
