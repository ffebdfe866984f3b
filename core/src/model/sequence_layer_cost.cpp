#include "sequence_layer_cost.hpp"

#include <algorithm>

namespace tessera {
namespace {

// Notation: N samples, T time steps of the layer's input, a multiply-add counts 2 FLOPs.
//
// Element-wise constants (documented counts, not measurements; the matrix products dominate):
// an LSTM cell per unit and step does 3 sigmoids, 1 tanh for the candidate, f*c, i*g, their sum,
// tanh(c) and o*tanh(c): 9 operations. Its backward through the same gates takes about twice.
constexpr double kLstmCellForwardOpsPerUnit = 9;
constexpr double kLstmCellBackwardOpsPerUnit = 18;
// Additive attention per (query step, memory step, unit): q + k, + bias (normalised form), tanh
// and the multiply-add with the score vector v: 5. Backward: tanh', the product with v, and the
// two sums into the query and key gradients: 5. The score vector's gradient: one multiply-add.
constexpr double kAttentionScoreForwardOpsPerElement = 5;
constexpr double kAttentionScoreBackwardOpsPerElement = 5;
constexpr double kAttentionScoreFilterOpsPerElement = 2;
// Softmax over the memory steps per (query step, memory step): max, exp, sum, divide (4); its
// backward: the dot product with the output and the scaled difference (3).
constexpr double kAttentionSoftmaxForwardOpsPerElement = 4;
constexpr double kAttentionSoftmaxBackwardOpsPerElement = 3;

double as_double(std::int64_t value) {
  return static_cast<double>(value);
}

std::int64_t steps_of(const TensorShape& sequence) {
  return sequence.spatial.at(0);
}

// LSTM with input width I, H units, projection P (0: none) and recurrent width R = P or H, per
// direction (Hochreiter & Schmidhuber 1997; the projection of Sak et al. 2014):
//   parameters = 4H (I + R) + b 4H + H P, with b the bias vectors per gate (TensorFlow 1,
//   cuDNN/PyTorch 2); a bidirectional layer has two such sets.
std::int64_t lstm_parameters(const LstmParams& p, std::int64_t input_width) {
  const std::int64_t recurrent = p.projection > 0 ? p.projection : p.hidden;
  const std::int64_t bias_vectors = p.bias == LstmBias::none     ? 0
                                    : p.bias == LstmBias::single ? 1
                                                                 : 2;
  const std::int64_t per_direction = 4 * p.hidden * (input_width + recurrent) +
                                     bias_vectors * 4 * p.hidden + p.hidden * p.projection;
  return (p.bidirectional ? 2 : 1) * per_direction;
}

//   forward         = N T [2 * 4H (I + R) + b 4H + 9H + 2 H P]
//   backward_data   = N T [2 * 4H (I + R) + 18H + 2 H P]  (input and recurrent-state gradients)
//   backward_filter = N T [2 * 4H (I + R) + b 4H + 2 H P]
// per direction. Backward keeps the gates (4H) and cell state (H) of every step, and the
// unprojected output (H) where there is a projection, as cuDNN's reserve space does.
void lstm_cost(const LstmParams& p, const TensorShape& input, std::int64_t batch, DType dtype,
               LayerCost& cost) {
  const double h = as_double(p.hidden);
  const double recurrent = as_double(p.projection > 0 ? p.projection : p.hidden);
  const double bias_vectors = p.bias == LstmBias::none ? 0 : p.bias == LstmBias::single ? 1 : 2;
  const double gate_macs = 4 * h * (as_double(input.c) + recurrent);
  const double projection_macs = h * as_double(p.projection);
  const double directions = p.bidirectional ? 2 : 1;
  const double positions = as_double(batch) * as_double(steps_of(input)) * directions;
  auto& f = cost.flops;
  f.forward = positions * (2 * gate_macs + bias_vectors * 4 * h + kLstmCellForwardOpsPerUnit * h +
                           2 * projection_macs);
  f.backward_data =
      positions * (2 * gate_macs + kLstmCellBackwardOpsPerUnit * h + 2 * projection_macs);
  f.backward_filter = positions * (2 * gate_macs + bias_vectors * 4 * h + 2 * projection_macs);
  const std::int64_t saved_per_position = 5 * p.hidden + (p.projection > 0 ? p.hidden : 0);
  cost.saved_for_backward_bytes =
      batch * steps_of(input) * (p.bidirectional ? 2 : 1) * saved_per_position * dtype_bytes(dtype);
}

// Embedding of V tokens in D dimensions: parameters V D (none when it reads another's table).
// Forward is a gather (no FLOPs) of N T rows; the token ids get no gradient; backward_filter
// adds the N T output-gradient rows into the table's gradient: N T D.
void embedding_cost(const EmbeddingParams& p, const TensorShape& input, std::int64_t batch,
                    DType dtype, LayerCost& cost) {
  const std::int64_t lookups = batch * steps_of(input);
  cost.flops.backward_filter =
      p.shared_with.empty() ? as_double(lookups) * as_double(p.dimension) : 0.0;
  cost.weight_bytes_read = p.shared_with.empty()
                               ? std::min(lookups, p.vocabulary) * p.dimension * dtype_bytes(dtype)
                               : 0;
}

// Attention with query width Dq over Tq steps, memory width Dk over Tk steps and U units:
//   parameters = U Dq + U Dk (the query and key projections, no bias) + U (score vector v)
//                + U + 1 when normalised (the score bias and v's gain), as MLPerf GNMT;
//   forward         = N [2 Tq Dq U + 2 Tk Dk U + 5 Tq Tk U + 4 Tq Tk + 2 Tq Tk Dk]
//   backward_data   = N [2 Tq Dq U + 2 Tk Dk U + 5 Tq Tk U + 3 Tq Tk + 4 Tq Tk Dk]
//   backward_filter = N [2 Tq Dq U + 2 Tk Dk U + 2 Tq Tk U]
// (projections, additive scores, softmax over memory steps, the weighted sum of the memory).
// Backward keeps tanh(q + k) for every (query step, memory step, unit) and the attention
// weights: the reference implementations (MLPerf GNMT) hold that N Tq Tk U tensor.
std::int64_t attention_parameters(const AttentionParams& p, const TensorShape& query,
                                  const TensorShape& memory) {
  return p.units * query.c + p.units * memory.c + p.units + (p.normalize ? p.units + 1 : 0);
}

void attention_cost(const AttentionParams& p, const TensorShape& query, const TensorShape& memory,
                    std::int64_t batch, DType dtype, LayerCost& cost) {
  const double n = as_double(batch);
  const double tq = as_double(steps_of(query));
  const double tk = as_double(steps_of(memory));
  const double u = as_double(p.units);
  const double dk = as_double(memory.c);
  const double projections = 2 * tq * as_double(query.c) * u + 2 * tk * dk * u;
  const double pairs = tq * tk;
  auto& f = cost.flops;
  f.forward = n * (projections + kAttentionScoreForwardOpsPerElement * pairs * u +
                   kAttentionSoftmaxForwardOpsPerElement * pairs + 2 * pairs * dk);
  f.backward_data = n * (projections + kAttentionScoreBackwardOpsPerElement * pairs * u +
                         kAttentionSoftmaxBackwardOpsPerElement * pairs + 4 * pairs * dk);
  f.backward_filter = n * (projections + kAttentionScoreFilterOpsPerElement * pairs * u);
  cost.saved_for_backward_bytes =
      batch * steps_of(query) * steps_of(memory) * (p.units + 1) * dtype_bytes(dtype);
}

// Projection of width C to K classes at every step, K = out_features, or sampled + 1 with a
// sampled softmax (the sampled classes and the target):
//   parameters = C out_features + out_features (bias), whatever is sampled;
//   forward = 2 N T C K + N T K (bias), backward_data = 2 N T C K,
//   backward_filter = 2 N T C K + N T K.
// A sampled softmax reads the sampled rows and each position's target row only.
void projection_cost(const ProjectionParams& p, const TensorShape& input, std::int64_t batch,
                     DType dtype, LayerCost& cost) {
  const std::int64_t classes = p.sampled > 0 ? p.sampled + 1 : p.out_features;
  const double positions = as_double(batch) * as_double(steps_of(input));
  const double macs = positions * as_double(input.c) * as_double(classes);
  const double bias = p.bias ? positions * as_double(classes) : 0.0;
  cost.flops.forward = 2 * macs + bias;
  cost.flops.backward_data = 2 * macs;
  cost.flops.backward_filter = 2 * macs + bias;
  if (p.sampled > 0) {
    const std::int64_t rows = std::min(p.out_features, p.sampled + batch * steps_of(input));
    cost.weight_bytes_read = rows * (input.c + (p.bias ? 1 : 0)) * dtype_bytes(dtype);
  }
}

}  // namespace

std::int64_t sequence_layer_parameters(const Layer& layer, const std::vector<TensorShape>& inputs) {
  if (const auto* lstm = std::get_if<LstmParams>(&layer.params)) {
    return lstm_parameters(*lstm, inputs.at(0).c);
  }
  if (const auto* embedding = std::get_if<EmbeddingParams>(&layer.params)) {
    return embedding->shared_with.empty() ? embedding->vocabulary * embedding->dimension : 0;
  }
  if (const auto* attention = std::get_if<AttentionParams>(&layer.params)) {
    return attention_parameters(*attention, inputs.at(0), inputs.at(1));
  }
  if (const auto* projection = std::get_if<ProjectionParams>(&layer.params)) {
    return inputs.at(0).c * projection->out_features +
           (projection->bias ? projection->out_features : 0);
  }
  return 0;
}

void add_sequence_layer_cost(const Layer& layer, const std::vector<TensorShape>& inputs,
                             std::int64_t batch, DType dtype, LayerCost& cost) {
  if (const auto* lstm = std::get_if<LstmParams>(&layer.params)) {
    lstm_cost(*lstm, inputs.at(0), batch, dtype, cost);
  } else if (const auto* embedding = std::get_if<EmbeddingParams>(&layer.params)) {
    embedding_cost(*embedding, inputs.at(0), batch, dtype, cost);
  } else if (const auto* attention = std::get_if<AttentionParams>(&layer.params)) {
    attention_cost(*attention, inputs.at(0), inputs.at(1), batch, dtype, cost);
  } else if (const auto* projection = std::get_if<ProjectionParams>(&layer.params)) {
    projection_cost(*projection, inputs.at(0), batch, dtype, cost);
  }
}

}  // namespace tessera
