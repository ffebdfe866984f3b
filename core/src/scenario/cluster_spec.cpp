#include "tessera/core/scenario/cluster_spec.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "tessera/core/common/embedded_files.hpp"
#include "tessera/core/common/plausible_figures.hpp"
#include "tessera/core/common/quantity.hpp"
#include "tessera/core/common/yaml_reader.hpp"

namespace tessera {
namespace {

constexpr std::string_view kPresetPrefix = "scenarios/clusters/";
constexpr std::string_view kPresetSuffix = ".yaml";

// Cluster files give every figure with its unit: a bare number is refused.
std::string figure_syntax(QuantityKind kind) {
  switch (kind) {
    case QuantityKind::bytes:
      return "a size with its unit, such as 16 GiB or 80 GB";
    case QuantityKind::bandwidth_bytes_per_second:
      return "a bandwidth with its unit, such as 900 GB/s or 100 Gb/s";
    case QuantityKind::flops_per_second:
      return "a compute rate with its unit, such as 15.7 TFLOP/s";
    case QuantityKind::seconds:
      return "a duration with its unit, such as 2 us or 1.5 ms";
    case QuantityKind::watts:
      return "a power with its unit, such as 300 W";
  }
  return "a quantity with its unit";
}

bool has_unit(const std::string& text) {
  auto last = text.find_last_not_of(" \t");
  if (last == std::string::npos) return false;
  const char c = text[last];
  return !(std::isdigit(static_cast<unsigned char>(c)) || c == '.');
}

double figure(const YamlValue& item, QuantityKind kind, bool allow_zero) {
  const std::string syntax = figure_syntax(kind) + (allow_zero ? "" : ", positive");
  if (!item.is_scalar() || !has_unit(item.node().Scalar())) item.fail(syntax);
  if (!parse_quantity(item.node().Scalar(), kind)) item.fail(syntax);
  const double value = item.as_quantity(kind);
  if (!allow_zero && value <= 0) item.fail(syntax);
  if (value == 0) return value;
  const auto range = plausible_range(kind);
  if (!range.holds(value)) {
    item.fail(figure_syntax(kind) + ", " + range.text +
              (allow_zero && range.least > 0 ? " (or 0)" : ""));
  }
  return value;
}

// Figures of one mapping: positive() for sizes, rates and bandwidths, latency() may be zero.
class Figures {
 public:
  Figures(const YamlValue& value, std::vector<std::string> allowed)
      : map_(value, std::move(allowed)) {}

  const YamlMap& map() const { return map_; }
  double positive(const std::string& key, QuantityKind kind) const {
    return figure(map_.required(key, figure_syntax(kind)), kind, false);
  }
  double latency(const std::string& key) const {
    return figure(map_.required(key, figure_syntax(QuantityKind::seconds)), QuantityKind::seconds,
                  true);
  }
  // An achieved fraction of a peak: below 0.1% the figure is a typo, not a measurement.
  double fraction(const std::string& key, double fallback) const {
    auto item = map_.optional(key);
    return item ? item->as_number(0.001, 1.0) : fallback;
  }

 private:
  YamlMap map_;
};

GpuSpec parse_gpu(const YamlValue& value) {
  Figures f(value, {"model", "memory", "memory_bandwidth", "fp32_peak", "tensor_peak",
                    "compute_efficiency", "memory_efficiency", "kernel_launch_latency",
                    "overlaps_communication", "power"});
  GpuSpec gpu;
  const auto model = f.map().required("model", "the GPU's name");
  gpu.model = model.as_string();
  // Profile rows name their device by it, in a CSV column that cannot hold a comma or a newline.
  if (gpu.model.find_first_of(",\n\r") != std::string::npos) {
    model.fail("the GPU's name without commas or line breaks (profile databases name it)");
  }
  gpu.memory_bytes = f.positive("memory", QuantityKind::bytes);
  gpu.memory_bandwidth_bytes_per_second =
      f.positive("memory_bandwidth", QuantityKind::bandwidth_bytes_per_second);
  gpu.fp32_flops_per_second = f.positive("fp32_peak", QuantityKind::flops_per_second);
  if (auto tensor = f.map().optional("tensor_peak")) {
    gpu.tensor_flops_per_second = figure(*tensor, QuantityKind::flops_per_second, true);
  }
  gpu.compute_efficiency = f.fraction("compute_efficiency", gpu.compute_efficiency);
  gpu.memory_efficiency = f.fraction("memory_efficiency", gpu.memory_efficiency);
  if (auto launch = f.map().optional("kernel_launch_latency")) {
    gpu.kernel_launch_latency_seconds = figure(*launch, QuantityKind::seconds, true);
  }
  if (auto overlaps = f.map().optional("overlaps_communication")) {
    gpu.overlaps_communication = overlaps->as_bool();
  }
  if (f.map().has("power")) gpu.power_watts = f.positive("power", QuantityKind::watts);
  return gpu;
}

GpuInterconnect parse_interconnect(const YamlValue& value) {
  const auto name = value.as_choice({"nvswitch", "nvlink_mesh", "pcie"});
  if (name == "nvswitch") return GpuInterconnect::nvswitch;
  if (name == "nvlink_mesh") return GpuInterconnect::nvlink_mesh;
  return GpuInterconnect::pcie;
}

// With a pcie interconnect the GPU links are the PCIe links: their figures may be left out, and
// if given must agree.
double gpu_link_figure(const Figures& f, const std::string& key, const std::string& pcie_key,
                       QuantityKind kind, GpuInterconnect interconnect, double pcie_value) {
  const bool zero_ok = kind == QuantityKind::seconds;
  if (interconnect != GpuInterconnect::pcie) {
    return zero_ok ? f.latency(key) : f.positive(key, kind);
  }
  auto item = f.map().optional(key);
  if (!item) return pcie_value;
  const double value = figure(*item, kind, zero_ok);
  if (std::fabs(value - pcie_value) > 1e-9 * std::max(1.0, pcie_value)) {
    item->fail_problem("with gpu_interconnect: pcie the GPUs talk over their PCIe links; leave " +
                       key + " out or give it the value of " + pcie_key);
  }
  return value;
}

// `nvlinks`: one entry per directly linked GPU pair, {gpus: [i, j], links: n} (links default 1).
std::vector<NvlinkPair> parse_nvlinks(const YamlValue& value, std::int64_t gpus_per_node) {
  std::vector<NvlinkPair> pairs;
  for (const auto& item : value.as_sequence(1)) {
    YamlMap map(item, {"gpus", "links"});
    const auto gpus = map.required("gpus", "the pair's two local GPU indices, such as [0, 3]");
    const auto ends = gpus.as_integer_list(2, 2, 0, gpus_per_node - 1);
    if (ends[0] == ends[1]) gpus.fail("two different GPUs of the node");
    NvlinkPair pair{static_cast<int>(std::min(ends[0], ends[1])),
                    static_cast<int>(std::max(ends[0], ends[1])), 1};
    if (auto links = map.optional("links")) pair.links = static_cast<int>(links->as_integer(1, 18));
    for (const auto& earlier : pairs) {
      if (earlier.first == pair.first && earlier.second == pair.second) {
        gpus.fail_problem("GPUs " + std::to_string(pair.first) + " and " +
                          std::to_string(pair.second) +
                          " are listed twice; give their links once, with 'links'");
      }
    }
    pairs.push_back(pair);
  }
  return pairs;
}

NodeSpec parse_node(const YamlValue& value, std::int64_t gpus_per_node) {
  Figures f(value, {"gpu_interconnect", "gpu_link_bandwidth", "gpu_link_latency", "nvlinks",
                    "pcie_bandwidth", "pcie_latency", "gpus_per_pcie_switch",
                    "pcie_switch_bandwidth", "host_memory", "nics", "nic_bandwidth", "nic_latency",
                    "local_storage", "local_storage_bandwidth"});
  NodeSpec node;
  node.gpu_interconnect = parse_interconnect(
      f.map().required("gpu_interconnect", "one of: nvswitch, nvlink_mesh, pcie"));
  node.pcie_bandwidth_bytes_per_second =
      f.positive("pcie_bandwidth", QuantityKind::bandwidth_bytes_per_second);
  node.pcie_latency_seconds = f.latency("pcie_latency");
  if (auto per_switch = f.map().optional("gpus_per_pcie_switch")) {
    node.gpus_per_pcie_switch = per_switch->as_integer(1, gpus_per_node);
    if (gpus_per_node % node.gpus_per_pcie_switch != 0) {
      per_switch->fail("a divisor of the node's " + std::to_string(gpus_per_node) + " GPUs");
    }
  }
  node.pcie_switch_bandwidth_bytes_per_second =
      f.map().has("pcie_switch_bandwidth")
          ? f.positive("pcie_switch_bandwidth", QuantityKind::bandwidth_bytes_per_second)
          : node.pcie_bandwidth_bytes_per_second;
  node.gpu_link_bandwidth_bytes_per_second = gpu_link_figure(
      f, "gpu_link_bandwidth", "pcie_bandwidth", QuantityKind::bandwidth_bytes_per_second,
      node.gpu_interconnect, node.pcie_bandwidth_bytes_per_second);
  node.gpu_link_latency_seconds =
      gpu_link_figure(f, "gpu_link_latency", "pcie_latency", QuantityKind::seconds,
                      node.gpu_interconnect, node.pcie_latency_seconds);
  if (auto nvlinks = f.map().optional("nvlinks")) {
    if (node.gpu_interconnect != GpuInterconnect::nvlink_mesh) {
      nvlinks->fail_problem(
          "'nvlinks' lists the GPU pairs of an nvlink_mesh node; this node's gpu_interconnect is " +
          to_string(node.gpu_interconnect));
    }
    node.nvlinks = parse_nvlinks(*nvlinks, gpus_per_node);
  }
  node.host_memory_bytes = f.positive("host_memory", QuantityKind::bytes);
  node.nics = f.map().required("nics", "the number of network adapters").as_integer(1, 64);
  node.nic_bandwidth_bytes_per_second =
      f.positive("nic_bandwidth", QuantityKind::bandwidth_bytes_per_second);
  node.nic_latency_seconds = f.latency("nic_latency");
  if (f.map().has("local_storage") != f.map().has("local_storage_bandwidth")) {
    value.fail_problem(
        "give both 'local_storage' (its size) and 'local_storage_bandwidth' (its "
        "read rate), or neither (no node-local storage)");
  }
  if (f.map().has("local_storage")) {
    node.local_storage_bytes = f.positive("local_storage", QuantityKind::bytes);
    node.local_storage_bandwidth_bytes_per_second =
        f.positive("local_storage_bandwidth", QuantityKind::bandwidth_bytes_per_second);
  }
  return node;
}

NetworkSpec parse_network(const YamlValue& value) {
  Figures f(value,
            {"topology", "nodes_per_switch", "oversubscription", "link_bandwidth", "link_latency"});
  NetworkSpec network;
  f.map().required("topology", "one of: fat_tree").as_choice({"fat_tree"});
  network.topology = NetworkTopology::fat_tree;
  network.nodes_per_switch =
      f.map()
          .required("nodes_per_switch", "the number of nodes per leaf switch")
          .as_integer(1, 4096);
  // At least one uplink per leaf switch: the ratio cannot exceed the leaf's node ports.
  network.oversubscription =
      f.map()
          .required("oversubscription", "the down:up bandwidth ratio of a leaf switch, >= 1")
          .as_number(1.0, static_cast<double>(network.nodes_per_switch));
  network.link_bandwidth_bytes_per_second =
      f.positive("link_bandwidth", QuantityKind::bandwidth_bytes_per_second);
  network.link_latency_seconds = f.latency("link_latency");
  return network;
}

FilesystemSpec parse_filesystem(const YamlValue& value) {
  Figures f(value, {"servers", "server_bandwidth", "attachment_bandwidth", "latency"});
  FilesystemSpec fs;
  fs.servers = f.map().required("servers", "the number of file servers").as_integer(1, 100000);
  fs.server_bandwidth_bytes_per_second =
      f.positive("server_bandwidth", QuantityKind::bandwidth_bytes_per_second);
  fs.attachment_bandwidth_bytes_per_second =
      f.positive("attachment_bandwidth", QuantityKind::bandwidth_bytes_per_second);
  fs.latency_seconds = f.latency("latency");
  return fs;
}

}  // namespace

std::string to_string(GpuInterconnect interconnect) {
  switch (interconnect) {
    case GpuInterconnect::nvswitch:
      return "nvswitch";
    case GpuInterconnect::nvlink_mesh:
      return "nvlink_mesh";
    case GpuInterconnect::pcie:
      return "pcie";
  }
  return "?";
}

int NodeSpec::nvlinks_between(int a, int b) const {
  if (gpu_interconnect != GpuInterconnect::nvlink_mesh || a == b) return 0;
  if (nvlinks.empty()) return 1;
  for (const auto& pair : nvlinks) {
    if (pair.first == std::min(a, b) && pair.second == std::max(a, b)) return pair.links;
  }
  return 0;
}

std::string to_string(NetworkTopology topology) {
  switch (topology) {
    case NetworkTopology::fat_tree:
      return "fat_tree";
  }
  return "?";
}

namespace {

// One entry of node_groups. GPUs per node must agree between groups: ranks are numbered
// node * gpus_per_node + local index throughout the simulator and the real backend.
NodeGroupSpec parse_node_group(const YamlValue& value, const NodeGroupSpec* first) {
  YamlMap map(value, {"name", "nodes", "gpus_per_node", "gpu", "node"});
  NodeGroupSpec group;
  group.name = map.required("name", "the group's name").as_string();
  group.nodes = map.required("nodes", "the number of nodes in the group").as_integer(1, 1 << 20);
  const auto per_node = map.required("gpus_per_node", "the number of GPUs per node");
  group.gpus_per_node = per_node.as_integer(1, 64);
  if (first != nullptr && group.gpus_per_node != first->gpus_per_node) {
    per_node.fail(std::to_string(first->gpus_per_node) + ", the GPUs per node of group '" +
                  first->name + "' (every group must have as many GPUs per node)");
  }
  group.gpu = parse_gpu(map.required("gpu", "a mapping describing the group's GPU"));
  group.node = parse_node(map.required("node", "a mapping describing one node of the group"),
                          group.gpus_per_node);
  return group;
}

// One straggler annotation: {gpu: RANK, clock: FRACTION} or {node: INDEX, nic_bandwidth:
// FRACTION}. A fraction below 1% is a typo (a percentage written as a fraction's hundredfold is
// refused by the upper bound).
Straggler parse_straggler(const YamlValue& value, const ClusterSpec& cluster) {
  YamlMap map(value, {"gpu", "clock", "node", "nic_bandwidth"});
  const std::string shape =
      "{gpu: RANK, clock: FRACTION} or {node: INDEX, nic_bandwidth: FRACTION}";
  Straggler straggler;
  if (map.has("gpu") && !map.has("node") && map.has("clock") && !map.has("nic_bandwidth")) {
    straggler.kind = StragglerKind::gpu_clock;
    straggler.index =
        map.required("gpu", "a GPU rank").as_integer(0, cluster.nodes * cluster.gpus_per_node - 1);
    straggler.fraction = map.required("clock", "a fraction").as_number(0.01, 1.0);
    return straggler;
  }
  if (map.has("node") && !map.has("gpu") && map.has("nic_bandwidth") && !map.has("clock")) {
    straggler.kind = StragglerKind::nic_bandwidth;
    straggler.index = map.required("node", "a node index").as_integer(0, cluster.nodes - 1);
    straggler.fraction = map.required("nic_bandwidth", "a fraction").as_number(0.01, 1.0);
    return straggler;
  }
  value.fail(shape);
}

}  // namespace

ClusterSpec parse_cluster(const YamlValue& root) {
  YamlMap map(root, {"name", "description", "sources", "nodes", "gpus_per_node", "gpu", "node",
                     "node_groups", "stragglers", "rank_jitter", "failed_nodes", "failed_gpus",
                     "network", "filesystem"});
  ClusterSpec cluster;
  cluster.file = root.location().file;
  cluster.name = map.required("name", "the cluster's name").as_string();
  if (auto description = map.optional("description"))
    cluster.description = description->as_string();
  if (auto sources = map.optional("sources")) {
    for (const auto& source : sources->as_sequence(1))
      cluster.sources.push_back(source.as_string());
  }
  if (auto groups = map.optional("node_groups")) {
    // The groups say what the top-level keys would: both would be two answers.
    for (const char* key : {"nodes", "gpus_per_node", "gpu", "node"}) {
      if (map.has(key)) {
        map.required(key, "").fail_problem(std::string("with node_groups, give '") + key +
                                           "' in each group, not at the top level");
      }
    }
    for (const auto& item : groups->as_sequence(1, 64)) {
      cluster.groups.push_back(
          parse_node_group(item, cluster.groups.empty() ? nullptr : &cluster.groups.front()));
      for (std::size_t g = 0; g + 1 < cluster.groups.size(); ++g) {
        if (cluster.groups[g].name == cluster.groups.back().name) {
          YamlMap(item, {"name", "nodes", "gpus_per_node", "gpu", "node"})
              .required("name", "")
              .fail("a name no other group has");
        }
      }
    }
    cluster.nodes = 0;
    for (const auto& group : cluster.groups) cluster.nodes += group.nodes;
    cluster.gpus_per_node = cluster.groups.front().gpus_per_node;
    cluster.gpu = cluster.groups.front().gpu;
    cluster.node = cluster.groups.front().node;
  } else {
    cluster.nodes = map.required("nodes", "the number of nodes").as_integer(1, 1 << 20);
    cluster.gpus_per_node =
        map.required("gpus_per_node", "the number of GPUs per node").as_integer(1, 64);
    cluster.gpu = parse_gpu(map.required("gpu", "a mapping describing one GPU"));
    cluster.node = parse_node(
        map.required("node",
                     "a mapping describing one node (gpu_interconnect, links, host memory, NICs)"),
        cluster.gpus_per_node);
    cluster.groups.push_back(
        {cluster.name, cluster.nodes, cluster.gpus_per_node, cluster.gpu, cluster.node});
  }
  if (auto stragglers = map.optional("stragglers")) {
    for (const auto& item : stragglers->as_sequence(1)) {
      const auto straggler = parse_straggler(item, cluster);
      // A second entry would multiply the first (two clocks of 0.01: 1e-4, and on to times no
      // double holds): each GPU's clock and each node's NICs are given once.
      for (const auto& earlier : cluster.stragglers) {
        if (earlier.kind == straggler.kind && earlier.index == straggler.index) {
          item.fail_problem(
              std::string(straggler.kind == StragglerKind::gpu_clock ? "GPU " : "node ") +
              std::to_string(straggler.index) + " is already a straggler in this list; give each " +
              (straggler.kind == StragglerKind::gpu_clock ? "GPU's clock" : "node's NICs") +
              " once");
        }
      }
      cluster.stragglers.push_back(straggler);
    }
  }
  if (auto jitter = map.optional("rank_jitter")) cluster.jitter = parse_rank_jitter(*jitter);
  // A failed GPU takes its node out of jobs (ranks fill whole nodes), as schedulers drain it.
  const std::string failed_what = "distinct indices, leaving at least one node";
  for (const char* key : {"failed_nodes", "failed_gpus"}) {
    const auto failed = map.optional(key);
    if (!failed) continue;
    const bool gpus = std::string(key) == "failed_gpus";
    const std::int64_t count = gpus ? cluster.nodes * cluster.gpus_per_node : cluster.nodes;
    const auto indices = failed->as_integer_list(1, static_cast<std::size_t>(count), 0, count - 1);
    auto sorted = indices;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
      failed->fail("distinct " + std::string(gpus ? "GPU" : "node") + " indices from 0 to " +
                   std::to_string(count - 1));
    }
    for (const std::int64_t index : indices) {
      cluster.failed_nodes.push_back(gpus ? index / cluster.gpus_per_node : index);
    }
    std::sort(cluster.failed_nodes.begin(), cluster.failed_nodes.end());
    cluster.failed_nodes.erase(
        std::unique(cluster.failed_nodes.begin(), cluster.failed_nodes.end()),
        cluster.failed_nodes.end());
    if (static_cast<std::int64_t>(cluster.failed_nodes.size()) >= cluster.nodes) {
      failed->fail("failures leaving at least one of the " + std::to_string(cluster.nodes) +
                   " nodes up");
    }
  }
  cluster.network = parse_network(map.required(
      "network", "a mapping describing the network between nodes (topology, switches, links)"));
  cluster.filesystem = parse_filesystem(map.required(
      "filesystem", "a mapping describing the parallel file system (servers, bandwidths)"));
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
