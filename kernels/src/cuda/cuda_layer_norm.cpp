// CudaLayerKernels' layer normalisation: the arguments checked as the CPU's are, the element work
// in cuda_layer_norm_kernels.cu.
#include "argument_check.hpp"
#include "cuda/cuda_layer_kernels.hpp"
#include "cuda/cuda_layer_norm_kernels.hpp"

namespace tessera::kernels::cuda {

void CudaLayerKernels::layer_norm_forward(std::int64_t batch, std::int64_t channels,
                                          std::int64_t positions, const float* x,
                                          const float* scale, const float* shift, float* y,
                                          float* mean, float* inv_std) {
  require_normalization_extents("layer_norm_forward", batch, channels, positions, "positions", 1);
  const LayerNormShape shape{batch, channels, positions};
  require_argument((scale == nullptr) == (shift == nullptr), "layer_norm_forward",
                   "scale and shift go together");
  context_.make_current();
  launch_layer_norm_forward(shape, x, scale, shift, y, mean, inv_std, stream());
}

void CudaLayerKernels::layer_norm_backward(std::int64_t batch, std::int64_t channels,
                                           std::int64_t positions, const float* x, const float* dy,
                                           const float* mean, const float* inv_std,
                                           const float* scale, float* dx, float* dscale,
                                           float* dshift, float beta) {
  require_normalization_extents("layer_norm_backward", batch, channels, positions, "positions", 1);
  const LayerNormShape shape{batch, channels, positions};
  require_argument((dscale == nullptr) == (dshift == nullptr), "layer_norm_backward",
                   "dscale and dshift go together");
  context_.make_current();
  if (dx != nullptr) {
    launch_layer_norm_backward_data(shape, x, dy, mean, inv_std, scale, dx, stream());
  }
  if (dscale != nullptr) {
    launch_layer_norm_backward_affine(shape, x, dy, mean, inv_std, dscale, dshift, beta, stream());
  }
}

}  // namespace tessera::kernels::cuda
