#pragma once
// Output shape of one layer from its inputs, with per-axis hyper-parameters expanded.
#include <vector>

#include "tessera/core/common/tensor_shape.hpp"
#include "tessera/core/model/layer.hpp"

namespace tessera {

// Expands AxisValues to the given rank (one value broadcasts). Throws ModelError naming `layer`.
AxisValues expand_axes(const AxisValues& values, int rank, const std::string& layer,
                       const std::string& what);

// Returns a copy of `layer` whose AxisValues have one entry per spatial axis, and its output
// shape. Throws ModelError on inconsistent inputs (channel mismatch, non-positive extents, ...).
struct InferredLayer {
  Layer layer;
  TensorShape output;
};
InferredLayer infer_layer(const Layer& layer, const std::vector<TensorShape>& inputs);

// The largest figures a model may have, so that every later product (a batch of up to 2^24
// samples, bytes per element, sums over layers) stays far inside 64-bit integers: 2^36 elements
// per sample in one tensor (275 GB in float32) and 2^36 parameters in one layer.
inline constexpr std::int64_t kMaxElementsPerSample = std::int64_t{1} << 36;
inline constexpr std::int64_t kMaxLayerParameters = std::int64_t{1} << 36;
// Elements of one activation tensor over a mini-batch (the scenario's check).
inline constexpr std::int64_t kMaxElementsPerBatch = std::int64_t{1} << 50;

// Output extent of a sliding window along one axis (convolution or pooling).
std::int64_t window_output_extent(std::int64_t input, std::int64_t kernel, std::int64_t stride,
                                  std::int64_t padding, std::int64_t dilation, bool ceil_mode);

}  // namespace tessera
