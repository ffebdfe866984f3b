#include "reference_convolution.hpp"

#include <stdexcept>
#include <string>

namespace tessera::kernels::testing {
namespace {

std::int64_t product(const std::vector<std::int64_t>& values) {
  std::int64_t result = 1;
  for (std::int64_t value : values) result *= value;
  return result;
}

// A plain (not transposed) convolution. A transposed convolution is the plain one that maps its
// output back to its input, with the same filter memory: its forward is that convolution's
// backward-data and vice versa.
struct PlainConvolution {
  std::int64_t in_channels;
  std::int64_t out_channels;
  std::int64_t groups;
  std::vector<std::int64_t> input_spatial;
  std::vector<std::int64_t> output_spatial;
  const ConvolutionGeometry& geometry;  // kernel, stride, padding, dilation
};

PlainConvolution plain_of(const ConvolutionGeometry& geometry) {
  if (geometry.transposed) {
    return {geometry.out_channels,   geometry.in_channels,   geometry.groups,
            geometry.output_spatial, geometry.input_spatial, geometry};
  }
  return {geometry.in_channels,   geometry.out_channels,   geometry.groups,
          geometry.input_spatial, geometry.output_spatial, geometry};
}

// For each (output position, kernel position) the input position it reads, or -1 in the padding.
std::vector<std::int64_t> spatial_taps(const PlainConvolution& conv) {
  const ConvolutionGeometry& geometry = conv.geometry;
  const std::size_t rank = conv.input_spatial.size();
  const std::int64_t outputs = product(conv.output_spatial);
  const std::int64_t kernel = product(geometry.kernel);
  std::vector<std::int64_t> taps(static_cast<std::size_t>(outputs * kernel));
  std::vector<std::int64_t> output_at(rank);
  std::vector<std::int64_t> kernel_at(rank);
  for (std::int64_t output = 0; output < outputs; ++output) {
    for (std::int64_t rest = output, axis = static_cast<std::int64_t>(rank) - 1; axis >= 0;
         --axis) {
      const auto a = static_cast<std::size_t>(axis);
      output_at[a] = rest % conv.output_spatial[a];
      rest /= conv.output_spatial[a];
    }
    for (std::int64_t tap = 0; tap < kernel; ++tap) {
      for (std::int64_t rest = tap, axis = static_cast<std::int64_t>(rank) - 1; axis >= 0; --axis) {
        const auto a = static_cast<std::size_t>(axis);
        kernel_at[a] = rest % geometry.kernel[a];
        rest /= geometry.kernel[a];
      }
      std::int64_t input = 0;
      for (std::size_t a = 0; a < rank && input >= 0; ++a) {
        const std::int64_t at = output_at[a] * geometry.stride[a] - geometry.padding[a] +
                                kernel_at[a] * geometry.dilation[a];
        input = (at < 0 || at >= conv.input_spatial[a]) ? -1 : input * conv.input_spatial[a] + at;
      }
      taps[static_cast<std::size_t>(output * kernel + tap)] = input;
    }
  }
  return taps;
}

// Calls visit(input_index, output_index, filter_index) for every multiply of the convolution.
template <typename Visit>
void for_each_multiply(const PlainConvolution& conv, std::int64_t batch, Visit visit) {
  const std::vector<std::int64_t> taps = spatial_taps(conv);
  const std::int64_t inputs = product(conv.input_spatial);
  const std::int64_t outputs = product(conv.output_spatial);
  const std::int64_t kernel = product(conv.geometry.kernel);
  const std::int64_t in_per_group = conv.in_channels / conv.groups;
  const std::int64_t out_per_group = conv.out_channels / conv.groups;
  for (std::int64_t sample = 0; sample < batch; ++sample) {
    for (std::int64_t out_channel = 0; out_channel < conv.out_channels; ++out_channel) {
      const std::int64_t group = out_channel / out_per_group;
      for (std::int64_t in_in_group = 0; in_in_group < in_per_group; ++in_in_group) {
        const std::int64_t in_channel = group * in_per_group + in_in_group;
        const std::int64_t input_base = (sample * conv.in_channels + in_channel) * inputs;
        const std::int64_t output_base = (sample * conv.out_channels + out_channel) * outputs;
        const std::int64_t filter_base = (out_channel * in_per_group + in_in_group) * kernel;
        for (std::int64_t output = 0; output < outputs; ++output) {
          for (std::int64_t tap = 0; tap < kernel; ++tap) {
            const std::int64_t input = taps[static_cast<std::size_t>(output * kernel + tap)];
            if (input >= 0) visit(input_base + input, output_base + output, filter_base + tap);
          }
        }
      }
    }
  }
}

void check_size(std::span<const float> tensor, std::int64_t expected, const char* what) {
  if (static_cast<std::int64_t>(tensor.size()) != expected) {
    throw std::invalid_argument(std::string("reference convolution: ") + what + " has " +
                                std::to_string(tensor.size()) + " floats, expected " +
                                std::to_string(expected));
  }
}

std::vector<float> to_float(const std::vector<double>& values) {
  return std::vector<float>(values.begin(), values.end());
}

// The three products of a plain convolution, on its own input/output naming.
std::vector<float> plain_forward(const PlainConvolution& conv, std::int64_t batch,
                                 std::span<const float> x, std::span<const float> w) {
  std::vector<double> y(
      static_cast<std::size_t>(batch * conv.out_channels * product(conv.output_spatial)));
  for_each_multiply(conv, batch, [&](std::int64_t in, std::int64_t out, std::int64_t filter) {
    y[static_cast<std::size_t>(out)] +=
        double{x[static_cast<std::size_t>(in)]} * double{w[static_cast<std::size_t>(filter)]};
  });
  return to_float(y);
}

std::vector<float> plain_backward_data(const PlainConvolution& conv, std::int64_t batch,
                                       std::span<const float> dy, std::span<const float> w) {
  std::vector<double> dx(
      static_cast<std::size_t>(batch * conv.in_channels * product(conv.input_spatial)));
  for_each_multiply(conv, batch, [&](std::int64_t in, std::int64_t out, std::int64_t filter) {
    dx[static_cast<std::size_t>(in)] +=
        double{dy[static_cast<std::size_t>(out)]} * double{w[static_cast<std::size_t>(filter)]};
  });
  return to_float(dx);
}

std::vector<float> plain_backward_filter(const PlainConvolution& conv, std::int64_t batch,
                                         std::span<const float> x, std::span<const float> dy) {
  std::vector<double> dw(static_cast<std::size_t>(conv.geometry.filter_floats()));
  for_each_multiply(conv, batch, [&](std::int64_t in, std::int64_t out, std::int64_t filter) {
    dw[static_cast<std::size_t>(filter)] +=
        double{x[static_cast<std::size_t>(in)]} * double{dy[static_cast<std::size_t>(out)]};
  });
  return to_float(dw);
}

}  // namespace

std::vector<float> reference_forward(const ConvolutionGeometry& geometry, std::int64_t batch,
                                     std::span<const float> x, std::span<const float> w) {
  check_size(x, batch * geometry.input_floats_per_sample(), "x");
  check_size(w, geometry.filter_floats(), "w");
  const PlainConvolution conv = plain_of(geometry);
  return geometry.transposed ? plain_backward_data(conv, batch, x, w)
                             : plain_forward(conv, batch, x, w);
}

std::vector<float> reference_backward_data(const ConvolutionGeometry& geometry, std::int64_t batch,
                                           std::span<const float> dy, std::span<const float> w) {
  check_size(dy, batch * geometry.output_floats_per_sample(), "dy");
  check_size(w, geometry.filter_floats(), "w");
  const PlainConvolution conv = plain_of(geometry);
  return geometry.transposed ? plain_forward(conv, batch, dy, w)
                             : plain_backward_data(conv, batch, dy, w);
}

std::vector<float> reference_backward_filter(const ConvolutionGeometry& geometry,
                                             std::int64_t batch, std::span<const float> x,
                                             std::span<const float> dy) {
  check_size(x, batch * geometry.input_floats_per_sample(), "x");
  check_size(dy, batch * geometry.output_floats_per_sample(), "dy");
  const PlainConvolution conv = plain_of(geometry);
  return geometry.transposed ? plain_backward_filter(conv, batch, dy, x)
                             : plain_backward_filter(conv, batch, x, dy);
}

}  // namespace tessera::kernels::testing
