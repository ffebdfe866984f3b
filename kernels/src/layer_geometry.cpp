#include "tessera/kernels/layer_geometry.hpp"

#include <stdexcept>
#include <variant>

namespace tessera::kernels {
namespace {

std::vector<std::int64_t> per_axis(const AxisValues& values, std::size_t rank,
                                   const std::string& what, const Layer& layer) {
  if (values.size() == rank) return values;
  if (values.size() == 1) return std::vector<std::int64_t>(rank, values.front());
  throw std::invalid_argument(layer.name + ": " + what + " has " + std::to_string(values.size()) +
                              " values for " + std::to_string(rank) + " spatial axes");
}

// Input extent a window needs to produce `output` planes.
std::int64_t needed_input(std::int64_t output, std::int64_t kernel, std::int64_t stride,
                          std::int64_t padding, std::int64_t dilation) {
  return (output - 1) * stride + dilation * (kernel - 1) + 1 - 2 * padding;
}

}  // namespace

ConvolutionGeometry convolution_geometry(const Layer& layer, const TensorShape& input,
                                         const TensorShape& output) {
  const auto* conv = std::get_if<ConvolutionParams>(&layer.params);
  if (conv == nullptr) throw std::invalid_argument(layer.name + " is not a convolution");
  const std::size_t rank = input.spatial.size();
  ConvolutionGeometry geometry;
  geometry.transposed = layer.kind == LayerKind::transposed_convolution;
  geometry.in_channels = input.c;
  geometry.out_channels = output.c;
  geometry.groups = conv->groups;
  geometry.input_spatial = input.spatial;
  geometry.output_spatial = output.spatial;
  geometry.kernel = per_axis(conv->kernel, rank, "kernel", layer);
  geometry.stride = per_axis(conv->stride, rank, "stride", layer);
  geometry.padding = per_axis(conv->padding, rank, "padding", layer);
  geometry.dilation = per_axis(conv->dilation, rank, "dilation", layer);
  if (output.spatial.size() != rank) {
    throw std::invalid_argument(layer.name + ": input and output have different spatial ranks");
  }
  for (std::size_t axis = 0; axis < rank; ++axis) {
    // Transposed: the output plays the convolution's input.
    std::int64_t& conv_input =
        geometry.transposed ? geometry.output_spatial[axis] : geometry.input_spatial[axis];
    const std::int64_t conv_output =
        geometry.transposed ? geometry.input_spatial[axis] : geometry.output_spatial[axis];
    const std::int64_t needed =
        needed_input(conv_output, geometry.kernel[axis], geometry.stride[axis],
                     geometry.padding[axis], geometry.dilation[axis]);
    if (geometry.transposed) {
      if (needed != conv_input) {
        throw std::invalid_argument(layer.name + ": transposed convolution output extent " +
                                    std::to_string(conv_input) + " is not the " +
                                    std::to_string(needed) + " its input gives");
      }
    } else if (output_extent(conv_input, geometry.kernel[axis], geometry.stride[axis],
                             geometry.padding[axis], geometry.dilation[axis]) != conv_output) {
      conv_input = needed;
    }
  }
  return geometry;
}

PoolingGeometry pooling_geometry(const Layer& layer, const TensorShape& input,
                                 const TensorShape& output) {
  const auto* pool = std::get_if<PoolingParams>(&layer.params);
  if (pool == nullptr) throw std::invalid_argument(layer.name + " is not a pooling layer");
  const std::size_t rank = input.spatial.size();
  PoolingGeometry geometry;
  geometry.max = pool->mode == PoolMode::max;
  geometry.channels = input.c;
  geometry.input_spatial = input.spatial;
  geometry.output_spatial = output.spatial;
  geometry.kernel = per_axis(pool->kernel, rank, "kernel", layer);
  geometry.stride = per_axis(pool->stride, rank, "stride", layer);
  geometry.padding = per_axis(pool->padding, rank, "padding", layer);
  for (std::size_t axis = 0; axis < rank; ++axis) {
    const std::int64_t needed = needed_input(output.spatial[axis], geometry.kernel[axis],
                                             geometry.stride[axis], geometry.padding[axis], 1);
    // A slab whose windows reach past its planes reads halo planes; ceil-mode windows that
    // overhang the whole volume are clipped by the kernel instead.
    if (needed > geometry.input_spatial[axis] && !pool->ceil_mode) {
      geometry.input_spatial[axis] = needed;
    }
  }
  return geometry;
}

}  // namespace tessera::kernels
