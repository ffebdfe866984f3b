#include "cuda/cuda_memory.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "cuda/cuda_check.hpp"
#include "tessera/core/common/quantity.hpp"

namespace tessera::kernels::cuda {
namespace {

struct DriverMemory {
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
};

DriverMemory driver_memory(int device_index) {
  TESSERA_CUDA_CHECK(cudaSetDevice(device_index));
  DriverMemory memory;
  TESSERA_CUDA_CHECK(cudaMemGetInfo(&memory.free_bytes, &memory.total_bytes));
  return memory;
}

cudaMemPool_t default_pool(int device_index) {
  cudaMemPool_t pool = nullptr;
  TESSERA_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, device_index));
  return pool;
}

std::uint64_t pool_attribute(int device_index, cudaMemPoolAttr attribute) {
  std::uint64_t value = 0;
  TESSERA_CUDA_CHECK(cudaMemPoolGetAttribute(default_pool(device_index), attribute, &value));
  return value;
}

// Reserved by the pool but not handed out: free for the next allocation, counted used by the
// driver.
double pool_unused_bytes(int device_index) {
  const auto reserved = pool_attribute(device_index, cudaMemPoolAttrReservedMemCurrent);
  const auto used = pool_attribute(device_index, cudaMemPoolAttrUsedMemCurrent);
  return reserved > used ? static_cast<double>(reserved - used) : 0.0;
}

}  // namespace

double device_bytes_in_use(int device_index) {
  return static_cast<double>(pool_attribute(device_index, cudaMemPoolAttrUsedMemCurrent));
}

double device_bytes_available(int device_index) {
  return static_cast<double>(driver_memory(device_index).free_bytes) +
         pool_unused_bytes(device_index);
}

CudaDeviceMemory::CudaDeviceMemory(std::size_t bytes,
                                   const std::shared_ptr<const AllocationContext>& context,
                                   const std::string& device_name)
    : bytes_(bytes), context_(context) {
  if (bytes == 0) return;
  const int device = context->device_index;
  const auto out_of_memory = [&] {
    return OutOfDeviceMemory(static_cast<double>(bytes), device_bytes_available(device),
                             device_name);
  };
  // More than the whole device is refused here, whatever the pool's own error for it would be.
  if (static_cast<double>(bytes) > context->capacity_bytes) throw out_of_memory();
  if (context->capped) {
    const double free_under_cap = context->capacity_bytes - device_bytes_in_use(device);
    if (static_cast<double>(bytes) > free_under_cap) {
      throw OutOfDeviceMemory(static_cast<double>(bytes), std::max(0.0, free_under_cap),
                              device_name + ", capped at " + format_bytes(context->capacity_bytes));
    }
  }
  void* memory = nullptr;
  cudaError_t status = cudaMallocAsync(&memory, bytes, context->stream);
  if (status == cudaErrorMemoryAllocation) {
    cudaGetLastError();  // an allocation failure is not sticky; clear it for the next call
    // The pool may hold enough unused, in blocks of other sizes: give them back, then retry once.
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(context->stream));
    TESSERA_CUDA_CHECK(cudaMemPoolTrimTo(default_pool(device), 0));
    status = cudaMallocAsync(&memory, bytes, context->stream);
  }
  if (status == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    throw out_of_memory();
  }
  TESSERA_CUDA_CHECK(status);
  data_ = static_cast<float*>(memory);
}

CudaDeviceMemory::~CudaDeviceMemory() {
  if (data_ == nullptr) return;
  // Errors cannot be reported from a destructor; the block is gone either way.
  if (const auto context = context_.lock()) {
    cudaSetDevice(context->device_index);
    cudaFreeAsync(data_, context->stream);
  } else {
    cudaFree(data_);
  }
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
