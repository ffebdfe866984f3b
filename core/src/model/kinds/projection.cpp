// A linear map at every time step (the softmax layer over a vocabulary), optionally a sampled
// softmax (Jean et al. 2015) that scores only some classes in training.
#include <algorithm>

#include "kind_checks.hpp"
#include "tessera/core/common/integer_division.hpp"
#include "tessera/core/model/layer_kind_rules.hpp"

namespace tessera::kinds {
namespace {

class ProjectionRules final : public LayerKindRules {
 public:
  std::vector<std::string> model_file_keys() const override {
    return {"out_features", "bias", "sampled", "shared_with"};
  }

  LayerParams parse(const YamlMap& map) const override {
    ProjectionParams p;
    p.out_features =
        map.required("out_features", "a positive integer").as_integer(1, kMaxVocabulary);
    if (auto bias = map.optional("bias")) p.bias = bias->as_bool();
    if (auto sampled = map.optional("sampled")) p.sampled = sampled->as_integer(0, kMaxVocabulary);
    if (auto shared = map.optional("shared_with")) p.shared_with = shared->as_string();
    return p;
  }

  nlohmann::json params_json(const Layer& layer) const override {
    const auto& p = std::get<ProjectionParams>(layer.params);
    return {{"out_features", p.out_features},
            {"bias", p.bias},
            {"sampled", p.sampled},
            {"shared_with", p.shared_with}};
  }

  TensorShape infer_shape(Layer& layer, const std::vector<TensorShape>& inputs) const override {
    require_input_count(layer, inputs, 1, 1);
    const TensorShape& input = inputs[0];
    const auto& p = std::get<ProjectionParams>(layer.params);
    require_sequence(layer, input, "input");
    require(p.out_features > 0, layer, "out_features must be positive");
    require(p.sampled >= 0 && p.sampled < p.out_features, layer,
            "sampled must be below out_features (" + std::to_string(p.out_features) +
                "), or 0 for the full softmax; got " + std::to_string(p.sampled));
    return TensorShape{input.n, p.sampled > 0 ? p.sampled + 1 : p.out_features, input.spatial};
  }

  std::vector<std::int64_t> weight_extents(const Layer& layer,
                                           const std::vector<TensorShape>& inputs) const override {
    return {std::get<ProjectionParams>(layer.params).out_features, inputs.at(0).c};
  }

  // C out_features + out_features (bias), whatever is sampled; tied to an embedding's table,
  // the bias only.
  std::int64_t parameters(const Layer& layer, const std::vector<TensorShape>& inputs,
                          const TensorShape& /*output*/) const override {
    const auto& p = std::get<ProjectionParams>(layer.params);
    const std::int64_t weights = p.shared_with.empty() ? inputs.at(0).c * p.out_features : 0;
    return weights + (p.bias ? p.out_features : 0);
  }

  std::string table_owner(const Layer& layer) const override {
    return std::get<ProjectionParams>(layer.params).shared_with;
  }

  BackwardNeeds backward_needs(const Layer& /*layer*/) const override { return {.input = true}; }

  // Width C to K classes at every step, K = out_features, or sampled + 1 (the sampled classes
  // and the target): forward = 2 N T C K + N T K (bias), backward_data = 2 N T C K,
  // backward_filter = 2 N T C K + N T K. A sampled softmax reads the sampled rows and each
  // position's target row only.
  void add_cost(const LayerCostQuery& q, LayerCost& cost) const override {
    const auto& p = std::get<ProjectionParams>(q.layer.params);
    const TensorShape& input = q.inputs.at(0);
    const std::int64_t steps = input.spatial.at(0);
    const std::int64_t classes = p.sampled > 0 ? p.sampled + 1 : p.out_features;
    const double positions = static_cast<double>(q.batch) * static_cast<double>(steps);
    const double macs = positions * static_cast<double>(input.c) * static_cast<double>(classes);
    const double bias = p.bias ? positions * static_cast<double>(classes) : 0.0;
    cost.flops.forward = 2 * macs + bias;
    cost.flops.backward_data = 2 * macs;
    cost.flops.backward_filter = 2 * macs + bias;
    // A pass reads every row of the weights (a tied head its owner's table), a sampled softmax
    // only the sampled rows and each position's target row.
    const std::int64_t rows =
        p.sampled > 0 ? std::min(p.out_features, p.sampled + q.batch * steps) : p.out_features;
    cost.weight_bytes_read = rows * (input.c + (p.bias ? 1 : 0)) * dtype_bytes(q.dtype);
  }

  std::string profile_key(const Layer& layer) const override {
    const auto& p = std::get<ProjectionParams>(layer.params);
    return " o" + std::to_string(p.out_features) +
           (p.sampled > 0 ? " sampled" + std::to_string(p.sampled) : "") + (p.bias ? " bias" : "");
  }

  // A sampled softmax scores classes drawn over the whole vocabulary: it runs whole.
  TensorRole tensor_role(const Layer& layer) const override {
    return std::get<ProjectionParams>(layer.params).sampled > 0 ? TensorRole::whole
                                                                : TensorRole::matrix_product;
  }

  // Tied to an embedding, its classes are the table's rows, split as the table is.
  bool splits_unevenly(const Layer& layer) const override {
    return !std::get<ProjectionParams>(layer.params).shared_with.empty();
  }

  void split_for_tensor(Layer& layer, TensorSplit split, std::int64_t parts) const override {
    auto& p = std::get<ProjectionParams>(layer.params);
    if (split == TensorSplit::column) p.out_features = ceil_div(p.out_features, parts);
  }

  bool is_matrix_product() const override { return true; }
  bool is_sequence() const override { return true; }
};

}  // namespace

const LayerKindRules& projection_rules() {
  static const ProjectionRules rules;
  return rules;
}

}  // namespace tessera::kinds
