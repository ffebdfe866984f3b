#pragma once
// The element work of CudaLayerKernels' layer normalisation (cuda_layer_norm_kernels.cu),
// enqueued on `stream`: one thread per normalised vector for the values, one per channel for the
// scale and shift gradients. Pointers are device memory; scale and shift may be null.
#include <cuda_runtime.h>

#include <cstdint>

namespace tessera::kernels::cuda {

struct LayerNormShape {
  std::int64_t batch = 0;
  std::int64_t channels = 1;
  std::int64_t positions = 1;  // the vectors of a sample, and the distance between their values
};

void launch_layer_norm_forward(const LayerNormShape& shape, const float* x, const float* scale,
                               const float* shift, float* y, float* mean, float* inv_std,
                               cudaStream_t stream);
void launch_layer_norm_backward_data(const LayerNormShape& shape, const float* x, const float* dy,
                                     const float* mean, const float* inv_std, const float* scale,
                                     float* dx, cudaStream_t stream);
void launch_layer_norm_backward_affine(const LayerNormShape& shape, const float* x, const float* dy,
                                       const float* mean, const float* inv_std, float* dscale,
                                       float* dshift, float beta, cudaStream_t stream);

}  // namespace tessera::kernels::cuda
