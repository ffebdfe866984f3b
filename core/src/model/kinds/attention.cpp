// Additive attention (Bahdanau et al. 2015) of a query sequence over a memory sequence, normalised
// as in TensorFlow's BahdanauAttention(normalize=True) and MLPerf GNMT.
#include "kind_checks.hpp"
#include "tessera/core/model/layer_kind_rules.hpp"

namespace tessera::kinds {
namespace {

// Operations per element (documented counts, not measurements; the products dominate).
struct OpsPerElement {
  // Per (query step, memory step, unit): q + k, + bias (normalised form), tanh and the
  // multiply-add with the score vector v; backward tanh', the product with v, and the two sums
  // into the query and key gradients; the score vector's gradient, one multiply-add.
  double score_forward = 5, score_backward = 5, score_filter = 2;
  // Softmax over the memory steps per (query step, memory step): max, exp, sum, divide; its
  // backward the dot product with the output and the scaled difference.
  double softmax_forward = 4, softmax_backward = 3;
};
constexpr OpsPerElement kOps;

class AttentionRules final : public LayerKindRules {
 public:
  std::vector<std::string> model_file_keys() const override { return {"units", "normalize"}; }

  LayerParams parse(const YamlMap& map) const override {
    AttentionParams p;
    p.units = map.required("units", "a positive integer").as_integer(1, kMaxUnits);
    if (auto normalize = map.optional("normalize")) p.normalize = normalize->as_bool();
    return p;
  }

  nlohmann::json params_json(const Layer& layer) const override {
    const auto& p = std::get<AttentionParams>(layer.params);
    return {{"units", p.units}, {"normalize", p.normalize}};
  }

  TensorShape infer_shape(Layer& layer, const std::vector<TensorShape>& inputs) const override {
    const auto& p = std::get<AttentionParams>(layer.params);
    require_input_count(layer, inputs, 2, 2);
    require_sequence(layer, inputs[0], "query (first input)");
    require_sequence(layer, inputs[1], "memory (second input)");
    require(inputs[0].n == inputs[1].n, layer, "query and memory must have the same batch");
    require(p.units > 0, layer, "units must be positive");
    // One context vector (a weighted sum of memory steps) per query step.
    return TensorShape{inputs[0].n, inputs[1].c, inputs[0].spatial};
  }

  std::vector<std::int64_t> weight_extents(const Layer& layer,
                                           const std::vector<TensorShape>& inputs) const override {
    return {std::get<AttentionParams>(layer.params).units, inputs.at(0).c + inputs.at(1).c};
  }

  // With query width Dq, memory width Dk and U units: U Dq + U Dk (the query and key
  // projections, no bias) + U (score vector v), + U + 1 when normalised (the score bias and v's
  // gain), as MLPerf GNMT.
  std::int64_t parameters(const Layer& layer, const std::vector<TensorShape>& inputs,
                          const TensorShape& /*output*/) const override {
    const auto& p = std::get<AttentionParams>(layer.params);
    return p.units * inputs.at(0).c + p.units * inputs.at(1).c + p.units +
           (p.normalize ? p.units + 1 : 0);
  }

  BackwardNeeds backward_needs(const Layer& /*layer*/) const override { return {.input = true}; }

  // Over Tq query steps and Tk memory steps:
  //   forward         = N [2 Tq Dq U + 2 Tk Dk U + 5 Tq Tk U + 4 Tq Tk + 2 Tq Tk Dk]
  //   backward_data   = N [2 Tq Dq U + 2 Tk Dk U + 5 Tq Tk U + 3 Tq Tk + 4 Tq Tk Dk]
  //   backward_filter = N [2 Tq Dq U + 2 Tk Dk U + 2 Tq Tk U]
  // (projections, additive scores, softmax over memory steps, the weighted sum of the memory).
  // Backward keeps tanh(q + k) for every (query step, memory step, unit) and the attention
  // weights: the reference implementations (MLPerf GNMT) hold that N Tq Tk U tensor.
  void add_cost(const LayerCostQuery& q, LayerCost& cost) const override {
    const auto& p = std::get<AttentionParams>(q.layer.params);
    const TensorShape& query = q.inputs.at(0);
    const TensorShape& memory = q.inputs.at(1);
    const double n = static_cast<double>(q.batch);
    const double tq = static_cast<double>(query.spatial.at(0));
    const double tk = static_cast<double>(memory.spatial.at(0));
    const double u = static_cast<double>(p.units);
    const double dk = static_cast<double>(memory.c);
    const double projections = 2 * tq * static_cast<double>(query.c) * u + 2 * tk * dk * u;
    const double pairs = tq * tk;
    auto& f = cost.flops;
    f.forward = n * (projections + kOps.score_forward * pairs * u + kOps.softmax_forward * pairs +
                     2 * pairs * dk);
    f.backward_data = n * (projections + kOps.score_backward * pairs * u +
                           kOps.softmax_backward * pairs + 4 * pairs * dk);
    f.backward_filter = n * (projections + kOps.score_filter * pairs * u);
    cost.saved_for_backward_bytes =
        q.batch * query.spatial.at(0) * memory.spatial.at(0) * (p.units + 1) * dtype_bytes(q.dtype);
  }

  std::string profile_key(const Layer& layer) const override {
    const auto& p = std::get<AttentionParams>(layer.params);
    return " u" + std::to_string(p.units) + (p.normalize ? " normalize" : "");
  }

  bool is_matrix_product() const override { return true; }
  bool is_sequence() const override { return true; }
  bool depends_across_time() const override { return true; }
};

}  // namespace

const LayerKindRules& attention_rules() {
  static const AttentionRules rules;
  return rules;
}

}  // namespace tessera::kinds
