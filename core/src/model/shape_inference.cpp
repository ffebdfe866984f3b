#include "tessera/core/shape_inference.hpp"

#include <optional>
#include <string>

#include "sequence_shapes.hpp"
#include "tessera/core/model_graph.hpp"
#include "tessera/core/quantity.hpp"

namespace tessera {
namespace {

void require(bool condition, const Layer& layer, const std::string& problem) {
  if (!condition) throw ModelError(layer.name, problem);
}

void require_input_count(const Layer& layer, const std::vector<TensorShape>& inputs,
                         std::size_t minimum, std::size_t maximum) {
  if (inputs.size() >= minimum && inputs.size() <= maximum) return;
  std::string expected =
      minimum == maximum ? std::to_string(minimum) : "at least " + std::to_string(minimum);
  throw ModelError(layer.name, to_string(layer.kind) + " takes " + expected + " input(s), got " +
                                   std::to_string(inputs.size()));
}

void require_spatial(const Layer& layer, const TensorShape& input) {
  require(input.spatial_rank() >= 1, layer,
          to_string(layer.kind) + " needs a spatial input, got " + to_string(input) +
              " (a fully connected output has no spatial axes)");
}

TensorShape infer_convolution(Layer& layer, const TensorShape& input, bool transposed) {
  require_spatial(layer, input);
  auto& p = std::get<ConvolutionParams>(layer.params);
  const int rank = input.spatial_rank();
  p.kernel = expand_axes(p.kernel, rank, layer.name, "kernel");
  p.stride = expand_axes(p.stride, rank, layer.name, "stride");
  p.padding = expand_axes(p.padding, rank, layer.name, "padding");
  p.dilation = expand_axes(p.dilation, rank, layer.name, "dilation");
  p.output_padding = expand_axes(p.output_padding, rank, layer.name, "output_padding");
  require(p.out_channels > 0, layer, "out_channels must be positive");
  require(p.groups > 0, layer, "groups must be positive");
  require(input.c % p.groups == 0 && p.out_channels % p.groups == 0, layer,
          "groups (" + std::to_string(p.groups) + ") must divide input channels (" +
              std::to_string(input.c) + ") and out_channels (" + std::to_string(p.out_channels) +
              ")");
  TensorShape out{input.n, p.out_channels, {}};
  for (int axis = 0; axis < rank; ++axis) {
    const auto k = p.kernel[axis], s = p.stride[axis], pad = p.padding[axis], d = p.dilation[axis];
    require(k > 0 && s > 0 && d > 0 && pad >= 0, layer,
            "kernel, stride and dilation must be positive and padding non-negative");
    std::int64_t extent = 0;
    if (transposed) {
      require(p.output_padding[axis] >= 0 && p.output_padding[axis] < s, layer,
              "output_padding must be in [0, stride)");
      extent = (input.spatial[axis] - 1) * s - 2 * pad + d * (k - 1) + p.output_padding[axis] + 1;
    } else {
      extent = window_output_extent(input.spatial[axis], k, s, pad, d, false);
    }
    require(extent > 0, layer,
            "output extent along axis " + spatial_axis_names(rank)[axis] + " would be " +
                std::to_string(extent) + " for input " + to_string(input));
    out.spatial.push_back(extent);
  }
  return out;
}

TensorShape infer_pooling(Layer& layer, const TensorShape& input) {
  require_spatial(layer, input);
  auto& p = std::get<PoolingParams>(layer.params);
  const int rank = input.spatial_rank();
  if (p.global) p.adaptive_output = 1;
  if (p.adaptive_output > 0) {
    p.kernel.clear();
    p.stride.clear();
    p.padding = AxisValues(static_cast<std::size_t>(rank), 0);
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
  p.kernel = expand_axes(p.kernel, rank, layer.name, "kernel");
  p.stride = expand_axes(p.stride, rank, layer.name, "stride");
  p.padding = expand_axes(p.padding, rank, layer.name, "padding");
  TensorShape out{input.n, input.c, {}};
  for (int axis = 0; axis < rank; ++axis) {
    const auto k = p.kernel[axis], s = p.stride[axis], pad = p.padding[axis];
    require(k > 0 && s > 0 && pad >= 0, layer,
            "kernel and stride must be positive and padding non-negative");
    require(2 * pad <= k, layer, "padding must be at most half the kernel");
    const auto extent = window_output_extent(input.spatial[axis], k, s, pad, 1, p.ceil_mode);
    require(extent > 0, layer,
            "output extent along axis " + spatial_axis_names(rank)[axis] + " would be " +
                std::to_string(extent) + " for input " + to_string(input));
    out.spatial.push_back(extent);
  }
  return out;
}

TensorShape infer_merge(const Layer& layer, const std::vector<TensorShape>& inputs) {
  require_input_count(layer, inputs, 2, SIZE_MAX);
  TensorShape out = inputs.front();
  for (std::size_t i = 1; i < inputs.size(); ++i) {
    const auto& other = inputs[i];
    if (layer.kind == LayerKind::concat) {
      require(other.spatial == out.spatial, layer,
              "concat inputs must share spatial extents: " + to_string(inputs.front()) + " vs " +
                  to_string(other) + " (input '" + layer.inputs[i] + "')");
      out.c += other.c;
    } else {
      require(other == inputs.front(), layer,
              "add inputs must have identical shapes: " + to_string(inputs.front()) + " vs " +
                  to_string(other) + " (input '" + layer.inputs[i] + "')");
    }
  }
  return out;
}

// a x b, or nothing where the product passes `limit` (or int64).
std::optional<std::int64_t> bounded_product(const std::vector<std::int64_t>& factors,
                                            std::int64_t limit) {
  std::int64_t product = 1;
  for (auto factor : factors) {
    if (factor < 0 || __builtin_mul_overflow(product, factor, &product) || product > limit) {
      return std::nullopt;
    }
  }
  return product;
}

// Checked before anything multiplies these figures further (the cost model, the memory
// estimate): a layer whose output or weights pass the limits is an error naming it.
void require_bounded(const Layer& layer, const std::vector<TensorShape>& inputs,
                     const TensorShape& output) {
  std::vector<std::int64_t> per_sample{output.c};
  per_sample.insert(per_sample.end(), output.spatial.begin(), output.spatial.end());
  require(bounded_product(per_sample, kMaxElementsPerSample).has_value(), layer,
          "its output (" + to_string(output) + ") has more than " +
              format_count(kMaxElementsPerSample) + " elements per sample");
  std::vector<std::int64_t> weights;
  if (const auto* conv = std::get_if<ConvolutionParams>(&layer.params)) {
    weights = {inputs.at(0).c, conv->out_channels / conv->groups};
    weights.insert(weights.end(), conv->kernel.begin(), conv->kernel.end());
  } else if (const auto* fc = std::get_if<FullyConnectedParams>(&layer.params)) {
    weights = {inputs.at(0).elements_per_sample(), fc->out_features};
  } else if (is_sequence_kind(layer.kind)) {
    weights = sequence_weight_extents(layer, inputs);
  }
  require(bounded_product(weights, kMaxLayerParameters).has_value(), layer,
          "it has more than " + format_count(kMaxLayerParameters) + " weights");
}

InferredLayer infer_unchecked(const Layer& layer, const std::vector<TensorShape>& inputs);

}  // namespace

std::int64_t window_output_extent(std::int64_t input, std::int64_t kernel, std::int64_t stride,
                                  std::int64_t padding, std::int64_t dilation, bool ceil_mode) {
  const std::int64_t span = input + 2 * padding - dilation * (kernel - 1) - 1;
  if (span < 0) return 0;
  std::int64_t extent = (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
  // As in cuDNN and PyTorch: the last window must start inside the input or its left padding.
  if (ceil_mode && (extent - 1) * stride >= input + padding) --extent;
  return extent;
}

AxisValues expand_axes(const AxisValues& values, int rank, const std::string& layer,
                       const std::string& what) {
  if (static_cast<int>(values.size()) == rank) return values;
  if (values.size() == 1) return AxisValues(static_cast<std::size_t>(rank), values.front());
  throw ModelError(layer, what + " has " + std::to_string(values.size()) +
                              " values; give one, or one per spatial axis (" +
                              std::to_string(rank) + ")");
}

InferredLayer infer_layer(const Layer& layer, const std::vector<TensorShape>& inputs) {
  auto result = infer_unchecked(layer, inputs);
  require_bounded(result.layer, inputs, result.output);
  return result;
}

namespace {

InferredLayer infer_unchecked(const Layer& layer, const std::vector<TensorShape>& inputs) {
  InferredLayer result{layer, {}};
  Layer& l = result.layer;
  switch (layer.kind) {
    case LayerKind::input: {
      require_input_count(l, inputs, 0, 0);
      const auto& p = std::get<InputParams>(l.params);
      require(p.channels > 0, l, "channels must be positive");
      require(!p.spatial.empty() && p.spatial.size() <= 3, l,
              "shape needs 1 to 3 spatial extents after the channels");
      for (auto extent : p.spatial) require(extent > 0, l, "spatial extents must be positive");
      result.output = TensorShape{1, p.channels, p.spatial};
      return result;
    }
    case LayerKind::convolution:
    case LayerKind::transposed_convolution:
      require_input_count(l, inputs, 1, 1);
      result.output =
          infer_convolution(l, inputs[0], layer.kind == LayerKind::transposed_convolution);
      return result;
    case LayerKind::pooling:
      require_input_count(l, inputs, 1, 1);
      result.output = infer_pooling(l, inputs[0]);
      return result;
    case LayerKind::fully_connected: {
      require_input_count(l, inputs, 1, 1);
      const auto& p = std::get<FullyConnectedParams>(l.params);
      require(p.out_features > 0, l, "out_features must be positive");
      result.output = TensorShape{inputs[0].n, p.out_features, {}};
      return result;
    }
    case LayerKind::concat:
    case LayerKind::add:
      result.output = infer_merge(l, inputs);
      return result;
    case LayerKind::mse_loss:
      require_input_count(l, inputs, 1, 1);
      result.output = TensorShape{inputs[0].n, 1, {}};
      return result;
    case LayerKind::leaky_relu:
      require(std::get<LeakyReluParams>(l.params).negative_slope >= 0.0, l,
              "negative_slope must be non-negative");
      require_input_count(l, inputs, 1, 1);
      result.output = inputs[0];
      return result;
    case LayerKind::dropout: {
      const double p = std::get<DropoutParams>(l.params).drop_probability;
      require(p >= 0.0 && p < 1.0, l, "drop_probability must be in [0, 1)");
      require_input_count(l, inputs, 1, 1);
      result.output = inputs[0];
      return result;
    }
    case LayerKind::batch_norm:
      require_input_count(l, inputs, 1, 1);
      require_spatial(l, inputs[0]);
      result.output = inputs[0];
      return result;
    case LayerKind::relu:
    case LayerKind::softmax_cross_entropy:
      require_input_count(l, inputs, 1, 1);
      result.output = inputs[0];
      return result;
    case LayerKind::lstm:
    case LayerKind::embedding:
    case LayerKind::attention:
    case LayerKind::projection:
      result.output = infer_sequence_layer(l, inputs);
      return result;
  }
  throw ModelError(layer.name, "unsupported layer kind");
}

}  // namespace
}  // namespace tessera
