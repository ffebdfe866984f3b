#pragma once
// From a model layer (as resolved by core: one hyper-parameter per spatial axis) and the shapes a
// GPU runs, the geometry its device kernels take. The profiler and the real backend both use it,
// so the kernel measured is the kernel run.
#include "tessera/core/common/tensor_shape.hpp"
#include "tessera/core/model/layer.hpp"
#include "tessera/kernels/convolution_kernels.hpp"
#include "tessera/kernels/layer_kernels.hpp"

namespace tessera::kernels {

// Convolution or transposed convolution from `input` to `output` (per-sample shapes). When the
// output is a shard whose extent the layer's padding does not give from `input` (a spatial slab
// reads halo planes), the input extent becomes the one the output needs. Throws
// std::invalid_argument for other layers or inconsistent shapes.
ConvolutionGeometry convolution_geometry(const Layer& layer, const TensorShape& input,
                                         const TensorShape& output);

// Max or average pooling from `input` to `output`, with the same shard rule.
PoolingGeometry pooling_geometry(const Layer& layer, const TensorShape& input,
                                 const TensorShape& output);

}  // namespace tessera::kernels
