// The program's side of the CUDA module (cuda_entry.hpp): the public CUDA functions load
// libtessera_cuda.so on first use and forward to it. Where it cannot be loaded (a CUDA library
// missing on this machine, say), the program goes on as a build without the CUDA parts would,
// saying why.
#include <dlfcn.h>

#include <mutex>
#include <optional>
#include <stdexcept>

#include "cuda_module/cuda_entry.hpp"
#include "cudnn_layout_check.hpp"

namespace tessera::kernels {
namespace {

struct LoadedModule {
  const CudaEntry* entry = nullptr;
  std::string problem;  // why it did not load
};

const LoadedModule& cuda_module() {
  static LoadedModule loaded;
  static std::once_flag once;
  std::call_once(once, [] {
    // Found through the program's run path (the build folder) or LD_LIBRARY_PATH (the GPU
    // bundle, tools/gpu/); kept loaded for the life of the process.
    void* handle = ::dlopen(kCudaModuleFile, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = ::dlerror();
      loaded.problem = std::string("cannot load ") + kCudaModuleFile + ": " +
                       (why != nullptr ? why : "no reason given");
      return;
    }
    using EntryFunction = const CudaEntry* (*)();
    auto* function = reinterpret_cast<EntryFunction>(::dlsym(handle, kCudaEntrySymbol));
    const CudaEntry* entry = function != nullptr ? function() : nullptr;
    if (entry == nullptr || entry->layout_version != kCudaEntryLayoutVersion) {
      loaded.problem = std::string(kCudaModuleFile) + " is not this build's CUDA module";
      return;
    }
    loaded.entry = entry;
  });
  return loaded;
}

const CudaEntry& required() {
  const auto& loaded = cuda_module();
  if (loaded.entry == nullptr) throw std::runtime_error("no CUDA parts: " + loaded.problem);
  return *loaded.entry;
}

// Why no CUDA device can exist here: the NVIDIA driver is absent. Asked before loading the
// module, whose cuDNN, cuBLAS and NCCL take a CPU-only machine 0.3 to 0.5 s to load only for the
// runtime to report the missing driver, in every real run's and profile's device discovery.
// Asked once per process, as the module is loaded once.
const std::optional<std::string>& missing_driver() {
  static const std::optional<std::string> why = []() -> std::optional<std::string> {
    // Stays loaded: the module's CUDA runtime loads it again.
    if (::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL) != nullptr) return std::nullopt;
    const char* error = ::dlerror();
    return error != nullptr ? error : "libcuda.so.1 not found";
  }();
  return why;
}

}  // namespace

void add_cuda_devices(DeviceInventory& inventory) {
  if (const auto& why = missing_driver()) {
    inventory.notes.push_back("no CUDA device: no NVIDIA driver (" + *why + ")");
    return;
  }
  const auto& loaded = cuda_module();
  if (loaded.entry == nullptr) {
    inventory.notes.push_back("CUDA parts not loaded: " + loaded.problem);
    return;
  }
  loaded.entry->add_cuda_devices(inventory);
}

std::string cuda_library_versions() {
  const auto& loaded = cuda_module();
  return loaded.entry != nullptr ? loaded.entry->cuda_library_versions()
                                 : "CUDA parts not loaded (" + loaded.problem + ")";
}

std::unique_ptr<Device> open_cuda_device(int index, std::optional<double> capacity_bytes) {
  return required().open_cuda_device(index, capacity_bytes);
}

std::unique_ptr<Communicator> nccl_over(Communicator& bootstrap) {
  return required().nccl_over(bootstrap);
}

std::optional<std::vector<int>> cudnn_convolution_output_dims(
    const CudnnConvolutionLayout& layout) {
  const auto& loaded = cuda_module();
  if (loaded.entry == nullptr) return std::nullopt;
  return loaded.entry->cudnn_convolution_output_dims(layout);
}

std::optional<std::vector<int>> cudnn_pooling_output_dims(bool max,
                                                          const CudnnPoolingLayout& layout) {
  const auto& loaded = cuda_module();
  if (loaded.entry == nullptr) return std::nullopt;
  return loaded.entry->cudnn_pooling_output_dims(max, layout);
}

}  // namespace tessera::kernels
