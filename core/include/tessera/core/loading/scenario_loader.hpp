#pragma once
// Loads a scenario and checks it against its model and platform: the result is everything a
// backend needs to plan a run, or an InputError that names file, line, column and key.
#include <string>
#include <vector>

#include "tessera/core/model/model_graph.hpp"
#include "tessera/core/scenario/cluster_spec.hpp"
#include "tessera/core/scenario/scenario.hpp"
#include "tessera/core/strategy/parallel_strategy.hpp"
#include "tessera/core/time_to_train/time_to_train.hpp"

namespace tessera {

struct SweepPoint {
  std::size_t index = 0;
  ParallelConfig config;
  ShardPlan plan;
};

struct LoadedScenario {
  Scenario scenario;
  ModelGraph model;
  ClusterSpec cluster;
  std::vector<SweepPoint> points;  // one when the scenario has no sweep
  double device_capacity_bytes = 0;
  std::string simgrid_xml_path;  // resolved platform.simgrid_xml.file, if any
  // Steps to the target quality per global batch (the training key or the zoo's figures).
  StatisticalEfficiency statistical_efficiency;
};

// Replaces the scenario's platform section from the command line, e.g. with the cluster file
// `tessera profile` writes for the machine it measured.
struct PlatformOverride {
  std::string cluster_file;  // relative to the working directory; "" keeps the scenario's own
};

LoadedScenario load_scenario(const std::string& path, const PlatformOverride& platform = {});
// For tests and the fuzzer: relative model and cluster files resolve against `base_directory`.
LoadedScenario load_scenario_text(const std::string& text, const std::string& display_name,
                                  const std::string& base_directory,
                                  const PlatformOverride& platform = {});

// The built-in default scenario (scenarios/default.yaml, compiled in).
LoadedScenario load_default_scenario(const PlatformOverride& platform = {});

// The most GPUs a sweep point of `loaded` takes (a sweep lists its GPU counts in any order).
std::int64_t largest_point_gpus(const LoadedScenario& loaded);

}  // namespace tessera
