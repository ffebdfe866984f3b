// Alpha-beta predictions on a contention-free platform, and the size-based choice of algorithm
// (like NCCL's tuner). Each formula follows the flows of the aggregated algorithm, with a = the
// largest route latency and B = the smallest route bandwidth among the edges involved; a member's
// concurrent flows share one port of its edges' narrowest bandwidth (a star or fat tree with one
// link per GPU):
//  - ring (p members):        2(p-1)/p * S/B + 2(p-1) * a
//  - tree (depth d = ceil(log2 p)): 2d * a + max over members of L * (S/2) / B, where L counts the
//    member's tree edges in both trees (flows of S/2 each way; L = 4 for an interior member with
//    two children, so about 2S/B like the ring);
//  - hierarchical (n nodes of g):  2(g-1)/g * S/B_intra + 2(g-1) * a_intra
//                                  + 2(n-1)/n * (S/g)/B_inter + 2(n-1) * a_inter,
//    intra over the node rings' edges, inter over the g inter-node rings' edges (falls back to the
//    ring's formula where the algorithm does);
//  - all-to-all: a + (p-1) * m / B.
#include <algorithm>
#include <limits>
#include <vector>

#include "tessera/simulator/collectives.hpp"

namespace tessera::sim {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// Slowest edge of one or more rings.
struct RingEdges {
  double latency = 0;
  double bandwidth = kInfinity;

  void add_ring(const Fabric& fabric, const std::vector<int>& ranks) {
    const std::size_t size = ranks.size();
    if (size < 2) return;
    for (std::size_t i = 0; i < size; ++i) {
      const int from = ranks[i];
      const int to = ranks[(i + 1) % size];
      latency = std::max(latency, fabric.route_latency_seconds(from, to));
      bandwidth = std::min(bandwidth, fabric.route_bandwidth_bytes_per_second(from, to));
    }
  }
  // `steps` steps of `bytes_per_step`, each paying the slowest edge's latency.
  double seconds(int steps, double bytes_per_step) const {
    if (steps <= 0 || bandwidth == kInfinity) return 0;
    return steps * (latency + bytes_per_step / bandwidth);
  }
};

double ring_seconds(const CollectiveContext& context, const std::vector<int>& members,
                    double bytes) {
  const int size = static_cast<int>(members.size());
  if (size < 2) return 0;
  RingEdges edges;
  edges.add_ring(context.fabric, members);
  return edges.seconds(2 * (size - 1), bytes / size);
}

double tree_seconds(const CollectiveContext& context, const std::vector<int>& members,
                    double bytes) {
  const int size = static_cast<int>(members.size());
  if (size < 2) return 0;
  const Fabric& fabric = context.fabric;
  double latency = 0;
  double transfer = 0;
  for (int index = 0; index < size; ++index) {
    const int me = members[index];
    int edges = 0;
    double out_bandwidth = kInfinity;
    double in_bandwidth = kInfinity;
    for (const TreeLinks& links : double_binary_tree(size, index)) {
      std::vector<int> neighbours = links.children;
      if (links.parent >= 0) neighbours.push_back(links.parent);
      for (int neighbour : neighbours) {
        const int peer = members[neighbour];
        ++edges;
        latency = std::max(latency, fabric.route_latency_seconds(me, peer));
        out_bandwidth = std::min(out_bandwidth, fabric.route_bandwidth_bytes_per_second(me, peer));
        in_bandwidth = std::min(in_bandwidth, fabric.route_bandwidth_bytes_per_second(peer, me));
      }
    }
    const double load = edges * bytes / 2;
    transfer = std::max({transfer, load / out_bandwidth, load / in_bandwidth});
  }
  return 2 * double_binary_tree_depth(size) * latency + transfer;
}

double hierarchical_seconds(const CollectiveContext& context, const std::vector<int>& members,
                            double bytes) {
  const NodeGroups groups = group_by_node(context, members);
  if (!groups.hierarchical()) return ring_seconds(context, members, bytes);
  const int nodes = static_cast<int>(groups.nodes.size());
  const int per_node = static_cast<int>(groups.nodes.front().size());
  RingEdges intra;
  for (const auto& node : groups.nodes) {
    std::vector<int> ranks;
    for (std::size_t index : node) ranks.push_back(members[index]);
    intra.add_ring(context.fabric, ranks);
  }
  RingEdges inter;
  for (int local = 0; local < per_node; ++local) {
    std::vector<int> ranks;
    for (const auto& node : groups.nodes) ranks.push_back(members[node[local]]);
    inter.add_ring(context.fabric, ranks);
  }
  const double shard = bytes / per_node;
  return 2 * intra.seconds(per_node - 1, shard) + inter.seconds(2 * (nodes - 1), shard / nodes);
}

}  // namespace

double predicted_allreduce_seconds(const CollectiveContext& context,
                                   const std::vector<int>& members, double bytes,
                                   AllreduceAlgorithm algorithm) {
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

AllreduceAlgorithm choose_allreduce(const CollectiveContext& context,
                                    const std::vector<int>& members, double bytes) {
  AllreduceAlgorithm best = AllreduceAlgorithm::ring;
  double best_seconds = ring_seconds(context, members, bytes);
  const double tree = tree_seconds(context, members, bytes);
  if (tree < best_seconds) {
    best = AllreduceAlgorithm::tree;
    best_seconds = tree;
  }
  if (group_by_node(context, members).hierarchical()) {
    const double hierarchical = hierarchical_seconds(context, members, bytes);
    if (hierarchical < best_seconds) best = AllreduceAlgorithm::hierarchical;
  }
  return best;
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
