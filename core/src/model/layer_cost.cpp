#include "tessera/core/model/layer_cost.hpp"

#include "tessera/core/model/layer_kind_rules.hpp"

namespace tessera {

BackwardNeeds backward_needs(const Layer& layer) {
  return rules_of(layer.kind).backward_needs(layer);
}

LayerCost layer_cost(const Layer& layer, const std::vector<TensorShape>& input_shapes,
                     const TensorShape& output_shape, std::int64_t batch, DType dtype) {
  const LayerKindRules& rules = rules_of(layer.kind);
  LayerCost cost;
  cost.parameters = rules.parameters(layer, input_shapes, output_shape);
  cost.weight_bytes = cost.parameters * dtype_bytes(dtype);
  cost.weight_bytes_read = cost.weight_bytes;
  cost.output_bytes = batch * output_shape.elements_per_sample() * dtype_bytes(dtype);
  cost.backward_needs = rules.backward_needs(layer);
  const LayerCostQuery query{layer, input_shapes, output_shape, batch, dtype};
  if (cost.backward_needs.mask) {
    cost.saved_for_backward_bytes = static_cast<std::int64_t>(query.output_elements());
  }
  rules.add_cost(query, cost);
  return cost;
}

LayerCost layer_cost(const ResolvedLayer& layer, std::int64_t batch, DType dtype) {
  return layer_cost(layer.layer, layer.input_shapes, layer.output_shape, batch, dtype);
}

std::int64_t parameter_count(const ResolvedLayer& layer) {
  return rules_of(layer.layer.kind).parameters(layer.layer, layer.input_shapes, layer.output_shape);
}

bool computes_weight_gradients(const Layer& layer, std::int64_t parameters) {
  return parameters > 0 || !rules_of(layer.kind).table_owner(layer).empty();
}

std::int64_t parameter_count(const ModelGraph& model) {
  std::int64_t total = 0;
  for (const auto& layer : model.layers()) total += parameter_count(layer);
  return total;
}

}  // namespace tessera
