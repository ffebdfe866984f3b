#pragma once
// The links a transfer between two GPUs of a job crosses inside their nodes, as the simulator
// builds a node (simulator/src/platform/node_zone.cpp): over NVLink or NVSwitch, over PCIe (and
// PCIe switches) between GPUs of one node, and out through the GPU's PCIe link and the node's
// NICs to another node. The fabric's links between nodes are left out. Each link direction is a
// link of its own (full duplex), named as SimGrid names it, so that a test can hold the two
// descriptions to each other. What it is for: no transfer can be faster than its slowest link,
// and transfers sharing a link cannot together exceed its bandwidth (the plan's lower bound on
// communication, communication_bound.hpp).
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "tessera/core/scenario/cluster_spec.hpp"

namespace tessera {

enum class NodeLinkKind { pcie, pcie_switch, nic, nvswitch_port, nvlink };

struct RouteLink {
  NodeLinkKind kind = NodeLinkKind::pcie;
  std::int64_t node = 0;  // the job's node (rank / GPUs per node)
  int first = 0;          // the GPU, the switch, or the NVLink pair's lower GPU (local indices)
  int second = 0;         // the NVLink pair's higher GPU
  bool up = true;         // the link's direction (SimGrid's UP / DOWN of a split-duplex link)
  double bandwidth_bytes_per_second = 0;

  // Equal for the same link direction, distinct otherwise (local indices below 2^12).
  std::uint64_t key() const;
  // E.g. "node3-pcie1_UP", "node0-nvlink0-2_DOWN": the simulator's name of this direction.
  std::string simgrid_name() const;
};

// At most four links: out of a node and into another, or across PCIe switches within one.
class GpuRoute {
 public:
  void push_back(const RouteLink& link) { links_.at(count_++) = link; }
  const RouteLink* begin() const { return links_.data(); }
  const RouteLink* end() const { return links_.data() + count_; }
  std::size_t size() const { return count_; }
  const RouteLink& operator[](std::size_t index) const { return links_[index]; }
  const RouteLink& back() const { return links_[count_ - 1]; }

 private:
  std::array<RouteLink, 4> links_{};
  std::size_t count_ = 0;
};

// The node links from GPU rank `from` to GPU rank `to` (different ranks) of a job on `cluster`,
// ranks filling nodes in order. Bandwidths are the nominal ones (a straggler NIC's fraction
// applied).
GpuRoute gpu_route_links(const ClusterSpec& cluster, std::int64_t from, std::int64_t to);

}  // namespace tessera
