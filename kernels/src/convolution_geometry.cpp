#include <stdexcept>

#include "tessera/kernels/convolution_kernels.hpp"

namespace tessera::kernels {
namespace {

std::int64_t product(const std::vector<std::int64_t>& values) {
  std::int64_t result = 1;
  for (std::int64_t value : values) result *= value;
  return result;
}

}  // namespace

std::int64_t output_extent(std::int64_t input, std::int64_t kernel, std::int64_t stride,
                           std::int64_t padding, std::int64_t dilation) {
  const std::int64_t reach = dilation * (kernel - 1) + 1;
  if (stride < 1 || input + 2 * padding < reach) {
    throw std::invalid_argument("convolution window does not fit its input");
  }
  return (input + 2 * padding - reach) / stride + 1;
}

std::vector<ConvolutionAlgorithm> ConvolutionKernels::algorithms(
    const ConvolutionGeometry& geometry, std::int64_t batch, Direction direction) {
  auto offered = every_algorithm(geometry, batch, direction);
  if (deterministic_only_) {
    std::erase_if(offered,
                  [](const ConvolutionAlgorithm& algorithm) { return !algorithm.deterministic; });
  }
  return offered;
}

ConvolutionGeometry with_output(ConvolutionGeometry geometry) {
  const std::size_t rank = geometry.input_spatial.size();
  if (geometry.kernel.size() != rank || geometry.stride.size() != rank ||
      geometry.padding.size() != rank || geometry.dilation.size() != rank) {
    throw std::invalid_argument(
        "convolution geometry needs one kernel, stride, padding and "
        "dilation per spatial axis");
  }
  geometry.output_spatial.resize(rank);
  for (std::size_t axis = 0; axis < rank; ++axis) {
    if (geometry.transposed) {
      // The transposed convolution's output is the input of the convolution it transposes.
      geometry.output_spatial[axis] = (geometry.input_spatial[axis] - 1) * geometry.stride[axis] -
                                      2 * geometry.padding[axis] +
                                      geometry.dilation[axis] * (geometry.kernel[axis] - 1) + 1;
    } else {
      geometry.output_spatial[axis] =
          output_extent(geometry.input_spatial[axis], geometry.kernel[axis], geometry.stride[axis],
                        geometry.padding[axis], geometry.dilation[axis]);
    }
  }
  return geometry;
}

std::int64_t ConvolutionGeometry::input_floats_per_sample() const {
  return in_channels * product(input_spatial);
}

std::int64_t ConvolutionGeometry::output_floats_per_sample() const {
  return out_channels * product(output_spatial);
}

std::int64_t ConvolutionGeometry::filter_floats() const {
  return out_channels * (in_channels / groups) * product(kernel);
}

}  // namespace tessera::kernels
