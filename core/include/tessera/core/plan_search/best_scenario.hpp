#pragma once
// The winner of `tessera plan` as a scenario file that `tessera validate` and `tessera run`
// accept: the original file with the strategy's keys in its parallelism, model, memory and kernels
// sections, no sweep, and files it names (model, cluster, SimGrid platform) made relative to the
// directory it is written to. Comments of the original are not kept; a header says where it
// came from.
#include <optional>
#include <string>

#include "tessera/core/plan_search/plan_space.hpp"

namespace tessera {

struct BestScenarioSource {
  std::string text;          // the original scenario file
  std::string directory;     // where its relative paths start
  std::string cluster_file;  // a --cluster override replacing its platform ("" = none)
  std::optional<double> memory_limit_bytes;  // --memory-limit: written as memory.device_capacity
};

// The scenario text; `name` replaces the scenario's name, `header` (lines without '#') goes on
// top as a comment. Throws InputError when the original text is not a scenario mapping.
std::string best_scenario_yaml(const BestScenarioSource& source, const PlanStrategy& strategy,
                               const std::string& output_directory, const std::string& name,
                               const std::string& header);

}  // namespace tessera
