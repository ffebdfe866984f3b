#include "play/symmetric_reduction.hpp"

#include <algorithm>
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

SymmetricReduction plan_symmetric_reduction(const ClusterSpec& cluster,
                                            const ParallelConfig& config,
                                            std::int64_t min_played_nodes) {
  const std::int64_t gpus = config.gpus();
  const std::int64_t per_node = std::max<std::int64_t>(cluster.gpus_per_node, 1);
  if (gpus % per_node != 0) return full_simulation(cluster, config, "GPUs fill no whole nodes");
  const std::int64_t nodes = gpus / per_node;
  const std::int64_t servers = std::max<std::int64_t>(cluster.filesystem.servers, 1);
  const std::int64_t per_switch = cluster.network.nodes_per_switch;
  std::int64_t least = std::max<std::int64_t>(min_played_nodes, 1);
  // Several leaf switches stay several: routes keep their hops and the core its traffic.
  if (nodes > per_switch) least = std::max(least, per_switch + 1);
  for (std::int64_t k = nodes / least; k >= 2; --k) {
    const std::int64_t played = nodes / k;
    const bool fits = nodes % k == 0 && config.data % k == 0 && (gpus / k) % per_node == 0;
    // Every server keeps serving the same number of nodes, k times fewer: scaling its bandwidth
    // by 1/k then keeps each node's share.
    const bool same_server_share = played % servers == 0;
    if (!fits || !same_server_share) continue;
    SymmetricReduction reduction;
    reduction.replicas = static_cast<int>(k);
    reduction.played = config;
    reduction.played.data = config.data / k;
    reduction.cluster = cluster;
    reduction.cluster.filesystem.server_bandwidth_bytes_per_second /= static_cast<double>(k);
    reduction.cluster.filesystem.attachment_bandwidth_bytes_per_second /= static_cast<double>(k);
    reduction.nodes = nodes;
    reduction.played_nodes = played;
    return reduction;
  }
  return full_simulation(cluster, config,
                         "no reduction to at least " + std::to_string(least) +
                             " nodes divides the nodes, replicas and file-system servers evenly");
}

}  // namespace tessera::sim
