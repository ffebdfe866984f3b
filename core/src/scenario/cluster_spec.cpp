#include "tessera/core/cluster_spec.hpp"

#include "tessera/core/embedded_files.hpp"

namespace tessera {
namespace {

constexpr std::string_view kPresetPrefix = "scenarios/clusters/";
constexpr std::string_view kPresetSuffix = ".yaml";

GpuSpec parse_gpu(const YamlValue& value) {
  YamlMap map(value, {"model", "memory", "memory_bandwidth", "fp32_peak", "tensor_peak"});
  GpuSpec gpu;
  gpu.model = map.required("model", "the GPU's name").as_string();
  auto positive = [&](const std::string& key, QuantityKind kind) {
    auto item = map.required(key, quantity_syntax(kind));
    const double number = item.as_quantity(kind);
    if (number <= 0) item.fail(quantity_syntax(kind) + ", positive");
    return number;
  };
  gpu.memory_bytes = positive("memory", QuantityKind::bytes);
  gpu.memory_bandwidth_bytes_per_second =
      positive("memory_bandwidth", QuantityKind::bandwidth_bytes_per_second);
  gpu.fp32_flops_per_second = positive("fp32_peak", QuantityKind::flops_per_second);
  if (auto tensor = map.optional("tensor_peak")) {
    gpu.tensor_flops_per_second = tensor->as_quantity(QuantityKind::flops_per_second);
  }
  return gpu;
}

}  // namespace

ClusterSpec parse_cluster(const YamlValue& root) {
  YamlMap map(root, {"name", "description", "sources", "nodes", "gpus_per_node", "gpu"});
  ClusterSpec cluster;
  cluster.file = root.location().file;
  cluster.name = map.required("name", "the cluster's name").as_string();
  if (auto description = map.optional("description"))
    cluster.description = description->as_string();
  if (auto sources = map.optional("sources")) {
    for (const auto& source : sources->as_sequence(1))
      cluster.sources.push_back(source.as_string());
  }
  cluster.nodes = map.required("nodes", "the number of nodes").as_integer(1, 1 << 20);
  cluster.gpus_per_node =
      map.required("gpus_per_node", "the number of GPUs per node").as_integer(1, 64);
  cluster.gpu = parse_gpu(map.required("gpu", "a mapping describing one GPU"));
  return cluster;
}

ClusterSpec load_cluster_file(const std::string& path) {
  return parse_cluster(load_yaml_file(path));
}

std::vector<std::string> cluster_preset_names() {
  std::vector<std::string> names;
  for (const auto& file : embedded_file_names()) {
    if (file.starts_with(kPresetPrefix) && file.ends_with(kPresetSuffix)) {
      names.push_back(file.substr(kPresetPrefix.size(),
                                  file.size() - kPresetPrefix.size() - kPresetSuffix.size()));
    }
  }
  return names;
}

ClusterSpec load_cluster_preset(const std::string& name, const SourceLocation& where,
                                const std::string& key) {
  const std::string path = std::string(kPresetPrefix) + name + std::string(kPresetSuffix);
  auto text = embedded_file(path);
  if (!text) {
    std::string list;
    for (const auto& preset : cluster_preset_names()) list += (list.empty() ? "" : ", ") + preset;
    std::string problem = "expected a built-in cluster preset (" + list + "), got '" + name + "'";
    auto suggestion = closest_match(name, cluster_preset_names());
    if (!suggestion.empty()) problem += " (did you mean '" + suggestion + "'?)";
    throw InputError(where, key, problem);
  }
  auto cluster = parse_cluster(parse_yaml_text(std::string(*text), "built-in:" + path));
  cluster.file = "built-in:" + path;
  return cluster;
}

}  // namespace tessera
