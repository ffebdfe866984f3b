#include "cuda/cuda_for_each.cuh"
#include "cuda/cuda_max_pooling_kernels.hpp"
#include "max_pooling_windows.hpp"

namespace tessera::kernels::cuda {
namespace {

struct MaxPoolingForward {
  PoolingWindows windows;
  const float* x;
  float* y;
  __device__ void operator()(std::int64_t index) const {
    y[index] = max_pooling_output(windows, x, index);
  }
};

struct MaxPoolingBackward {
  PoolingWindows windows;
  const float* x;
  const float* y;
  const float* dy;
  float* dx;
  __device__ void operator()(std::int64_t index) const {
    dx[index] = max_pooling_input_gradient(windows, x, y, dy, index);
  }
};

}  // namespace

void launch_max_pooling_forward(const PoolingGeometry& geometry, std::int64_t batch, const float* x,
                                float* y, cudaStream_t stream) {
  const PoolingWindows windows = pooling_windows(geometry);
  launch_for_each(batch * geometry.channels * windows.out_volume(),
                  MaxPoolingForward{windows, x, y}, stream);
}

void launch_max_pooling_backward(const PoolingGeometry& geometry, std::int64_t batch,
                                 const float* x, const float* y, const float* dy, float* dx,
                                 cudaStream_t stream) {
  const PoolingWindows windows = pooling_windows(geometry);
  launch_for_each(batch * geometry.channels * windows.in_volume(),
                  MaxPoolingBackward{windows, x, y, dy, dx}, stream);
}

}  // namespace tessera::kernels::cuda
