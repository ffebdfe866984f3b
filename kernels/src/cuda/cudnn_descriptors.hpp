#pragma once
// cuDNN descriptors built from the host-side layouts (cudnn_layout.hpp), owned and destroyed by
// RAII wrappers.
#include <cudnn.h>

#include <utility>
#include <vector>

#include "cudnn_layout.hpp"

namespace tessera::kernels::cuda {

template <class Descriptor, cudnnStatus_t (*destroy)(Descriptor)>
class CudnnDescriptor {
 public:
  explicit CudnnDescriptor(Descriptor descriptor) : descriptor_(descriptor) {}
  ~CudnnDescriptor() {
    if (descriptor_ != nullptr) destroy(descriptor_);
  }
  CudnnDescriptor(CudnnDescriptor&& other) noexcept
      : descriptor_(std::exchange(other.descriptor_, nullptr)) {}
  CudnnDescriptor(const CudnnDescriptor&) = delete;
  CudnnDescriptor& operator=(const CudnnDescriptor&) = delete;
  CudnnDescriptor& operator=(CudnnDescriptor&&) = delete;
  Descriptor get() const { return descriptor_; }

 private:
  Descriptor descriptor_;
};

using TensorDescriptor = CudnnDescriptor<cudnnTensorDescriptor_t, cudnnDestroyTensorDescriptor>;
using FilterDescriptor = CudnnDescriptor<cudnnFilterDescriptor_t, cudnnDestroyFilterDescriptor>;
using ConvolutionDescriptor =
    CudnnDescriptor<cudnnConvolutionDescriptor_t, cudnnDestroyConvolutionDescriptor>;
using PoolingDescriptor = CudnnDescriptor<cudnnPoolingDescriptor_t, cudnnDestroyPoolingDescriptor>;

TensorDescriptor tensor_descriptor(const CudnnTensorLayout& layout);
FilterDescriptor filter_descriptor(const std::vector<int>& dims);
// Cross-correlation (as every framework's "convolution") in float32 with CUDNN_FMA_MATH.
ConvolutionDescriptor convolution_descriptor(const CudnnConvolutionLayout& layout);
PoolingDescriptor pooling_descriptor(bool max, const CudnnPoolingLayout& layout);

// Every descriptor of one convolution problem.
struct ConvolutionDescriptors {
  explicit ConvolutionDescriptors(const CudnnConvolutionLayout& layout);
  TensorDescriptor conv_input;
  TensorDescriptor conv_output;
  FilterDescriptor filter;
  ConvolutionDescriptor convolution;
};

}  // namespace tessera::kernels::cuda
