// What a kind's rules do where the kind says nothing: no keys, no weights, no FLOPs, nothing kept
// for backward, no profile key beyond the shapes.
#include "tessera/core/model/layer_kind_rules.hpp"

#include <nlohmann/json.hpp>

namespace tessera {

double LayerCostQuery::input_elements() const {
  if (inputs.empty()) return 0.0;
  return static_cast<double>(batch) * static_cast<double>(inputs.front().elements_per_sample());
}

double LayerCostQuery::output_elements() const {
  return static_cast<double>(batch) * static_cast<double>(output.elements_per_sample());
}

LayerParams LayerKindRules::parse(const YamlMap& /*map*/) const {
  return NoParams{};
}

nlohmann::json LayerKindRules::params_json(const Layer& /*layer*/) const {
  return nlohmann::json::object();
}

std::vector<std::int64_t> LayerKindRules::weight_extents(
    const Layer& /*layer*/, const std::vector<TensorShape>& /*inputs*/) const {
  return {};
}

std::int64_t LayerKindRules::parameters(const Layer& /*layer*/,
                                        const std::vector<TensorShape>& /*inputs*/,
                                        const TensorShape& /*output*/) const {
  return 0;
}

std::string LayerKindRules::table_owner(const Layer& /*layer*/) const {
  return "";
}

BackwardNeeds LayerKindRules::backward_needs(const Layer& /*layer*/) const {
  return {};
}

void LayerKindRules::add_cost(const LayerCostQuery& /*query*/, LayerCost& /*cost*/) const {}

std::int64_t LayerKindRules::tensor_split_extent(const Layer& /*layer*/, TensorSplit /*split*/,
                                                 const TensorShape& output) const {
  return output.c;
}

std::string LayerKindRules::profile_key(const Layer& /*layer*/) const {
  return "";
}

}  // namespace tessera
