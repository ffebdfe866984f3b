// GELU, y = x * Phi(x) (Hendrycks & Gimpel 2016), the activation of transformers' MLPs: exact
// with erf, or with PyTorch's tanh approximation 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
#include "element_wise_rules.hpp"

#include "tessera/core/common/yaml_reader.hpp"

#include <nlohmann/json.hpp>

namespace tessera::kinds {
namespace {

class GeluRules final : public ElementWiseRules {
 public:
  // Operations per element (documented counts, not measurements; the layer is memory-bound):
  // forward x/sqrt(2), erf (or the cubic, its scaling and tanh), 1 +, the two products: 8;
  // backward Phi(x) and the density term x phi(x), their sum and the product with dy: 12.
  GeluRules() : ElementWiseRules(8, 12) {}

  std::vector<std::string> model_file_keys() const override { return {"approximate"}; }

  LayerParams parse(const YamlMap& map) const override {
    GeluParams p;
    if (auto approximate = map.optional("approximate")) {
      p.approximation = approximate->as_choice({"none", "tanh"}) == "tanh"
                            ? GeluApproximation::tanh
                            : GeluApproximation::none;
    }
    return p;
  }

  nlohmann::json params_json(const Layer& layer) const override {
    const auto& p = std::get<GeluParams>(layer.params);
    return {{"approximate", to_string(p.approximation)}};
  }

  // Its derivative needs x itself: y does not determine x (GELU is not monotonic below -0.75).
  BackwardNeeds backward_needs(const Layer& /*layer*/) const override { return {.input = true}; }

  std::string profile_key(const Layer& layer) const override {
    return " " + to_string(std::get<GeluParams>(layer.params).approximation);
  }
};

}  // namespace

const LayerKindRules& gelu_rules() {
  static const GeluRules rules;
  return rules;
}

}  // namespace tessera::kinds

namespace tessera {

std::string to_string(GeluApproximation approximation) {
  return approximation == GeluApproximation::tanh ? "tanh" : "none";
}

}  // namespace tessera
