#include "tessera/core/plan_search/best_scenario.hpp"

#include <filesystem>
#include <sstream>

#include "tessera/core/common/yaml_reader.hpp"

namespace tessera {
namespace {

namespace fs = std::filesystem;

// A path the original named relative to its directory, relative to `output_directory` instead
// (absolute paths stay).
std::string rebased(const std::string& path, const std::string& from, const std::string& to) {
  if (fs::path(path).is_absolute()) return path;
  const auto target = fs::absolute(fs::path(from.empty() ? "." : from) / path).lexically_normal();
  const auto base = fs::absolute(fs::path(to.empty() ? "." : to)).lexically_normal();
  return target.lexically_relative(base).string();
}

YAML::Node flow_list(const std::vector<std::int64_t>& values) {
  YAML::Node list(YAML::NodeType::Sequence);
  for (auto value : values) list.push_back(value);
  list.SetStyle(YAML::EmitterStyle::Flow);
  return list;
}

std::string size_text(double bytes) {
  const double mib = 1024.0 * 1024.0;
  const auto whole = static_cast<std::int64_t>(bytes);
  if (bytes > 0 && whole % static_cast<std::int64_t>(mib) == 0) {
    return std::to_string(whole / static_cast<std::int64_t>(mib)) + " MiB";
  }
  return std::to_string(whole) + " B";
}

YAML::Node child_map(YAML::Node parent, const char* key) {
  if (!parent[key] || !parent[key].IsMap()) parent[key] = YAML::Node(YAML::NodeType::Map);
  return parent[key];
}

}  // namespace

std::string best_scenario_yaml(const BestScenarioSource& source, const PlanStrategy& strategy,
                               const std::string& output_directory, const std::string& name,
                               const std::string& header) {
  const auto parsed = parse_yaml_text(source.text, "the planned scenario");
  if (!parsed.is_map()) parsed.fail("a scenario mapping");
  YAML::Node root = YAML::Clone(parsed.node());
  root["name"] = name;
  root.remove("sweep");
  root.remove("outputs");  // its directory and traced GPUs belonged to the study

  auto model = child_map(root, "model");
  model["mini_batch"] = strategy.mini_batch;
  if (model["file"]) {
    model["file"] = rebased(model["file"].as<std::string>(), source.directory, output_directory);
  }

  auto parallelism = child_map(root, "parallelism");
  parallelism.remove("gpus");
  parallelism["data"] = strategy.data;
  auto spatial = child_map(parallelism, "spatial");
  spatial["grid"] = flow_list(strategy.spatial_grid);
  if (strategy.spatial_until.empty()) {
    spatial.remove("until");
  } else {
    spatial["until"] = strategy.spatial_until;
  }
  auto model_parallel = child_map(parallelism, "model");
  model_parallel["degree"] = strategy.model_degree;
  model_parallel.remove("stages");
  model_parallel.remove("placement");
  bool named_stages = false;
  for (const auto& start : strategy.stage_starts) named_stages |= !start.empty();
  if (named_stages) {
    YAML::Node stages(YAML::NodeType::Sequence);
    for (const auto& start : strategy.stage_starts) stages.push_back(start);
    stages.SetStyle(YAML::EmitterStyle::Flow);
    model_parallel["stages"] = stages;
  }
  if (!strategy.placement.empty()) {
    YAML::Node placement(YAML::NodeType::Map);
    for (const auto& [layer, stage] : strategy.placement) placement[layer] = stage;
    placement.SetStyle(YAML::EmitterStyle::Flow);
    model_parallel["placement"] = placement;
  }
  model_parallel["micro_batches"] = strategy.micro_batches;
  model_parallel["schedule"] = to_string(strategy.schedule);
  if (strategy.tensor > 1) {
    parallelism["tensor"] = strategy.tensor;
  } else {
    parallelism.remove("tensor");
  }

  // Shares proportional to GPU speed admit no spatial or model section at all (the strategy is
  // pure data parallelism then: plan_space.hpp).
  const auto split = parallelism["data_split"];
  if (split && split.IsScalar() && split.as<std::string>() == "proportional") {
    parallelism.remove("spatial");
    parallelism.remove("model");
  }

  auto memory = child_map(root, "memory");
  memory["offload"] = to_string(strategy.offload);
  if (strategy.shard != ShardLevel::none) {
    memory["shard"] = to_string(strategy.shard);
  } else {
    memory.remove("shard");
  }
  if (source.memory_limit_bytes) memory["device_capacity"] = size_text(*source.memory_limit_bytes);
  auto micro = child_map(child_map(root, "kernels"), "micro_batching");
  micro["workspace_limit"] = size_text(strategy.workspace_limit_bytes);

  auto platform = child_map(root, "platform");
  if (!source.cluster_file.empty()) {
    root["platform"] = YAML::Node(YAML::NodeType::Map);
    root["platform"]["cluster"] = rebased(fs::absolute(source.cluster_file).string(), "", "");
  } else {
    if (platform["cluster"]) {
      platform["cluster"] =
          rebased(platform["cluster"].as<std::string>(), source.directory, output_directory);
    }
    if (platform["simgrid_xml"] && platform["simgrid_xml"]["file"]) {
      platform["simgrid_xml"]["file"] = rebased(platform["simgrid_xml"]["file"].as<std::string>(),
                                                source.directory, output_directory);
    }
  }

  YAML::Emitter out;
  out << root;
  std::ostringstream text;
  std::istringstream lines(header);
  for (std::string line; std::getline(lines, line);) text << "# " << line << "\n";
  text << out.c_str() << "\n";
  return text.str();
}

}  // namespace tessera
