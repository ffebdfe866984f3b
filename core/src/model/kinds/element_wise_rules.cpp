#include "element_wise_rules.hpp"

#include "kind_checks.hpp"

namespace tessera::kinds {

TensorShape ElementWiseRules::infer_shape(Layer& layer,
                                          const std::vector<TensorShape>& inputs) const {
  require_input_count(layer, inputs, 1, 1);
  return inputs[0];
}

void ElementWiseRules::add_cost(const LayerCostQuery& query, LayerCost& cost) const {
  cost.flops.forward = forward_ops_per_element_ * query.output_elements();
  cost.flops.backward_data = backward_ops_per_element_ * query.output_elements();
}

}  // namespace tessera::kinds
