#include "halo_geometry.hpp"

#include <algorithm>
#include <optional>
#include <variant>

namespace tessera {
namespace {

struct Window {
  bool convolution = false;
  AxisValues kernel, dilation;
};

std::optional<Window> window_of(const Layer& layer, int rank) {
  if (const auto* pool = std::get_if<PoolingParams>(&layer.params)) {
    return Window{false, pool->kernel, AxisValues(static_cast<std::size_t>(rank), 1)};
  }
  if (const auto* conv = std::get_if<ConvolutionParams>(&layer.params)) {
    return Window{layer.kind == LayerKind::convolution, conv->kernel, conv->dilation};
  }
  return std::nullopt;
}

}  // namespace

std::vector<int> exchanged_axes(const ModelGraph& model, const ShardPlan& plan, std::size_t i) {
  const auto& shard = plan.layers[i];
  std::vector<int> axes;
  if (!shard.spatially_split || !window_of(model.layers()[i].layer, 0)) return axes;
  for (std::size_t a = 0; a < shard.input_halo.size(); ++a) {
    const Halo halo = shard.input_halo[a];
    if (plan.config.spatial_grid[a] > 1 && halo.lower + halo.upper > 0) {
      axes.push_back(static_cast<int>(a));
    }
  }
  return axes;
}

bool interior_overlaps_halos(const ModelGraph& model, const ShardPlan& plan, std::size_t i,
                             const std::vector<int>& axes) {
  const auto& layer = model.layers()[i];
  const auto window = window_of(layer.layer, layer.output_shape.spatial_rank());
  if (!window || !window->convolution) return false;
  for (int axis : axes) {
    const auto a = static_cast<std::size_t>(axis);
    const std::int64_t smallest = layer.input_shapes[0].spatial[a] / plan.config.spatial_grid[a];
    const std::int64_t reach = window->dilation[a] * (window->kernel[a] - 1) + 1;
    if (!interior_overlaps_exchange(smallest, reach)) return false;
  }
  return true;
}

double boundary_fraction(const LayerShard& shard, const std::vector<int>& axes) {
  double fraction = 0;
  for (int axis : axes) {
    const auto a = static_cast<std::size_t>(axis);
    const Halo halo = shard.input_halo[a];
    const std::int64_t extent = shard.local_output.spatial[a];
    const std::int64_t boundary = std::min<std::int64_t>(extent, halo.lower + halo.upper);
    fraction = std::max(fraction, static_cast<double>(boundary) / static_cast<double>(extent));
  }
  return fraction;
}

double haloed_window_factor(const LayerShard& shard, const std::vector<int>& axes) {
  double factor = 1;
  for (int axis : axes) {
    const auto a = static_cast<std::size_t>(axis);
    const auto owned = static_cast<double>(shard.local_inputs[0].spatial[a]);
    const Halo halo = shard.input_halo[a];
    factor *= (owned + static_cast<double>(halo.lower + halo.upper)) / owned;
  }
  return factor;
}

double plane_bytes(const TensorShape& local, int axis, DType dtype) {
  double elements = static_cast<double>(local.n * local.c);
  for (int a = 0; a < local.spatial_rank(); ++a) {
    if (a != axis) elements *= static_cast<double>(local.spatial[static_cast<std::size_t>(a)]);
  }
  return elements * static_cast<double>(dtype_bytes(dtype));
}

}  // namespace tessera
