// A cluster's node groups, straggler annotations and failed nodes, as the backends ask for them:
// which node of the cluster a job's node runs on, which group it belongs to, and how much slower
// a GPU or a NIC runs.
#include "tessera/core/scenario/cluster_spec.hpp"

namespace tessera {

std::string to_string(StragglerKind kind) {
  switch (kind) {
    case StragglerKind::gpu_clock:
      return "gpu_clock";
    case StragglerKind::nic_bandwidth:
      return "nic_bandwidth";
  }
  return "?";
}

std::int64_t ClusterSpec::node_of_job_node(std::int64_t job_node) const {
  std::int64_t cluster_node = job_node;
  for (const std::int64_t failed : failed_nodes) {  // sorted: each one at or before moves it on
    if (failed <= cluster_node) ++cluster_node;
  }
  return cluster_node;
}

std::size_t ClusterSpec::group_index_of_node(std::int64_t node_index) const {
  if (groups.size() < 2) return 0;
  const std::int64_t cluster_node = node_of_job_node(node_index);
  std::int64_t first = 0;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    first += groups[g].nodes;
    if (cluster_node < first) return g;
  }
  return groups.size() - 1;
}

std::size_t ClusterSpec::group_index_of_rank(std::int64_t rank) const {
  return group_index_of_node(rank / gpus_per_node);
}

std::int64_t ClusterSpec::first_node_of_group(std::size_t group) const {
  std::int64_t first = 0;
  for (std::size_t g = 0; g < group && g < groups.size(); ++g) first += groups[g].nodes;
  // The group's first node that has not failed is the job's node after those before it.
  std::int64_t failed_before = 0;
  for (const std::int64_t failed : failed_nodes) failed_before += failed < first ? 1 : 0;
  return first - failed_before;
}

const GpuSpec& ClusterSpec::gpu_of_group(std::size_t group) const {
  return groups.size() < 2 ? gpu : groups.at(group).gpu;
}

const GpuSpec& ClusterSpec::gpu_of_node(std::int64_t node_index) const {
  return gpu_of_group(group_index_of_node(node_index));
}

const NodeSpec& ClusterSpec::node_spec_of_node(std::int64_t node_index) const {
  return groups.size() < 2 ? node : groups[group_index_of_node(node_index)].node;
}

double ClusterSpec::gpu_clock_fraction(std::int64_t rank) const {
  const std::int64_t cluster_rank =
      node_of_job_node(rank / gpus_per_node) * gpus_per_node + rank % gpus_per_node;
  double fraction = 1;
  for (const auto& straggler : stragglers) {
    if (straggler.kind == StragglerKind::gpu_clock && straggler.index == cluster_rank) {
      fraction *= straggler.fraction;
    }
  }
  return fraction;
}

double ClusterSpec::nic_bandwidth_fraction(std::int64_t node_index) const {
  const std::int64_t cluster_node = node_of_job_node(node_index);
  double fraction = 1;
  for (const auto& straggler : stragglers) {
    if (straggler.kind == StragglerKind::nic_bandwidth && straggler.index == cluster_node) {
      fraction *= straggler.fraction;
    }
  }
  return fraction;
}

std::string describe_node_groups(const ClusterSpec& cluster) {
  std::string text;
  for (const auto& group : cluster.groups) {
    text += (text.empty() ? "" : " + ") + std::to_string(group.nodes) + " x " +
            std::to_string(group.gpus_per_node) + " " + group.gpu.model + " (" + group.name + ")";
  }
  if (!cluster.stragglers.empty()) {
    text += ", " + std::to_string(cluster.stragglers.size()) + " straggler" +
            (cluster.stragglers.size() > 1 ? "s" : "");
  }
  if (!cluster.failed_nodes.empty()) {
    text += ", " + std::to_string(cluster.failed_nodes.size()) + " failed node" +
            (cluster.failed_nodes.size() > 1 ? "s" : "");
  }
  return text;
}

}  // namespace tessera
