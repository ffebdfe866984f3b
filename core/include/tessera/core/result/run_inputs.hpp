#pragma once
// What a sweep point's result depends on besides its parallel configuration, one digest per kind
// of input: the resolved scenario, the model, the cluster, a SimGrid platform file, the profiles,
// the data set (real runs), the backend's settings and Tessera's version. Every result carries
// them (PointResult::inputs); a resumed sweep keeps a stored point only when all are equal, and
// says which changed otherwise.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tessera/core/loading/scenario_loader.hpp"

namespace tessera {

struct RunInputSources {
  std::string backend;  // "sim" or "real"
  nlohmann::json settings;
  nlohmann::json machine;  // null, or what a measurement was taken on (SweepRunOptions::machine)
  std::string tessera_version;
  std::vector<std::string> profile_files;  // in the order they were loaded
};

// An object {kind: digest}; kinds without an input (no platform file, no profiles) are absent.
// Throws std::runtime_error when an input file cannot be read.
nlohmann::json digest_run_inputs(const LoadedScenario& scenario, const RunInputSources& sources);

// The kinds whose digests differ between a stored result's inputs and the current ones (a kind
// present in only one counts); {"inputs"} when the stored result has none (written by an older
// Tessera).
std::vector<std::string> changed_inputs(const nlohmann::json& stored, const nlohmann::json& now);

// "cluster file changed", "Tessera itself changed" (its executable), ...
std::string describe_input_change(const std::string& kind);

}  // namespace tessera
