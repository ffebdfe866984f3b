// Layer normalisation (Ba et al. 2016) over the channels at each position: a transformer's
// hidden vector at each time step, normalised on its own (no statistics shared across samples or
// positions, so any split of the batch or the positions leaves it exact).
#include "kind_checks.hpp"
#include "normalization_cost.hpp"

namespace tessera::kinds {
namespace {

class LayerNormRules final : public LayerKindRules {
 public:
  std::vector<std::string> model_file_keys() const override { return {"affine"}; }

  LayerParams parse(const YamlMap& map) const override {
    LayerNormParams p;
    if (auto affine = map.optional("affine")) p.affine = affine->as_bool();
    return p;
  }

  nlohmann::json params_json(const Layer& layer) const override {
    return {{"affine", std::get<LayerNormParams>(layer.params).affine}};
  }

  TensorShape infer_shape(Layer& layer, const std::vector<TensorShape>& inputs) const override {
    require_input_count(layer, inputs, 1, 1);
    return inputs[0];
  }

  std::int64_t parameters(const Layer& layer, const std::vector<TensorShape>& /*inputs*/,
                          const TensorShape& output) const override {
    return std::get<LayerNormParams>(layer.params).affine ? 2 * output.c : 0;
  }

  BackwardNeeds backward_needs(const Layer& /*layer*/) const override { return {.input = true}; }

  // Backward also reads each position's mean and inverse deviation, kept in float32 whatever the
  // model's dtype (as cuDNN and PyTorch keep them).
  void add_cost(const LayerCostQuery& q, LayerCost& cost) const override {
    add_normalization_cost(q, std::get<LayerNormParams>(q.layer.params).affine, cost);
    const std::int64_t positions = q.batch * q.output.spatial_elements();
    cost.saved_for_backward_bytes = 2 * positions * dtype_bytes(DType::float32);
  }

  std::string profile_key(const Layer& layer) const override {
    return std::get<LayerNormParams>(layer.params).affine ? " affine" : "";
  }
  bool weight_gradients_from_backward_data() const override { return true; }
};

}  // namespace

const LayerKindRules& layer_norm_rules() {
  static const LayerNormRules rules;
  return rules;
}

}  // namespace tessera::kinds
