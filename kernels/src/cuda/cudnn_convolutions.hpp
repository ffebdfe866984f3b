#pragma once
// ConvolutionKernels on cuDNN 9 through its legacy convolution API (see the .cpp for why).
#include "cuda/cuda_context.hpp"
#include "tessera/kernels/convolution_kernels.hpp"

namespace tessera::kernels::cuda {

class CudnnConvolutions final : public ConvolutionKernels {
 public:
  explicit CudnnConvolutions(const CudaContext& context) : context_(context) {}

  std::vector<ConvolutionAlgorithm> algorithms(const ConvolutionGeometry& geometry,
                                               std::int64_t batch, Direction direction) override;
  void forward(const ConvolutionGeometry& geometry, std::int64_t batch,
               const std::string& algorithm, const float* x, const float* w, float* y, float beta,
               DeviceMemory* workspace) override;
  void backward_data(const ConvolutionGeometry& geometry, std::int64_t batch,
                     const std::string& algorithm, const float* dy, const float* w, float* dx,
                     float beta, DeviceMemory* workspace) override;
  void backward_filter(const ConvolutionGeometry& geometry, std::int64_t batch,
                       const std::string& algorithm, const float* x, const float* dy, float* dw,
                       float beta, DeviceMemory* workspace) override;

 private:
  // The tensors of the plain convolution cuDNN runs (cudnn_layout.hpp): the pass reads two of
  // conv_input, conv_output and filter and writes the third, `result`.
  struct Operands {
    const float* conv_input = nullptr;
    const float* conv_output = nullptr;
    const float* filter = nullptr;
    float* result = nullptr;
  };
  void run(const ConvolutionGeometry& geometry, std::int64_t batch, Direction direction,
           const std::string& algorithm, const Operands& operands, float beta,
           DeviceMemory* workspace);

  const CudaContext& context_;
};

}  // namespace tessera::kernels::cuda
