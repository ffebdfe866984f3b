#include "tessera/core/strategy/window_kernels.hpp"

#include <stdexcept>

#include "tessera/core/strategy/shard_window.hpp"

namespace tessera {
namespace {

WindowPlan window_plan(const ResolvedLayer& layer, const std::vector<std::int64_t>& grid) {
  const auto& conv = std::get<ConvolutionParams>(layer.layer.params);
  std::vector<WindowAxis> axes;
  for (std::size_t a = 0; a < grid.size(); ++a) {
    axes.push_back({conv.kernel.at(a), conv.stride.at(a), conv.padding.at(a), conv.dilation.at(a)});
  }
  return WindowPlan(LayerKind::convolution,
                    TensorDistribution(layer.input_shapes.at(0).spatial, grid), std::move(axes),
                    BoundaryPadding::zeros_in_buffer);
}

WindowKernel window_kernel(const ResolvedLayer& layer, const WindowPlan& plan,
                           const SpatialBox& outputs) {
  WindowKernel kernel;
  kernel.layer = layer.layer;
  auto& conv = std::get<ConvolutionParams>(kernel.layer.params);
  conv.padding.assign(conv.padding.size(), 0);
  kernel.input = layer.input_shapes.at(0).with_batch(1);
  kernel.input.spatial = plan.window_of(outputs).count;
  kernel.output = layer.output_shape.with_batch(1);
  kernel.output.spatial = outputs.count;
  kernel.shape = kernel_shape_key(kernel.layer, {kernel.input}, kernel.output);
  return kernel;
}

std::vector<WindowKernel> windows_of(const ResolvedLayer& layer, const WindowPlan& plan,
                                     std::int64_t shard, Direction direction, StepPart part) {
  const ShardWindow& window = plan.shard(shard);
  std::vector<WindowKernel> kernels;
  if (direction != Direction::forward ||
      (part != StepPart::interior && part != StepPart::boundary)) {
    kernels.push_back(window_kernel(layer, plan, window.outputs));
    return kernels;
  }
  const OutputSplit split = split_interior(plan, window);
  if (part == StepPart::interior) {
    if (!split.interior.empty()) kernels.push_back(window_kernel(layer, plan, split.interior));
    return kernels;
  }
  for (const SpatialBox& box : split.boundary) kernels.push_back(window_kernel(layer, plan, box));
  return kernels;
}

void check_convolution(const ResolvedLayer& layer) {
  if (layer.layer.kind != LayerKind::convolution) {
    throw std::invalid_argument("layer " + layer.layer.name + " is not a convolution");
  }
}

}  // namespace

bool runs_window_kernels(const Layer& layer, bool spatially_split) {
  return spatially_split && layer.kind == LayerKind::convolution;
}

std::vector<std::vector<WindowKernel>> window_kernels_by_shard(
    const ResolvedLayer& layer, const std::vector<std::int64_t>& grid, Direction direction,
    StepPart part) {
  check_convolution(layer);
  const WindowPlan plan = window_plan(layer, grid);
  std::vector<std::vector<WindowKernel>> kernels;
  for (std::int64_t shard = 0; shard < plan.input().shard_count(); ++shard) {
    kernels.push_back(windows_of(layer, plan, shard, direction, part));
  }
  return kernels;
}

std::int64_t timed_shard(const std::vector<std::int64_t>& grid) {
  std::int64_t shard = 0;
  for (std::int64_t parts : grid) shard = shard * parts + parts / 2;
  return shard;
}

}  // namespace tessera
