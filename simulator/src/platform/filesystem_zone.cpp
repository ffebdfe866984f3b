#include "platform/filesystem_zone.hpp"

#include <string>

#include <simgrid/s4u/Link.hpp>

#include "tessera/simulator/platform/platform.hpp"

namespace tessera::sim {

FilesystemZone build_filesystem_zone(const simgrid::s4u::NetZone* parent,
                                     const FilesystemSpec& spec) {
  namespace sg4 = simgrid::s4u;
  FilesystemZone result;
  result.zone = sg4::create_full_zone("filesystem");
  result.zone->set_parent(parent);
  result.gateway = result.zone->create_router("filesystem-gw");
  const double bandwidth = spec.server_bandwidth_bytes_per_second;
  for (std::int64_t k = 0; k < spec.servers; ++k) {
    const std::string name = "fs" + std::to_string(k);
    auto* server = result.zone->create_host(name, kNominalCpuFlopsPerSecond);
    result.disks.push_back(server->create_disk(name + "-disk", bandwidth, bandwidth)->seal());
    result.servers.push_back(server->seal());
    // SimGrid forbids empty routes: each server reaches the gateway through a link as fast as
    // its disk (it cannot serve faster), with no latency of its own.
    auto* link = result.zone->create_split_duplex_link(name + "-link", bandwidth);
    link->set_latency(0)->seal();
    result.zone->add_route(server->get_netpoint(), result.gateway, nullptr, nullptr,
                           {{link, sg4::LinkInRoute::Direction::UP}}, true);
  }
  result.zone->seal();
  return result;
}

}  // namespace tessera::sim
