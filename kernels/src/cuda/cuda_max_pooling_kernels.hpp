#pragma once
// Max pooling of our own (cuda_max_pooling_kernels.cu), 1D to 3D, with the interface's padding
// and ceil-mode output extents read directly: cuDNN pools only floor-mode outputs, so a ceil-mode
// layer ran on a padded copy of its input, and cuDNN's 3D max pooling itself ran MLPerf
// CosmoFlow's pool1 (32 x 127^3, one sample) in 4.0 ms forward and 8.3 ms backward on an H200
// (docs/measurements/2026-12-04-mlperf-hpc-v0.7.md), where reading the tensor once takes tens of
// microseconds. Backward gathers: each input cell sums the gradients of the outputs whose first
// maximum it is, in a fixed order, so results are the same bits on every run without atomics.
// Each thread runs max_pooling_windows.hpp's element functions, which the host tests hold to the
// CPU's pooling.
#include <cuda_runtime.h>

#include <cstdint>

#include "tessera/kernels/layer_kernels.hpp"

namespace tessera::kernels::cuda {

// y[n, c, o...] = the largest x over o's window, cells outside the input left out.
void launch_max_pooling_forward(const PoolingGeometry& geometry, std::int64_t batch, const float* x,
                                float* y, cudaStream_t stream);
// dx[n, c, i...] = the sum of dy over the outputs whose window's first maximum (in d, h, w order)
// is at i; y is the forward's output.
void launch_max_pooling_backward(const PoolingGeometry& geometry, std::int64_t batch,
                                 const float* x, const float* y, const float* dy, float* dx,
                                 cudaStream_t stream);

}  // namespace tessera::kernels::cuda
