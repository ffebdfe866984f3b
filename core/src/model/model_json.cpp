#include "tessera/core/model/model_json.hpp"

#include "tessera/core/model/layer_cost.hpp"
#include "tessera/core/model/layer_kind_rules.hpp"

namespace tessera {
namespace {

nlohmann::json shape_json(const TensorShape& shape) {
  return {{"channels", shape.c}, {"spatial", shape.spatial}};
}

}  // namespace

nlohmann::json to_json(const ModelGraph& model) {
  nlohmann::json layers = nlohmann::json::array();
  for (const auto& layer : model.layers()) {
    nlohmann::json inputs = nlohmann::json::array();
    for (const auto& shape : layer.input_shapes) inputs.push_back(shape_json(shape));
    layers.push_back({{"name", layer.layer.name},
                      {"op", to_string(layer.layer.kind)},
                      {"params", rules_of(layer.layer.kind).params_json(layer.layer)},
                      {"inputs", layer.layer.inputs},
                      {"input_shapes", inputs},
                      {"output_shape", shape_json(layer.output_shape)},
                      {"parameters", parameter_count(layer)}});
  }
  return {{"name", model.name()}, {"parameters", parameter_count(model)}, {"layers", layers}};
}

}  // namespace tessera
