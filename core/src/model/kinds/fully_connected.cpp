// A fully connected layer over everything of a sample (it flattens a spatial input).
#include "kind_checks.hpp"
#include "tessera/core/common/integer_division.hpp"
#include "tessera/core/model/layer_kind_rules.hpp"

namespace tessera::kinds {
namespace {

class FullyConnectedRules final : public LayerKindRules {
 public:
  std::vector<std::string> model_file_keys() const override { return {"out_features", "bias"}; }

  LayerParams parse(const YamlMap& map) const override {
    FullyConnectedParams p;
    p.out_features = map.required("out_features", "a positive integer").as_integer(1, 1 << 24);
    if (auto bias = map.optional("bias")) p.bias = bias->as_bool();
    return p;
  }

  nlohmann::json params_json(const Layer& layer) const override {
    const auto& p = std::get<FullyConnectedParams>(layer.params);
    return {{"out_features", p.out_features}, {"bias", p.bias}};
  }

  TensorShape infer_shape(Layer& layer, const std::vector<TensorShape>& inputs) const override {
    require_input_count(layer, inputs, 1, 1);
    const auto& p = std::get<FullyConnectedParams>(layer.params);
    require(p.out_features > 0, layer, "out_features must be positive");
    return TensorShape{inputs[0].n, p.out_features, {}};
  }

  std::vector<std::int64_t> weight_extents(const Layer& layer,
                                           const std::vector<TensorShape>& inputs) const override {
    return {inputs.at(0).elements_per_sample(),
            std::get<FullyConnectedParams>(layer.params).out_features};
  }

  std::int64_t parameters(const Layer& layer, const std::vector<TensorShape>& inputs,
                          const TensorShape& /*output*/) const override {
    const auto& p = std::get<FullyConnectedParams>(layer.params);
    return inputs.at(0).elements_per_sample() * p.out_features + (p.bias ? p.out_features : 0);
  }

  BackwardNeeds backward_needs(const Layer& /*layer*/) const override { return {.input = true}; }

  void add_cost(const LayerCostQuery& q, LayerCost& cost) const override {
    const auto& p = std::get<FullyConnectedParams>(q.layer.params);
    const double macs = q.input_elements() * static_cast<double>(p.out_features);
    const double bias = p.bias ? q.output_elements() : 0;
    cost.flops.forward = 2 * macs + bias;
    cost.flops.backward_data = 2 * macs;
    cost.flops.backward_filter = 2 * macs + bias;
  }

  std::string profile_key(const Layer& layer) const override {
    return std::get<FullyConnectedParams>(layer.params).bias ? " bias" : "";
  }

  TensorRole tensor_role(const Layer& /*layer*/) const override {
    return TensorRole::matrix_product;
  }

  void split_for_tensor(Layer& layer, TensorSplit split, std::int64_t parts) const override {
    auto& p = std::get<FullyConnectedParams>(layer.params);
    if (split == TensorSplit::column) p.out_features = ceil_div(p.out_features, parts);
  }

  bool is_matrix_product() const override { return true; }
};

}  // namespace

const LayerKindRules& fully_connected_rules() {
  static const FullyConnectedRules rules;
  return rules;
}

}  // namespace tessera::kinds
