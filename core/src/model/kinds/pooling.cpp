// Max and average pooling, global and adaptive pooling among them.
#include "kind_checks.hpp"
#include "tessera/core/model/layer_kind_rules.hpp"
#include "tessera/core/model/shape_inference.hpp"

namespace tessera::kinds {
namespace {

class PoolingRules final : public LayerKindRules {
 public:
  std::vector<std::string> model_file_keys() const override {
    return {"mode", "kernel", "stride", "padding", "ceil_mode", "global"};
  }

  LayerParams parse(const YamlMap& map) const override {
    PoolingParams p;
    auto mode = map.required("mode", "max or average").as_choice({"max", "average"});
    p.mode = mode == "max" ? PoolMode::max : PoolMode::average;
    if (auto global = map.optional("global")) p.global = global->as_bool();
    p.kernel = read_axis_values(map, "kernel", {2}, 1);
    p.stride = read_axis_values(map, "stride", p.kernel, 1);
    p.padding = read_axis_values(map, "padding", {0}, 0);
    if (auto ceil = map.optional("ceil_mode")) p.ceil_mode = ceil->as_bool();
    return p;
  }

  nlohmann::json params_json(const Layer& layer) const override {
    const auto& p = std::get<PoolingParams>(layer.params);
    auto json = window_json(p.kernel, p.stride, p.padding);
    json.update({{"mode", p.mode == PoolMode::max ? "max" : "average"},
                 {"ceil_mode", p.ceil_mode},
                 {"global", p.global},
                 {"adaptive_output", p.adaptive_output}});
    return json;
  }

  TensorShape infer_shape(Layer& layer, const std::vector<TensorShape>& inputs) const override {
    require_input_count(layer, inputs, 1, 1);
    const TensorShape& input = inputs[0];
    require_spatial(layer, input);
    auto& p = std::get<PoolingParams>(layer.params);
    const int rank = input.spatial_rank();
    if (p.global) p.adaptive_output = 1;
    if (p.adaptive_output > 0) choose_adaptive_windows(layer, input);
    expand_each(layer, rank,
                {{&p.kernel, "kernel"}, {&p.stride, "stride"}, {&p.padding, "padding"}});
    TensorShape out{input.n, input.c, {}};
    for (int axis = 0; axis < rank; ++axis) {
      const auto k = p.kernel[axis], s = p.stride[axis], pad = p.padding[axis];
      require(k > 0 && s > 0 && pad >= 0, layer,
              "kernel and stride must be positive and padding non-negative");
      require(2 * pad <= k, layer, "padding must be at most half the kernel");
      const auto extent = window_output_extent(input.spatial[axis], k, s, pad, 1, p.ceil_mode);
      require_window_fits(layer, input, axis, extent);
      out.spatial.push_back(extent);
    }
    return out;
  }

  BackwardNeeds backward_needs(const Layer& layer) const override {
    // Max pooling routes each gradient to its window's maximum; average pooling reads nothing.
    return std::get<PoolingParams>(layer.params).mode == PoolMode::max
               ? BackwardNeeds{.input = true, .output = true}
               : BackwardNeeds{};
  }

  void add_cost(const LayerCostQuery& q, LayerCost& cost) const override {
    const auto& p = std::get<PoolingParams>(q.layer.params);
    cost.flops.forward = q.output_elements() * static_cast<double>(product(p.kernel));
    cost.flops.backward_data = cost.flops.forward;
  }

  std::string profile_key(const Layer& layer) const override {
    const auto& p = std::get<PoolingParams>(layer.params);
    return std::string(p.mode == PoolMode::max ? " max" : " avg") + " k" + axes_text(p.kernel) +
           " s" + axes_text(p.stride) + " p" + axes_text(p.padding);
  }

 private:
  // Kernel and stride that give adaptive_output windows per axis, as PyTorch's adaptive pools.
  static void choose_adaptive_windows(Layer& layer, const TensorShape& input) {
    auto& p = std::get<PoolingParams>(layer.params);
    p.kernel.clear();
    p.stride.clear();
    p.padding = AxisValues(static_cast<std::size_t>(input.spatial_rank()), 0);
    for (auto extent : input.spatial) {
      require(extent >= p.adaptive_output, layer,
              "features of extent " + std::to_string(extent) +
                  " are smaller than the adaptive pool's output " +
                  std::to_string(p.adaptive_output) + " (use a larger input)");
      const auto stride = extent / p.adaptive_output;
      p.stride.push_back(stride);
      p.kernel.push_back(extent - (p.adaptive_output - 1) * stride);
    }
  }
  TensorRole tensor_role(const Layer& /*layer*/) const override { return TensorRole::channel_wise; }
};

}  // namespace

const LayerKindRules& pooling_rules() {
  static const PoolingRules rules;
  return rules;
}

}  // namespace tessera::kinds
