// Hierarchical all-reduce (NCCL-like, g members on each of n nodes):
//  1. intra-node reduce-scatter: ring over the node's members, g-1 steps of S/g;
//  2. inter-node all-reduce of each member's S/g: one ring per local index, over the members with
//     that local index on every node, 2(n-1) steps of S/(g n); the g rings run at once;
//  3. intra-node all-gather: ring over the node's members, g-1 steps of S/g.
// Falls back to the flat ring when the members sit on one node or nodes hold unequal counts.
// Aggregated phases synchronise their ring's members (ring_pass); the aggregated collective ends
// with all members together.
#include <algorithm>
#include <map>
#include <vector>

#include "tessera/simulator/collectives.hpp"

namespace tessera::sim {

bool NodeGroups::hierarchical() const {
  if (nodes.size() < 2) return false;
  for (const auto& node : nodes) {
    if (node.size() != nodes.front().size()) return false;
  }
  return true;
}

NodeGroups group_by_node(const CollectiveContext& context, const std::vector<int>& members) {
  NodeGroups groups;
  std::map<int, std::size_t> position;  // node id -> index in groups.nodes
  const int per_node = context.gpus_per_node > 0 ? context.gpus_per_node : 1;
  for (std::size_t index = 0; index < members.size(); ++index) {
    const int node = members[index] / per_node;
    auto [it, inserted] = position.try_emplace(node, groups.nodes.size());
    if (inserted) groups.nodes.emplace_back();
    groups.nodes[it->second].push_back(index);
  }
  return groups;
}

void hierarchical_allreduce(const CollectiveContext& context, const std::vector<int>& members,
                            std::size_t my_index, double bytes) {
  const NodeGroups groups = group_by_node(context, members);
  if (!groups.hierarchical()) {
    ring_allreduce(context, members, my_index, bytes);
    return;
  }
  const std::size_t nodes = groups.nodes.size();
  const std::size_t per_node = groups.nodes.front().size();
  std::size_t my_node = 0;
  std::size_t my_local = 0;
  for (std::size_t node = 0; node < nodes; ++node) {
    for (std::size_t local = 0; local < per_node; ++local) {
      if (groups.nodes[node][local] == my_index) {
        my_node = node;
        my_local = local;
      }
    }
  }
  std::vector<int> intra;
  intra.reserve(per_node);
  for (std::size_t index : groups.nodes[my_node]) intra.push_back(members[index]);
  std::vector<int> inter;
  inter.reserve(nodes);
  for (const auto& node : groups.nodes) inter.push_back(members[node[my_local]]);

  const int g = static_cast<int>(per_node);
  const int n = static_cast<int>(nodes) * std::max(context.replicas, 1);
  const double shard = bytes / g;
  ring_pass(context, intra, my_local, g - 1, shard);
  ring_pass(context, inter, my_node, 2 * (n - 1), shard / n);
  ring_pass(context, intra, my_local, g - 1, shard);
  if (context.granularity == Granularity::aggregated) {
    collective_max(context, members, my_index, 0.0);
  }
}

}  // namespace tessera::sim
