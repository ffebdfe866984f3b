#include "cudnn_layout_check.hpp"

#include "cuda/cuda_check.hpp"
#include "cuda/cudnn_descriptors.hpp"

namespace tessera::kernels {

std::optional<std::vector<int>> cudnn_convolution_output_dims(
    const CudnnConvolutionLayout& layout) {
  const cuda::ConvolutionDescriptors descriptors(layout);
  std::vector<int> dims(layout.conv_output.dims.size());
  TESSERA_CUDA_CHECK(cudnnGetConvolutionNdForwardOutputDim(
      descriptors.convolution.get(), descriptors.conv_input.get(), descriptors.filter.get(),
      static_cast<int>(dims.size()), dims.data()));
  return dims;
}

std::optional<std::vector<int>> cudnn_pooling_output_dims(bool max,
                                                          const CudnnPoolingLayout& layout) {
  const cuda::PoolingDescriptor pooling = cuda::pooling_descriptor(max, layout);
  // What cuDNN pools: the padded copy where the layout rounds up (ceil mode), else the input.
  const cuda::TensorDescriptor input = cuda::tensor_descriptor(layout.padded_input);
  std::vector<int> dims(layout.output.dims.size());
  TESSERA_CUDA_CHECK(cudnnGetPoolingNdForwardOutputDim(pooling.get(), input.get(),
                                                       static_cast<int>(dims.size()), dims.data()));
  return dims;
}

}  // namespace tessera::kernels
