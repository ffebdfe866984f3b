// Dropout: its backward reads the keep mask it drew, one byte per element.
#include "element_wise_rules.hpp"
#include "kind_checks.hpp"

namespace tessera::kinds {
namespace {

class DropoutRules final : public ElementWiseRules {
 public:
  DropoutRules() : ElementWiseRules(1, 1) {}

  std::vector<std::string> model_file_keys() const override { return {"drop_probability"}; }

  LayerParams parse(const YamlMap& map) const override {
    DropoutParams p;
    if (auto drop = map.optional("drop_probability")) {
      p.drop_probability = drop->as_number(0, 0.999999);
    }
    return p;
  }

  nlohmann::json params_json(const Layer& layer) const override {
    const auto& p = std::get<DropoutParams>(layer.params);
    return {{"drop_probability", p.drop_probability}};
  }

  TensorShape infer_shape(Layer& layer, const std::vector<TensorShape>& inputs) const override {
    const double p = std::get<DropoutParams>(layer.params).drop_probability;
    require(p >= 0.0 && p < 1.0, layer, "drop_probability must be in [0, 1)");
    return ElementWiseRules::infer_shape(layer, inputs);
  }

  BackwardNeeds backward_needs(const Layer& /*layer*/) const override { return {.mask = true}; }
};

}  // namespace

const LayerKindRules& dropout_rules() {
  static const DropoutRules rules;
  return rules;
}

}  // namespace tessera::kinds
