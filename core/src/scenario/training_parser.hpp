#pragma once
// The scenario's `training` key (time to train): structure and ranges. The size of an epoch and
// the zoo defaults are resolved later (time_to_train.hpp).
#include "tessera/core/common/yaml_reader.hpp"
#include "tessera/core/scenario/scenario.hpp"

namespace tessera {

void parse_training(Scenario& scenario, const YamlValue& value);

}  // namespace tessera
