// Layer normalisation over the channels of each position of N x C x positions. Plain loops, one
// sample at a time: for each channel the positions are a contiguous row, so the statistics of
// all positions accumulate together along the rows (in double) and the apply steps run along
// the same rows, which the compiler vectorises. oneDNN's layer-normalization primitive wants the
// normalised axis innermost, which this layout (channels before time) does not have.
#include <cmath>
#include <string>
#include <vector>

#include "argument_check.hpp"
#include "cpu/cpu_layer_kernels.hpp"

namespace tessera::kernels {
namespace {

constexpr double kEpsilon = 1e-5;

void require_shape(std::int64_t batch, std::int64_t channels, std::int64_t positions,
                   const char* kernel) {
  require_normalization_extents(kernel, batch, channels, positions, "positions", 1);
}

}  // namespace

void CpuLayerKernels::layer_norm_forward(std::int64_t batch, std::int64_t channels,
                                         std::int64_t positions, const float* x, const float* scale,
                                         const float* shift, float* y, float* mean,
                                         float* inv_std) {
  require_shape(batch, channels, positions, "layer_norm_forward");
  require_argument((scale == nullptr) == (shift == nullptr), "layer_norm_forward",
                   "scale and shift go together");
  const auto length = static_cast<std::size_t>(positions);
  std::vector<double> sums(length), squares(length);
  for (std::int64_t n = 0; n < batch; ++n) {
    const float* sample = x + n * channels * positions;
    std::fill(sums.begin(), sums.end(), 0.0);
    std::fill(squares.begin(), squares.end(), 0.0);
    for (std::int64_t c = 0; c < channels; ++c) {
      const float* row = sample + c * positions;
      for (std::size_t t = 0; t < length; ++t) {
        sums[t] += row[t];
        squares[t] += static_cast<double>(row[t]) * row[t];
      }
    }
    float* sample_mean = mean + n * positions;
    float* sample_inv_std = inv_std + n * positions;
    for (std::size_t t = 0; t < length; ++t) {
      const double m = sums[t] / static_cast<double>(channels);
      const double variance = std::max(0.0, squares[t] / static_cast<double>(channels) - m * m);
      sample_mean[t] = static_cast<float>(m);
      sample_inv_std[t] = static_cast<float>(1.0 / std::sqrt(variance + kEpsilon));
    }
    for (std::int64_t c = 0; c < channels; ++c) {
      const float* row = sample + c * positions;
      float* out = y + (n * channels + c) * positions;
      const float g = scale != nullptr ? scale[c] : 1.0F;
      const float b = shift != nullptr ? shift[c] : 0.0F;
      for (std::size_t t = 0; t < length; ++t) {
        out[t] = (row[t] - sample_mean[t]) * sample_inv_std[t] * g + b;
      }
    }
  }
}

// With x_hat = (x - mean) inv_std and g = dy scale per value, over the C values of a vector:
// dx = inv_std (g - mean(g) - x_hat mean(g x_hat)); dscale = sum dy x_hat, dshift = sum dy.
void CpuLayerKernels::layer_norm_backward(std::int64_t batch, std::int64_t channels,
                                          std::int64_t positions, const float* x, const float* dy,
                                          const float* mean, const float* inv_std,
                                          const float* scale, float* dx, float* dscale,
                                          float* dshift, float beta) {
  require_shape(batch, channels, positions, "layer_norm_backward");
  require_argument((dscale == nullptr) == (dshift == nullptr), "layer_norm_backward",
                   "dscale and dshift go together");
  const auto length = static_cast<std::size_t>(positions);
  std::vector<double> scale_sums(static_cast<std::size_t>(channels), 0.0);
  std::vector<double> shift_sums(static_cast<std::size_t>(channels), 0.0);
  std::vector<double> g_sums(length), gx_sums(length);
  for (std::int64_t n = 0; n < batch; ++n) {
    const float* sample_mean = mean + n * positions;
    const float* sample_inv_std = inv_std + n * positions;
    std::fill(g_sums.begin(), g_sums.end(), 0.0);
    std::fill(gx_sums.begin(), gx_sums.end(), 0.0);
    for (std::int64_t c = 0; c < channels; ++c) {
      const std::int64_t offset = (n * channels + c) * positions;
      const float s = scale != nullptr ? scale[c] : 1.0F;
      double scale_sum = 0.0, shift_sum = 0.0;
      for (std::size_t t = 0; t < length; ++t) {
        const double x_hat =
            (static_cast<double>(x[offset + t]) - sample_mean[t]) * sample_inv_std[t];
        const double g = static_cast<double>(dy[offset + t]) * s;
        g_sums[t] += g;
        gx_sums[t] += g * x_hat;
        scale_sum += dy[offset + t] * x_hat;
        shift_sum += dy[offset + t];
      }
      scale_sums[static_cast<std::size_t>(c)] += scale_sum;
      shift_sums[static_cast<std::size_t>(c)] += shift_sum;
    }
    if (dx == nullptr) continue;
    const double count = static_cast<double>(channels);
    for (std::int64_t c = 0; c < channels; ++c) {
      const std::int64_t offset = (n * channels + c) * positions;
      const float s = scale != nullptr ? scale[c] : 1.0F;
      for (std::size_t t = 0; t < length; ++t) {
        const double x_hat =
            (static_cast<double>(x[offset + t]) - sample_mean[t]) * sample_inv_std[t];
        const double g = static_cast<double>(dy[offset + t]) * s;
        dx[offset + t] = static_cast<float>(sample_inv_std[t] *
                                            (g - g_sums[t] / count - x_hat * gx_sums[t] / count));
      }
    }
  }
  if (dscale == nullptr) return;
  for (std::int64_t c = 0; c < channels; ++c) {
    const auto i = static_cast<std::size_t>(c);
    dscale[c] = static_cast<float>(scale_sums[i] + (beta == 0.0F ? 0.0 : beta * dscale[c]));
    dshift[c] = static_cast<float>(shift_sums[i] + (beta == 0.0F ? 0.0 : beta * dshift[c]));
  }
}

}  // namespace tessera::kernels
