// Batch normalisation; with spatial parallelism its statistics are summed over the spatial group.
#include "kind_checks.hpp"
#include "normalization_cost.hpp"
#include "tessera/core/model/layer_kind_rules.hpp"

namespace tessera::kinds {
namespace {

class BatchNormRules final : public LayerKindRules {
 public:
  std::vector<std::string> model_file_keys() const override {
    return {"affine", "global_statistics"};
  }

  LayerParams parse(const YamlMap& map) const override {
    BatchNormParams p;
    if (auto affine = map.optional("affine")) p.affine = affine->as_bool();
    if (auto global = map.optional("global_statistics")) p.global_statistics = global->as_bool();
    return p;
  }

  nlohmann::json params_json(const Layer& layer) const override {
    const auto& p = std::get<BatchNormParams>(layer.params);
    return {{"affine", p.affine}, {"global_statistics", p.global_statistics}};
  }

  TensorShape infer_shape(Layer& layer, const std::vector<TensorShape>& inputs) const override {
    require_input_count(layer, inputs, 1, 1);
    require_spatial(layer, inputs[0]);
    return inputs[0];
  }

  std::int64_t parameters(const Layer& layer, const std::vector<TensorShape>& /*inputs*/,
                          const TensorShape& output) const override {
    return std::get<BatchNormParams>(layer.params).affine ? 2 * output.c : 0;
  }

  BackwardNeeds backward_needs(const Layer& /*layer*/) const override { return {.input = true}; }

  void add_cost(const LayerCostQuery& q, LayerCost& cost) const override {
    add_normalization_cost(q, std::get<BatchNormParams>(q.layer.params).affine, cost);
  }
  bool weight_gradients_from_backward_data() const override { return true; }
  TensorRole tensor_role(const Layer& /*layer*/) const override { return TensorRole::channel_wise; }
};

}  // namespace

const LayerKindRules& batch_norm_rules() {
  static const BatchNormRules rules;
  return rules;
}

}  // namespace tessera::kinds
