#pragma once
// The parallel file system as a SimGrid Full zone: `servers` hosts, each with a Disk, joined to a
// gateway router.
#include <vector>

#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/s4u/Disk.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include "tessera/core/scenario/cluster_spec.hpp"

namespace tessera::sim {

struct FilesystemZone {
  simgrid::s4u::NetZone* zone = nullptr;
  simgrid::kernel::routing::NetPoint* gateway = nullptr;
  std::vector<simgrid::s4u::Host*> servers;
  std::vector<simgrid::s4u::Disk*> disks;  // one per server, same order
};

// Creates and seals the zone "filesystem" inside `parent`.
FilesystemZone build_filesystem_zone(const simgrid::s4u::NetZone* parent,
                                     const FilesystemSpec& spec);

}  // namespace tessera::sim
