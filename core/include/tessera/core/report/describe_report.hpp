#pragma once
// `tessera describe`: what a scenario will run, layer by layer, and how much memory each GPU needs
// at every sweep point.
#include <cstddef>
#include <string>

#include "tessera/core/cost/profile_database.hpp"
#include "tessera/core/loading/scenario_loader.hpp"

namespace tessera {

struct DescribeOptions {
  std::size_t point = 0;  // sweep point whose shards the layer table shows
  bool layers = true;     // include the per-layer table and the micro-batching plan
  const ProfileDatabase* profiles = nullptr;  // measured kernels the plan is made from
};

std::string describe_scenario(const LoadedScenario& loaded, const DescribeOptions& options);

}  // namespace tessera
