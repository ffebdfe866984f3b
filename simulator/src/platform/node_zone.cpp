#include "platform/node_zone.hpp"

#include <string>

#include "tessera/simulator/platform/platform.hpp"

namespace tessera::sim {
namespace {

namespace sg4 = simgrid::s4u;
using LinkDirection = sg4::LinkInRoute::Direction;

sg4::Link* duplex_link(sg4::NetZone* zone, const std::string& name, double bandwidth,
                       double latency) {
  auto* link = zone->create_split_duplex_link(name, bandwidth);
  link->set_latency(latency)->seal();
  return link;
}

void add_route(sg4::NetZone* zone, const sg4::Host* from, const sg4::Host* to,
               const std::vector<sg4::LinkInRoute>& links) {
  zone->add_route(from->get_netpoint(), to->get_netpoint(), nullptr, nullptr, links, true);
}

}  // namespace

NodeLinks create_node_links(sg4::NetZone* zone, const ClusterSpec& cluster, std::int64_t node) {
  const NodeSpec& spec = cluster.node_spec_of_node(node);
  const std::string name = "node" + std::to_string(node);
  const auto gpus = static_cast<std::size_t>(cluster.gpus_per_node);
  NodeLinks links;
  for (std::size_t i = 0; i < gpus; ++i) {
    links.pcie.push_back(duplex_link(zone, name + "-pcie" + std::to_string(i),
                                     spec.pcie_bandwidth_bytes_per_second,
                                     spec.pcie_latency_seconds));
  }
  // A switch's uplink adds no latency of its own: pcie_latency is the GPU's to the host.
  if (spec.gpus_per_pcie_switch > 1) {
    for (std::int64_t s = 0; s < cluster.gpus_per_node / spec.gpus_per_pcie_switch; ++s) {
      links.pcie_switch.push_back(duplex_link(zone, name + "-pcie-switch" + std::to_string(s),
                                              spec.pcie_switch_bandwidth_bytes_per_second, 0));
    }
  }
  // A straggler NIC (cluster file `stragglers`) carries its fraction of the nominal bandwidth.
  links.nic =
      duplex_link(zone, name + "-nic",
                  spec.node_nic_bandwidth_bytes_per_second() * cluster.nic_bandwidth_fraction(node),
                  spec.nic_latency_seconds);
  // Bonded NVLinks between one pair are one link of their summed bandwidth, as one transfer
  // stripes over them.
  auto gpu_link = [&](const std::string& suffix, int bonded) {
    links.gpu.push_back(duplex_link(zone, name + suffix,
                                    bonded * spec.gpu_link_bandwidth_bytes_per_second,
                                    spec.gpu_link_latency_seconds));
  };
  if (spec.gpu_interconnect == GpuInterconnect::nvswitch) {
    for (std::size_t i = 0; i < gpus; ++i) gpu_link("-nvswitch" + std::to_string(i), 1);
  } else if (spec.gpu_interconnect == GpuInterconnect::nvlink_mesh) {
    for (std::size_t i = 0; i < gpus; ++i) {
      for (std::size_t j = i + 1; j < gpus; ++j) {
        const int bonded = spec.nvlinks_between(static_cast<int>(i), static_cast<int>(j));
        if (bonded == 0) {
          links.gpu.push_back(nullptr);
        } else {
          gpu_link("-nvlink" + std::to_string(i) + "-" + std::to_string(j), bonded);
        }
      }
    }
  }
  return links;
}

// The routes between GPUs below are what core's gpu_route_links describes to `tessera plan`'s
// communication bound; GpuRouteLinksSim holds the two to each other on every preset.
NodeZone build_node_zone(const sg4::NetZone* parent, const ClusterSpec& cluster, std::int64_t node,
                         const NodeLinks& links) {
  const std::string name = "node" + std::to_string(node);
  auto* zone = sg4::create_full_zone(name);
  zone->set_parent(parent);

  const NodeSpec& spec = cluster.node_spec_of_node(node);
  NodeZone result;
  result.netpoint = zone->get_netpoint();
  const auto gpus = static_cast<std::size_t>(cluster.gpus_per_node);
  for (std::size_t i = 0; i < gpus; ++i) {
    const auto rank = node * cluster.gpus_per_node + static_cast<std::int64_t>(i);
    result.gpus.push_back(zone->create_host("gpu" + std::to_string(rank),
                                            cluster.gpu_of_node(node).fp32_flops_per_second)
                              ->seal());
  }
  result.cpu = zone->create_host(name + "-cpu", kNominalCpuFlopsPerSecond);
  if (const double bandwidth = spec.local_storage_bandwidth_bytes_per_second; bandwidth > 0) {
    result.local_storage = result.cpu->create_disk(name + "-local", bandwidth, bandwidth)->seal();
  }
  result.cpu->seal();
  result.gateway = zone->create_router(name + "-gw");

  // GPU i up to the host: its PCIe link, then its switch's uplink where GPUs share one.
  const auto& pcie = links.pcie;
  const auto switch_of = [&](std::size_t i) {
    return i / static_cast<std::size_t>(spec.gpus_per_pcie_switch);
  };
  const auto to_host = [&](std::size_t i) {
    std::vector<sg4::LinkInRoute> route{{pcie[i], LinkDirection::UP}};
    if (!links.pcie_switch.empty())
      route.push_back({links.pcie_switch[switch_of(i)], LinkDirection::UP});
    return route;
  };

  // GPU to GPU over PCIe: behind one switch, peer to peer through it; otherwise up one switch,
  // down the other.
  const auto over_pcie = [&](std::size_t i, std::size_t j) {
    std::vector<sg4::LinkInRoute> route{{pcie[i], LinkDirection::UP}};
    if (!links.pcie_switch.empty() && switch_of(i) != switch_of(j)) {
      route.push_back({links.pcie_switch[switch_of(i)], LinkDirection::UP});
      route.push_back({links.pcie_switch[switch_of(j)], LinkDirection::DOWN});
    }
    route.push_back({pcie[j], LinkDirection::DOWN});
    return route;
  };
  std::size_t pair = 0;
  for (std::size_t i = 0; i < gpus; ++i) {
    for (std::size_t j = i + 1; j < gpus; ++j) {
      switch (spec.gpu_interconnect) {
        case GpuInterconnect::nvswitch:
          add_route(zone, result.gpus[i], result.gpus[j],
                    {{links.gpu[i], LinkDirection::UP}, {links.gpu[j], LinkDirection::DOWN}});
          break;
        case GpuInterconnect::nvlink_mesh:
          if (auto* nvlink = links.gpu[pair++]) {
            add_route(zone, result.gpus[i], result.gpus[j], {{nvlink, LinkDirection::UP}});
          } else {
            add_route(zone, result.gpus[i], result.gpus[j], over_pcie(i, j));
          }
          break;
        case GpuInterconnect::pcie:
          add_route(zone, result.gpus[i], result.gpus[j], over_pcie(i, j));
          break;
      }
    }
  }

  // GPUs to the CPU and to the network; the CPU to the network. The NICs hang off the PCIe
  // switches as the GPUs do (DGX-1), so network traffic does not cross the switch's uplink.
  for (std::size_t i = 0; i < gpus; ++i) {
    add_route(zone, result.gpus[i], result.cpu, to_host(i));
    zone->add_route(result.gpus[i]->get_netpoint(), result.gateway, nullptr, nullptr,
                    {{pcie[i], LinkDirection::UP}, {links.nic, LinkDirection::UP}}, true);
  }
  zone->add_route(result.cpu->get_netpoint(), result.gateway, nullptr, nullptr,
                  {{links.nic, LinkDirection::UP}}, true);
  zone->seal();
  return result;
}

}  // namespace tessera::sim
