// Layer normalisation over the channels of each position, as the CPU kernels compute it
// (cpu_layer_norm.cpp): sums in double, epsilon 1e-5. A vector's values are `positions` apart, so
// the threads of consecutive positions read consecutive addresses.
#include "cuda/cuda_for_each.cuh"
#include "cuda/cuda_layer_norm_kernels.hpp"

namespace tessera::kernels::cuda {
namespace {

constexpr double kEpsilon = 1e-5;

// The index of the first value of normalised vector `vector` (sample n, position t).
__device__ std::int64_t first_value(const LayerNormShape& shape, std::int64_t vector) {
  const std::int64_t n = vector / shape.positions, t = vector % shape.positions;
  return n * shape.channels * shape.positions + t;
}

// What the backward kernels read: the forward's input and statistics, the output gradient.
struct BackwardOperands {
  LayerNormShape shape;
  const float* x;
  const float* dy;
  const float* mean;
  const float* inv_std;
  __device__ double x_hat(std::int64_t i, std::int64_t vector) const {
    return (static_cast<double>(x[i]) - mean[vector]) * inv_std[vector];
  }
};

struct LayerNormForward {
  LayerNormShape shape;
  const float* x;
  const float* scale;
  const float* shift;
  float* y;
  float* mean;
  float* inv_std;
  __device__ void operator()(std::int64_t vector) const {
    const float* values = x + first_value(shape, vector);
    double sum = 0.0, squares = 0.0;
    for (std::int64_t c = 0; c < shape.channels; ++c) {
      const double value = values[c * shape.positions];
      sum += value;
      squares += value * value;
    }
    const double m = sum / static_cast<double>(shape.channels);
    const double variance = fmax(0.0, squares / static_cast<double>(shape.channels) - m * m);
    const float mean_value = static_cast<float>(m);
    const float inv_std_value = static_cast<float>(1.0 / sqrt(variance + kEpsilon));
    mean[vector] = mean_value;
    inv_std[vector] = inv_std_value;
    float* out = y + first_value(shape, vector);
    for (std::int64_t c = 0; c < shape.channels; ++c) {
      const float g = scale != nullptr ? scale[c] : 1.0f;
      const float b = shift != nullptr ? shift[c] : 0.0f;
      out[c * shape.positions] = (values[c * shape.positions] - mean_value) * inv_std_value * g + b;
    }
  }
};

struct LayerNormBackwardData {
  BackwardOperands in;
  const float* scale;
  float* dx;
  __device__ double g(std::int64_t i, std::int64_t c) const {
    return static_cast<double>(in.dy[i]) * (scale != nullptr ? scale[c] : 1.0f);
  }
  __device__ void operator()(std::int64_t vector) const {
    const std::int64_t first = first_value(in.shape, vector), stride = in.shape.positions;
    double g_sum = 0.0, gx_sum = 0.0;
    for (std::int64_t c = 0; c < in.shape.channels; ++c) {
      g_sum += g(first + c * stride, c);
      gx_sum += g(first + c * stride, c) * in.x_hat(first + c * stride, vector);
    }
    const double count = static_cast<double>(in.shape.channels);
    for (std::int64_t c = 0; c < in.shape.channels; ++c) {
      const std::int64_t i = first + c * stride;
      dx[i] = static_cast<float>(in.inv_std[vector] *
                                 (g(i, c) - g_sum / count - in.x_hat(i, vector) * gx_sum / count));
    }
  }
};

struct LayerNormBackwardAffine {
  BackwardOperands in;
  float* dscale;
  float* dshift;
  float beta;
  __device__ void operator()(std::int64_t c) const {
    double scale_sum = 0.0, shift_sum = 0.0;
    for (std::int64_t n = 0; n < in.shape.batch; ++n) {
      const std::int64_t row = (n * in.shape.channels + c) * in.shape.positions;
      for (std::int64_t t = 0; t < in.shape.positions; ++t) {
        scale_sum += in.dy[row + t] * in.x_hat(row + t, n * in.shape.positions + t);
        shift_sum += in.dy[row + t];
      }
    }
    dscale[c] = static_cast<float>(scale_sum + (beta == 0.0f ? 0.0 : beta * dscale[c]));
    dshift[c] = static_cast<float>(shift_sum + (beta == 0.0f ? 0.0 : beta * dshift[c]));
  }
};

}  // namespace

void launch_layer_norm_forward(const LayerNormShape& shape, const float* x, const float* scale,
                               const float* shift, float* y, float* mean, float* inv_std,
                               cudaStream_t stream) {
  launch_for_each(shape.batch * shape.positions,
                  LayerNormForward{shape, x, scale, shift, y, mean, inv_std}, stream);
}

void launch_layer_norm_backward_data(const LayerNormShape& shape, const float* x, const float* dy,
                                     const float* mean, const float* inv_std, const float* scale,
                                     float* dx, cudaStream_t stream) {
  launch_for_each(shape.batch * shape.positions,
                  LayerNormBackwardData{{shape, x, dy, mean, inv_std}, scale, dx}, stream);
}

void launch_layer_norm_backward_affine(const LayerNormShape& shape, const float* x, const float* dy,
                                       const float* mean, const float* inv_std, float* dscale,
                                       float* dshift, float beta, cudaStream_t stream) {
  launch_for_each(shape.channels,
                  LayerNormBackwardAffine{{shape, x, dy, mean, inv_std}, dscale, dshift, beta},
                  stream);
}

}  // namespace tessera::kernels::cuda
