// Alpha-beta predictions on a contention-free platform, and the size-based choice of algorithm
// (like NCCL's tuner). Each formula follows the flows of the aggregated algorithm, with a = the
// largest route latency and B = the smallest route bandwidth among the edges involved; a member's
// concurrent flows share one port of its edges' narrowest bandwidth (a star or fat tree with one
// link per GPU):
//  - ring (p members):        2(p-1)/p * S/B + 2(p-1) * a; over k channels (ring_channels: one
//    node's NVLink rings) S/k each, B then each ring's share of the links its edges cross with
//    the other rings (a bonded link's direction crossed by two rings gives each half;
//    ConcurrentFlows);
//  - tree (n nodes; h = the longest chain's hops, most members on a node minus one; d =
//    ceil(log2 n) the node trees' depth): the aggregated tree starts all its flows at once, then
//    sleeps the pipeline's latency L = 2h * a_intra + 2d * a_inter less the one latency the flows
//    paid, a_max = max(a_intra, a_inter):
//        L - a_max + max over members and classes c of (a_c + load_c / B_c),
//    where the chain flows (intra: S each way per chain edge) and the node trees' flows (inter,
//    leaders only: S/2 each way per edge and tree) use separate ports (NVLink and NIC), each class
//    sharing one port of its edges' narrowest bandwidth B_c, a_c its edges' largest latency and
//    load_c = S * chain edges, or S/2 * node-tree edges counted in both trees (at most 4, so about
//    2S/B_inter, like the ring). a_intra / a_inter: the largest latency of any chain / node-tree
//    edge. Where the busiest port is of the higher-latency class (the NIC, typically) this is
//    2h * a_intra + 2d * a_inter + max load_c / B_c: perfect pipelining. One member per node (the
//    flat double binary tree): 2d * a + max over members of edges * (S/2) / B; one node (the
//    chain): 2h * a + 2S / B (S / B for g = 2);
//  - hierarchical (n nodes of g):  2(g-1)/g * S/B_intra + 2(g-1) * a_intra
//                                  + 2(n-1)/n * (S/g)/B_inter + 2(n-1) * a_inter,
//    intra over the node rings' edges (S/g split over a node's channels as in the ring), inter
//    over the g inter-node rings' edges, played at once, so that rings leaving a node by one NIC
//    share it (falls back to the ring's formula where the algorithm does);
//  - all-to-all: a + (p-1) * m / B.
#include <algorithm>
#include <limits>
#include <utility>
#include <vector>

#include "collectives/concurrent_flows.hpp"
#include "tessera/simulator/collectives/collectives.hpp"

namespace tessera::sim {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// Slowest edge of one or more rings played at once (a node's NVLink channels; the hierarchical
// algorithm's inter-node rings, one per local index): where their edges cross the same link
// direction (a bonded NVLink, a node's NIC) each gets its share of it.
struct RingEdges {
  double latency = 0;
  double bandwidth = kInfinity;

  void add_rings(const Fabric& fabric, const std::vector<const MemberGroup*>& rings) {
    ConcurrentFlows flows(fabric);
    const auto for_each_edge = [&](auto visit) {
      for (const MemberGroup* ring : rings) {
        const std::vector<int>& ranks = ring->ranks();
        if (ranks.size() < 2) continue;
        for (std::size_t i = 0; i < ranks.size(); ++i)
          visit(ranks[i], ranks[(i + 1) % ranks.size()]);
      }
    };
    for_each_edge([&](int from, int to) { flows.add(from, to); });
    for_each_edge([&](int from, int to) {
      latency = std::max(latency, fabric.route_latency_seconds(from, to));
      bandwidth = std::min(bandwidth, flows.bandwidth_bytes_per_second(from, to));
    });
  }
  // `steps` steps of `bytes_per_step`, each paying the slowest edge's latency.
  double seconds(int steps, double bytes_per_step) const {
    if (steps <= 0 || bandwidth == kInfinity) return 0;
    return steps * (latency + bytes_per_step / bandwidth);
  }
};

double ring_seconds(const CollectiveContext& context, const MemberGroup& members, double bytes) {
  if (members.size() < 2) return 0;
  const int size = static_cast<int>(members.size()) * std::max(context.replicas, 1);
  const auto& rings = ring_channels(context, members);
  RingEdges edges;
  edges.add_rings(context.fabric, rings);
  return edges.seconds(2 * (size - 1), bytes / size / static_cast<double>(rings.size()));
}

// A member's edges of one class (chain or node tree): its port's load, latency and bandwidth.
struct Port {
  int edges = 0;
  double latency = 0;
  double out_bandwidth = kInfinity;
  double in_bandwidth = kInfinity;

  void add(const Fabric& fabric, int me, int peer) {
    ++edges;
    latency = std::max(latency, fabric.route_latency_seconds(me, peer));
    out_bandwidth = std::min(out_bandwidth, fabric.route_bandwidth_bytes_per_second(me, peer));
    in_bandwidth = std::min(in_bandwidth, fabric.route_bandwidth_bytes_per_second(peer, me));
  }
  // When the port's last flow, of `bytes` on each edge and direction, ends.
  double finish(double bytes) const {
    if (edges == 0) return 0;
    return latency + edges * bytes / std::min(out_bandwidth, in_bandwidth);
  }
};

double tree_seconds(const CollectiveContext& context, const MemberGroup& group, double bytes) {
  const std::vector<int>& members = group.ranks();
  if (members.size() < 2) return 0;
  const Fabric& fabric = context.fabric;
  const NodeGroups& groups = node_groups(context, group);
  const int nodes = static_cast<int>(groups.nodes.size());
  std::size_t most = 1;
  double intra_latency = 0;
  double inter_latency = 0;
  double flows = 0;  // when the last flow ends
  for (int node = 0; node < nodes; ++node) {
    const auto& indices = groups.nodes[static_cast<std::size_t>(node)];
    most = std::max(most, indices.size());
    for (std::size_t local = 0; local < indices.size(); ++local) {
      const int me = members[indices[local]];
      Port chain;
      if (local > 0) chain.add(fabric, me, members[indices[local - 1]]);
      if (local + 1 < indices.size()) chain.add(fabric, me, members[indices[local + 1]]);
      Port trees;
      if (local == 0 && nodes > 1) {
        for (const TreeLinks& links : double_binary_tree(nodes, node)) {
          std::vector<int> neighbours = links.children;
          if (links.parent >= 0) neighbours.push_back(links.parent);
          for (int other : neighbours) {
            trees.add(fabric, me, members[groups.nodes[static_cast<std::size_t>(other)].front()]);
          }
        }
      }
      intra_latency = std::max(intra_latency, chain.latency);
      inter_latency = std::max(inter_latency, trees.latency);
      flows = std::max({flows, chain.finish(bytes), trees.finish(bytes / 2)});
    }
  }
  const int hops = static_cast<int>(most) - 1;
  const int depth = double_binary_tree_depth(nodes * std::max(context.replicas, 1));
  const double pipeline = 2 * hops * intra_latency + 2 * depth * inter_latency;
  return pipeline - std::max(intra_latency, inter_latency) + flows;
}

double hierarchical_seconds(const CollectiveContext& context, const MemberGroup& group,
                            double bytes) {
  const std::vector<int>& members = group.ranks();
  const NodeGroups& groups = node_groups(context, group);
  if (!groups.hierarchical()) return ring_seconds(context, group, bytes);
  const int nodes = static_cast<int>(groups.nodes.size()) * std::max(context.replicas, 1);
  const int per_node = static_cast<int>(groups.nodes.front().size());
  const double shard = bytes / per_node;
  CollectiveContext node_context = context;  // as hierarchical_allreduce plays the nodes
  node_context.replicas = 1;
  double intra = 0;  // the slowest node's reduce-scatter (its all-gather takes as long)
  for (const auto& node : groups.nodes) {
    std::vector<int> ranks;
    for (std::size_t index : node) ranks.push_back(members[index]);
    const auto& rings = ring_channels(node_context, member_group(ranks));
    RingEdges edges;
    edges.add_rings(context.fabric, rings);
    intra = std::max(intra, edges.seconds(per_node - 1, shard / static_cast<double>(rings.size())));
  }
  std::vector<const MemberGroup*> inter_rings;
  for (int local = 0; local < per_node; ++local) {
    std::vector<int> ranks;
    for (const auto& node : groups.nodes) ranks.push_back(members[node[local]]);
    inter_rings.push_back(&member_group(ranks));
  }
  RingEdges inter;
  inter.add_rings(context.fabric, inter_rings);
  return 2 * intra + inter.seconds(2 * (nodes - 1), shard / nodes);
}

}  // namespace

double predicted_allreduce_seconds(const CollectiveContext& context, const MemberGroup& members,
                                   double bytes, AllreduceAlgorithm algorithm) {
  switch (algorithm) {
    case AllreduceAlgorithm::ring:
      return ring_seconds(context, members, bytes);
    case AllreduceAlgorithm::tree:
      return tree_seconds(context, members, bytes);
    case AllreduceAlgorithm::hierarchical:
      return hierarchical_seconds(context, members, bytes);
  }
  return kInfinity;
}

AllreduceAlgorithm choose_allreduce(const CollectiveContext& context, const MemberGroup& members,
                                    double bytes) {
  AllreduceAlgorithm best = AllreduceAlgorithm::ring;
  double best_seconds = ring_seconds(context, members, bytes);
  const double tree = tree_seconds(context, members, bytes);
  if (tree < best_seconds) {
    best = AllreduceAlgorithm::tree;
    best_seconds = tree;
  }
  if (node_groups(context, members).hierarchical()) {
    const double hierarchical = hierarchical_seconds(context, members, bytes);
    if (hierarchical < best_seconds) best = AllreduceAlgorithm::hierarchical;
  }
  return best;
}

double predicted_allreduce_seconds(const CollectiveContext& context,
                                   const std::vector<int>& members, double bytes,
                                   AllreduceAlgorithm algorithm) {
  return predicted_allreduce_seconds(context, member_group(members), bytes, algorithm);
}

AllreduceAlgorithm choose_allreduce(const CollectiveContext& context,
                                    const std::vector<int>& members, double bytes) {
  return choose_allreduce(context, member_group(members), bytes);
}

double predicted_alltoall_seconds(const CollectiveContext& context, const std::vector<int>& members,
                                  double bytes_per_peer) {
  const std::size_t size = members.size();
  if (size < 2) return 0;
  const Fabric& fabric = context.fabric;
  double latency = 0;
  double transfer = 0;
  for (int me : members) {
    double out_bandwidth = kInfinity;
    double in_bandwidth = kInfinity;
    for (int peer : members) {
      if (peer == me) continue;
      latency = std::max(latency, fabric.route_latency_seconds(me, peer));
      out_bandwidth = std::min(out_bandwidth, fabric.route_bandwidth_bytes_per_second(me, peer));
      in_bandwidth = std::min(in_bandwidth, fabric.route_bandwidth_bytes_per_second(peer, me));
    }
    const double load = static_cast<double>(size - 1) * bytes_per_peer;
    transfer = std::max({transfer, load / out_bandwidth, load / in_bandwidth});
  }
  return latency + transfer;
}

}  // namespace tessera::sim
