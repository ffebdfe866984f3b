#pragma once
// The CUDA parts (kernels/src/cuda) are a module of their own, libtessera_cuda.so, loaded the
// first time a GPU path asks for it: a command that uses no GPU never loads cuBLAS, cuDNN and
// NCCL, most of what starting the program cost (docs/measurements/2026-11-27.md). The module hands
// the program this table of its entry points; cuda_module.cpp forwards the public functions
// (device.hpp, device_inventory.hpp, communicator.hpp, cudnn_layout_check.hpp) to it.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cudnn_layout.hpp"
#include "tessera/kernels/communicator.hpp"
#include "tessera/kernels/device.hpp"
#include "tessera/kernels/device_inventory.hpp"

namespace tessera::kernels {

inline constexpr int kCudaEntryLayoutVersion = 2;
inline constexpr const char* kCudaModuleFile = "libtessera_cuda.so";
inline constexpr const char* kCudaEntrySymbol = "tessera_cuda_entry";

struct CudaEntry {
  // The module and the program must be built from the same sources: a table of another layout
  // is refused.
  int layout_version = kCudaEntryLayoutVersion;
  void (*add_cuda_devices)(DeviceInventory& inventory) = nullptr;
  std::string (*cuda_library_versions)() = nullptr;
  std::unique_ptr<Device> (*open_cuda_device)(int index,
                                              std::optional<double> capacity_bytes) = nullptr;
  std::unique_ptr<Communicator> (*nccl_over)(Communicator& bootstrap) = nullptr;
  std::optional<std::vector<int>> (*cudnn_convolution_output_dims)(
      const CudnnConvolutionLayout& layout) = nullptr;
  std::optional<std::vector<int>> (*cudnn_pooling_output_dims)(
      bool max, const CudnnPoolingLayout& layout) = nullptr;
};

}  // namespace tessera::kernels
