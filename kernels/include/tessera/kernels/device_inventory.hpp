#pragma once
// The compute devices this machine really has, with the library versions that would drive them:
// what the real backend and the profiler can run on.
#include <string>
#include <vector>

namespace tessera::kernels {

struct DeviceInfo {
  std::string kind;  // "cpu" or "cuda"
  int index = 0;
  std::string name;
  double memory_bytes = 0;
  int compute_units = 0;   // cores, or streaming multiprocessors
  double cache_bytes = 0;  // the last-level cache one core or the GPU sees (0: unknown)
  std::string library;     // e.g. "oneDNN 2.6.3", "cuDNN 9.x, NCCL 2.x"
};

struct DeviceInventory {
  std::vector<DeviceInfo> devices;
  std::vector<std::string> notes;  // why a kind of device is absent
};

DeviceInventory discover_devices();

// The versions of the backend libraries as loaded now, without touching a device (what
// `tessera --version` prints): oneDNN's; the CUDA runtime's, cuDNN's and NCCL's, or why there are
// none in this build.
std::string cpu_library_versions();
std::string cuda_library_versions();

// Parts of the inventory, one per backend library.
void add_cpu_devices(DeviceInventory& inventory);
void add_cuda_devices(DeviceInventory& inventory);

}  // namespace tessera::kernels
