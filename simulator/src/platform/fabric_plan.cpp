// The shape of the fat-tree: how many leaves, switches and uplinks (no SimGrid calls).
#include <algorithm>
#include <cmath>

#include "tessera/simulator/platform/platform.hpp"

namespace tessera::sim {

FabricPlan plan_fabric(const ClusterSpec& cluster, std::int64_t nodes) {
  const auto& network = cluster.network;
  FabricPlan plan;
  plan.nodes = nodes;
  plan.link_bandwidth_bytes_per_second =
      static_cast<double>(cluster.node.nics) * network.link_bandwidth_bytes_per_second;
  if (nodes <= network.nodes_per_switch) {
    // One switch: the nodes and, on a port of its own, the file system.
    plan.levels = 1;
    plan.nodes_per_switch = nodes + 1;
    plan.leaf_switches = 1;
    plan.leaves = nodes + 1;
    plan.filesystem_leaf = nodes;
    plan.uplinks_per_leaf_switch = 0;
    plan.oversubscription = 1;
    return plan;
  }
  // Two levels: the nodes' leaf switches, then one more for the file system alone, so the
  // uplinks raised for it carry no node traffic.
  const std::int64_t per_switch = network.nodes_per_switch;
  plan.levels = 2;
  plan.nodes_per_switch = per_switch;
  plan.leaf_switches = (nodes + per_switch - 1) / per_switch + 1;
  plan.leaves = plan.leaf_switches * per_switch;
  plan.filesystem_leaf = (plan.leaf_switches - 1) * per_switch;
  plan.uplinks_per_leaf_switch = std::clamp<std::int64_t>(
      std::llround(static_cast<double>(per_switch) / network.oversubscription), 1, per_switch);
  plan.oversubscription =
      static_cast<double>(per_switch) / static_cast<double>(plan.uplinks_per_leaf_switch);
  return plan;
}

}  // namespace tessera::sim
