#include "tessera/core/loading/scenario_loader.hpp"

#include <algorithm>
#include <filesystem>

#include "scenario/scenario_parser.hpp"
#include "tessera/core/common/embedded_files.hpp"
#include "tessera/core/common/quantity.hpp"
#include "tessera/core/loading/sweep.hpp"
#include "tessera/core/model/model_file.hpp"
#include "tessera/core/model/shape_inference.hpp"
#include "tessera/core/strategy/stage_balance.hpp"
#include "tessera/core/zoo/model_zoo.hpp"

namespace tessera {
namespace {

constexpr const char* kDefaultScenario = "scenarios/default.yaml";

SourceLocation where_of(const Scenario& s, const std::string& key, const std::string& fallback) {
  for (const auto& candidate : {key, fallback}) {
    auto it = s.where.find(candidate);
    if (it != s.where.end()) return it->second;
  }
  return {s.file, 0, 0};
}

// A file named by the scenario, relative to the scenario's directory; a missing one is reported at
// the key that names it.
std::string resolve_existing(const Scenario& s, const std::string& base_directory,
                             const std::string& path, const std::string& key) {
  std::string resolved = path;
  if (!std::filesystem::path(path).is_absolute() && !base_directory.empty()) {
    resolved = (std::filesystem::path(base_directory) / path).lexically_normal().string();
  }
  std::error_code error;
  if (!std::filesystem::is_regular_file(resolved, error)) {
    throw InputError(where_of(s, key, "model"), key,
                     "expected an existing file (relative to the scenario's directory), but " +
                         resolved + " does not exist or is not a file");
  }
  return resolved;
}

constexpr std::int64_t kMaxGpus = std::int64_t{1} << 24;

ModelGraph build_model(const Scenario& s, const std::string& base_directory) {
  const auto& m = s.model;
  if (!m.file.empty())
    return load_model_file(resolve_existing(s, base_directory, m.file, "model.file"));
  const ZooModel* zoo = find_zoo_model(m.zoo_name);
  if (!zoo) {
    const auto names = zoo_model_names();
    std::string list;
    for (const auto& name : names) list += (list.empty() ? "" : ", ") + name;
    std::string problem = "expected a zoo model (" + list + "), got '" + m.zoo_name + "'";
    auto suggestion = closest_match(m.zoo_name, names);
    if (!suggestion.empty()) problem += " (did you mean '" + suggestion + "'?)";
    throw InputError(where_of(s, "model.zoo", "model"), "model.zoo", problem);
  }
  for (const auto& [key, value] : m.options) {
    const std::string path = "model.options." + key;
    const ModelOptionSpec* spec = nullptr;
    std::vector<std::string> names;
    for (const auto& candidate : zoo->options) {
      names.push_back(candidate.name);
      if (candidate.name == key) spec = &candidate;
    }
    if (!spec) {
      std::string list;
      for (const auto& name : names) list += (list.empty() ? "" : ", ") + name;
      std::string problem = "model " + zoo->name + " has no such option; it has: " +
                            (list.empty() ? std::string("none") : list);
      auto suggestion = closest_match(key, names);
      if (!suggestion.empty()) problem += " (did you mean '" + suggestion + "'?)";
      throw InputError(where_of(s, path, "model.options"), path, problem);
    }
    if (auto problem = check_option_value(*spec, value)) {
      throw InputError(where_of(s, path, "model.options"), path,
                       *problem + ", got '" + value + "'");
    }
  }
  try {
    return build_zoo_model(m.zoo_name, m.options);
  } catch (const ModelError& error) {
    throw InputError(where_of(s, "model.options", "model"), "model.options", error.what());
  } catch (const std::invalid_argument& error) {
    // A builder's check of options together (inception_v3's image_size with aux_logits).
    throw InputError(where_of(s, "model.options", "model"), "model.options", error.what());
  }
}

// The scenario's placement of a point's stages; unnamed stages balanced by their time on the
// cluster's GPU at a micro-batch.
StagePlacement placement_of(const LoadedScenario& loaded, const ParallelConfig& config) {
  const auto& p = loaded.scenario.parallelism;
  StagePlacement placement =
      p.placement.empty() ? StagePlacement(p.stage_starts) : StagePlacement::of_layers(p.placement);
  return balanced_by_time(std::move(placement), loaded.model, loaded.cluster.gpu, config,
                          loaded.scenario.model.dtype);
}

ParallelConfig base_config(const Scenario& s, const ModelGraph& model) {
  ParallelConfig config;
  config.data = s.parallelism.data;
  config.spatial_grid = s.parallelism.spatial_grid;
  if (config.spatial_grid.empty()) {
    config.spatial_grid.assign(
        static_cast<std::size_t>(model.layers().front().output_shape.spatial_rank()), 1);
  }
  config.model_degree = s.parallelism.model_degree;
  config.micro_batches = s.parallelism.micro_batches;
  config.schedule = s.parallelism.schedule;
  config.tensor = s.parallelism.tensor;
  if (s.model.mini_batch) {
    config.mini_batch = *s.model.mini_batch;
  } else if (model.default_mini_batch()) {
    config.mini_batch = *model.default_mini_batch();
  } else {
    throw InputError(s.model.where, "model.mini_batch",
                     "missing required key (expected the samples per data-parallel replica; "
                     "model " +
                         model.name() + " has no default)");
  }
  for (const auto& layer : model.layers()) {
    if (layer.output_shape.elements_per_sample() > kMaxElementsPerBatch / config.mini_batch) {
      throw InputError(where_of(s, "model.mini_batch", "model"), "model.mini_batch",
                       "layer '" + layer.layer.name + "' would hold more than " +
                           format_count(kMaxElementsPerBatch) + " elements over " +
                           std::to_string(config.mini_batch) +
                           " samples; expected a smaller "
                           "mini-batch or model");
    }
  }
  // Each factor is bounded by the parser, the product is not: check it before multiplying further.
  const double product =
      static_cast<double>(config.data) * static_cast<double>(config.spatial_parts()) *
      static_cast<double>(config.model_degree) * static_cast<double>(config.tensor);
  if (product > static_cast<double>(kMaxGpus)) {
    throw InputError(
        where_of(s, "parallelism", "model"), "parallelism",
        "data x spatial x model x tensor asks for more than " + std::to_string(kMaxGpus) + " GPUs");
  }
  if (s.parallelism.gpus && *s.parallelism.gpus != config.gpus()) {
    throw InputError(where_of(s, "parallelism.gpus", "parallelism"), "parallelism.gpus",
                     "expected data x spatial x model x tensor = " + std::to_string(config.data) +
                         " x " + std::to_string(config.spatial_parts()) + " x " +
                         std::to_string(config.model_degree) + " x " +
                         std::to_string(config.tensor) + " = " + std::to_string(config.gpus()) +
                         " GPUs, got " + std::to_string(*s.parallelism.gpus));
  }
  return config;
}

ClusterSpec load_cluster(const Scenario& s, const std::string& base_directory) {
  ClusterSpec cluster =
      s.platform.cluster_file.empty()
          ? load_cluster_preset(s.platform.preset, where_of(s, "platform.preset", "platform"),
                                "platform.preset")
          : load_cluster_file(
                resolve_existing(s, base_directory, s.platform.cluster_file, "platform.cluster"));
  if (s.platform.nodes) {
    if (*s.platform.nodes > cluster.nodes) {
      throw InputError(where_of(s, "platform.nodes", "platform"), "platform.nodes",
                       "expected at most the " + std::to_string(cluster.nodes) + " nodes of " +
                           cluster.name + ", got " + std::to_string(*s.platform.nodes));
    }
    cluster.nodes = *s.platform.nodes;
    std::erase_if(cluster.failed_nodes, [&](std::int64_t node) { return node >= cluster.nodes; });
    if (cluster.total_gpus() == 0) {
      throw InputError(
          where_of(s, "platform.nodes", "platform"), "platform.nodes",
          "expected more nodes than the " +
              counted(static_cast<std::int64_t>(cluster.failed_nodes.size()), "failed node") +
              " of " + cluster.name + " among the first " + std::to_string(cluster.nodes));
    }
  }
  return cluster;
}

LoadedScenario check(Scenario scenario, const std::string& base_directory) {
  const Scenario& s = scenario;
  ModelGraph model = build_model(s, base_directory);
  ClusterSpec cluster = load_cluster(s, base_directory);
  const ParallelConfig base = base_config(s, model);

  std::vector<ParallelConfig> configs{base};
  if (s.sweep) configs = expand_sweep(*s.sweep, base, s.file);

  LoadedScenario loaded{std::move(scenario), std::move(model), std::move(cluster), {}, 0, {}};
  const Scenario& sc = loaded.scenario;
  for (std::size_t i = 0; i < configs.size(); ++i) {
    const auto& config = configs[i];
    const bool swept = sc.sweep.has_value();
    const std::string point_key = swept ? "sweep.gpus[" + std::to_string(i) + "]" : "parallelism";
    const SourceLocation point_where =
        swept ? sc.sweep->gpus_where[i] : where_of(sc, "parallelism", "model");
    if (config.gpus() > loaded.cluster.total_gpus()) {
      throw InputError(
          point_where, point_key,
          std::to_string(config.gpus()) + " GPUs exceed platform " + loaded.cluster.name + " (" +
              counted(loaded.cluster.nodes, "node") + " x " +
              counted(loaded.cluster.gpus_per_node, "GPU") +
              (loaded.cluster.failed_nodes.empty()
                   ? std::string()
                   : ", " + counted(static_cast<std::int64_t>(loaded.cluster.failed_nodes.size()),
                                    "failed node")) +
              ")");
    }
    try {
      loaded.points.push_back({i, config,
                               plan_shards(loaded.model, config, sc.parallelism.spatial_until,
                                           placement_of(loaded, config))});
    } catch (const StrategyError& error) {
      const std::string prefix = swept ? "at sweep point " + std::to_string(i) + " (" +
                                             std::to_string(config.gpus()) + " GPUs, grid " +
                                             grid_to_string(config.spatial_grid) + "): "
                                       : std::string();
      throw InputError(swept ? point_where : where_of(sc, error.key(), "parallelism"),
                       swept ? point_key : error.key(), prefix + error.what());
    }
  }
  // DeepSpeed and Megatron-LM shard only the optimizer state under a pipeline: the gradients
  // accumulate over micro-batches, and the weights serve every micro-batch's passes.
  if (sc.memory.shard > ShardLevel::optimizer && sc.parallelism.model_degree > 1) {
    throw InputError(where_of(sc, "memory.shard", "memory"), "memory.shard",
                     "sharding the " + to_string(sc.memory.shard) +
                         " with model-parallel stages (parallelism.model) is not supported; "
                         "expected none or optimizer");
  }
  const std::int64_t largest = largest_point_gpus(loaded);
  for (auto gpu : sc.outputs.trace_gpus) {
    if (gpu >= largest) {
      throw InputError(
          where_of(sc, "outputs.trace_gpus", "outputs"), "outputs.trace_gpus",
          "expected GPU ranks below " + std::to_string(largest) + ", got " + std::to_string(gpu));
    }
  }
  if (sc.io.store == DataStore::node_local && loaded.cluster.node.local_storage_bytes <= 0) {
    throw InputError(where_of(sc, "io.store", "io"), "io.store",
                     "node_local stages the data set to node-local storage, but the nodes of " +
                         loaded.cluster.name +
                         " have none: give node.local_storage and "
                         "node.local_storage_bandwidth in the cluster file, or use store: memory");
  }
  if (!sc.platform.simgrid_xml.empty()) {
    // Checked here so a missing file is reported at its key; the simulator reads it.
    loaded.simgrid_xml_path =
        resolve_existing(sc, base_directory, sc.platform.simgrid_xml, "platform.simgrid_xml.file");
  }
  loaded.device_capacity_bytes =
      sc.memory.device_capacity_bytes.value_or(loaded.cluster.gpu.memory_bytes);
  loaded.statistical_efficiency = resolve_statistical_efficiency(sc);
  return loaded;
}

}  // namespace

namespace {

Scenario with_platform(Scenario scenario, const PlatformOverride& platform) {
  if (platform.cluster_file.empty()) return scenario;
  if (!std::filesystem::exists(platform.cluster_file)) {
    throw InputError({platform.cluster_file, 0, 0}, "--cluster", "no such cluster file");
  }
  scenario.platform = PlatformSection{};
  scenario.platform.cluster_file = std::filesystem::absolute(platform.cluster_file).string();
  return scenario;
}

}  // namespace

LoadedScenario load_scenario(const std::string& path, const PlatformOverride& platform) {
  auto root = load_yaml_file(path);
  auto directory = std::filesystem::path(path).parent_path().string();
  return check(with_platform(parse_scenario(root), platform), directory);
}

LoadedScenario load_scenario_text(const std::string& text, const std::string& display_name,
                                  const std::string& base_directory,
                                  const PlatformOverride& platform) {
  return check(with_platform(parse_scenario(parse_yaml_text(text, display_name)), platform),
               base_directory);
}

LoadedScenario load_default_scenario(const PlatformOverride& platform) {
  auto text = embedded_file(kDefaultScenario);
  return load_scenario_text(std::string(*text), std::string("built-in:") + kDefaultScenario, "",
                            platform);
}

std::int64_t largest_point_gpus(const LoadedScenario& loaded) {
  std::int64_t largest = 1;
  for (const auto& point : loaded.points) largest = std::max(largest, point.config.gpus());
  return largest;
}

}  // namespace tessera
