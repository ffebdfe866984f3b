// A learned position embedding (GPT-2's and BERT's): adds row t of a positions x C table to the
// hidden vector at time step t of its input sequence.
#include "element_wise_rules.hpp"
#include "kind_checks.hpp"

namespace tessera::kinds {
namespace {

class PositionEmbeddingRules final : public ElementWiseRules {
 public:
  // One add per element forward; the input's gradient is the output's (no operation).
  PositionEmbeddingRules() : ElementWiseRules(1, 0) {}

  std::vector<std::string> model_file_keys() const override { return {"positions"}; }

  LayerParams parse(const YamlMap& map) const override {
    PositionEmbeddingParams p;
    p.positions = map.required("positions", "the table's rows, at least the sequence's length")
                      .as_integer(1, kMaxUnits);
    return p;
  }

  nlohmann::json params_json(const Layer& layer) const override {
    return {{"positions", std::get<PositionEmbeddingParams>(layer.params).positions}};
  }

  TensorShape infer_shape(Layer& layer, const std::vector<TensorShape>& inputs) const override {
    require_input_count(layer, inputs, 1, 1);
    require_sequence(layer, inputs[0], "input");
    const auto positions = std::get<PositionEmbeddingParams>(layer.params).positions;
    require(inputs[0].spatial[0] <= positions, layer,
            "its input has " + std::to_string(inputs[0].spatial[0]) +
                " time steps, more than the table's " + std::to_string(positions) + " positions");
    return inputs[0];
  }

  std::vector<std::int64_t> weight_extents(const Layer& layer,
                                           const std::vector<TensorShape>& inputs) const override {
    return {std::get<PositionEmbeddingParams>(layer.params).positions, inputs.at(0).c};
  }

  // Adds its table to whole rows.
  TensorRole tensor_role(const Layer& /*layer*/) const override { return TensorRole::whole; }

  std::int64_t parameters(const Layer& layer, const std::vector<TensorShape>& inputs,
                          const TensorShape& /*output*/) const override {
    return product(weight_extents(layer, inputs));
  }

  // The table's gradient sums the output gradient over the batch: one add per element. A pass
  // reads the rows of the sequence's steps only.
  void add_cost(const LayerCostQuery& q, LayerCost& cost) const override {
    ElementWiseRules::add_cost(q, cost);
    cost.flops.backward_filter = q.output_elements();
    cost.weight_bytes_read = q.output.elements_per_sample() * dtype_bytes(q.dtype);
  }

  std::string profile_key(const Layer& layer) const override {
    return " positions" + std::to_string(std::get<PositionEmbeddingParams>(layer.params).positions);
  }

  bool is_sequence() const override { return true; }
};

}  // namespace

const LayerKindRules& position_embedding_rules() {
  static const PositionEmbeddingRules rules;
  return rules;
}

}  // namespace tessera::kinds
