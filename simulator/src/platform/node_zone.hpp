#pragma once
// One node of a cluster as a SimGrid Full zone: its GPUs, its CPU and the gateway router toward
// the fabric, joined by NVSwitch/NVLink/PCIe links and the node's aggregated NIC link.
#include <cstdint>
#include <vector>

#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/s4u/Disk.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include "tessera/core/scenario/cluster_spec.hpp"

namespace tessera::sim {

struct NodeZone {
  simgrid::kernel::routing::NetPoint* netpoint = nullptr;  // the zone, a fabric leaf
  simgrid::kernel::routing::NetPoint* gateway = nullptr;   // its router toward the fabric
  std::vector<simgrid::s4u::Host*> gpus;                   // local index order
  simgrid::s4u::Host* cpu = nullptr;
  simgrid::s4u::Disk* local_storage = nullptr;  // on the CPU host; null when the node has none
};

// A node's links. SimGrid 3.32 checks every new link's name against every zone of the platform,
// so links are created in the root zone before the node zones exist: building all node zones
// first would make that check, and the build, quadratic in the node count.
struct NodeLinks {
  std::vector<simgrid::s4u::Link*> pcie;  // per GPU (UP: GPU to host, or to its PCIe switch)
  // Per PCIe switch, its uplink to the host (UP: switch to host); none when every GPU has its
  // own link to the host (gpus_per_pcie_switch 1).
  std::vector<simgrid::s4u::Link*> pcie_switch;
  // nvswitch: per GPU; nvlink_mesh: per pair i < j in (0,1), (0,2), ... order, null where the
  // pair has no NVLink (it talks over PCIe); pcie: none.
  std::vector<simgrid::s4u::Link*> gpu;
  simgrid::s4u::Link* nic = nullptr;  // all NICs aggregated (UP: node to fabric)
};

// Creates node `node`'s links, named node<k>-..., in `zone`.
NodeLinks create_node_links(simgrid::s4u::NetZone* zone, const ClusterSpec& cluster,
                            std::int64_t node);

// Creates and seals node `node` (GPU hosts gpu<node * gpus_per_node + i>) inside `parent`,
// routing over `links`.
NodeZone build_node_zone(const simgrid::s4u::NetZone* parent, const ClusterSpec& cluster,
                         std::int64_t node, const NodeLinks& links);

}  // namespace tessera::sim
