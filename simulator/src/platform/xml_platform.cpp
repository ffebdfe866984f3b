// load_xml_platform: the user's own SimGrid platform, with GPUs mapped to its hosts by name.
#include <stdexcept>

#include "tessera/simulator/platform/platform.hpp"

namespace tessera::sim {

SimPlatform load_xml_platform(simgrid::s4u::Engine& engine, const std::string& xml_path,
                              const std::string& gpu_host_pattern, std::int64_t gpus,
                              int gpus_per_node) {
  engine.load_platform(xml_path);
  SimPlatform platform;
  platform.gpus_per_node = gpus_per_node;
  const auto placeholder = gpu_host_pattern.find("{i}");
  for (std::int64_t rank = 0; rank < gpus; ++rank) {
    std::string name = gpu_host_pattern;
    name.replace(placeholder, 3, std::to_string(rank));
    auto* host = simgrid::s4u::Host::by_name_or_null(name);
    if (!host) {
      throw std::invalid_argument(xml_path + " has no host '" + name + "' for GPU rank " +
                                  std::to_string(rank) + " (platform.simgrid_xml.gpu_hosts)");
    }
    platform.gpu_hosts.push_back(host);
  }
  platform.description = xml_path + ": " + std::to_string(gpus) + " GPU hosts";
  return platform;
}

}  // namespace tessera::sim
