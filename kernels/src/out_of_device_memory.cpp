// Its own file: the CUDA module (cuda_module/cuda_entry.hpp) throws it too and compiles this
// file without the rest of device.cpp.
#include "tessera/core/common/quantity.hpp"
#include "tessera/kernels/device.hpp"

namespace tessera::kernels {

OutOfDeviceMemory::OutOfDeviceMemory(double requested_bytes, double available_bytes,
                                     const std::string& device)
    : std::runtime_error("does not fit: needs " + format_bytes(requested_bytes) + ", " + device +
                         " has " + format_bytes(available_bytes) + " free"),
      requested_bytes_(requested_bytes),
      available_bytes_(available_bytes) {}

}  // namespace tessera::kernels
