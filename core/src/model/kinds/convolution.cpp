// Convolutions and transposed convolutions: the layers with algorithms, workspaces and
// micro-batching, and the halos of spatial parallelism.
#include "kind_checks.hpp"
#include "tessera/core/common/integer_division.hpp"
#include "tessera/core/model/layer_kind_rules.hpp"
#include "tessera/core/model/shape_inference.hpp"

namespace tessera::kinds {
namespace {

class ConvolutionRules final : public LayerKindRules {
 public:
  explicit ConvolutionRules(bool transposed) : transposed_(transposed) {}

  std::vector<std::string> model_file_keys() const override {
    std::vector<std::string> keys{"out_channels", "kernel", "stride", "padding",
                                  "dilation",     "groups", "bias"};
    if (transposed_) keys.push_back("output_padding");
    return keys;
  }

  LayerParams parse(const YamlMap& map) const override {
    ConvolutionParams p;
    p.out_channels = map.required("out_channels", "a positive integer").as_integer(1, 1 << 20);
    p.kernel = read_axis_values(map, "kernel", {1}, 1);
    p.stride = read_axis_values(map, "stride", {1}, 1);
    p.padding = read_axis_values(map, "padding", {0}, 0);
    p.dilation = read_axis_values(map, "dilation", {1}, 1);
    p.output_padding = read_axis_values(map, "output_padding", {0}, 0);
    if (auto groups = map.optional("groups")) p.groups = groups->as_integer(1, 1 << 20);
    if (auto bias = map.optional("bias")) p.bias = bias->as_bool();
    return p;
  }

  nlohmann::json params_json(const Layer& layer) const override {
    const auto& p = std::get<ConvolutionParams>(layer.params);
    auto json = window_json(p.kernel, p.stride, p.padding);
    json.update({{"out_channels", p.out_channels},
                 {"dilation", p.dilation},
                 {"output_padding", p.output_padding},
                 {"groups", p.groups},
                 {"bias", p.bias}});
    return json;
  }

  TensorShape infer_shape(Layer& layer, const std::vector<TensorShape>& inputs) const override {
    require_input_count(layer, inputs, 1, 1);
    const TensorShape& input = inputs[0];
    require_spatial(layer, input);
    auto& p = std::get<ConvolutionParams>(layer.params);
    const int rank = input.spatial_rank();
    expand_each(layer, rank,
                {{&p.kernel, "kernel"},
                 {&p.stride, "stride"},
                 {&p.padding, "padding"},
                 {&p.dilation, "dilation"},
                 {&p.output_padding, "output_padding"}});
    require(p.out_channels > 0, layer, "out_channels must be positive");
    require(p.groups > 0, layer, "groups must be positive");
    require(input.c % p.groups == 0 && p.out_channels % p.groups == 0, layer,
            "groups (" + std::to_string(p.groups) + ") must divide input channels (" +
                std::to_string(input.c) + ") and out_channels (" + std::to_string(p.out_channels) +
                ")");
    TensorShape out{input.n, p.out_channels, {}};
    for (int axis = 0; axis < rank; ++axis) {
      const auto k = p.kernel[axis], s = p.stride[axis], pad = p.padding[axis],
                 d = p.dilation[axis];
      require(k > 0 && s > 0 && d > 0 && pad >= 0, layer,
              "kernel, stride and dilation must be positive and padding non-negative");
      std::int64_t extent = 0;
      if (transposed_) {
        require(p.output_padding[axis] >= 0 && p.output_padding[axis] < s, layer,
                "output_padding must be in [0, stride)");
        extent = (input.spatial[axis] - 1) * s - 2 * pad + d * (k - 1) + p.output_padding[axis] + 1;
      } else {
        extent = window_output_extent(input.spatial[axis], k, s, pad, d, false);
      }
      require_window_fits(layer, input, axis, extent);
      out.spatial.push_back(extent);
    }
    return out;
  }

  std::vector<std::int64_t> weight_extents(const Layer& layer,
                                           const std::vector<TensorShape>& inputs) const override {
    const auto& p = std::get<ConvolutionParams>(layer.params);
    std::vector<std::int64_t> extents{inputs.at(0).c, p.out_channels / p.groups};
    extents.insert(extents.end(), p.kernel.begin(), p.kernel.end());
    return extents;
  }

  std::int64_t parameters(const Layer& layer, const std::vector<TensorShape>& inputs,
                          const TensorShape& /*output*/) const override {
    const auto& p = std::get<ConvolutionParams>(layer.params);
    return product(weight_extents(layer, inputs)) + (p.bias ? p.out_channels : 0);
  }

  BackwardNeeds backward_needs(const Layer& /*layer*/) const override {
    return {.input = true};  // for the filter gradient
  }

  // Multiply-adds per output element of a convolution; a transposed convolution does the same
  // work per *input* element, so the roles of the two tensors swap.
  void add_cost(const LayerCostQuery& q, LayerCost& cost) const override {
    const auto& p = std::get<ConvolutionParams>(q.layer.params);
    const double in_channels = static_cast<double>(q.inputs[0].c);
    const double out_elements = q.output_elements();
    const double positions = transposed_ ? q.input_elements() / in_channels
                                         : out_elements / static_cast<double>(q.output.c);
    const double macs = positions * in_channels * static_cast<double>(p.out_channels / p.groups) *
                        static_cast<double>(product(p.kernel));
    auto& f = cost.flops;
    f.forward = 2 * macs + (p.bias ? out_elements : 0);
    f.backward_data = 2 * macs;
    f.backward_filter = 2 * macs + (p.bias ? out_elements : 0);
  }

  std::string profile_key(const Layer& layer) const override {
    const auto& p = std::get<ConvolutionParams>(layer.params);
    return " k" + axes_text(p.kernel) + " s" + axes_text(p.stride) + " p" + axes_text(p.padding) +
           " d" + axes_text(p.dilation) + " g" + std::to_string(p.groups) + (p.bias ? " bias" : "");
  }

  // Split by filters or channels; a depthwise convolution channel by channel; other groupings
  // whole.
  TensorRole tensor_role(const Layer& layer) const override {
    const auto& p = std::get<ConvolutionParams>(layer.params);
    if (p.groups == 1) return TensorRole::matrix_product;
    return p.groups == p.out_channels ? TensorRole::channel_wise : TensorRole::whole;
  }

  void split_for_tensor(Layer& layer, TensorSplit split, std::int64_t parts) const override {
    auto& p = std::get<ConvolutionParams>(layer.params);
    if (split == TensorSplit::column) p.out_channels = ceil_div(p.out_channels, parts);
    if (split == TensorSplit::follows) {
      p.out_channels = ceil_div(p.out_channels, parts);
      p.groups = ceil_div(p.groups, parts);
    }
  }

  bool is_matrix_product() const override { return true; }

 private:
  bool transposed_;
};

}  // namespace

const LayerKindRules& convolution_rules() {
  static const ConvolutionRules rules(false);
  return rules;
}

const LayerKindRules& transposed_convolution_rules() {
  static const ConvolutionRules rules(true);
  return rules;
}

}  // namespace tessera::kinds
