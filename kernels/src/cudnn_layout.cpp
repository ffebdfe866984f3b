#include "cudnn_layout.hpp"

#include <limits>
#include <stdexcept>
#include <string>

namespace tessera::kernels {
namespace {

int to_int(std::int64_t value, const char* what) {
  if (value < 0 || value > std::numeric_limits<int>::max()) {
    throw std::invalid_argument(std::string(what) + " " + std::to_string(value) +
                                " is outside cuDNN's int range");
  }
  return static_cast<int>(value);
}

// cuDNN needs two spatial axes at least: a 1D problem runs as 1 x W.
std::vector<std::int64_t> at_least_2d(std::vector<std::int64_t> axes, std::int64_t unit) {
  if (axes.size() == 1) axes.insert(axes.begin(), unit);
  return axes;
}

std::vector<int> to_ints(const std::vector<std::int64_t>& values, const char* what) {
  std::vector<int> result;
  result.reserve(values.size());
  for (std::int64_t value : values) result.push_back(to_int(value, what));
  return result;
}

void require_axes(std::size_t rank, const std::vector<std::int64_t>& axes, const char* what) {
  if (axes.size() != rank) {
    throw std::invalid_argument(std::string(what) + " has " + std::to_string(axes.size()) +
                                " axes, expected one per spatial axis (" + std::to_string(rank) +
                                ")");
  }
}

std::string extents(const std::vector<std::int64_t>& axes) {
  std::string text;
  for (std::size_t axis = 0; axis < axes.size(); ++axis) {
    text += (axis == 0 ? "" : "x") + std::to_string(axes[axis]);
  }
  return text;
}

}  // namespace

CudnnTensorLayout cudnn_packed_layout(std::int64_t batch, std::int64_t channels,
                                      const std::vector<std::int64_t>& spatial) {
  if (spatial.empty() || spatial.size() > 3) {
    throw std::invalid_argument("cuDNN tensors have 1 to 3 spatial axes, got " +
                                std::to_string(spatial.size()));
  }
  std::vector<std::int64_t> dims = {batch, channels};
  for (std::int64_t extent : at_least_2d(spatial, 1)) dims.push_back(extent);
  CudnnTensorLayout layout;
  layout.dims = to_ints(dims, "tensor extent");
  layout.strides.assign(dims.size(), 1);
  std::int64_t stride = 1;
  for (std::size_t axis = dims.size(); axis-- > 0;) {
    layout.strides[axis] = to_int(stride, "tensor stride");
    stride *= dims[axis];
  }
  to_int(stride, "tensor size");  // cuDNN indexes elements with int
  if (batch < 1 || channels < 1) {
    throw std::invalid_argument("tensor needs a batch and channels of at least 1, got " +
                                std::to_string(batch) + " x " + std::to_string(channels));
  }
  return layout;
}

CudnnConvolutionLayout cudnn_convolution_layout(const ConvolutionGeometry& geometry,
                                                std::int64_t batch) {
  const std::size_t rank = geometry.input_spatial.size();
  require_axes(rank, geometry.output_spatial, "convolution output");
  require_axes(rank, geometry.kernel, "convolution kernel");
  require_axes(rank, geometry.stride, "convolution stride");
  require_axes(rank, geometry.padding, "convolution padding");
  require_axes(rank, geometry.dilation, "convolution dilation");
  if (geometry.groups < 1 || geometry.in_channels % geometry.groups != 0 ||
      geometry.out_channels % geometry.groups != 0) {
    throw std::invalid_argument("convolution channels " + std::to_string(geometry.in_channels) +
                                " -> " + std::to_string(geometry.out_channels) +
                                " are not divisible by its " + std::to_string(geometry.groups) +
                                " groups");
  }
  // The plain convolution runs from the transposed layer's output to its input.
  const bool transposed = geometry.transposed;
  const auto& plain_input = transposed ? geometry.output_spatial : geometry.input_spatial;
  const auto& plain_output = transposed ? geometry.input_spatial : geometry.output_spatial;
  const std::int64_t plain_in_channels = transposed ? geometry.out_channels : geometry.in_channels;
  const std::int64_t plain_out_channels = transposed ? geometry.in_channels : geometry.out_channels;
  std::vector<std::int64_t> expected_output(rank);
  for (std::size_t axis = 0; axis < rank; ++axis) {
    expected_output[axis] =
        output_extent(plain_input[axis], geometry.kernel[axis], geometry.stride[axis],
                      geometry.padding[axis], geometry.dilation[axis]);
  }
  if (expected_output != plain_output) {
    throw std::invalid_argument(std::string("convolution ") + (transposed ? "input " : "output ") +
                                extents(plain_output) + " does not match its window: expected " +
                                extents(expected_output));
  }

  CudnnConvolutionLayout layout;
  layout.conv_input = cudnn_packed_layout(batch, plain_in_channels, plain_input);
  layout.conv_output = cudnn_packed_layout(batch, plain_out_channels, plain_output);
  layout.filter_dims = {to_int(plain_out_channels, "filter count"),
                        to_int(plain_in_channels / geometry.groups, "filter channels")};
  for (int extent : to_ints(at_least_2d(geometry.kernel, 1), "kernel extent")) {
    layout.filter_dims.push_back(extent);
  }
  layout.padding = to_ints(at_least_2d(geometry.padding, 0), "padding");
  layout.stride = to_ints(at_least_2d(geometry.stride, 1), "stride");
  layout.dilation = to_ints(at_least_2d(geometry.dilation, 1), "dilation");
  layout.groups = to_int(geometry.groups, "group count");
  return layout;
}

CudnnPoolingLayout cudnn_pooling_layout(const PoolingGeometry& geometry, std::int64_t batch) {
  const std::size_t rank = geometry.input_spatial.size();
  require_axes(rank, geometry.output_spatial, "pooling output");
  require_axes(rank, geometry.kernel, "pooling window");
  require_axes(rank, geometry.stride, "pooling stride");
  require_axes(rank, geometry.padding, "pooling padding");
  std::vector<std::int64_t> expected_output(rank);
  std::vector<std::int64_t> padded_input = geometry.input_spatial;
  bool rounds_up = false;
  for (std::size_t axis = 0; axis < rank; ++axis) {
    const std::int64_t input = geometry.input_spatial[axis];
    const std::int64_t window = geometry.kernel[axis];
    const std::int64_t stride = geometry.stride[axis];
    const std::int64_t padding = geometry.padding[axis];
    if (padding >= window) {
      throw std::invalid_argument("pooling padding " + std::to_string(padding) +
                                  " must be smaller than its window " + std::to_string(window));
    }
    expected_output[axis] = output_extent(input, window, stride, padding, 1);
    // Ceil mode: one output more, its window starting inside the input or the low padding.
    const std::int64_t output = geometry.output_spatial[axis];
    if (output == expected_output[axis] + 1 && stride > 1 &&
        (output - 1) * stride < input + padding) {
      padded_input[axis] = (output - 1) * stride + window - 2 * padding;
      rounds_up = true;
    }
  }
  if (rounds_up && !geometry.max) {
    throw std::invalid_argument(
        "average pooling with output " + extents(geometry.output_spatial) +
        " rounds up (ceil mode), which the GPU's pooling does not run: expected " +
        extents(expected_output) + " (CPU ranks run it)");
  }
  if (!rounds_up && expected_output != geometry.output_spatial) {
    throw std::invalid_argument("pooling output " + extents(geometry.output_spatial) +
                                " does not match its window: expected " + extents(expected_output));
  }
  if (rounds_up) {
    for (std::size_t axis = 0; axis < rank; ++axis) {
      const std::int64_t floor_output =
          output_extent(padded_input[axis], geometry.kernel[axis], geometry.stride[axis],
                        geometry.padding[axis], 1);
      if (floor_output != geometry.output_spatial[axis]) {
        throw std::invalid_argument("pooling output " + extents(geometry.output_spatial) +
                                    " does not match its window: expected " +
                                    extents(expected_output) + " or one more per axis (ceil mode)");
      }
    }
  }
  CudnnPoolingLayout layout;
  layout.input = cudnn_packed_layout(batch, geometry.channels, geometry.input_spatial);
  layout.padded_input = cudnn_packed_layout(batch, geometry.channels, padded_input);
  layout.output = cudnn_packed_layout(batch, geometry.channels, geometry.output_spatial);
  layout.window = to_ints(at_least_2d(geometry.kernel, 1), "pooling window");
  layout.padding = to_ints(at_least_2d(geometry.padding, 0), "pooling padding");
  layout.stride = to_ints(at_least_2d(geometry.stride, 1), "pooling stride");
  return layout;
}

}  // namespace tessera::kernels
