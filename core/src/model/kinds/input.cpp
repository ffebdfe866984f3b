// The model's input: one sample's channels and spatial extents, as the model file's shape gives.
#include "kind_checks.hpp"
#include "tessera/core/model/layer_kind_rules.hpp"

namespace tessera::kinds {
namespace {

class InputRules final : public LayerKindRules {
 public:
  std::vector<std::string> model_file_keys() const override { return {"shape"}; }

  LayerParams parse(const YamlMap& map) const override {
    auto shape = map.required("shape", "[channels, (D,) H, W] of one sample");
    auto extents = shape.as_integer_list(2, 4, 1, 1 << 24);
    if (map.has("inputs")) map.required("inputs", "").fail_problem("an input layer has no inputs");
    return InputParams{extents.front(), {extents.begin() + 1, extents.end()}};
  }

  TensorShape infer_shape(Layer& layer, const std::vector<TensorShape>& inputs) const override {
    require_input_count(layer, inputs, 0, 0);
    const auto& p = std::get<InputParams>(layer.params);
    require(p.channels > 0, layer, "channels must be positive");
    require(!p.spatial.empty() && p.spatial.size() <= 3, layer,
            "shape needs 1 to 3 spatial extents after the channels");
    for (auto extent : p.spatial) require(extent > 0, layer, "spatial extents must be positive");
    return TensorShape{1, p.channels, p.spatial};
  }
};

}  // namespace

const LayerKindRules& input_rules() {
  static const InputRules rules;
  return rules;
}

}  // namespace tessera::kinds
