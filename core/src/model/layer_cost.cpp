#include "tessera/core/layer_cost.hpp"

#include <numeric>

#include "sequence_layer_cost.hpp"

namespace tessera {
namespace {

std::int64_t product(const AxisValues& values) {
  return std::accumulate(values.begin(), values.end(), std::int64_t{1},
                         std::multiplies<std::int64_t>());
}

// Element-wise operation counts per element (documented constants, not measurements): they matter
// only for the roofline cost model, where such layers are memory-bound anyway.
constexpr double kBatchNormForwardOpsPerElement = 5;   // sum, square-sum, normalise, scale, shift
constexpr double kBatchNormBackwardOpsPerElement = 8;  // two reductions and the input gradient
constexpr double kBatchNormFilterOpsPerElement = 2;    // scale and shift gradients
constexpr double kSoftmaxForwardOpsPerElement = 5;     // max, exp, sum, divide, log
constexpr double kMseForwardOpsPerElement = 3;         // subtract, square, sum

std::int64_t weight_parameters(const Layer& layer, const std::vector<TensorShape>& inputs,
                               const TensorShape& output) {
  switch (layer.kind) {
    case LayerKind::convolution:
    case LayerKind::transposed_convolution: {
      const auto& p = std::get<ConvolutionParams>(layer.params);
      const std::int64_t in_channels = inputs.at(0).c;
      const std::int64_t weights = in_channels * (p.out_channels / p.groups) * product(p.kernel);
      return weights + (p.bias ? p.out_channels : 0);
    }
    case LayerKind::fully_connected: {
      const auto& p = std::get<FullyConnectedParams>(layer.params);
      return inputs.at(0).elements_per_sample() * p.out_features + (p.bias ? p.out_features : 0);
    }
    case LayerKind::batch_norm:
      return std::get<BatchNormParams>(layer.params).affine ? 2 * output.c : 0;
    case LayerKind::lstm:
    case LayerKind::embedding:
    case LayerKind::attention:
    case LayerKind::projection:
      return sequence_layer_parameters(layer, inputs);
    default:
      return 0;
  }
}

}  // namespace

BackwardNeeds backward_needs(const Layer& layer) {
  switch (layer.kind) {
    case LayerKind::convolution:
    case LayerKind::transposed_convolution:
    case LayerKind::fully_connected:
    case LayerKind::batch_norm:
    case LayerKind::leaky_relu:
    case LayerKind::mse_loss:
    case LayerKind::embedding:   // the token ids, to scatter the gradient into the table
    case LayerKind::attention:   // query and memory
    case LayerKind::projection:  // for the weight gradient
      return {.input = true};
    case LayerKind::lstm:  // the input for the input weights, the output for the recurrent ones
      return {.input = true, .output = true};
    case LayerKind::relu:
    case LayerKind::softmax_cross_entropy:
      return {.output = true};
    case LayerKind::pooling:
      return std::get<PoolingParams>(layer.params).mode == PoolMode::max
                 ? BackwardNeeds{.input = true, .output = true}
                 : BackwardNeeds{};
    case LayerKind::dropout:
      return {.mask = true};
    case LayerKind::input:
    case LayerKind::concat:
    case LayerKind::add:
      return {};
  }
  return {};
}

LayerCost layer_cost(const Layer& layer, const std::vector<TensorShape>& input_shapes,
                     const TensorShape& output_shape, std::int64_t batch, DType dtype) {
  LayerCost cost;
  const double n = static_cast<double>(batch);
  const double out_elements = n * static_cast<double>(output_shape.elements_per_sample());
  const double in_elements =
      input_shapes.empty() ? 0.0 : n * static_cast<double>(input_shapes[0].elements_per_sample());
  cost.parameters = weight_parameters(layer, input_shapes, output_shape);
  cost.weight_bytes = cost.parameters * dtype_bytes(dtype);
  cost.weight_bytes_read = cost.weight_bytes;
  cost.output_bytes = batch * output_shape.elements_per_sample() * dtype_bytes(dtype);
  cost.backward_needs = backward_needs(layer);
  auto& f = cost.flops;

  switch (layer.kind) {
    case LayerKind::convolution:
    case LayerKind::transposed_convolution: {
      const auto& p = std::get<ConvolutionParams>(layer.params);
      // Multiply-adds per output element of a convolution; a transposed convolution does the same
      // work per *input* element, so the roles of the two tensors swap.
      const bool transposed = layer.kind == LayerKind::transposed_convolution;
      const double positions = transposed ? in_elements / static_cast<double>(input_shapes[0].c)
                                          : out_elements / static_cast<double>(output_shape.c);
      const double macs = positions * static_cast<double>(input_shapes[0].c) *
                          static_cast<double>(p.out_channels / p.groups) *
                          static_cast<double>(product(p.kernel));
      f.forward = 2 * macs + (p.bias ? out_elements : 0);
      f.backward_data = 2 * macs;
      f.backward_filter = 2 * macs + (p.bias ? out_elements : 0);
      break;
    }
    case LayerKind::fully_connected: {
      const auto& p = std::get<FullyConnectedParams>(layer.params);
      const double macs = in_elements * static_cast<double>(p.out_features);
      f.forward = 2 * macs + (p.bias ? out_elements : 0);
      f.backward_data = 2 * macs;
      f.backward_filter = 2 * macs + (p.bias ? out_elements : 0);
      break;
    }
    case LayerKind::pooling: {
      const auto& p = std::get<PoolingParams>(layer.params);
      f.forward = out_elements * static_cast<double>(product(p.kernel));
      f.backward_data = f.forward;
      break;
    }
    case LayerKind::batch_norm:
      f.forward = kBatchNormForwardOpsPerElement * out_elements;
      f.backward_data = kBatchNormBackwardOpsPerElement * out_elements;
      f.backward_filter = std::get<BatchNormParams>(layer.params).affine
                              ? kBatchNormFilterOpsPerElement * out_elements
                              : 0;
      break;
    case LayerKind::relu:
    case LayerKind::dropout:
      f.forward = out_elements;
      f.backward_data = out_elements;
      break;
    case LayerKind::leaky_relu:
      f.forward = 2 * out_elements;
      f.backward_data = 2 * out_elements;
      break;
    case LayerKind::add:
      f.forward = out_elements * static_cast<double>(input_shapes.size() - 1);
      break;
    case LayerKind::softmax_cross_entropy:
      f.forward = kSoftmaxForwardOpsPerElement * out_elements;
      f.backward_data = out_elements;
      break;
    case LayerKind::mse_loss:
      f.forward = kMseForwardOpsPerElement * in_elements;
      f.backward_data = 2 * in_elements;
      break;
    case LayerKind::lstm:
    case LayerKind::embedding:
    case LayerKind::attention:
    case LayerKind::projection:
      add_sequence_layer_cost(layer, input_shapes, batch, dtype, cost);
      break;
    case LayerKind::input:
    case LayerKind::concat:
      break;
  }
  if (cost.backward_needs.mask)
    cost.saved_for_backward_bytes = static_cast<std::int64_t>(out_elements);
  return cost;
}

LayerCost layer_cost(const ResolvedLayer& layer, std::int64_t batch, DType dtype) {
  return layer_cost(layer.layer, layer.input_shapes, layer.output_shape, batch, dtype);
}

std::int64_t parameter_count(const ResolvedLayer& layer) {
  return weight_parameters(layer.layer, layer.input_shapes, layer.output_shape);
}

bool computes_weight_gradients(const Layer& layer, std::int64_t parameters) {
  const auto* embedding = std::get_if<EmbeddingParams>(&layer.params);
  return parameters > 0 || (embedding != nullptr && !embedding->shared_with.empty());
}

std::int64_t parameter_count(const ModelGraph& model) {
  std::int64_t total = 0;
  for (const auto& layer : model.layers()) total += parameter_count(layer);
  return total;
}

}  // namespace tessera
