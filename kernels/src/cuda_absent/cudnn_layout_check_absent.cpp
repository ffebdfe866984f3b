// Built without the CUDA parts: there is no cuDNN to ask.
#include "cudnn_layout_check.hpp"

namespace tessera::kernels {

std::optional<std::vector<int>> cudnn_convolution_output_dims(const CudnnConvolutionLayout&) {
  return std::nullopt;
}

std::optional<std::vector<int>> cudnn_pooling_output_dims(bool, const CudnnPoolingLayout&) {
  return std::nullopt;
}

}  // namespace tessera::kernels
