#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include <oneapi/dnnl/dnnl.hpp>

#include "tessera/kernels/device_inventory.hpp"

namespace tessera::kernels {
namespace {

std::string cpu_model_name() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 2);
    }
  }
  return "unknown CPU";
}

// The last-level cache of core 0, from sysfs ("32768K"); 0 when the system does not say.
double last_level_cache_bytes() {
  double largest = 0;
  for (int index = 0; index < 8; ++index) {
    std::ifstream size("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) +
                       "/size");
    std::string text;
    if (!(size >> text) || text.empty()) continue;
    double bytes = std::strtod(text.c_str(), nullptr);
    if (text.back() == 'K') bytes *= 1024;
    if (text.back() == 'M') bytes *= 1024 * 1024;
    largest = std::max(largest, bytes);
  }
  return largest;
}

// The instruction set oneDNN dispatches to on this CPU: it decides which implementations
// ("jit:avx512_core", ...) the library offers, so it is part of the device's name, and profiles
// measured on a CPU of another instruction set do not pass for this one's.
std::string effective_isa() {
  switch (dnnl::get_effective_cpu_isa()) {
    case dnnl::cpu_isa::sse41:
      return "sse41";
    case dnnl::cpu_isa::avx:
      return "avx";
    case dnnl::cpu_isa::avx2:
      return "avx2";
    case dnnl::cpu_isa::avx2_vnni:
      return "avx2_vnni";
    case dnnl::cpu_isa::avx512_mic:
      return "avx512_mic";
    case dnnl::cpu_isa::avx512_mic_4ops:
      return "avx512_mic_4ops";
    case dnnl::cpu_isa::avx512_core:
      return "avx512_core";
    case dnnl::cpu_isa::avx512_core_vnni:
      return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core_bf16:
      return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_amx:
      return "avx512_core_amx";
    default:
      return "generic";
  }
}

}  // namespace

std::string cpu_library_versions() {
  const dnnl_version_t* version = dnnl_version();
  return "oneDNN " + std::to_string(version->major) + "." + std::to_string(version->minor) + "." +
         std::to_string(version->patch);
}

void add_cpu_devices(DeviceInventory& inventory) {
  DeviceInfo cpu;
  cpu.kind = "cpu";
  cpu.name = cpu_model_name() + " " + effective_isa();
  cpu.compute_units = static_cast<int>(std::thread::hardware_concurrency());
  cpu.cache_bytes = last_level_cache_bytes();
  cpu.memory_bytes =
      static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGE_SIZE));
  cpu.library = cpu_library_versions();
  inventory.devices.push_back(cpu);
}

}  // namespace tessera::kernels
