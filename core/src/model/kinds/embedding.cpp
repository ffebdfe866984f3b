// An embedding: token ids N x 1 x T (one channel of the input) to N x dimension x T, with an
// optional table shared with another embedding (tied weights).
#include <algorithm>

#include "kind_checks.hpp"
#include "tessera/core/common/integer_division.hpp"
#include "tessera/core/model/layer_kind_rules.hpp"

namespace tessera::kinds {
namespace {

class EmbeddingRules final : public LayerKindRules {
 public:
  std::vector<std::string> model_file_keys() const override {
    return {"vocabulary", "dimension", "channel", "shared_with"};
  }

  LayerParams parse(const YamlMap& map) const override {
    EmbeddingParams p;
    p.vocabulary = map.required("vocabulary", "the number of tokens").as_integer(1, kMaxVocabulary);
    p.dimension = map.required("dimension", "the embedding's width").as_integer(1, kMaxUnits);
    if (auto channel = map.optional("channel")) p.channel = channel->as_integer(0, 1 << 20);
    if (auto shared = map.optional("shared_with")) p.shared_with = shared->as_string();
    return p;
  }

  nlohmann::json params_json(const Layer& layer) const override {
    const auto& p = std::get<EmbeddingParams>(layer.params);
    return {{"vocabulary", p.vocabulary},
            {"dimension", p.dimension},
            {"channel", p.channel},
            {"shared_with", p.shared_with}};
  }

  TensorShape infer_shape(Layer& layer, const std::vector<TensorShape>& inputs) const override {
    require_input_count(layer, inputs, 1, 1);
    const TensorShape& input = inputs[0];
    const auto& p = std::get<EmbeddingParams>(layer.params);
    require_sequence(layer, input, "token ids");
    require(p.vocabulary > 0 && p.dimension > 0, layer,
            "vocabulary and dimension must be positive");
    require(p.channel >= 0 && p.channel < input.c, layer,
            "channel " + std::to_string(p.channel) + " is not a token stream of its input " +
                to_string(input) + " (channels 0.." + std::to_string(input.c - 1) + ")");
    require(p.shared_with != layer.name, layer, "an embedding cannot share its own table");
    return TensorShape{input.n, p.dimension, input.spatial};
  }

  std::vector<std::int64_t> weight_extents(
      const Layer& layer, const std::vector<TensorShape>& /*inputs*/) const override {
    const auto& p = std::get<EmbeddingParams>(layer.params);
    return {p.vocabulary, p.dimension};
  }

  // V D, or none when it reads another's table.
  std::int64_t parameters(const Layer& layer, const std::vector<TensorShape>& /*inputs*/,
                          const TensorShape& /*output*/) const override {
    const auto& p = std::get<EmbeddingParams>(layer.params);
    return p.shared_with.empty() ? p.vocabulary * p.dimension : 0;
  }

  std::string table_owner(const Layer& layer) const override {
    return std::get<EmbeddingParams>(layer.params).shared_with;
  }

  // The token ids, to scatter the gradient into the table.
  BackwardNeeds backward_needs(const Layer& /*layer*/) const override { return {.input = true}; }

  // Forward is a gather (no FLOPs) of N T rows; the token ids get no gradient; backward_filter
  // adds the N T output-gradient rows into the table's gradient: N T D. A pass reads the rows
  // it looks up, at most the whole table.
  void add_cost(const LayerCostQuery& q, LayerCost& cost) const override {
    const auto& p = std::get<EmbeddingParams>(q.layer.params);
    const std::int64_t lookups = q.batch * q.inputs.at(0).spatial.at(0);
    const bool owns_table = p.shared_with.empty();
    cost.flops.backward_filter =
        owns_table ? static_cast<double>(lookups) * static_cast<double>(p.dimension) : 0.0;
    cost.weight_bytes_read =
        owns_table ? std::min(lookups, p.vocabulary) * p.dimension * dtype_bytes(q.dtype) : 0;
  }

  TensorRole tensor_role(const Layer& /*layer*/) const override { return TensorRole::table; }

  std::int64_t tensor_split_extent(const Layer& layer, TensorSplit /*split*/,
                                   const TensorShape& /*output*/) const override {
    return std::get<EmbeddingParams>(layer.params).vocabulary;
  }

  bool splits_unevenly(const Layer& /*layer*/) const override { return true; }

  void split_for_tensor(Layer& layer, TensorSplit split, std::int64_t parts) const override {
    auto& p = std::get<EmbeddingParams>(layer.params);
    if (split == TensorSplit::vocabulary) p.vocabulary = ceil_div(p.vocabulary, parts);
  }

  std::string profile_key(const Layer& layer) const override {
    const auto& p = std::get<EmbeddingParams>(layer.params);
    return " v" + std::to_string(p.vocabulary) + " c" + std::to_string(p.channel) +
           (p.shared_with.empty() ? "" : " shared");
  }

  bool is_sequence() const override { return true; }
};

}  // namespace

const LayerKindRules& embedding_rules() {
  static const EmbeddingRules rules;
  return rules;
}

}  // namespace tessera::kinds
