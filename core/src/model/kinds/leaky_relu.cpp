// LeakyReLU: negative inputs scaled by a slope; its backward reads its input's sign.
#include "element_wise_rules.hpp"
#include "kind_checks.hpp"

namespace tessera::kinds {
namespace {

class LeakyReluRules final : public ElementWiseRules {
 public:
  LeakyReluRules() : ElementWiseRules(2, 2) {}

  std::vector<std::string> model_file_keys() const override { return {"negative_slope"}; }

  LayerParams parse(const YamlMap& map) const override {
    LeakyReluParams p;
    if (auto slope = map.optional("negative_slope")) p.negative_slope = slope->as_number(0, 1e6);
    return p;
  }

  nlohmann::json params_json(const Layer& layer) const override {
    const auto& p = std::get<LeakyReluParams>(layer.params);
    return {{"negative_slope", p.negative_slope}};
  }

  TensorShape infer_shape(Layer& layer, const std::vector<TensorShape>& inputs) const override {
    require(std::get<LeakyReluParams>(layer.params).negative_slope >= 0.0, layer,
            "negative_slope must be non-negative");
    return ElementWiseRules::infer_shape(layer, inputs);
  }

  BackwardNeeds backward_needs(const Layer& /*layer*/) const override { return {.input = true}; }
};

}  // namespace

const LayerKindRules& leaky_relu_rules() {
  static const LeakyReluRules rules;
  return rules;
}

}  // namespace tessera::kinds
