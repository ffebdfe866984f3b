// What `tessera --version` prints: the project version, how this binary was built, and the
// backend libraries' versions as the loader found them. A packed binary run on another machine
// (tools/gpu/) says here which cuDNN and NCCL it picked up.
#include "version_text.hpp"

#include "tessera/core/content_digest.hpp"
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
         "\nlibraries: " + kernels::cpu_library_versions() + "; " +
         kernels::cuda_library_versions();
}

}  // namespace tessera::app
