#include "tessera/core/scenario/gpu_route_links.hpp"

#include <algorithm>

namespace tessera {

std::uint64_t RouteLink::key() const {
  return static_cast<std::uint64_t>(node) << 28 | static_cast<std::uint64_t>(first) << 16 |
         static_cast<std::uint64_t>(second) << 4 | static_cast<std::uint64_t>(kind) << 1 |
         (up ? 1U : 0U);
}

std::string RouteLink::simgrid_name() const {
  const std::string prefix = "node" + std::to_string(node);
  std::string name;
  switch (kind) {
    case NodeLinkKind::pcie:
      name = prefix + "-pcie" + std::to_string(first);
      break;
    case NodeLinkKind::pcie_switch:
      name = prefix + "-pcie-switch" + std::to_string(first);
      break;
    case NodeLinkKind::nic:
      name = prefix + "-nic";
      break;
    case NodeLinkKind::nvswitch_port:
      name = prefix + "-nvswitch" + std::to_string(first);
      break;
    case NodeLinkKind::nvlink:
      name = prefix + "-nvlink" + std::to_string(first) + "-" + std::to_string(second);
      break;
  }
  return name + (up ? "_UP" : "_DOWN");
}

namespace {

RouteLink link(NodeLinkKind kind, std::int64_t node, int first, bool up, double bandwidth,
               int second = 0) {
  return RouteLink{kind, node, first, second, up, bandwidth};
}

// Between two GPUs of one node over PCIe: behind one switch through it, else up one switch's
// uplink and down the other's.
void over_pcie(const NodeSpec& spec, std::int64_t node, int from, int to, GpuRoute& links) {
  const double pcie = spec.pcie_bandwidth_bytes_per_second;
  links.push_back(link(NodeLinkKind::pcie, node, from, true, pcie));
  const auto per_switch = static_cast<int>(std::max<std::int64_t>(spec.gpus_per_pcie_switch, 1));
  if (per_switch > 1 && from / per_switch != to / per_switch) {
    const double uplink = spec.pcie_switch_bandwidth_bytes_per_second;
    links.push_back(link(NodeLinkKind::pcie_switch, node, from / per_switch, true, uplink));
    links.push_back(link(NodeLinkKind::pcie_switch, node, to / per_switch, false, uplink));
  }
  links.push_back(link(NodeLinkKind::pcie, node, to, false, pcie));
}

}  // namespace

GpuRoute gpu_route_links(const ClusterSpec& cluster, std::int64_t from, std::int64_t to) {
  const std::int64_t per_node = std::max<std::int64_t>(cluster.gpus_per_node, 1);
  const std::int64_t from_node = from / per_node, to_node = to / per_node;
  const auto from_gpu = static_cast<int>(from % per_node);
  const auto to_gpu = static_cast<int>(to % per_node);
  GpuRoute links;
  if (from_node != to_node) {
    const NodeSpec& sender = cluster.node_spec_of_node(from_node);
    const NodeSpec& receiver = cluster.node_spec_of_node(to_node);
    links.push_back(link(NodeLinkKind::pcie, from_node, from_gpu, true,
                         sender.pcie_bandwidth_bytes_per_second));
    links.push_back(link(
        NodeLinkKind::nic, from_node, 0, true,
        sender.node_nic_bandwidth_bytes_per_second() * cluster.nic_bandwidth_fraction(from_node)));
    links.push_back(link(
        NodeLinkKind::nic, to_node, 0, false,
        receiver.node_nic_bandwidth_bytes_per_second() * cluster.nic_bandwidth_fraction(to_node)));
    links.push_back(
        link(NodeLinkKind::pcie, to_node, to_gpu, false, receiver.pcie_bandwidth_bytes_per_second));
    return links;
  }
  const NodeSpec& spec = cluster.node_spec_of_node(from_node);
  const double gpu_link = spec.gpu_link_bandwidth_bytes_per_second;
  switch (spec.gpu_interconnect) {
    case GpuInterconnect::nvswitch:
      links.push_back(link(NodeLinkKind::nvswitch_port, from_node, from_gpu, true, gpu_link));
      links.push_back(link(NodeLinkKind::nvswitch_port, from_node, to_gpu, false, gpu_link));
      break;
    case GpuInterconnect::nvlink_mesh:
      if (const int bonded = spec.nvlinks_between(from_gpu, to_gpu); bonded > 0) {
        links.push_back(link(NodeLinkKind::nvlink, from_node, std::min(from_gpu, to_gpu),
                             from_gpu < to_gpu, bonded * gpu_link, std::max(from_gpu, to_gpu)));
      } else {
        over_pcie(spec, from_node, from_gpu, to_gpu, links);
      }
      break;
    case GpuInterconnect::pcie:
      over_pcie(spec, from_node, from_gpu, to_gpu, links);
      break;
  }
  return links;
}

}  // namespace tessera
