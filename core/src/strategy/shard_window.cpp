#include "tessera/core/strategy/shard_window.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "tessera/core/common/integer_division.hpp"
#include "tessera/core/model/shape_inference.hpp"

namespace tessera {
namespace {

const char* axis_name(int axis, int rank) {
  static const char* const names[] = {"D", "H", "W"};
  return names[3 - rank + axis];
}

std::vector<std::int64_t> output_extents(const TensorDistribution& input,
                                         const std::vector<WindowAxis>& axes) {
  if (static_cast<int>(axes.size()) != input.spatial_rank()) {
    throw std::invalid_argument("window has " + std::to_string(axes.size()) + " axes, the tensor " +
                                std::to_string(input.spatial_rank()));
  }
  std::vector<std::int64_t> extents;
  for (std::size_t axis = 0; axis < axes.size(); ++axis) {
    const WindowAxis& w = axes[axis];
    if (w.kernel < 1 || w.stride < 1 || w.dilation < 1 || w.padding < 0) {
      throw std::invalid_argument("window axis " + std::to_string(axis) +
                                  " needs kernel, stride, dilation >= 1 and padding >= 0");
    }
    extents.push_back(window_output_extent(input.global_spatial()[axis], w.kernel, w.stride,
                                           w.padding, w.dilation, false));
    if (extents.back() < input.grid()[axis]) {
      throw std::invalid_argument(
          "the window's output has " + std::to_string(extents.back()) + " planes along " +
          axis_name(static_cast<int>(axis), input.spatial_rank()) + ", fewer than the " +
          std::to_string(input.grid()[axis]) + " shards it is split into; split fewer ways");
    }
  }
  return extents;
}

}  // namespace

WindowPlan::WindowPlan(LayerKind kind, const TensorDistribution& input,
                       std::vector<WindowAxis> axes, BoundaryPadding padding)
    : input_(input),
      output_(output_extents(input, axes), input.grid()),
      axes_(std::move(axes)),
      padding_(padding) {
  if (kind != LayerKind::convolution && kind != LayerKind::pooling) {
    throw std::invalid_argument("only convolutions and pooling are spatially partitioned, not " +
                                to_string(kind));
  }
  const int rank = input_.spatial_rank();
  for (std::int64_t index = 0; index < input_.shard_count(); ++index) {
    ShardWindow shard;
    shard.owned = input_.owned(index);
    shard.outputs = output_.owned(index);
    shard.window = shard.buffer = shard.kernel_outputs = shard.ready_before_exchange = shard.owned;
    shard.kernel_padding.assign(static_cast<std::size_t>(rank), 0);
    const auto at = input_.coordinates(index);
    for (int axis = 0; axis < rank; ++axis) {
      const WindowAxis& w = axes_[axis];
      const std::int64_t extent = input_.global_spatial()[axis];
      const std::int64_t parts = input_.grid()[axis];
      const Halo halo = shard_window_halo(kind, extent, output_.global_spatial()[axis], parts,
                                          at[axis], w.kernel, w.stride, w.padding, w.dilation);
      // Halos come from the adjacent shard only; a wider one would need planes two shards away.
      for (const Side side : {Side::lower, Side::upper}) {
        const std::int64_t needed = side == Side::lower ? halo.lower : halo.upper;
        const std::int64_t beside = at[axis] + (side == Side::lower ? -1 : 1);
        const std::int64_t available =
            beside >= 0 && beside < parts ? shard_planes(extent, parts, beside).count : 0;
        if (needed > available) {
          throw std::invalid_argument(
              "a halo of " + std::to_string(needed) + " planes along " + axis_name(axis, rank) +
              " is wider than the neighbouring shard's " + std::to_string(available) +
              " planes (extent " + std::to_string(extent) + " split " + std::to_string(parts) +
              " ways); split fewer ways");
        }
      }
      shard.halo.push_back(halo);
      const std::int64_t own_first = shard.owned.first[axis], own_last = shard.owned.last(axis);
      const std::int64_t out_first = shard.outputs.first[axis], out_last = shard.outputs.last(axis);
      const std::int64_t hull_first = out_first * w.stride - w.padding;
      const std::int64_t hull_last = out_last * w.stride - w.padding + w.reach() - 1;
      std::int64_t window_first = hull_first, window_last = hull_last;
      if (padding_ == BoundaryPadding::kernel_padding) {
        const bool meets_boundary = hull_first < 0 || hull_last > extent - 1;
        const std::int64_t kernel_padding = meets_boundary ? w.padding : 0;
        const std::int64_t real_first = std::max<std::int64_t>(hull_first, 0);
        window_first = real_first - positive_mod(real_first + w.padding - kernel_padding, w.stride);
        window_last = std::min(hull_last, extent - 1);
        shard.kernel_padding[axis] = kernel_padding;
      }
      shard.window.first[axis] = window_first;
      shard.window.count[axis] = window_last - window_first + 1;
      shard.buffer.first[axis] = std::min(window_first, own_first);
      shard.buffer.count[axis] = std::max(window_last, own_last) - shard.buffer.first[axis] + 1;
      const std::int64_t kernel_count =
          window_output_extent(shard.window.count[axis], w.kernel, w.stride,
                               shard.kernel_padding[axis], w.dilation, false);
      shard.kernel_outputs.first[axis] =
          (window_first - shard.kernel_padding[axis] + w.padding) / w.stride;
      shard.kernel_outputs.count[axis] = kernel_count;
      shard.ready_before_exchange.first[axis] =
          halo.lower > 0 ? own_first : shard.buffer.first[axis];
      shard.ready_before_exchange.count[axis] =
          (halo.upper > 0 ? own_last : shard.buffer.last(axis)) -
          shard.ready_before_exchange.first[axis] + 1;
    }
    if (!contains(shard.kernel_outputs, shard.outputs)) {
      throw std::logic_error("window of shard " + std::to_string(index) +
                             " misses some of its outputs");
    }
    for (int axis = 0; axis < rank; ++axis) {
      for (const Side side : {Side::lower, Side::upper}) {
        SpatialBox region = shard.owned;
        for (int before = 0; before < axis; ++before) {
          region.first[before] = shard.buffer.first[before];
          region.count[before] = shard.buffer.count[before];
        }
        const std::int64_t planes =
            side == Side::lower ? shard.halo[axis].lower : shard.halo[axis].upper;
        region.first[axis] =
            side == Side::lower ? shard.owned.first[axis] - planes : shard.owned.last(axis) + 1;
        region.count[axis] = planes;
        (side == Side::lower ? shard.lower_halo_region : shard.upper_halo_region).push_back(region);
      }
    }
    shards_.push_back(std::move(shard));
  }
}

SpatialBox WindowPlan::window_of(const SpatialBox& outputs) const {
  SpatialBox window = outputs;
  for (int axis = 0; axis < outputs.spatial_rank(); ++axis) {
    const WindowAxis& w = axes_[axis];
    window.first[axis] = outputs.first[axis] * w.stride - w.padding;
    window.count[axis] = (outputs.count[axis] - 1) * w.stride + w.reach();
  }
  return window;
}

OutputSplit all_boundary(const ShardWindow& shard) {
  SpatialBox nothing = shard.outputs;
  nothing.count.assign(nothing.count.size(), 0);
  return {nothing, {shard.outputs}};
}

OutputSplit split_interior(const WindowPlan& plan, const ShardWindow& shard) {
  OutputSplit split;
  SpatialBox core = shard.outputs;
  const SpatialBox& ready = shard.ready_before_exchange;
  for (int axis = 0; axis < core.spatial_rank(); ++axis) {
    const WindowAxis& w = plan.axes()[axis];
    // Output o reads input planes [o*stride - padding, o*stride - padding + reach - 1].
    const std::int64_t first =
        std::max(core.first[axis], ceil_div(ready.first[axis] + w.padding, w.stride));
    const std::int64_t last = std::min(
        core.last(axis), floor_div(ready.last(axis) + w.padding - w.reach() + 1, w.stride));
    if (first > last) return all_boundary(shard);
    SpatialBox below = core, above = core;
    below.count[axis] = first - core.first[axis];
    above.first[axis] = last + 1;
    above.count[axis] = core.last(axis) - last;
    if (!below.empty()) split.boundary.push_back(below);
    if (!above.empty()) split.boundary.push_back(above);
    core.first[axis] = first;
    core.count[axis] = last - first + 1;
  }
  split.interior = core;
  return split;
}

}  // namespace tessera
