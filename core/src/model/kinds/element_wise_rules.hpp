#pragma once
// The rules element-wise kinds share (activations, dropout, softmax): one input, an output of its
// shape, and documented operation counts per element for the roofline, where such layers are
// memory-bound anyway.
#include "tessera/core/model/layer_kind_rules.hpp"

namespace tessera::kinds {

class ElementWiseRules : public LayerKindRules {
 public:
  ElementWiseRules(double forward_ops_per_element, double backward_ops_per_element)
      : forward_ops_per_element_(forward_ops_per_element),
        backward_ops_per_element_(backward_ops_per_element) {}

  TensorShape infer_shape(Layer& layer, const std::vector<TensorShape>& inputs) const override;
  void add_cost(const LayerCostQuery& query, LayerCost& cost) const override;
  TensorRole tensor_role(const Layer& /*layer*/) const override { return TensorRole::channel_wise; }

 private:
  double forward_ops_per_element_;
  double backward_ops_per_element_;
};

}  // namespace tessera::kinds
