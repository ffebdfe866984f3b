#pragma once
// Naive convolutions, accumulated in double: the reference that every convolution kernel (oneDNN,
// cuDNN, micro-batched, spatially partitioned) is tested against. Any ConvolutionGeometry:
// 1D to 3D, stride, padding, dilation, groups, transposed. Tensors are dense NC(D)HW host vectors,
// filters as in ConvolutionKernels (out x in/groups x kernel; transposed: in x out/groups x
// kernel). Each returns the result alone (beta = 0); sizes are checked (std::invalid_argument).
#include <cstdint>
#include <span>
#include <vector>

#include "tessera/kernels/convolution_kernels.hpp"

namespace tessera::kernels::testing {

// y = conv(x, w)
std::vector<float> reference_forward(const ConvolutionGeometry& geometry, std::int64_t batch,
                                     std::span<const float> x, std::span<const float> w);
// dx = the gradient of sum(dy * conv(x, w)) with respect to x
std::vector<float> reference_backward_data(const ConvolutionGeometry& geometry, std::int64_t batch,
                                           std::span<const float> dy, std::span<const float> w);
// dw = the gradient of sum(dy * conv(x, w)) with respect to w, summed over the batch
std::vector<float> reference_backward_filter(const ConvolutionGeometry& geometry,
                                             std::int64_t batch, std::span<const float> x,
                                             std::span<const float> dy);

}  // namespace tessera::kernels::testing
