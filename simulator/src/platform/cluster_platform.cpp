// build_cluster_platform: node zones as the leaves of a SimGrid fat-tree, the file system beside
// it, both in one root zone (layout in platform.hpp).
#include <cstdio>
#include <stdexcept>
#include <string>
#include <utility>

#include <simgrid/s4u/Link.hpp>

#include "platform/filesystem_zone.hpp"
#include "platform/node_zone.hpp"
#include "tessera/simulator/platform/platform.hpp"

namespace tessera::sim {
namespace {

namespace sg4 = simgrid::s4u;
using simgrid::kernel::routing::NetPoint;

unsigned int count(std::int64_t value) {
  return static_cast<unsigned int>(value);
}

sg4::FatTreeParams fat_tree_params(const FabricPlan& plan) {
  if (plan.levels == 1) return sg4::FatTreeParams(1, {count(plan.leaves)}, {1}, {1});
  return sg4::FatTreeParams(2, {count(plan.nodes_per_switch), count(plan.leaf_switches)},
                            {1, count(plan.uplinks_per_leaf_switch)}, {1, 1});
}

// Raises every fat-tree link whose SimGrid name starts with `prefix` to `bandwidth`; returns how
// many there were. SimGrid 3.32 names fat-tree links "link_from_<child>_<parent>_<n>_UP/DOWN",
// leaves having ids 0..leaves-1 and the j-th first-level switch 2 * leaves - 1 - j.
std::size_t raise_links(const sg4::Engine& engine, const std::string& prefix, double bandwidth) {
  auto links = engine.get_filtered_links(
      [&](sg4::Link* link) { return link->get_name().starts_with(prefix); });
  for (auto* link : links) {
    if (link->get_bandwidth() < bandwidth) link->set_bandwidth(bandwidth);
  }
  return links.size();
}

// The fsport's own links carry the file system's whole attachment bandwidth.
void raise_filesystem_port(const sg4::Engine& engine, const FabricPlan& plan, double bandwidth) {
  const auto leaf_links =
      raise_links(engine, "link_from_" + std::to_string(plan.filesystem_leaf) + "_", bandwidth);
  std::size_t uplinks = 0;
  if (plan.levels == 2) {
    const auto switch_id = 2 * plan.leaves - 1 - plan.filesystem_leaf / plan.nodes_per_switch;
    uplinks = raise_links(engine, "link_from_" + std::to_string(switch_id) + "_",
                          bandwidth / static_cast<double>(plan.uplinks_per_leaf_switch));
  }
  const auto expected_uplinks = static_cast<std::size_t>(2 * plan.uplinks_per_leaf_switch);
  if (leaf_links != 2 || uplinks != expected_uplinks) {
    throw std::logic_error("the file system's fat-tree links were not found (" +
                           std::to_string(leaf_links) + " leaf, " + std::to_string(uplinks) +
                           " up): has SimGrid's fat-tree link naming changed?");
  }
}

std::string gbps(double bytes_per_second) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g GB/s", bytes_per_second / 1e9);
  return buffer;
}

std::string describe(const ClusterSpec& cluster, const FabricPlan& plan, std::int64_t gpus) {
  std::string text = cluster.name + ": " + std::to_string(plan.nodes) + " nodes x " +
                     std::to_string(cluster.gpus_per_node) + " " + cluster.gpu.model + " (" +
                     std::to_string(gpus) + " GPUs), " + to_string(cluster.node.gpu_interconnect) +
                     " " + gbps(cluster.node.gpu_link_bandwidth_bytes_per_second) + ", NIC " +
                     gbps(cluster.node.node_nic_bandwidth_bytes_per_second()) + "; fat-tree " +
                     std::to_string(plan.levels) + " level" + (plan.levels > 1 ? "s" : "");
  if (plan.levels > 1) {
    char ratio[32];
    std::snprintf(ratio, sizeof ratio, "%.3g:1", plan.oversubscription);
    text += " (" + std::to_string(plan.leaf_switches) + " leaf switches of " +
            std::to_string(plan.nodes_per_switch) + " ports, " +
            std::to_string(plan.uplinks_per_leaf_switch) + " uplinks each, " + ratio + ")";
  }
  if (cluster.groups.size() > 1) {
    text += "; node groups:";
    for (const auto& group : cluster.groups) {
      text += " " + group.name + " (" + std::to_string(group.nodes) + " x " + group.gpu.model + ")";
    }
  }
  for (const auto& straggler : cluster.stragglers) {
    text += "; straggler " + to_string(straggler.kind) + " " + std::to_string(straggler.index) +
            " at " + std::to_string(straggler.fraction);
  }
  for (const std::int64_t failed : cluster.failed_nodes) {
    if (failed < plan.nodes) text += "; node " + std::to_string(failed) + " failed (skipped)";
  }
  text += ", links " + gbps(plan.link_bandwidth_bytes_per_second) + "; file system " +
          std::to_string(cluster.filesystem.servers) + " servers x " +
          gbps(cluster.filesystem.server_bandwidth_bytes_per_second) + ", attachment " +
          gbps(cluster.filesystem.attachment_bandwidth_bytes_per_second);
  return text;
}

}  // namespace

SimPlatform build_cluster_platform(sg4::Engine& engine, const ClusterSpec& cluster,
                                   std::int64_t gpus) {
  if (gpus < 1 || gpus > cluster.total_gpus()) {
    throw std::invalid_argument("expected 1 to " + std::to_string(cluster.total_gpus()) +
                                " GPUs for cluster " + cluster.name + ", got " +
                                std::to_string(gpus));
  }
  // The job's nodes, and the cluster's nodes up to the last of them: failed ones keep their
  // place in the fabric, holding nothing (cluster_spec.hpp: failed_nodes).
  const std::int64_t nodes = (gpus + cluster.gpus_per_node - 1) / cluster.gpus_per_node;
  const std::int64_t positions = cluster.node_of_job_node(nodes - 1) + 1;
  std::vector<std::int64_t> job_node_at(static_cast<std::size_t>(positions), -1);
  for (std::int64_t node = 0; node < nodes; ++node) {
    job_node_at[static_cast<std::size_t>(cluster.node_of_job_node(node))] = node;
  }
  SimPlatform platform;
  platform.gpus_per_node = static_cast<int>(cluster.gpus_per_node);
  platform.fabric = plan_fabric(cluster, positions);
  platform.node_rings = NodeRings(cluster, nodes);
  const FabricPlan& plan = platform.fabric;

  // The first zone created becomes the engine's root.
  auto* parent = engine.get_netzone_root();
  auto* root = sg4::create_full_zone("tessera-cluster");
  if (parent != nullptr) root->set_parent(parent);
  platform.zone = root;

  std::vector<NodeLinks> node_links;
  node_links.reserve(static_cast<std::size_t>(nodes));
  for (std::int64_t k = 0; k < nodes; ++k)
    node_links.push_back(create_node_links(root, cluster, k));

  std::vector<NodeZone> node_zones;
  node_zones.reserve(static_cast<std::size_t>(nodes));
  NetPoint* fsport_gateway = nullptr;
  // SimGrid calls this for leaf positions 0, 1, ... in order; a leaf's netpoint id must be its
  // position, so nothing else may be added to the fabric zone meanwhile.
  auto leaf = [&](sg4::NetZone* fabric, const std::vector<unsigned long>& /*coordinates*/,
                  unsigned long position) -> std::pair<NetPoint*, NetPoint*> {
    const auto index = static_cast<std::int64_t>(position);
    if (index < positions && job_node_at[position] >= 0) {
      const std::int64_t node = job_node_at[position];
      node_zones.push_back(
          build_node_zone(fabric, cluster, node, node_links[static_cast<std::size_t>(node)]));
      return {node_zones.back().netpoint, node_zones.back().gateway};
    }
    if (index == plan.filesystem_leaf) {
      auto* port = sg4::create_full_zone("fabric-fsport");
      port->set_parent(fabric);
      fsport_gateway = port->create_router("fabric-fsport-gw");
      port->seal();
      return {port->get_netpoint(), fsport_gateway};
    }
    return {fabric->create_router("fabric-spare" + std::to_string(position)), nullptr};
  };
  auto* fabric = sg4::create_fatTree_zone(
      "fabric", root, fat_tree_params(plan), sg4::ClusterCallbacks(leaf),
      plan.link_bandwidth_bytes_per_second, cluster.network.link_latency_seconds,
      sg4::Link::SharingPolicy::SPLITDUPLEX);
  const FilesystemSpec& fs_spec = cluster.filesystem;
  raise_filesystem_port(engine, plan, fs_spec.attachment_bandwidth_bytes_per_second);

  auto filesystem = build_filesystem_zone(root, fs_spec);
  auto* attachment = root->create_split_duplex_link("filesystem-attachment",
                                                    fs_spec.attachment_bandwidth_bytes_per_second);
  attachment->set_latency(fs_spec.latency_seconds)->seal();
  root->add_route(fabric->get_netpoint(), filesystem.zone->get_netpoint(), fsport_gateway,
                  filesystem.gateway, {{attachment, sg4::LinkInRoute::Direction::UP}}, true);
  root->seal();

  for (const auto& node : node_zones) {
    for (auto* gpu : node.gpus) {
      if (static_cast<std::int64_t>(platform.gpu_hosts.size()) < gpus)
        platform.gpu_hosts.push_back(gpu);
    }
    platform.node_hosts.push_back(node.cpu);
    platform.node_disks.push_back(node.local_storage);
  }
  platform.filesystem_servers = std::move(filesystem.servers);
  platform.filesystem_disks = std::move(filesystem.disks);
  platform.description = describe(cluster, plan, gpus);
  return platform;
}

}  // namespace tessera::sim
