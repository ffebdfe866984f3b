#pragma once
// Users' own networks as YAML files: a list of layers, each with a name, an op, its inputs (the
// edges; default: the layer listed before it) and the op's hyper-parameters. Checked as strictly
// as scenarios. See scenarios/README.md ("Model files") for the format.
#include <string>

#include "tessera/core/common/yaml_reader_fwd.hpp"
#include "tessera/core/model/model_graph.hpp"

namespace tessera {

ModelGraph parse_model_file(const YamlValue& root);
ModelGraph load_model_file(const std::string& path);  // throws InputError

}  // namespace tessera
