// Built with TESSERA_CUDA=OFF (or without nvcc, cuDNN or NCCL): the inventory says so and no CUDA
// device can be opened.
#include <optional>
#include <stdexcept>

#include "tessera/kernels/device.hpp"
#include "tessera/kernels/device_inventory.hpp"

namespace tessera::kernels {

void add_cuda_devices(DeviceInventory& inventory) {
  inventory.notes.push_back("CUDA support not built (configure with TESSERA_CUDA=ON)");
}

std::string cuda_library_versions() {
  return "no CUDA parts in this build";
}

std::unique_ptr<Device> open_cuda_device(int /*index*/, std::optional<double> /*capacity_bytes*/) {
  throw std::runtime_error(
      "this build of tessera has no CUDA parts (configured with TESSERA_CUDA=OFF or without nvcc, "
      "cuDNN and NCCL)");
}

}  // namespace tessera::kernels
