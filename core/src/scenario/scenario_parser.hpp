#pragma once
#include "tessera/core/common/yaml_reader.hpp"
#include "tessera/core/scenario/scenario.hpp"

namespace tessera {

// Reads the scenario's structure from a parsed YAML document. Throws InputError.
Scenario parse_scenario(const YamlValue& root);

}  // namespace tessera
