#pragma once
// A scenario as resolved: every key with its value after defaults, as JSON. Results record it
// (what exactly ran), and resume compares its digest (run_inputs.hpp).
#include <nlohmann/json.hpp>

#include "tessera/core/scenario/scenario.hpp"

namespace tessera {

nlohmann::json to_json(const Scenario& scenario);

}  // namespace tessera
