#pragma once
// Memory blocks of a CUDA device: device memory (stream-ordered, from the device's memory pool),
// pinned host memory for the copy stream (cudaMallocHost), and a growable scratch block for the
// small per-call uploads of the layer kernels (per-channel statistics, labels) and their
// per-channel results.
#include <cuda_runtime.h>

#include <cstddef>
#include <memory>
#include <string>

#include "tessera/kernels/device.hpp"

namespace tessera::kernels::cuda {

// Where device memory is allocated and freed: the device, its memory (known once, at opening),
// and the stream whose order allocations and frees take: the compute stream, which every kernel
// runs on, and which copies and NCCL calls wait for before they start.
struct AllocationContext {
  int device_index = 0;
  double capacity_bytes = 0;  // the device's memory, or the cap it was opened with
  // Capped: an allocation is refused where the program's bytes in use (device_bytes_in_use) would
  // pass capacity_bytes; otherwise only one larger than the device is refused here.
  bool capped = false;
  cudaStream_t stream = nullptr;
};

// Device memory from the device's default memory pool (cudaMallocAsync), given back to it in the
// compute stream's order (cudaFreeAsync). The step program allocates and releases feature maps
// layer by layer (vDNN); cudaMalloc and cudaFree map and unmap pages and wait for the whole
// device, NCCL operations waiting for other ranks included, at every one of them. The pool keeps
// what is freed (cuda_context.cpp sets its release threshold), so a later block of the same size
// costs no mapping. A block that outlives its device's streams is freed synchronously.
class CudaDeviceMemory final : public DeviceMemory {
 public:
  // Throws OutOfDeviceMemory with the requested and the free bytes (the device's, plus what the
  // pool holds unused) when the pool cannot grow by `bytes`, even after giving back what it
  // holds unused.
  CudaDeviceMemory(std::size_t bytes, const std::shared_ptr<const AllocationContext>& context,
                   const std::string& device_name);
  ~CudaDeviceMemory() override;
  CudaDeviceMemory(const CudaDeviceMemory&) = delete;
  CudaDeviceMemory& operator=(const CudaDeviceMemory&) = delete;
  float* data() override { return data_; }
  std::size_t bytes() const override { return bytes_; }

 private:
  float* data_ = nullptr;
  std::size_t bytes_ = 0;
  std::weak_ptr<const AllocationContext> context_;
};

// Bytes in use on the device: what the default pool has handed out, that is every block of the
// program (feature maps, weights, optimizer state, workspaces, the kernels' scratch), but not
// CUDA's context nor the memory cuDNN, cuBLAS and NCCL hold for themselves, which the simulator
// does not count either (measured on the H200 on 2026-11-27 with the driver's count:
// docs/measurements/).
double device_bytes_in_use(int device_index);
// Bytes an allocation could still get: the driver's free bytes plus the pool's unused ones.
double device_bytes_available(int device_index);

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
