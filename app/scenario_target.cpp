#include "scenario_target.hpp"

#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <vector>

#include "tessera/core/common/input_error.hpp"
#include "tessera/core/common/yaml_reader.hpp"

#include "tessera/core/zoo/model_zoo.hpp"
#include "tessera/simulator/platform/xml_platform_check.hpp"

namespace tessera::app {

LoadedScenario load_checked_scenario(const std::string& file, const std::string& cluster_file) {
  auto loaded = file == "default" ? load_default_scenario({cluster_file})
                                  : load_scenario(file, {cluster_file});
  sim::check_scenario_platform(loaded);
  return loaded;
}

bool names_zoo_model(const std::string& target) {
  return !std::filesystem::exists(target) && find_zoo_model(target) != nullptr;
}

LoadedScenario load_target(const std::string& target, std::optional<std::int64_t> mini_batch,
                           const PlatformOverride& platform) {
  const bool zoo_model = names_zoo_model(target);
  if (mini_batch && !zoo_model) {
    // A scenario's batch is its points' (model.mini_batch and the sweep): a second one here
    // would be ignored or contradict it.
    throw InputError({"command line", 0, 0}, "--mini-batch",
                     "applies to a zoo model name, not to scenario '" + target +
                         "' (its points give the batch; --point picks one)");
  }
  if (target == "default") return load_default_scenario(platform);
  if (!zoo_model && !std::filesystem::exists(target)) {
    // Either could have been meant: a model name is the commoner typo.
    const auto nearest = closest_match(target, zoo_model_names());
    throw InputError({target, 0, 0}, "",
                     "no such scenario file, and no zoo model of that name (tessera models "
                     "lists them)" +
                         (nearest.empty() ? std::string() : "; did you mean '" + nearest + "'?"));
  }
  if (zoo_model) {
    if (!mini_batch) {
      mini_batch = build_zoo_model(target, {}).default_mini_batch().value_or(1);
    }
    return load_scenario_text("name: profile-" + target + "\nmodel: {zoo: " + target +
                                  ", mini_batch: " + std::to_string(*mini_batch) +
                                  "}\nplatform: {preset: v100_node, nodes: 1}\n",
                              target, ".", platform);
  }
  return load_scenario(target, platform);
}

const SweepPoint& sweep_point_at(const LoadedScenario& loaded, std::size_t index) {
  if (index >= loaded.points.size()) {
    throw InputError({}, "--point",
                     "a sweep point index below " + std::to_string(loaded.points.size()) +
                         ", got " + std::to_string(index));
  }
  return loaded.points[index];
}

void check_point_indices(const LoadedScenario& loaded, const std::vector<std::size_t>& indices) {
  for (const std::size_t index : indices) {
    if (index >= loaded.points.size()) {
      throw InputError({}, "--points",
                       "a sweep point index below " + std::to_string(loaded.points.size()) +
                           ", got " + std::to_string(index));
    }
  }
}

void check_trace_point(const LoadedScenario& loaded, std::int64_t trace_point,
                       const std::vector<std::size_t>& selected) {
  if (trace_point < 0) return;
  const auto point = static_cast<std::size_t>(trace_point);
  if (point >= loaded.points.size()) {
    throw InputError({}, "--trace-point",
                     "a sweep point index below " + std::to_string(loaded.points.size()) +
                         ", got " + std::to_string(point));
  }
  if (!selected.empty() && std::find(selected.begin(), selected.end(), point) == selected.end()) {
    throw InputError(
        {}, "--trace-point",
        "a point that --points runs, got " + std::to_string(point) + ", which it leaves out");
  }
}

std::unique_ptr<kernels::Device> open_device_option(const std::string& name) {
  try {
    return kernels::open_device(name);
  } catch (const std::invalid_argument& error) {
    throw InputError({}, "--device", error.what());
  }
}

}  // namespace tessera::app
