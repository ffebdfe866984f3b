#pragma once
#include "tessera/core/scenario.hpp"
#include "tessera/core/yaml_reader.hpp"

namespace tessera {

// Reads the scenario's structure from a parsed YAML document. Throws InputError.
Scenario parse_scenario(const YamlValue& root);

}  // namespace tessera
