#include "cuda/cuda_memory.hpp"

#include <cuda_runtime.h>

#include "cuda/cuda_check.hpp"

namespace tessera::kernels::cuda {

CudaDeviceMemory::CudaDeviceMemory(std::size_t bytes, const std::string& device_name)
    : bytes_(bytes) {
  if (bytes == 0) return;
  void* memory = nullptr;
  const cudaError_t status = cudaMalloc(&memory, bytes);
  if (status == cudaErrorMemoryAllocation) {
    cudaGetLastError();  // an allocation failure is not sticky; clear it for the next call
    std::size_t free_bytes = 0;
    std::size_t total_bytes = 0;
    TESSERA_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    throw OutOfDeviceMemory(static_cast<double>(bytes), static_cast<double>(free_bytes),
                            device_name);
  }
  TESSERA_CUDA_CHECK(status);
  data_ = static_cast<float*>(memory);
}

CudaDeviceMemory::~CudaDeviceMemory() {
  if (data_ != nullptr) cudaFree(data_);
}

PinnedHostMemory::PinnedHostMemory(std::size_t bytes) : bytes_(bytes) {
  if (bytes == 0) return;
  void* memory = nullptr;
  TESSERA_CUDA_CHECK(cudaMallocHost(&memory, bytes));
  data_ = static_cast<float*>(memory);
}

PinnedHostMemory::~PinnedHostMemory() {
  if (data_ != nullptr) cudaFreeHost(data_);
}

DeviceScratch::~DeviceScratch() {
  // Synchronous: the stream may be gone by now.
  if (data_ != nullptr) cudaFree(data_);
}

void* DeviceScratch::reserve(std::size_t bytes) {
  if (bytes <= bytes_) return data_;
  // Freed after the stream's work that still reads the old block.
  if (data_ != nullptr) TESSERA_CUDA_CHECK(cudaFreeAsync(data_, stream_));
  data_ = nullptr;
  bytes_ = 0;
  TESSERA_CUDA_CHECK(cudaMallocAsync(&data_, bytes, stream_));
  bytes_ = bytes;
  return data_;
}

}  // namespace tessera::kernels::cuda
