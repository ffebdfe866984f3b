#pragma once
// The target of the commands that measure kernels (profile, layer-check): a scenario file,
// "default", or a zoo model name standing for one GPU of that model.
#include <cstdint>
#include <optional>
#include <string>

#include "tessera/core/loading/scenario_loader.hpp"

namespace tessera::app {

// A scenario file or "default", with `cluster_file` (when not empty) replacing its platform,
// checked as `tessera validate` checks it (a SimGrid XML platform included): every command that
// reads a scenario to show or run it reads it this way.
LoadedScenario load_checked_scenario(const std::string& file, const std::string& cluster_file = "");

// A zoo model runs `mini_batch` samples (default: the model's own mini-batch, else 1).
LoadedScenario load_target(const std::string& target, std::optional<std::int64_t> mini_batch);

}  // namespace tessera::app
