// Built with TESSERA_CUDA=OFF (or without nvcc, cuDNN or NCCL): the inventory says so.
#include "tessera/kernels/device_inventory.hpp"

namespace tessera::kernels {

void add_cuda_devices(DeviceInventory& inventory) {
  inventory.notes.push_back("CUDA support not built (configure with TESSERA_CUDA=ON)");
}

}  // namespace tessera::kernels
