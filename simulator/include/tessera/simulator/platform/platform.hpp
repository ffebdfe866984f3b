#pragma once
// SimGrid platforms built in C++ from a cluster description (or read from a SimGrid XML file with
// a GPU-to-host mapping). GPUs, node CPUs and file-system servers are hosts; NVLink/NVSwitch,
// PCIe, NICs, the fat-tree and the file system's attachment are links.
//
// Layout built by build_cluster_platform (every link full duplex, SPLITDUPLEX):
//  - root: a Full zone "tessera-cluster" holding the fabric and the file system;
//  - each node of the job (k counts the job's nodes; a failed node of the cluster keeps its leaf
//    position, holding a spare router): a Full zone "node<k>" with its GPU hosts "gpu<rank>"
//    (speed = fp32 peak), a CPU host "node<k>-cpu" (nominal speed: no CPU work is modelled) and
//    a router "node<k>-gw".
//    GPU i -> GPU j: nvswitch: links node<k>-nvswitch<i>, node<k>-nvswitch<j>;
//                    nvlink_mesh: link node<k>-nvlink<i>-<j> (i < j; bonded links as one of
//                    their summed bandwidth), or over PCIe as below where the pair has none;
//                    pcie: links node<k>-pcie<i>, node<k>-pcie<j>.
//    GPU i -> CPU: node<k>-pcie<i>. GPU i -> network: node<k>-pcie<i>, node<k>-nic.
//    Node-local storage, where the cluster has it, is a Disk "node<k>-local" on the CPU host.
//    The node's NICs (multi-rail) are aggregated into the one link node<k>-nic of
//    nics x nic_bandwidth, and the node's cables to its leaf switch into one fat-tree link of
//    nics x link_bandwidth (so are the switch-to-switch links: each bundles `nics` cables).
//  - fabric: a SimGrid fat-tree zone "fabric" whose leaves are the node zones. One level when all
//    nodes fit one leaf switch; else two: leaf switches of nodes_per_switch nodes, each with
//    round(nodes_per_switch / oversubscription) uplinks, to as many top switches. Unused leaf
//    ports hold spare routers.
//  - file system: a Full zone "filesystem" with `servers` hosts "fs<k>", each with a Disk
//  "fs<k>-disk"
//    (read and write at server_bandwidth) and a link fs<k>-link of server_bandwidth (a server
//    cannot serve faster than its disk). It joins the fabric at a leaf "fabric-fsport" through
//    the link "filesystem-attachment" (attachment_bandwidth, latency). The fsport's fat-tree link
//    (and, at two levels, the uplinks of its own leaf switch) are raised to carry the attachment
//    bandwidth, so file-system traffic crosses the fabric without an artificial bottleneck.
// Route latencies add up the latency of every link crossed. The node links live in the root zone
// (SimGrid 3.32 checks each new link's name against every zone, so creating them before the node
// zones keeps the build fast) but are named after their node.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <simgrid/s4u/Disk.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include "tessera/core/scenario/cluster_spec.hpp"
#include "tessera/simulator/platform/node_rings.hpp"

namespace tessera::sim {

// Speed given to node CPUs and file servers (FLOP/s); they run no modelled computation.
inline constexpr double kNominalCpuFlopsPerSecond = 1e12;

// How nodes are laid out on the fat-tree.
struct FabricPlan {
  int levels = 1;                     // switch levels: 1 when all nodes fit one leaf switch
  std::int64_t nodes = 0;             // node leaves, positions [0, nodes)
  std::int64_t nodes_per_switch = 1;  // leaf ports per leaf switch (2 levels)
  std::int64_t leaf_switches = 1;     // at 2 levels: the nodes' switches plus the fsport's own
  std::int64_t leaves = 0;            // all leaf positions: nodes, fsport, spare ports
  std::int64_t filesystem_leaf = 0;   // position of the fsport
  std::int64_t uplinks_per_leaf_switch = 0;    // 0 at 1 level
  double link_bandwidth_bytes_per_second = 0;  // one fat-tree link (nics cables bundled)
  double oversubscription = 1;  // achieved: nodes_per_switch / uplinks_per_leaf_switch
};

// The fat-tree for `nodes` nodes of `cluster`.
FabricPlan plan_fabric(const ClusterSpec& cluster, std::int64_t nodes);

struct SimPlatform {
  std::vector<simgrid::s4u::Host*> gpu_hosts;   // rank r = node * gpus_per_node + local index
  std::vector<simgrid::s4u::Host*> node_hosts;  // one CPU host per node
  std::vector<simgrid::s4u::Disk*> node_disks;  // node-local storage per node (null: none)
  std::vector<simgrid::s4u::Host*> filesystem_servers;
  std::vector<simgrid::s4u::Disk*> filesystem_disks;  // one per server, same order
  int gpus_per_node = 1;
  std::string description;  // e.g. "lassen: 512 nodes, fat-tree 2 levels, ..."
  FabricPlan fabric;
  simgrid::s4u::NetZone* zone = nullptr;  // "tessera-cluster"
  NodeRings node_rings;                   // the nodes' NVLink rings (none for an XML platform)

  int node_of(int rank) const { return rank / gpus_per_node; }
  // Whether every node has node-local storage (none where the platform describes no nodes).
  bool nodes_have_disks() const {
    return !node_disks.empty() &&
           std::all_of(node_disks.begin(), node_disks.end(), [](auto* disk) { return disk; });
  }
};

// Builds the platform for the first `gpus` GPUs of `cluster` (whole nodes) in the engine's root
// zone. Call after the Engine exists and before it runs. The "tessera-cluster" zone becomes the
// root if the engine has none, else a child of the root (routing to it is then the caller's).
// The platform is sealed on return. Throws std::invalid_argument for a GPU count out of range.
SimPlatform build_cluster_platform(simgrid::s4u::Engine& engine, const ClusterSpec& cluster,
                                   std::int64_t gpus);

// A user's SimGrid platform file: GPU rank i runs on the host named `gpu_host_pattern` with "{i}"
// replaced by i. Such a platform has no node CPUs or file system, so input reads are not
// simulated. Throws std::invalid_argument naming a host the file lacks.
SimPlatform load_xml_platform(simgrid::s4u::Engine& engine, const std::string& xml_path,
                              const std::string& gpu_host_pattern, std::int64_t gpus,
                              int gpus_per_node);

}  // namespace tessera::sim
