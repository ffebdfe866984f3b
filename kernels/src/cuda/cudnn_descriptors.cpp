#include "cuda/cudnn_descriptors.hpp"

#include "cuda/cuda_check.hpp"

namespace tessera::kernels::cuda {
namespace {

int axis_count(const std::vector<int>& values) {
  return static_cast<int>(values.size());
}

}  // namespace

TensorDescriptor tensor_descriptor(const CudnnTensorLayout& layout) {
  cudnnTensorDescriptor_t raw = nullptr;
  TESSERA_CUDA_CHECK(cudnnCreateTensorDescriptor(&raw));
  TensorDescriptor descriptor(raw);
  TESSERA_CUDA_CHECK(cudnnSetTensorNdDescriptor(raw, CUDNN_DATA_FLOAT, axis_count(layout.dims),
                                                layout.dims.data(), layout.strides.data()));
  return descriptor;
}

FilterDescriptor filter_descriptor(const std::vector<int>& dims) {
  cudnnFilterDescriptor_t raw = nullptr;
  TESSERA_CUDA_CHECK(cudnnCreateFilterDescriptor(&raw));
  FilterDescriptor descriptor(raw);
  TESSERA_CUDA_CHECK(cudnnSetFilterNdDescriptor(raw, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW,
                                                axis_count(dims), dims.data()));
  return descriptor;
}

ConvolutionDescriptor convolution_descriptor(const CudnnConvolutionLayout& layout) {
  cudnnConvolutionDescriptor_t raw = nullptr;
  TESSERA_CUDA_CHECK(cudnnCreateConvolutionDescriptor(&raw));
  ConvolutionDescriptor descriptor(raw);
  TESSERA_CUDA_CHECK(cudnnSetConvolutionNdDescriptor(
      raw, axis_count(layout.padding), layout.padding.data(), layout.stride.data(),
      layout.dilation.data(), CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
  TESSERA_CUDA_CHECK(cudnnSetConvolutionGroupCount(raw, layout.groups));
  // CUDNN_DEFAULT_MATH lets Ampere and later GPUs run float32 convolutions on TF32 tensor cores
  // (10-bit mantissa); FMA math keeps them float32 so they match the CPU within float32
  // tolerance and profiles measure float32 kernels.
  TESSERA_CUDA_CHECK(cudnnSetConvolutionMathType(raw, CUDNN_FMA_MATH));
  return descriptor;
}

PoolingDescriptor pooling_descriptor(bool max, const CudnnPoolingLayout& layout) {
  cudnnPoolingDescriptor_t raw = nullptr;
  TESSERA_CUDA_CHECK(cudnnCreatePoolingDescriptor(&raw));
  PoolingDescriptor descriptor(raw);
  // Deterministic max pooling so that backward is reproducible; averages exclude the padding,
  // as the interface (and the CPU kernels) define them.
  const cudnnPoolingMode_t mode =
      max ? CUDNN_POOLING_MAX_DETERMINISTIC : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
  TESSERA_CUDA_CHECK(cudnnSetPoolingNdDescriptor(raw, mode, CUDNN_NOT_PROPAGATE_NAN,
                                                 axis_count(layout.window), layout.window.data(),
                                                 layout.padding.data(), layout.stride.data()));
  return descriptor;
}

ConvolutionDescriptors::ConvolutionDescriptors(const CudnnConvolutionLayout& layout)
    : conv_input(tensor_descriptor(layout.conv_input)),
      conv_output(tensor_descriptor(layout.conv_output)),
      filter(filter_descriptor(layout.filter_dims)),
      convolution(convolution_descriptor(layout)) {}

}  // namespace tessera::kernels::cuda
