#include "sequence_shapes.hpp"

#include <string>

#include "tessera/core/model_graph.hpp"

namespace tessera {
namespace {

void require(bool condition, const Layer& layer, const std::string& problem) {
  if (!condition) throw ModelError(layer.name, problem);
}

void require_inputs(const Layer& layer, const std::vector<TensorShape>& inputs, std::size_t count) {
  require(inputs.size() == count, layer,
          to_string(layer.kind) + " takes " + std::to_string(count) + " input(s), got " +
              std::to_string(inputs.size()));
}

// A sequence has exactly one spatial axis, time.
void require_sequence(const Layer& layer, const TensorShape& input, const std::string& role) {
  require(input.spatial_rank() == 1, layer,
          to_string(layer.kind) + " needs a sequence N x C x T (one spatial axis, time) as its " +
              role + ", got " + to_string(input));
}

TensorShape infer_lstm(const Layer& layer, const TensorShape& input) {
  const auto& p = std::get<LstmParams>(layer.params);
  require_sequence(layer, input, "input");
  require(p.hidden > 0, layer, "hidden must be positive");
  require(p.projection >= 0, layer, "projection must be positive, or 0 for none");
  const std::int64_t per_direction = p.projection > 0 ? p.projection : p.hidden;
  return TensorShape{input.n, (p.bidirectional ? 2 : 1) * per_direction, input.spatial};
}

TensorShape infer_embedding(const Layer& layer, const TensorShape& input) {
  const auto& p = std::get<EmbeddingParams>(layer.params);
  require_sequence(layer, input, "token ids");
  require(p.vocabulary > 0 && p.dimension > 0, layer, "vocabulary and dimension must be positive");
  require(p.channel >= 0 && p.channel < input.c, layer,
          "channel " + std::to_string(p.channel) + " is not a token stream of its input " +
              to_string(input) + " (channels 0.." + std::to_string(input.c - 1) + ")");
  require(p.shared_with != layer.name, layer, "an embedding cannot share its own table");
  return TensorShape{input.n, p.dimension, input.spatial};
}

TensorShape infer_attention(const Layer& layer, const std::vector<TensorShape>& inputs) {
  const auto& p = std::get<AttentionParams>(layer.params);
  require_inputs(layer, inputs, 2);
  require_sequence(layer, inputs[0], "query (first input)");
  require_sequence(layer, inputs[1], "memory (second input)");
  require(inputs[0].n == inputs[1].n, layer, "query and memory must have the same batch");
  require(p.units > 0, layer, "units must be positive");
  // One context vector (a weighted sum of memory steps) per query step.
  return TensorShape{inputs[0].n, inputs[1].c, inputs[0].spatial};
}

TensorShape infer_projection(const Layer& layer, const TensorShape& input) {
  const auto& p = std::get<ProjectionParams>(layer.params);
  require_sequence(layer, input, "input");
  require(p.out_features > 0, layer, "out_features must be positive");
  require(p.sampled >= 0 && p.sampled < p.out_features, layer,
          "sampled must be below out_features (" + std::to_string(p.out_features) +
              "), or 0 for the full softmax; got " + std::to_string(p.sampled));
  return TensorShape{input.n, p.sampled > 0 ? p.sampled + 1 : p.out_features, input.spatial};
}

}  // namespace

TensorShape infer_sequence_layer(const Layer& layer, const std::vector<TensorShape>& inputs) {
  switch (layer.kind) {
    case LayerKind::lstm:
      require_inputs(layer, inputs, 1);
      return infer_lstm(layer, inputs[0]);
    case LayerKind::embedding:
      require_inputs(layer, inputs, 1);
      return infer_embedding(layer, inputs[0]);
    case LayerKind::attention:
      return infer_attention(layer, inputs);
    case LayerKind::projection:
      require_inputs(layer, inputs, 1);
      return infer_projection(layer, inputs[0]);
    default:
      throw ModelError(layer.name, to_string(layer.kind) + " is not a sequence layer");
  }
}

std::vector<std::int64_t> sequence_weight_extents(const Layer& layer,
                                                  const std::vector<TensorShape>& inputs) {
  if (const auto* lstm = std::get_if<LstmParams>(&layer.params)) {
    const std::int64_t recurrent = lstm->projection > 0 ? lstm->projection : lstm->hidden;
    return {4 * lstm->hidden, inputs.at(0).c + recurrent};
  }
  if (const auto* embedding = std::get_if<EmbeddingParams>(&layer.params)) {
    return {embedding->vocabulary, embedding->dimension};
  }
  if (const auto* attention = std::get_if<AttentionParams>(&layer.params)) {
    return {attention->units, inputs.at(0).c + inputs.at(1).c};
  }
  if (const auto* projection = std::get_if<ProjectionParams>(&layer.params)) {
    return {projection->out_features, inputs.at(0).c};
  }
  return {};
}

}  // namespace tessera
