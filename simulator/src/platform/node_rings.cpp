#include "tessera/simulator/platform/node_rings.hpp"

#include <algorithm>

#include "tessera/core/scenario/nvlink_rings.hpp"

namespace tessera::sim {
namespace {

// One simulation per process and actors on one thread (see member_group.cpp).
std::uint64_t next_ring_id = 1;

}  // namespace

NodeRings::NodeRings(const ClusterSpec& cluster, std::int64_t nodes)
    : id_(next_ring_id++), gpus_per_node_(static_cast<int>(cluster.gpus_per_node)) {
  // With fewer than two groups, `cluster.node` is authoritative (cluster_spec.hpp).
  if (cluster.groups.size() < 2) {
    group_specs_.push_back(cluster.node);
  } else {
    for (const auto& group : cluster.groups) group_specs_.push_back(group.node);
  }
  for (std::int64_t node = 0; node < nodes; ++node) {
    group_of_node_.push_back(cluster.group_index_of_node(node));
  }
}

std::vector<std::vector<int>> NodeRings::rings(const std::vector<int>& ranks) const {
  if (ranks.size() < 2 || group_of_node_.empty()) return {};
  const int node = ranks.front() / gpus_per_node_;
  const int base = node * gpus_per_node_;
  std::vector<int> locals;
  for (int rank : ranks) locals.push_back(rank - base);
  std::sort(locals.begin(), locals.end());
  const std::size_t group = group_of_node_.at(static_cast<std::size_t>(node));
  auto key = std::make_pair(group, locals);
  auto it = found_.find(key);
  if (it == found_.end()) {
    it = found_.emplace(std::move(key), nvlink_rings(group_specs_[group], locals)).first;
  }
  std::vector<std::vector<int>> result = it->second;
  for (auto& ring : result) {
    for (int& member : ring) member += base;
  }
  return result;
}

}  // namespace tessera::sim
