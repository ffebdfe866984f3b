#pragma once
// Where a loaded scenario's samples come from (input_source.hpp's rule): a sample as the model's
// input in the scenario's dtype.
#include <cstdint>

#include "tessera/core/loading/scenario_loader.hpp"
#include "tessera/core/strategy/input_source.hpp"

namespace tessera {

InputPlan plan_input(const LoadedScenario& loaded, std::int64_t gpus);

}  // namespace tessera
