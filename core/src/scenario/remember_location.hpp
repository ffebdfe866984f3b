#pragma once
// Where each scenario key was read, so that later checks can name the file and line.
#include "tessera/core/common/yaml_reader.hpp"
#include "tessera/core/scenario/scenario.hpp"

namespace tessera {

inline void remember(Scenario& scenario, const YamlValue& value) {
  scenario.where[value.key_path()] = value.location();
}

}  // namespace tessera
