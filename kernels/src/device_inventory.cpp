#include "tessera/kernels/device_inventory.hpp"

namespace tessera::kernels {

DeviceInventory discover_devices() {
  DeviceInventory inventory;
  add_cpu_devices(inventory);
  add_cuda_devices(inventory);
  return inventory;
}

}  // namespace tessera::kernels
