// Multi-head self-attention (Vaswani et al. 2017) over a sequence N x C x T, as transformers
// use it: Q, K and V projected from the input, `heads` heads of C / heads channels, a softmax
// over the time steps (masked to the past when causal), the heads' outputs projected back to C.
// Fused, it is one kernel that keeps no T x T tensor (FlashAttention, Dao et al. 2022: backward
// recomputes the scores); unfused, it keeps the attention probabilities for backward.
#include "kind_checks.hpp"
#include "tessera/core/common/integer_division.hpp"
#include "tessera/core/model/layer_kind_rules.hpp"

namespace tessera::kinds {
namespace {

// Operations per attention score, beyond the two matrix products around it (documented counts,
// not measurements): the softmax's max, exp, sum and divide (4) and the scaling by 1/sqrt(d)
// (1); its backward: the dot product with the output and the scaled difference (3).
constexpr double kSoftmaxForwardOpsPerScore = 5;
constexpr double kSoftmaxBackwardOpsPerScore = 3;
// Passes over the N h T^2 scores through device memory when unfused (add_cost says which).
constexpr double kUnfusedForwardScorePasses = 4;
constexpr double kUnfusedBackwardScorePasses = 7;

class SelfAttentionRules final : public LayerKindRules {
 public:
  std::vector<std::string> model_file_keys() const override {
    return {"heads", "causal", "bias", "fused"};
  }

  LayerParams parse(const YamlMap& map) const override {
    SelfAttentionParams p;
    p.heads =
        map.required("heads", "a positive integer dividing the channels").as_integer(1, kMaxUnits);
    if (auto causal = map.optional("causal")) p.causal = causal->as_bool();
    if (auto bias = map.optional("bias")) p.bias = bias->as_bool();
    if (auto fused = map.optional("fused")) p.fused = fused->as_bool();
    return p;
  }

  nlohmann::json params_json(const Layer& layer) const override {
    const auto& p = std::get<SelfAttentionParams>(layer.params);
    return {{"heads", p.heads}, {"causal", p.causal}, {"bias", p.bias}, {"fused", p.fused}};
  }

  TensorShape infer_shape(Layer& layer, const std::vector<TensorShape>& inputs) const override {
    require_input_count(layer, inputs, 1, 1);
    require_sequence(layer, inputs[0], "input");
    const auto& p = std::get<SelfAttentionParams>(layer.params);
    require(p.heads > 0 && inputs[0].c % p.heads == 0, layer,
            "heads (" + std::to_string(p.heads) + ") must divide the input's channels (" +
                std::to_string(inputs[0].c) + ")");
    return inputs[0];
  }

  // The Q, K and V projections as one 3C x C matrix, the larger of the two.
  std::vector<std::int64_t> weight_extents(const Layer& layer,
                                           const std::vector<TensorShape>& inputs) const override {
    const std::int64_t c = inputs.at(0).c;
    return {3 * c / std::get<SelfAttentionParams>(layer.params).tensor_parts, c};
  }

  // 4 C^2 weights (Q, K, V and the output projection) and 4 C biases; a tensor-parallel shard
  // of C' = C / tensor_parts attention channels holds 4 C C' weights, the Q, K and V biases of
  // its channels (3 C') and the output projection's whole bias (C).
  std::int64_t parameters(const Layer& layer, const std::vector<TensorShape>& inputs,
                          const TensorShape& /*output*/) const override {
    const auto& p = std::get<SelfAttentionParams>(layer.params);
    const std::int64_t c = inputs.at(0).c;
    const std::int64_t shard = c / p.tensor_parts;
    return 4 * c * shard + (p.bias ? 3 * shard + c : 0);
  }

  BackwardNeeds backward_needs(const Layer& /*layer*/) const override { return {.input = true}; }

  // With N sequences of T steps, C channels and h heads, all T x T scores counted (causal
  // kernels may skip the masked half; Megatron's and most published FLOP counts do not):
  //   forward         = 8 N T C^2 (projections) + 4 N T^2 C (scores, weighted sum)
  //                     + 5 N h T^2 (softmax) [+ 4 N T C biases]
  //   backward_data   = 8 N T C^2 + 8 N T^2 C + 3 N h T^2, and fused, the forward's scores and
  //                     softmax again: + 2 N T^2 C + 5 N h T^2
  //   backward_filter = 8 N T C^2 [+ 4 N T C]
  // Backward keeps Q, K, V and the heads' output (4 N T C), and unfused the probabilities
  // (N h T^2), fused only their log-sum-exp (N h T, float32). A tensor-parallel shard of h heads
  // and C' = C / tensor_parts channels: 8 N T C C' for the projections, C' for C in the scores,
  // 3 C' + C biases, and keeps 4 N T C'.
  void add_cost(const LayerCostQuery& q, LayerCost& cost) const override {
    const auto& p = std::get<SelfAttentionParams>(q.layer.params);
    const TensorShape& input = q.inputs.at(0);
    const double n = static_cast<double>(q.batch);
    const double t = static_cast<double>(input.spatial.at(0));
    const double c = static_cast<double>(input.c);
    const std::int64_t shard_channels = input.c / p.tensor_parts;
    const double shard = static_cast<double>(shard_channels);
    const double h = static_cast<double>(p.heads);
    const double projections = 8 * n * t * c * shard;
    const double biases = p.bias ? n * t * (3 * shard + c) : 0.0;
    const double score_products = 2 * n * t * t * shard;  // Q K^T, or P V, over all heads
    auto& f = cost.flops;
    f.forward =
        projections + 2 * score_products + kSoftmaxForwardOpsPerScore * n * h * t * t + biases;
    f.backward_data =
        projections + 4 * score_products + kSoftmaxBackwardOpsPerScore * n * h * t * t;
    if (p.fused) {
      f.backward_data += score_products + kSoftmaxForwardOpsPerScore * n * h * t * t;
    }
    f.backward_filter = projections + biases;
    const std::int64_t steps = input.spatial.at(0);
    const std::int64_t kept_activations =
        4 * q.batch * steps * shard_channels * dtype_bytes(q.dtype);
    const std::int64_t kept_scores = p.fused
                                         ? q.batch * p.heads * steps * dtype_bytes(DType::float32)
                                         : q.batch * p.heads * steps * steps * dtype_bytes(q.dtype);
    cost.saved_for_backward_bytes = kept_activations + kept_scores;
    // Unfused, the N h T^2 scores go through device memory between the kernels: forward, the
    // scores' product writes them, the softmax reads them and writes the probabilities, the
    // weighted sum reads those (4 passes); backward, the probabilities' gradient is written, the
    // softmax's backward reads it and the probabilities and writes the scores' gradient, which
    // the two products read, and the values' gradient reads the probabilities (7). Fused, they
    // stay on chip.
    if (!p.fused) {
      const double scores = n * h * t * t * static_cast<double>(dtype_bytes(q.dtype));
      cost.intermediate_bytes.forward = kUnfusedForwardScorePasses * scores;
      cost.intermediate_bytes.backward_data = kUnfusedBackwardScorePasses * scores;
    }
  }

  std::string profile_key(const Layer& layer) const override {
    const auto& p = std::get<SelfAttentionParams>(layer.params);
    return " h" + std::to_string(p.heads) + (p.causal ? " causal" : "") + (p.bias ? " bias" : "") +
           (p.fused ? " fused" : "") +
           (p.tensor_parts > 1 ? " tp" + std::to_string(p.tensor_parts) : "");
  }

  TensorRole tensor_role(const Layer& /*layer*/) const override { return TensorRole::heads; }

  std::int64_t tensor_split_extent(const Layer& layer, TensorSplit /*split*/,
                                   const TensorShape& /*output*/) const override {
    return std::get<SelfAttentionParams>(layer.params).heads;
  }

  void split_for_tensor(Layer& layer, TensorSplit split, std::int64_t parts) const override {
    auto& p = std::get<SelfAttentionParams>(layer.params);
    if (split != TensorSplit::heads) return;
    p.heads = ceil_div(p.heads, parts);
    p.tensor_parts *= parts;
  }

  bool is_matrix_product() const override { return true; }
  bool is_sequence() const override { return true; }
  bool depends_across_time() const override { return true; }
  bool weight_gradients_from_backward_data() const override { return true; }
};

}  // namespace

const LayerKindRules& self_attention_rules() {
  static const SelfAttentionRules rules;
  return rules;
}

}  // namespace tessera::kinds
