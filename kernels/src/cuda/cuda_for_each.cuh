#pragma once
// One launch mechanism for the element-wise kernels: a grid-stride loop calling a functor with
// each 64-bit element index (tensors of 3D CNNs exceed 2^31 elements).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "cuda/cuda_check.hpp"

namespace tessera::kernels::cuda {

constexpr int kThreadsPerBlock = 256;

template <class Operation>
__global__ void for_each_element(std::int64_t count, Operation operation) {
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t index = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       index < count; index += step) {
    operation(index);
  }
}

// Enough blocks to fill any current GPU; the loop covers the rest.
inline unsigned int grid_blocks(std::int64_t count) {
  const std::int64_t blocks = (count + kThreadsPerBlock - 1) / kThreadsPerBlock;
  return static_cast<unsigned int>(std::clamp<std::int64_t>(blocks, 1, 65536));
}

template <class Operation>
void launch_for_each(std::int64_t count, Operation operation, cudaStream_t stream) {
  if (count <= 0) return;
  for_each_element<<<grid_blocks(count), kThreadsPerBlock, 0, stream>>>(count, operation);
  TESSERA_CUDA_CHECK(cudaGetLastError());
}

}  // namespace tessera::kernels::cuda
