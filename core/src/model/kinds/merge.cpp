// The layers that merge several inputs: concat (along channels) and add (element-wise).
#include "kind_checks.hpp"
#include "tessera/core/model/layer_kind_rules.hpp"

namespace tessera::kinds {
namespace {

class ConcatRules final : public LayerKindRules {
 public:
  TensorRole tensor_role(const Layer& /*layer*/) const override { return TensorRole::channel_wise; }
  TensorShape infer_shape(Layer& layer, const std::vector<TensorShape>& inputs) const override {
    require_input_count(layer, inputs, 2, SIZE_MAX);
    TensorShape out = inputs.front();
    for (std::size_t i = 1; i < inputs.size(); ++i) {
      require(inputs[i].spatial == out.spatial, layer,
              "concat inputs must share spatial extents: " + to_string(inputs.front()) + " vs " +
                  to_string(inputs[i]) + " (input '" + layer.inputs[i] + "')");
      out.c += inputs[i].c;
    }
    return out;
  }
};

class AddRules final : public LayerKindRules {
 public:
  TensorRole tensor_role(const Layer& /*layer*/) const override { return TensorRole::channel_wise; }
  TensorShape infer_shape(Layer& layer, const std::vector<TensorShape>& inputs) const override {
    require_input_count(layer, inputs, 2, SIZE_MAX);
    for (std::size_t i = 1; i < inputs.size(); ++i) {
      require(inputs[i] == inputs.front(), layer,
              "add inputs must have identical shapes: " + to_string(inputs.front()) + " vs " +
                  to_string(inputs[i]) + " (input '" + layer.inputs[i] + "')");
    }
    return inputs.front();
  }

  void add_cost(const LayerCostQuery& q, LayerCost& cost) const override {
    cost.flops.forward = q.output_elements() * static_cast<double>(q.inputs.size() - 1);
  }
};

}  // namespace

const LayerKindRules& concat_rules() {
  static const ConcatRules rules;
  return rules;
}

const LayerKindRules& add_rules() {
  static const AddRules rules;
  return rules;
}

}  // namespace tessera::kinds
