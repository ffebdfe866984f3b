#pragma once
// What cuDNN itself makes of a layout, through its host-only descriptor calls (no GPU needed):
// the output dims cudnnGetConvolutionNdForwardOutputDim / cudnnGetPoolingNdForwardOutputDim
// compute from the descriptors built from it. Lets the tests check on any machine with cuDNN that
// the descriptors say what cudnn_layout means. Nothing in builds without the CUDA parts.
#include <optional>
#include <vector>

#include "cudnn_layout.hpp"

namespace tessera::kernels {

std::optional<std::vector<int>> cudnn_convolution_output_dims(const CudnnConvolutionLayout& layout);
std::optional<std::vector<int>> cudnn_pooling_output_dims(bool max,
                                                          const CudnnPoolingLayout& layout);

}  // namespace tessera::kernels
