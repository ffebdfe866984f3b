#pragma once
// Memory blocks of a CUDA device: device memory (cudaMalloc), pinned host memory for the copy
// stream (cudaMallocHost), and a growable scratch block for the small per-call uploads of the
// layer kernels (per-channel statistics, labels) and their per-channel results.
#include <cuda_runtime.h>

#include <cstddef>
#include <string>

#include "tessera/kernels/device.hpp"

namespace tessera::kernels::cuda {

class CudaDeviceMemory final : public DeviceMemory {
 public:
  // Throws OutOfDeviceMemory with the requested and the free bytes when cudaMalloc fails.
  CudaDeviceMemory(std::size_t bytes, const std::string& device_name);
  ~CudaDeviceMemory() override;
  CudaDeviceMemory(const CudaDeviceMemory&) = delete;
  CudaDeviceMemory& operator=(const CudaDeviceMemory&) = delete;
  float* data() override { return data_; }
  std::size_t bytes() const override { return bytes_; }

 private:
  float* data_ = nullptr;
  std::size_t bytes_ = 0;
};

class PinnedHostMemory final : public DeviceMemory {
 public:
  explicit PinnedHostMemory(std::size_t bytes);
  ~PinnedHostMemory() override;
  PinnedHostMemory(const PinnedHostMemory&) = delete;
  PinnedHostMemory& operator=(const PinnedHostMemory&) = delete;
  float* data() override { return data_; }
  std::size_t bytes() const override { return bytes_; }

 private:
  float* data_ = nullptr;
  std::size_t bytes_ = 0;
};

// Device memory that grows to the largest request and is reused, all on one stream: a block
// handed out is valid for work on that stream until the next reserve(). Growing is stream-ordered
// (cudaFreeAsync / cudaMallocAsync), so it never waits for the whole device, where NCCL
// operations may be waiting for other ranks.
class DeviceScratch {
 public:
  explicit DeviceScratch(cudaStream_t stream) : stream_(stream) {}
  ~DeviceScratch();
  DeviceScratch(const DeviceScratch&) = delete;
  DeviceScratch& operator=(const DeviceScratch&) = delete;
  void* reserve(std::size_t bytes);

 private:
  cudaStream_t stream_;
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace tessera::kernels::cuda
