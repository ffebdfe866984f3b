#include "tessera/kernels/partitioned_convolution.hpp"

#include <stdexcept>

#include "partitioned_window_shards.hpp"
#include "tessera/core/strategy/parallel_strategy.hpp"
#include "tessera/kernels/convolution_runner.hpp"

namespace tessera::kernels {
namespace {

std::vector<WindowAxis> window_axes(const ConvolutionGeometry& whole) {
  if (whole.transposed) {
    throw std::invalid_argument("transposed convolutions are not spatially partitioned");
  }
  std::vector<WindowAxis> axes;
  for (int axis = 0; axis < whole.spatial_rank(); ++axis) {
    axes.push_back({whole.kernel.at(axis), whole.stride.at(axis), whole.padding.at(axis),
                    whole.dilation.at(axis)});
  }
  return axes;
}

}  // namespace

struct PartitionedConvolution::Scratches {
  std::vector<Scratch> input, output, gradient;
};

PartitionedConvolution::PartitionedConvolution(HaloExchange& exchange,
                                               const ConvolutionGeometry& whole,
                                               std::vector<std::int64_t> grid, std::int64_t batch,
                                               HaloOverlap overlap,
                                               FilterGradients filter_gradients,
                                               std::unique_ptr<ConvolutionRunner> runner)
    : whole_(with_output(whole)),
      overlap_(overlap),
      filter_gradients_(filter_gradients),
      shards_(std::make_unique<WindowShards>(
          exchange,
          WindowPlan(LayerKind::convolution,
                     TensorDistribution(whole_.input_spatial, std::move(grid)), window_axes(whole_),
                     BoundaryPadding::zeros_in_buffer),
          batch, whole_.in_channels)),
      runner_(runner ? std::move(runner) : std::make_unique<ConvolutionRunner>(exchange.device())),
      scratch_(std::make_unique<Scratches>()) {
  const std::size_t locals = shards_->local_count();
  scratch_->input.resize(locals);
  scratch_->output.resize(locals);
  scratch_->gradient.resize(locals);
}

PartitionedConvolution::~PartitionedConvolution() = default;

const WindowPlan& PartitionedConvolution::plan() const {
  return shards_->plan();
}

ConvolutionGeometry PartitionedConvolution::window_geometry(const SpatialBox& window,
                                                            const SpatialBox& outputs) const {
  ConvolutionGeometry geometry = whole_;
  geometry.input_spatial = window.count;
  geometry.padding.assign(window.count.size(), 0);
  geometry = with_output(geometry);
  if (geometry.output_spatial != outputs.count) {
    throw std::logic_error("window " + to_string(window) + " does not produce outputs " +
                           to_string(outputs));
  }
  return geometry;
}

bool PartitionedConvolution::overlaps(const ShardWindow& shard) const {
  if (overlap_ != HaloOverlap::automatic) return overlap_ == HaloOverlap::always;
  for (int axis = 0; axis < shard.owned.spatial_rank(); ++axis) {
    const bool exchanged = shard.halo[axis].lower > 0 || shard.halo[axis].upper > 0;
    if (exchanged &&
        !interior_overlaps_exchange(shard.owned.count[axis], plan().axes()[axis].reach())) {
      return false;
    }
  }
  return true;
}

// x: the caller's dense input of the shard, used as is when the window is exactly its own planes.
void PartitionedConvolution::forward_box(std::size_t local, const SpatialBox& outputs,
                                         const float* x_owned, const float* w, float* y) {
  const ShardWindow& shard = shards_->window(local);
  const SpatialBox window = plan().window_of(outputs);
  const float* x =
      window == shard.owned ? x_owned : shards_->dense_input(local, window, scratch_->input[local]);
  const std::int64_t batch = shards_->batch();
  const TensorPlacement result{batch * whole_.out_channels, outputs};
  const bool whole_shard = outputs == shard.outputs;
  float* target =
      whole_shard ? y : scratch_->output[local].floats(shards_->device(), result.floats());
  runner_->forward(window_geometry(window, outputs), batch, x, w, target, 0.0f);
  if (!whole_shard) {
    copy_box(shards_->device(), target, result, y, {batch * whole_.out_channels, shard.outputs},
             outputs);
  }
}

void PartitionedConvolution::load_inputs(const std::vector<const float*>& x) {
  shards_->load_inputs(x);
}

void PartitionedConvolution::start_halo(HaloDirection direction, int axis) {
  shards_->exchange().start(
      plan(), axis, direction, shards_->input_batch_channels(),
      direction == HaloDirection::fill ? shards_->input_buffers() : gradient_buffers_);
}

void PartitionedConvolution::finish_halo() {
  shards_->exchange().finish();
}

void PartitionedConvolution::forward_outputs(OutputPart part, const std::vector<const float*>& x,
                                             const float* w, const std::vector<float*>& y) {
  shards_->check_local_count(y.size(), "partitioned convolution output");
  for (std::size_t local = 0; local < y.size(); ++local) {
    const ShardWindow& shard = shards_->window(local);
    if (part == OutputPart::whole) {
      forward_box(local, shard.outputs, x[local], w, y[local]);
      continue;
    }
    const OutputSplit split = overlaps(shard) ? split_interior(plan(), shard) : all_boundary(shard);
    if (part == OutputPart::interior) {
      if (!split.interior.empty()) forward_box(local, split.interior, x[local], w, y[local]);
      continue;
    }
    for (const SpatialBox& box : split.boundary) forward_box(local, box, x[local], w, y[local]);
  }
}

void PartitionedConvolution::forward(const std::vector<const float*>& x, const float* w,
                                     const std::vector<float*>& y) {
  shards_->check_local_count(y.size(), "partitioned convolution output");
  load_inputs(x);
  const auto axes = exchange_axes(plan().input().spatial_rank(), HaloDirection::fill);
  start_halo(HaloDirection::fill, axes.front());
  forward_outputs(OutputPart::interior, x, w, y);
  finish_halo();
  for (std::size_t next = 1; next < axes.size(); ++next) {
    start_halo(HaloDirection::fill, axes[next]);
    finish_halo();
  }
  forward_outputs(OutputPart::boundary, x, w, y);
}

void PartitionedConvolution::backward_data(const std::vector<const float*>& dy, const float* w) {
  shards_->check_local_count(dy.size(), "partitioned convolution output gradient");
  gradient_buffers_ = shards_->zeroed_gradient_buffers();
  for (std::size_t local = 0; local < dy.size(); ++local) {
    const ShardWindow& shard = shards_->window(local);
    float* target = shards_->gradient_target(local, shard.window, scratch_->gradient[local]);
    runner_->backward_data(window_geometry(shard.window, shard.outputs), shards_->batch(),
                           dy[local], w, target, 0.0f);
    shards_->commit_gradient(local, shard.window, target);
  }
}

void PartitionedConvolution::backward_filter(const std::vector<const float*>& dy,
                                             const std::vector<float*>& dw) {
  shards_->check_local_count(dw.size(), "partitioned convolution filter gradient");
  for (std::size_t local = 0; local < dy.size(); ++local) {
    const ShardWindow& shard = shards_->window(local);
    const float* x = shards_->dense_input(local, shard.window, scratch_->input[local]);
    runner_->backward_filter(window_geometry(shard.window, shard.outputs), shards_->batch(), x,
                             dy[local], dw[local], 0.0f);
  }
}

void PartitionedConvolution::store_input_gradients(const std::vector<float*>& dx) {
  shards_->store_owned_gradients(dx);
}

void PartitionedConvolution::sum_filter_gradients(const std::vector<float*>& dw) {
  shards_->exchange().sum_over_shards(dw, static_cast<std::size_t>(whole_.filter_floats()));
}

void PartitionedConvolution::backward(const std::vector<const float*>& dy, const float* w,
                                      const std::vector<float*>& dx,
                                      const std::vector<float*>& dw) {
  shards_->check_local_count(dy.size(), "partitioned convolution output gradient");
  const auto axes = exchange_axes(plan().input().spatial_rank(), HaloDirection::add_adjoint);
  if (!dx.empty()) {
    backward_data(dy, w);
    start_halo(HaloDirection::add_adjoint, axes.front());
  }
  backward_filter(dy, dw);
  if (!dx.empty()) {
    finish_halo();
    for (std::size_t next = 1; next < axes.size(); ++next) {
      start_halo(HaloDirection::add_adjoint, axes[next]);
      finish_halo();
    }
    store_input_gradients(dx);
  }
  if (filter_gradients_ == FilterGradients::summed_over_shards) sum_filter_gradients(dw);
}

}  // namespace tessera::kernels
