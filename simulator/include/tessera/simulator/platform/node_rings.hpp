#pragma once
// The NVLink rings of a platform's nodes, for the collectives: over which rings a set of one
// node's GPUs runs its ring phases (core's nvlink_rings over the node's links), found once per
// node kind and set of GPUs. A platform read from SimGrid XML has none.
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "tessera/core/scenario/cluster_spec.hpp"

namespace tessera::sim {

class NodeRings {
 public:
  NodeRings() = default;  // no rings anywhere
  NodeRings(const ClusterSpec& cluster, std::int64_t nodes);

  // Distinguishes this object from any other in caches that outlive it (e.g. per member group).
  std::uint64_t id() const { return id_; }

  // The rings through all of `ranks` (fabric ranks, all on one node), each a cyclic order of
  // them in fabric ranks; empty where the node has no NVLink mesh or no ring passes through them.
  std::vector<std::vector<int>> rings(const std::vector<int>& ranks) const;

 private:
  std::uint64_t id_ = 0;
  int gpus_per_node_ = 1;
  std::vector<std::size_t> group_of_node_;
  std::vector<NodeSpec> group_specs_;
  // By (node group, sorted local indices): rings in local indices.
  mutable std::map<std::pair<std::size_t, std::vector<int>>, std::vector<std::vector<int>>> found_;
};

}  // namespace tessera::sim
