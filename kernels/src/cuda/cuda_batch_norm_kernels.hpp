#pragma once
// Batch-norm kernels of the CUDA layer kernels (cuda_batch_norm_kernels.cu). Tensors are
// batch x channels x spatial floats; per-channel statistics are device doubles so that sums over
// hundreds of millions of voxels keep float32 accuracy after the division.
#include <cuda_runtime.h>

#include <cstdint>

namespace tessera::kernels::cuda {

struct BatchNormShape {
  std::int64_t batch = 1;
  std::int64_t channels = 1;
  std::int64_t spatial = 1;
};

// The sums below add partial sums in an order fixed by the shape alone, so that they are the same
// to the bit run after run: `partials` is device room for this many doubles.
std::int64_t batch_norm_partials(const BatchNormShape& shape);
// Adds per channel c: sums[c] += sum of x, sums[channels + c] += sum of x^2.
void launch_batch_norm_sums(const BatchNormShape& shape, const float* x, double* sums,
                            double* partials, cudaStream_t stream);
// Adds sums[c] += sum of dy, sums[channels + c] += sum of dy * (x - mean) * inv_std.
void launch_batch_norm_backward_sums(const BatchNormShape& shape, const float* x, const float* dy,
                                     const double* mean, const double* inv_std, double* sums,
                                     double* partials, cudaStream_t stream);
// y = scale * (x - mean) * inv_std + shift; a null scale is 1, a null shift 0.
void launch_batch_norm_apply(const BatchNormShape& shape, const float* x, const double* mean,
                             const double* inv_std, const float* scale, const float* shift,
                             float* y, cudaStream_t stream);
// dx = scale * inv_std * (dy - sum_dy / count - x_hat * sum_dy_x_hat / count), group_sums holding
// sum_dy then sum_dy_x_hat per channel; a null scale is 1.
void launch_batch_norm_backward_apply(const BatchNormShape& shape, const float* x, const float* dy,
                                      const double* mean, const double* inv_std, const float* scale,
                                      const double* group_sums, double group_count, float* dx,
                                      cudaStream_t stream);

}  // namespace tessera::kernels::cuda
