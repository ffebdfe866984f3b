#pragma once
// A model graph as JSON, for tools outside Tessera (analysis/torch_step_benchmark.py builds the
// same network in PyTorch from it): every layer in topological order with its op, parameters,
// producers, input and output shapes per sample, and its parameter count. `tessera describe
// --json` prints it.
#include <nlohmann/json.hpp>

#include "tessera/core/model/model_graph.hpp"

namespace tessera {

nlohmann::json to_json(const ModelGraph& model);

}  // namespace tessera
