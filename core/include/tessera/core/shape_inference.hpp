#pragma once
// Output shape of one layer from its inputs, with per-axis hyper-parameters expanded.
#include <vector>

#include "tessera/core/layer.hpp"
#include "tessera/core/tensor_shape.hpp"

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

// Output extent of a sliding window along one axis (convolution or pooling).
std::int64_t window_output_extent(std::int64_t input, std::int64_t kernel, std::int64_t stride,
                                  std::int64_t padding, std::int64_t dilation, bool ceil_mode);

}  // namespace tessera
