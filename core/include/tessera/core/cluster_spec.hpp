#pragma once
// A GPU cluster as a scenario sees it: how many nodes and GPUs, and what one GPU is. Cluster files
// live in scenarios/clusters/ (built in as presets) or anywhere a scenario points to.
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/core/yaml_reader.hpp"

namespace tessera {

struct GpuSpec {
  std::string model;
  double memory_bytes = 0;
  double memory_bandwidth_bytes_per_second = 0;
  double fp32_flops_per_second = 0;
  double tensor_flops_per_second = 0;  // 0 when the GPU has no tensor cores
};

struct ClusterSpec {
  std::string name;
  std::string description;
  std::vector<std::string> sources;  // where each figure comes from
  std::int64_t nodes = 1;
  std::int64_t gpus_per_node = 1;
  GpuSpec gpu;
  std::string file;  // where it was read from ("built-in:<name>" for presets)

  std::int64_t total_gpus() const { return nodes * gpus_per_node; }
};

ClusterSpec parse_cluster(const YamlValue& root);
ClusterSpec load_cluster_file(const std::string& path);
// Throws InputError at `where` (the scenario's preset key) if there is no such preset.
ClusterSpec load_cluster_preset(const std::string& name, const SourceLocation& where,
                                const std::string& key);
std::vector<std::string> cluster_preset_names();

}  // namespace tessera
