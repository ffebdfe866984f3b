#include "play/symmetric_reduction.hpp"

#include <algorithm>
#include <optional>
#include <utility>

namespace tessera::sim {

std::string SymmetricReduction::description() const {
  if (replicas == 1) return "full simulation (every GPU played: " + why_full + ")";
  return "symmetric simulation (" + std::to_string(played_nodes) + " of " + std::to_string(nodes) +
         " nodes played, each standing for " + std::to_string(replicas) +
         "; file-system bandwidth and data-parallel collectives scaled to match)";
}

SymmetricReduction full_simulation(const ClusterSpec& cluster, const ParallelConfig& config,
                                   std::string why) {
  SymmetricReduction reduction;
  reduction.played = config;
  reduction.cluster = cluster;
  const std::int64_t gpus = config.gpus();
  const std::int64_t per_node = std::max<std::int64_t>(cluster.gpus_per_node, 1);
  reduction.nodes = gpus % per_node == 0 ? gpus / per_node : 0;
  reduction.played_nodes = reduction.nodes;
  reduction.why_full = std::move(why);
  return reduction;
}

namespace {

// Whether every GPU of each node group has the batch of the group's first GPU.
bool batches_uniform_within_groups(const ClusterSpec& cluster,
                                   const std::vector<std::int64_t>& batches) {
  for (std::size_t rank = 0; rank < batches.size(); ++rank) {
    const std::int64_t first_node =
        cluster.first_node_of_group(cluster.group_index_of_rank(static_cast<std::int64_t>(rank)));
    if (batches[rank] != batches[static_cast<std::size_t>(first_node * cluster.gpus_per_node)]) {
      return false;
    }
  }
  return true;
}

// The groups of the first `nodes` nodes (a point may use fewer than the cluster has).
std::vector<std::int64_t> group_nodes_in_point(const ClusterSpec& cluster, std::int64_t nodes) {
  std::vector<std::int64_t> counts;
  std::int64_t left = nodes;
  for (std::size_t g = 0; g < cluster.groups.size() && left > 0; ++g) {
    const bool last = g + 1 == cluster.groups.size();
    counts.push_back(last ? left : std::min(left, cluster.groups[g].nodes));
    left -= counts.back();
  }
  return counts;
}

// The stragglers of a point's first `nodes` nodes, moved to the played nodes that stand for
// theirs (node s mod n of the n played ones), which are then slowed with the k - 1 others each
// stands for: a synchronous step waits for its slowest GPU either way.
// tests/simulator/straggler_symmetry_test.cpp holds it to the full simulation. Reduced only
// where the straggling nodes lie in one block of n consecutive nodes [b n, (b + 1) n), so that
// their representatives sit as they do; otherwise (empty result) two representatives could sit
// side by side where the stragglers do not (measured: a slow GPU's node next to a slow NIC's
// delayed the hierarchical all-reduce 7% more than in the full simulation).
std::optional<std::vector<Straggler>> represented_stragglers(const ClusterSpec& cluster,
                                                             std::int64_t nodes,
                                                             std::int64_t played_nodes) {
  const std::int64_t per_node = cluster.gpus_per_node;
  std::vector<Straggler> represented;
  std::int64_t block = -1;
  for (const auto& straggler : cluster.stragglers) {
    const bool gpu = straggler.kind == StragglerKind::gpu_clock;
    const std::int64_t node = gpu ? straggler.index / per_node : straggler.index;
    if (node >= nodes) continue;  // not in the job
    if (block >= 0 && node / played_nodes != block) return std::nullopt;
    block = node / played_nodes;
    Straggler moved = straggler;
    moved.index =
        gpu ? (node % played_nodes) * per_node + straggler.index % per_node : node % played_nodes;
    represented.push_back(moved);
  }
  return represented;
}

}  // namespace

SymmetricReduction plan_symmetric_reduction(const ClusterSpec& cluster,
                                            const ParallelConfig& config,
                                            std::int64_t min_played_nodes,
                                            const std::vector<std::int64_t>& batches) {
  const std::int64_t gpus = config.gpus();
  const std::int64_t per_node = std::max<std::int64_t>(cluster.gpus_per_node, 1);
  if (gpus % per_node != 0) return full_simulation(cluster, config, "GPUs fill no whole nodes");
  const std::int64_t nodes = gpus / per_node;
  const bool grouped = cluster.groups.size() > 1;
  const auto group_nodes =
      grouped ? group_nodes_in_point(cluster, nodes) : std::vector<std::int64_t>{nodes};
  if (grouped && !batches_uniform_within_groups(cluster, batches)) {
    return full_simulation(cluster, config,
                           "the proportional split gives a node group's GPUs unequal batches");
  }
  const bool stragglers = !cluster.stragglers.empty();
  if (stragglers && grouped) {
    return full_simulation(cluster, config,
                           "a straggler in a cluster of node groups is a class of one node");
  }
  if (stragglers && !batches_uniform_within_groups(cluster, batches)) {
    return full_simulation(cluster, config, "the proportional split gives stragglers less");
  }
  const std::int64_t servers = std::max<std::int64_t>(cluster.filesystem.servers, 1);
  const std::int64_t per_switch = cluster.network.nodes_per_switch;
  std::int64_t least = std::max<std::int64_t>(min_played_nodes, 1);
  // Several leaf switches stay several: routes keep their hops and the core its traffic.
  if (nodes > per_switch) least = std::max(least, per_switch + 1);
  bool stragglers_apart = false;
  for (std::int64_t k = nodes / least; k >= 2; --k) {
    const std::int64_t played = nodes / k;
    const bool fits = nodes % k == 0 && config.data % k == 0 && (gpus / k) % per_node == 0;
    // The collectives over the replicas (the gradients' all-reduce, sharded weights' gathers)
    // are played among the GPUs holding one stage and tensor shard: one left would play none.
    const bool keeps_a_data_parallel_peer = config.data / k * config.spatial_parts() >= 2;
    if (!keeps_a_data_parallel_peer) continue;
    // Every server keeps serving the same number of nodes, k times fewer: scaling its bandwidth
    // by 1/k then keeps each node's share.
    const bool same_server_share = played % servers == 0;
    bool groups_divide = true;
    for (auto count : group_nodes) groups_divide = groups_divide && count % k == 0;
    if (!fits || !same_server_share || !groups_divide) continue;
    // Stragglers farther apart than `played` nodes: a smaller k may hold them in one block.
    auto represented = represented_stragglers(cluster, nodes, played);
    if (!represented) {
      stragglers_apart = true;
      continue;
    }
    SymmetricReduction reduction;
    reduction.replicas = static_cast<int>(k);
    reduction.played = config;
    reduction.played.data = config.data / k;
    reduction.cluster = cluster;
    reduction.cluster.filesystem.server_bandwidth_bytes_per_second /= static_cast<double>(k);
    reduction.cluster.filesystem.attachment_bandwidth_bytes_per_second /= static_cast<double>(k);
    if (grouped) {
      // Each group keeps its place and a k-th of its nodes (the point's, which may be fewer).
      reduction.cluster.groups.resize(group_nodes.size());
      for (std::size_t g = 0; g < group_nodes.size(); ++g) {
        reduction.cluster.groups[g].nodes = group_nodes[g] / k;
      }
      reduction.cluster.nodes = played;
    }
    reduction.cluster.stragglers = std::move(*represented);
    reduction.nodes = nodes;
    reduction.played_nodes = played;
    return reduction;
  }
  if (stragglers_apart) {
    return full_simulation(cluster, config,
                           "the stragglers lie further apart than any reduction's played nodes");
  }
  return full_simulation(cluster, config,
                         "no reduction to at least " + std::to_string(least) +
                             " nodes divides the nodes, replicas and file-system servers evenly");
}

}  // namespace tessera::sim
