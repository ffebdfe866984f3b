// What `tessera --version` prints: the project version, how this binary was built, and the CPU
// library's version. The CUDA libraries are loaded only when a GPU is used (the CUDA module,
// kernels/src/cuda_module/cuda_entry.hpp), so --version does not name them: `tessera devices`
// does, and says there which cuDNN and NCCL a packed binary picked up (tools/gpu/).
#include "version_text.hpp"

#include "tessera/core/common/content_digest.hpp"
#include "tessera/kernels/device_inventory.hpp"

namespace tessera::app {

std::string build_identity() {
  static const std::string identity =
      std::string(TESSERA_VERSION) + " (executable " + file_digest("/proc/self/exe") + ")";
  return identity;
}

std::string version_text() {
  return std::string("tessera ") + TESSERA_VERSION + "\nbuild: " + TESSERA_BUILD_TYPE + ", " +
         TESSERA_COMPILER + ", CUDA parts: " + TESSERA_CUDA_BUILD +
         "\nlibraries: " + kernels::cpu_library_versions() +
         (std::string(TESSERA_CUDA_BUILD) == "none"
              ? std::string()
              : "; CUDA libraries loaded on first use (tessera devices names them)");
}

}  // namespace tessera::app
