// An LSTM over the time axis of N x C x T (Hochreiter & Schmidhuber 1997), with the optional
// projection of Sak et al. (2014) and a bidirectional form.
#include "kind_checks.hpp"
#include "tessera/core/model/layer_kind_rules.hpp"

namespace tessera::kinds {
namespace {

// Element-wise counts (documented, not measured; the matrix products dominate): a cell per unit
// and step does 3 sigmoids, 1 tanh for the candidate, f*c, i*g, their sum, tanh(c) and
// o*tanh(c): 9 operations. Its backward through the same gates takes about twice.
constexpr double kCellForwardOpsPerUnit = 9;
constexpr double kCellBackwardOpsPerUnit = 18;

std::int64_t recurrent_width(const LstmParams& p) {
  return p.projection > 0 ? p.projection : p.hidden;
}

// Bias vectors per gate: TensorFlow's LSTMCell keeps one, cuDNN and PyTorch two.
std::int64_t bias_vectors(const LstmParams& p) {
  return p.bias == LstmBias::none ? 0 : p.bias == LstmBias::single ? 1 : 2;
}

class LstmRules final : public LayerKindRules {
 public:
  std::vector<std::string> model_file_keys() const override {
    return {"hidden", "projection", "bidirectional", "bias"};
  }

  LayerParams parse(const YamlMap& map) const override {
    LstmParams p;
    p.hidden = map.required("hidden", "the LSTM's cell units").as_integer(1, kMaxUnits);
    if (auto projection = map.optional("projection")) {
      p.projection = projection->as_integer(0, kMaxUnits);
    }
    if (auto bidirectional = map.optional("bidirectional")) {
      p.bidirectional = bidirectional->as_bool();
    }
    if (auto bias = map.optional("bias")) {
      const auto choice = bias->as_choice({"none", "single", "double"});
      p.bias = choice == "none"     ? LstmBias::none
               : choice == "single" ? LstmBias::single
                                    : LstmBias::double_;
    }
    return p;
  }

  nlohmann::json params_json(const Layer& layer) const override {
    const auto& p = std::get<LstmParams>(layer.params);
    return {{"hidden", p.hidden},
            {"projection", p.projection},
            {"bidirectional", p.bidirectional},
            {"bias", to_string(p.bias)}};
  }

  TensorShape infer_shape(Layer& layer, const std::vector<TensorShape>& inputs) const override {
    require_input_count(layer, inputs, 1, 1);
    const auto& p = std::get<LstmParams>(layer.params);
    require_sequence(layer, inputs[0], "input");
    require(p.hidden > 0, layer, "hidden must be positive");
    require(p.projection >= 0, layer, "projection must be positive, or 0 for none");
    // A projection reduces the recurrent width (Sak et al. 2014); PyTorch's nn.LSTM refuses
    // even proj_size == hidden_size, which here is a square projection.
    require(p.projection <= p.hidden, layer,
            "projection must be at most hidden (" + std::to_string(p.hidden) + "); got " +
                std::to_string(p.projection));
    return TensorShape{inputs[0].n, (p.bidirectional ? 2 : 1) * recurrent_width(p),
                       inputs[0].spatial};
  }

  std::vector<std::int64_t> weight_extents(const Layer& layer,
                                           const std::vector<TensorShape>& inputs) const override {
    const auto& p = std::get<LstmParams>(layer.params);
    return {4 * p.hidden, inputs.at(0).c + recurrent_width(p)};
  }

  // Per direction, with input width I, H units, projection P and recurrent width R = P or H:
  //   parameters = 4H (I + R) + b 4H + H P, b the bias vectors per gate.
  std::int64_t parameters(const Layer& layer, const std::vector<TensorShape>& inputs,
                          const TensorShape& /*output*/) const override {
    const auto& p = std::get<LstmParams>(layer.params);
    const std::int64_t per_direction = 4 * p.hidden * (inputs.at(0).c + recurrent_width(p)) +
                                       bias_vectors(p) * 4 * p.hidden + p.hidden * p.projection;
    return (p.bidirectional ? 2 : 1) * per_direction;
  }

  // The input for the input weights, the output for the recurrent ones.
  BackwardNeeds backward_needs(const Layer& /*layer*/) const override {
    return {.input = true, .output = true};
  }

  //   forward         = N T [2 * 4H (I + R) + b 4H + 9H + 2 H P]
  //   backward_data   = N T [2 * 4H (I + R) + 18H + 2 H P]  (input and recurrent-state gradients)
  //   backward_filter = N T [2 * 4H (I + R) + b 4H + 2 H P]
  // per direction. Backward keeps the gates (4H) and cell state (H) of every step, and the
  // unprojected output (H) where there is a projection, as cuDNN's reserve space does.
  void add_cost(const LayerCostQuery& q, LayerCost& cost) const override {
    const auto& p = std::get<LstmParams>(q.layer.params);
    const TensorShape& input = q.inputs.at(0);
    const std::int64_t steps = input.spatial.at(0);
    const double h = static_cast<double>(p.hidden);
    const double bias = static_cast<double>(bias_vectors(p));
    const double gate_macs =
        4 * h * (static_cast<double>(input.c) + static_cast<double>(recurrent_width(p)));
    const double projection_macs = h * static_cast<double>(p.projection);
    const double directions = p.bidirectional ? 2 : 1;
    const double positions = static_cast<double>(q.batch) * static_cast<double>(steps) * directions;
    auto& f = cost.flops;
    f.forward = positions *
                (2 * gate_macs + bias * 4 * h + kCellForwardOpsPerUnit * h + 2 * projection_macs);
    f.backward_data =
        positions * (2 * gate_macs + kCellBackwardOpsPerUnit * h + 2 * projection_macs);
    f.backward_filter = positions * (2 * gate_macs + bias * 4 * h + 2 * projection_macs);
    const std::int64_t saved_per_position = 5 * p.hidden + (p.projection > 0 ? p.hidden : 0);
    cost.saved_for_backward_bytes =
        q.batch * steps * (p.bidirectional ? 2 : 1) * saved_per_position * dtype_bytes(q.dtype);
  }

  std::string profile_key(const Layer& layer) const override {
    const auto& p = std::get<LstmParams>(layer.params);
    return " h" + std::to_string(p.hidden) + " p" + std::to_string(p.projection) +
           (p.bidirectional ? " bidirectional" : "") + " bias " + to_string(p.bias);
  }

  bool is_matrix_product() const override { return true; }
  bool is_sequence() const override { return true; }
  bool depends_across_time() const override { return true; }
};

}  // namespace

const LayerKindRules& lstm_rules() {
  static const LstmRules rules;
  return rules;
}

}  // namespace tessera::kinds
