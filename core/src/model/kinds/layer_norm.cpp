// Layer normalisation (Ba et al. 2016) over the channels at each position: a transformer's
// hidden vector at each time step, normalised on its own (no statistics shared across samples or
// positions, so any split of the batch or the positions leaves it exact).
#include "element_wise_rules.hpp"

namespace tessera::kinds {
namespace {

// Operations per element (documented counts, not measurements; the layer is memory-bound): as
// batch-norm's, the statistics taken over channels instead of the batch.
constexpr double kForwardOpsPerElement = 5;   // sum, square-sum, normalise, scale, shift
constexpr double kBackwardOpsPerElement = 8;  // two reductions and the input gradient
constexpr double kFilterOpsPerElement = 2;    // scale and shift gradients

class LayerNormRules final : public ElementWiseRules {
 public:
  LayerNormRules() : ElementWiseRules(kForwardOpsPerElement, kBackwardOpsPerElement) {}

  std::vector<std::string> model_file_keys() const override { return {"affine"}; }

  LayerParams parse(const YamlMap& map) const override {
    LayerNormParams p;
    if (auto affine = map.optional("affine")) p.affine = affine->as_bool();
    return p;
  }

  nlohmann::json params_json(const Layer& layer) const override {
    return {{"affine", std::get<LayerNormParams>(layer.params).affine}};
  }

  std::int64_t parameters(const Layer& layer, const std::vector<TensorShape>& /*inputs*/,
                          const TensorShape& output) const override {
    return std::get<LayerNormParams>(layer.params).affine ? 2 * output.c : 0;
  }

  BackwardNeeds backward_needs(const Layer& /*layer*/) const override { return {.input = true}; }

  // Backward also reads each position's mean and inverse deviation, kept in float32 whatever the
  // model's dtype (as cuDNN and PyTorch keep them).
  void add_cost(const LayerCostQuery& q, LayerCost& cost) const override {
    ElementWiseRules::add_cost(q, cost);
    if (std::get<LayerNormParams>(q.layer.params).affine) {
      cost.flops.backward_filter = kFilterOpsPerElement * q.output_elements();
    }
    const std::int64_t positions = q.batch * q.output.spatial_elements();
    cost.saved_for_backward_bytes = 2 * positions * dtype_bytes(DType::float32);
  }

  std::string profile_key(const Layer& layer) const override {
    return std::get<LayerNormParams>(layer.params).affine ? " affine" : "";
  }
};

}  // namespace

const LayerKindRules& layer_norm_rules() {
  static const LayerNormRules rules;
  return rules;
}

}  // namespace tessera::kinds
