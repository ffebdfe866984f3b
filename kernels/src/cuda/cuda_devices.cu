// CUDA devices as the runtime sees them, with the cuDNN and NCCL versions linked in. Compiled by
// nvcc whenever the toolkit, cuDNN and NCCL are present, even on machines without a GPU, where the
// runtime reports why no device is visible.
#include <cuda_runtime.h>
#include <cudnn.h>
#include <nccl.h>

#include <string>

#include "tessera/kernels/device_inventory.hpp"

namespace tessera::kernels {
namespace {

std::string dotted(int major, int minor, int patch) {
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

}  // namespace

std::string cuda_library_versions() {
  const auto cudnn = static_cast<int>(cudnnGetVersion());  // major*10000 + minor*100 + patch
  int nccl = 0;
  ncclGetVersion(&nccl);  // major*10000 + minor*100 + patch (NCCL >= 2.9)
  int runtime = 0;
  cudaRuntimeGetVersion(&runtime);  // major*1000 + minor*10
  return "CUDA runtime " + dotted(runtime / 1000, (runtime % 1000) / 10, 0) + ", cuDNN " +
         dotted(cudnn / 10000, (cudnn % 10000) / 100, cudnn % 100) + ", NCCL " +
         dotted(nccl / 10000, (nccl % 10000) / 100, nccl % 100);
}

void add_cuda_devices(DeviceInventory& inventory) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    inventory.notes.push_back(std::string("no CUDA device: ") + cudaGetErrorString(status) + " (" +
                              cuda_library_versions() + ")");
    return;
  }
  const std::string versions = cuda_library_versions();
  for (int index = 0; index < count; ++index) {
    cudaDeviceProp properties{};
    if (cudaGetDeviceProperties(&properties, index) != cudaSuccess) continue;
    DeviceInfo gpu;
    gpu.kind = "cuda";
    gpu.index = index;
    gpu.name = properties.name;
    gpu.memory_bytes = static_cast<double>(properties.totalGlobalMem);
    gpu.compute_units = properties.multiProcessorCount;
    gpu.cache_bytes = static_cast<double>(properties.l2CacheSize);
    gpu.library =
        versions + ", sm_" + std::to_string(properties.major) + std::to_string(properties.minor);
    inventory.devices.push_back(gpu);
  }
}

}  // namespace tessera::kernels
