#pragma once
// A GPU cluster as a scenario sees it: its nodes and GPUs, how GPUs talk inside a node, the
// network between nodes and the parallel file system. Cluster files live in scenarios/clusters/
// (built in as presets) or anywhere a scenario points to. Every figure is read with its unit and
// stored in SI base units (bytes, bytes per second, FLOP per second, seconds).
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/core/common/input_error.hpp"
#include "tessera/core/common/yaml_reader_fwd.hpp"
#include "tessera/core/scenario/rank_jitter.hpp"

namespace tessera {

struct GpuSpec {
  std::string model;
  double memory_bytes = 0;
  double memory_bandwidth_bytes_per_second = 0;
  double fp32_flops_per_second = 0;
  double tensor_flops_per_second = 0;  // 0 when the GPU has no tensor cores
  // Achieved fractions of the peaks, for a roofline model of kernels, in (0, 1].
  double compute_efficiency = 0.7;
  double memory_efficiency = 0.8;
  double kernel_launch_latency_seconds = 5e-6;
  // Whether gradient all-reduces and vDNN's copies run beside compute (a GPU: NCCL on its own
  // stream, copy engines) or hold it up (a CPU rank: its cores compute and copy, and MPI
  // progresses a collective only inside its calls).
  bool overlaps_communication = true;
  // Board power (TDP) in watts from the spec sheet, for energy per sample; 0 when not given.
  double power_watts = 0;
};

enum class GpuInterconnect {
  nvswitch,     // every GPU has one link to a switch: GPU i -> j crosses link i and link j
  nvlink_mesh,  // GPU pairs linked directly (every pair, or those NodeSpec::nvlinks lists)
  pcie,         // GPUs talk over their PCIe links (i -> j crosses PCIe i and PCIe j)
};
std::string to_string(GpuInterconnect interconnect);

// A direct NVLink connection between two GPUs of a node (local indices), of `links` bonded links.
struct NvlinkPair {
  int first = 0;
  int second = 0;
  int links = 1;
};

// One node. Bandwidths are per direction (links are full duplex); latencies are per link crossed.
struct NodeSpec {
  GpuInterconnect gpu_interconnect = GpuInterconnect::pcie;
  // Per GPU (nvswitch, pcie) or per NVLink (nvlink_mesh). For pcie these equal the PCIe figures.
  double gpu_link_bandwidth_bytes_per_second = 0;
  double gpu_link_latency_seconds = 0;
  // nvlink_mesh: the directly linked GPU pairs (a DGX-1's hybrid cube mesh); empty: every pair
  // has one link. Unlinked pairs talk over PCIe, as with gpu_interconnect: pcie.
  std::vector<NvlinkPair> nvlinks;
  // Each GPU's link to the host CPUs (PCIe, or NVLink on Power9 nodes).
  double pcie_bandwidth_bytes_per_second = 0;
  double pcie_latency_seconds = 0;
  // GPUs sharing one PCIe switch, whose one uplink to the host they cross to reach host memory
  // (vDNN's copies, the input's copies) and GPUs behind other switches (DGX-1: 2 GPUs per
  // switch); 1: each GPU has its link to the host to itself. The uplink's bandwidth per direction.
  std::int64_t gpus_per_pcie_switch = 1;
  double pcie_switch_bandwidth_bytes_per_second = 0;
  double host_memory_bytes = 0;
  std::int64_t nics = 1;
  double nic_bandwidth_bytes_per_second = 0;  // per NIC
  double nic_latency_seconds = 0;
  // Node-local storage (NVMe, or a RAM disk) that a data set can be staged to; 0 when none.
  double local_storage_bytes = 0;
  double local_storage_bandwidth_bytes_per_second = 0;  // read

  // NVLinks joining local GPUs a and b (0: none, they talk over PCIe).
  int nvlinks_between(int a, int b) const;

  double node_nic_bandwidth_bytes_per_second() const {
    return static_cast<double>(nics) * nic_bandwidth_bytes_per_second;
  }
};

enum class NetworkTopology { fat_tree };
std::string to_string(NetworkTopology topology);

// The network between nodes.
struct NetworkSpec {
  NetworkTopology topology = NetworkTopology::fat_tree;
  std::int64_t nodes_per_switch = 1;           // leaf switch ports toward nodes
  double oversubscription = 1;                 // >= 1: down / up bandwidth at a leaf switch
  double link_bandwidth_bytes_per_second = 0;  // one cable, per direction
  double link_latency_seconds = 0;             // one cable
};

// The parallel file system.
struct FilesystemSpec {
  std::int64_t servers = 1;
  double server_bandwidth_bytes_per_second = 0;      // disk read rate of one server
  double attachment_bandwidth_bytes_per_second = 0;  // the file system's aggregate attachment
  double latency_seconds = 0;                        // of that attachment
};

// Nodes of one kind: a cluster file's `node_groups` entry, or the whole cluster of a file
// without them. Nodes are numbered group by group, in file order.
struct NodeGroupSpec {
  std::string name;
  std::int64_t nodes = 1;
  std::int64_t gpus_per_node = 1;
  GpuSpec gpu;
  NodeSpec node;
};

// What a straggler annotation slows down.
enum class StragglerKind {
  gpu_clock,      // one GPU computes at `fraction` of its speed
  nic_bandwidth,  // one node's NICs carry `fraction` of their bandwidth
};
std::string to_string(StragglerKind kind);

struct Straggler {
  StragglerKind kind = StragglerKind::gpu_clock;
  std::int64_t index = 0;  // the GPU's rank (gpu_clock) or the node (nic_bandwidth)
  double fraction = 1;     // of the nominal figure, in (0, 1]
};

struct ClusterSpec {
  std::string name;
  std::string description;
  std::vector<std::string> sources;  // where each figure comes from
  std::int64_t nodes = 1;            // all groups'
  std::int64_t gpus_per_node = 1;
  // The first group's GPU and node: the reference that single-GPU figures (the cost model's
  // default roofline, memory capacity) are taken from.
  GpuSpec gpu;
  NodeSpec node;
  // A file without node_groups has one group of every node. With one group (or none, a cluster
  // made in code) `gpu` and `node` above are authoritative; with several, the groups are.
  std::vector<NodeGroupSpec> groups;
  std::vector<Straggler> stragglers;
  RankJitter jitter;  // measured moment-to-moment slowdowns of the ranks (rank_jitter.hpp)
  // Nodes that are down (sorted, distinct; a file's failed_nodes and the nodes of its
  // failed_gpus): a job's ranks fill the other nodes in order, each in its place in the fabric.
  // Node indices everywhere else (stragglers, groups) count every node.
  std::vector<std::int64_t> failed_nodes;
  NetworkSpec network;
  FilesystemSpec filesystem;
  std::string file;  // where it was read from ("built-in:<name>" for presets)

  // The GPUs a job can use: those of the nodes that have not failed.
  std::int64_t total_gpus() const {
    return (nodes - static_cast<std::int64_t>(failed_nodes.size())) * gpus_per_node;
  }
  // The cluster's node that a job's node `job_node` runs on: the job_node-th node that has not
  // failed (job_node itself without failures). The functions below take a job's node and rank
  // indices, as the backends number them (ranks fill the job's nodes in order, gpus_per_node
  // each), and look them up on the node the job runs on.
  std::int64_t node_of_job_node(std::int64_t job_node) const;
  // Node `node`'s group index (0 with fewer than two groups); nodes past the groups' total (a
  // cluster enlarged in code) are the last group's.
  std::size_t group_index_of_node(std::int64_t node_index) const;
  // The group of the node rank `rank` runs on.
  std::size_t group_index_of_rank(std::int64_t rank) const;
  // The job's first node in group `group` (the cluster numbers nodes group by group).
  std::int64_t first_node_of_group(std::size_t group) const;
  const GpuSpec& gpu_of_group(std::size_t group) const;
  const GpuSpec& gpu_of_node(std::int64_t node_index) const;
  const NodeSpec& node_spec_of_node(std::int64_t node_index) const;
  // Products of the straggler annotations on the GPU of rank `rank` / on node `node` (1: none).
  double gpu_clock_fraction(std::int64_t rank) const;
  double nic_bandwidth_fraction(std::int64_t node_index) const;
  // One group and no stragglers: every node alike.
  bool uniform() const { return groups.size() <= 1 && stragglers.empty(); }
};

// "2 x 8 V100-SXM2-16GB (v100) + 2 x 8 P100-SXM2-16GB (p100)", and the stragglers' count: for
// listings of a cluster of several node groups or stragglers.
std::string describe_node_groups(const ClusterSpec& cluster);

ClusterSpec parse_cluster(const YamlValue& root);
ClusterSpec load_cluster_file(const std::string& path);
// Throws InputError at `where` (the scenario's preset key) if there is no such preset.
ClusterSpec load_cluster_preset(const std::string& name, const SourceLocation& where,
                                const std::string& key);
std::vector<std::string> cluster_preset_names();

}  // namespace tessera
