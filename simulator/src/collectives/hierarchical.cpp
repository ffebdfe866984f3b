// Hierarchical all-reduce (NCCL-like, g members on each of n nodes):
//  1. intra-node reduce-scatter: ring over the node's members, g-1 steps of S/g (split over the
//     node's NVLink rings where it has several, ring_channels);
//  2. inter-node all-reduce of each member's S/g: one ring per local index, over the members with
//     that local index on every node, 2(n-1) steps of S/(g n); the g rings run at once;
//  3. intra-node all-gather: ring over the node's members, g-1 steps of S/g.
// Falls back to the flat ring when the members sit on one node or nodes hold unequal counts.
// Aggregated phases synchronise their ring's members (ring_pass); the aggregated collective ends
// with all members together.
#include <algorithm>
#include <map>
#include <memory>
#include <tuple>
#include <utility>
#include <vector>

#include "tessera/simulator/collectives/collectives.hpp"

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
  if (context.node_rings == nullptr) return groups;
  // Each node's members along its first NVLink ring, so that chains and rings take NVLinks.
  for (auto& node : groups.nodes) {
    std::vector<int> ranks;
    for (std::size_t index : node) ranks.push_back(members[index]);
    const auto rings = context.node_rings->rings(ranks);
    if (rings.empty()) continue;
    const std::vector<std::size_t> by_rank = node;
    for (std::size_t k = 0; k < node.size(); ++k) {
      const auto at = std::find(ranks.begin(), ranks.end(), rings.front()[k]);
      node[k] = by_rank[static_cast<std::size_t>(at - ranks.begin())];
    }
  }
  return groups;
}

const NodeGroups& node_groups(const CollectiveContext& context, const MemberGroup& members) {
  // Process-wide, like collective_max's registry (one simulation per process, one thread).
  static std::map<std::pair<std::uint64_t, std::tuple<int, std::uint64_t>>, NodeGroups> cache;
  const auto key = std::make_pair(members.id(), layout_key(context));
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  return cache.emplace(key, group_by_node(context, members.ranks())).first->second;
}

namespace {

// The hierarchical algorithm's rings over one group: one per node (intra) and one per local index
// across the nodes (inter), and each member's place in them; built once per (group,
// gpus_per_node), so that a member's call costs O(1) to find its rings rather than O(p) to build
// them.
struct HierarchicalRings {
  std::vector<std::unique_ptr<MemberGroup>> intra;          // by node
  std::vector<std::unique_ptr<MemberGroup>> inter;          // by local index
  std::vector<std::pair<std::size_t, std::size_t>> places;  // by member index: node, local
};

const HierarchicalRings& hierarchical_rings(const CollectiveContext& context,
                                            const MemberGroup& members) {
  static std::map<std::pair<std::uint64_t, std::tuple<int, std::uint64_t>>, HierarchicalRings>
      cache;
  const auto key = std::make_pair(members.id(), layout_key(context));
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  const NodeGroups& groups = node_groups(context, members);
  HierarchicalRings rings;
  rings.places.resize(members.size());
  const std::size_t per_node = groups.nodes.front().size();
  for (std::size_t node = 0; node < groups.nodes.size(); ++node) {
    std::vector<int> ranks;
    for (std::size_t local = 0; local < per_node; ++local) {
      const std::size_t index = groups.nodes[node][local];
      ranks.push_back(members[index]);
      rings.places[index] = {node, local};
    }
    rings.intra.push_back(std::make_unique<MemberGroup>(std::move(ranks)));
  }
  for (std::size_t local = 0; local < per_node; ++local) {
    std::vector<int> ranks;
    for (const auto& node : groups.nodes) ranks.push_back(members[node[local]]);
    rings.inter.push_back(std::make_unique<MemberGroup>(std::move(ranks)));
  }
  return cache.emplace(key, std::move(rings)).first->second;
}

}  // namespace

void hierarchical_allreduce(const CollectiveContext& context, const MemberGroup& members,
                            std::size_t my_index, double bytes) {
  const NodeGroups& groups = node_groups(context, members);
  if (!groups.hierarchical()) {
    ring_allreduce(context, members, my_index, bytes);
    return;
  }
  const HierarchicalRings& rings = hierarchical_rings(context, members);
  const auto [my_node, my_local] = rings.places[my_index];
  const int g = static_cast<int>(groups.nodes.front().size());
  const int n = static_cast<int>(groups.nodes.size()) * std::max(context.replicas, 1);
  const double shard = bytes / g;
  // The intra-node phases stand for themselves on every node: their rings are the node's
  // channels whatever the replicas.
  CollectiveContext node_context = context;
  node_context.replicas = 1;
  const auto& channels = ring_channels(node_context, *rings.intra[my_node]);
  const double shard_per_channel = shard / static_cast<double>(channels.size());
  const int me = members[my_index];
  ring_pass(node_context, channels, me, g - 1, shard_per_channel);
  ring_pass(context, *rings.inter[my_local], my_node, 2 * (n - 1), shard / n);
  ring_pass(node_context, channels, me, g - 1, shard_per_channel);
  if (context.granularity == Granularity::aggregated) {
    collective_max(context, members, my_index, 0.0);
  }
}

}  // namespace tessera::sim
