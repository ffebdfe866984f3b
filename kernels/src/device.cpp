#include "tessera/kernels/device.hpp"

#include <stdexcept>

namespace tessera::kernels {

std::unique_ptr<Device> open_device(const std::string& name, std::optional<double> capacity_bytes) {
  if (name == "cpu") return capacity_bytes ? open_cpu_device(*capacity_bytes) : open_cpu_device();
  if (name.rfind("cuda:", 0) == 0) {
    try {
      return open_cuda_device(std::stoi(name.substr(5)), capacity_bytes);
    } catch (const std::invalid_argument&) {
      // falls through to the error below
    }
  }
  throw std::invalid_argument("unknown device '" + name + "': expected cpu or cuda:N");
}

}  // namespace tessera::kernels
