// Training-mode batch-norm split into local sums and an apply step, so that a spatially
// partitioned layer can all-reduce the sums in its group in between. Plain loops: oneDNN's
// batch-normalization primitive computes mean and variance internally and offers no hook to
// exchange them (nor the backward sums) between the two halves of the computation. Sums are
// accumulated in double per contiguous (sample, channel) row; the apply steps are per-channel
// affine maps in float over the same rows, which the compiler vectorises.
#include <cmath>
#include <cstddef>
#include <string>

#include "argument_check.hpp"
#include "cpu/cpu_layer_kernels.hpp"
#include "cpu/row_sums.hpp"

namespace tessera::kernels {
namespace {

struct Extents {
  std::size_t rows;  // batch x channels
  std::size_t channels;
  std::size_t row_length;  // spatial
};

Extents extents(std::int64_t batch, std::int64_t channels, std::int64_t spatial,
                const char* kernel) {
  require_normalization_extents(kernel, batch, channels, spatial, "spatial", 0);
  return {static_cast<std::size_t>(batch * channels), static_cast<std::size_t>(channels),
          static_cast<std::size_t>(spatial)};
}

void require_statistics(const Extents& shape, const std::vector<double>& mean,
                        const std::vector<double>& inv_std, const char* kernel) {
  require_argument(
      mean.size() == shape.channels && inv_std.size() == shape.channels, kernel,
      "mean and inv_std need one entry per channel (" + std::to_string(shape.channels) + ")");
}

}  // namespace

ChannelSums CpuLayerKernels::batch_norm_sums(std::int64_t batch, std::int64_t channels,
                                             std::int64_t spatial, const float* x) {
  const Extents shape = extents(batch, channels, spatial, "batch_norm_sums");
  ChannelSums sums{std::vector<double>(shape.channels, 0.0),
                   std::vector<double>(shape.channels, 0.0)};
  for (std::size_t row = 0; row < shape.rows; ++row) {
    const float* values = x + row * shape.row_length;
    const TwoSums row_sums =
        sum_row(shape.row_length, [values](std::size_t index, double& sum, double& squares) {
          const double value = values[index];
          sum += value;
          squares += value * value;
        });
    sums.first[row % shape.channels] += row_sums.first;
    sums.second[row % shape.channels] += row_sums.second;
  }
  return sums;
}

void CpuLayerKernels::batch_norm_apply(std::int64_t batch, std::int64_t channels,
                                       std::int64_t spatial, const float* x,
                                       const std::vector<double>& mean,
                                       const std::vector<double>& inv_std, const float* scale,
                                       const float* shift, float* y) {
  const Extents shape = extents(batch, channels, spatial, "batch_norm_apply");
  require_statistics(shape, mean, inv_std, "batch_norm_apply");
  for (std::size_t row = 0; row < shape.rows; ++row) {
    const std::size_t channel = row % shape.channels;
    // y = gain * x + offset with gain = scale * inv_std, offset = shift - mean * gain.
    const double gain = (scale != nullptr ? scale[channel] : 1.0) * inv_std[channel];
    const auto offset =
        static_cast<float>((shift != nullptr ? shift[channel] : 0.0) - mean[channel] * gain);
    const auto gain_float = static_cast<float>(gain);
    const float* values = x + row * shape.row_length;
    float* outputs = y + row * shape.row_length;
    for (std::size_t index = 0; index < shape.row_length; ++index) {
      outputs[index] = gain_float * values[index] + offset;
    }
  }
}

ChannelSums CpuLayerKernels::batch_norm_backward_sums(std::int64_t batch, std::int64_t channels,
                                                      std::int64_t spatial, const float* x,
                                                      const float* dy,
                                                      const std::vector<double>& mean,
                                                      const std::vector<double>& inv_std) {
  const Extents shape = extents(batch, channels, spatial, "batch_norm_backward_sums");
  require_statistics(shape, mean, inv_std, "batch_norm_backward_sums");
  ChannelSums sums{std::vector<double>(shape.channels, 0.0),
                   std::vector<double>(shape.channels, 0.0)};
  for (std::size_t row = 0; row < shape.rows; ++row) {
    const std::size_t channel = row % shape.channels;
    const float* values = x + row * shape.row_length;
    const float* gradients = dy + row * shape.row_length;
    const double channel_mean = mean[channel];
    // second: sum(dy * (x - mean)); times inv_std it is sum(dy * x_hat).
    const TwoSums row_sums =
        sum_row(shape.row_length, [=](std::size_t index, double& sum_dy, double& sum_dy_centred) {
          const double gradient = gradients[index];
          sum_dy += gradient;
          sum_dy_centred += gradient * (values[index] - channel_mean);
        });
    sums.first[channel] += row_sums.first;
    sums.second[channel] += row_sums.second * inv_std[channel];
  }
  return sums;
}

void CpuLayerKernels::batch_norm_backward_apply(std::int64_t batch, std::int64_t channels,
                                                std::int64_t spatial, const float* x,
                                                const float* dy, const std::vector<double>& mean,
                                                const std::vector<double>& inv_std,
                                                const float* scale, const ChannelSums& group_sums,
                                                double group_count, float* dx, float* dscale,
                                                float* dshift) {
  const Extents shape = extents(batch, channels, spatial, "batch_norm_backward_apply");
  require_statistics(shape, mean, inv_std, "batch_norm_backward_apply");
  require_argument(
      group_sums.first.size() == shape.channels && group_sums.second.size() == shape.channels,
      "batch_norm_backward_apply", "group sums need one entry per channel");
  require_argument(group_count > 0.0, "batch_norm_backward_apply",
                   "group element count must be > 0, got " + std::to_string(group_count));
  for (std::size_t row = 0; dx != nullptr && row < shape.rows; ++row) {
    const std::size_t channel = row % shape.channels;
    // dx = gain * (dy - mean(dy) - x_hat * mean(dy * x_hat)), gain = scale * inv_std, expanded
    // into dx = gain * dy - centred * slope - offset with centred = x - mean.
    const double gain = (scale != nullptr ? scale[channel] : 1.0) * inv_std[channel];
    const auto gain_float = static_cast<float>(gain);
    const auto offset = static_cast<float>(gain * group_sums.first[channel] / group_count);
    const auto slope =
        static_cast<float>(gain * inv_std[channel] * group_sums.second[channel] / group_count);
    const auto mean_float = static_cast<float>(mean[channel]);
    const float* values = x + row * shape.row_length;
    const float* gradients = dy + row * shape.row_length;
    float* outputs = dx + row * shape.row_length;
    for (std::size_t index = 0; index < shape.row_length; ++index) {
      outputs[index] =
          gain_float * gradients[index] - (values[index] - mean_float) * slope - offset;
    }
  }
  for (std::size_t channel = 0; channel < shape.channels; ++channel) {
    if (dscale != nullptr) dscale[channel] = static_cast<float>(group_sums.second[channel]);
    if (dshift != nullptr) dshift[channel] = static_cast<float>(group_sums.first[channel]);
  }
}

}  // namespace tessera::kernels
