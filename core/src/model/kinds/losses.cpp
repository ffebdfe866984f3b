// The losses that end a model: softmax cross-entropy over classes and the mean squared error.
#include "element_wise_rules.hpp"
#include "kind_checks.hpp"

namespace tessera::kinds {
namespace {

// Operations per element (documented counts, not measurements).
constexpr double kSoftmaxForwardOpsPerElement = 5;  // max, exp, sum, divide, log
constexpr double kMseForwardOpsPerElement = 3;      // subtract, square, sum

// Softmax over the channels at each position; its backward is the softmax minus the labels.
class SoftmaxCrossEntropyRules final : public ElementWiseRules {
 public:
  SoftmaxCrossEntropyRules() : ElementWiseRules(kSoftmaxForwardOpsPerElement, 1) {}
  BackwardNeeds backward_needs(const Layer& /*layer*/) const override { return {.output = true}; }
  // Over logits split by class, each GPU its classes, as Megatron's vocabulary-parallel
  // cross-entropy.
  TensorRole tensor_role(const Layer& /*layer*/) const override { return TensorRole::class_loss; }
};

class MseLossRules final : public LayerKindRules {
 public:
  TensorShape infer_shape(Layer& layer, const std::vector<TensorShape>& inputs) const override {
    require_input_count(layer, inputs, 1, 1);
    return TensorShape{inputs[0].n, 1, {}};
  }

  BackwardNeeds backward_needs(const Layer& /*layer*/) const override { return {.input = true}; }

  void add_cost(const LayerCostQuery& q, LayerCost& cost) const override {
    cost.flops.forward = kMseForwardOpsPerElement * q.input_elements();
    cost.flops.backward_data = 2 * q.input_elements();
  }
};

}  // namespace

const LayerKindRules& softmax_cross_entropy_rules() {
  static const SoftmaxCrossEntropyRules rules;
  return rules;
}

const LayerKindRules& mse_loss_rules() {
  static const MseLossRules rules;
  return rules;
}

}  // namespace tessera::kinds
