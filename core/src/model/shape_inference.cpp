#include "tessera/core/model/shape_inference.hpp"

#include <optional>
#include <string>

#include "tessera/core/common/quantity.hpp"
#include "tessera/core/model/layer_kind_rules.hpp"
#include "tessera/core/model/model_graph.hpp"

namespace tessera {
namespace {

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
  if (!bounded_product(per_sample, kMaxElementsPerSample)) {
    throw ModelError(layer.name, "its output (" + to_string(output) + ") has more than " +
                                     format_count(kMaxElementsPerSample) + " elements per sample");
  }
  if (!bounded_product(rules_of(layer.kind).weight_extents(layer, inputs), kMaxLayerParameters)) {
    throw ModelError(layer.name,
                     "it has more than " + format_count(kMaxLayerParameters) + " weights");
  }
}

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
  InferredLayer result{layer, {}};
  result.output = rules_of(layer.kind).infer_shape(result.layer, inputs);
  require_bounded(result.layer, inputs, result.output);
  return result;
}

}  // namespace tessera
