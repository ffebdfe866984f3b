#pragma once
// ConvolutionKernels on cuDNN 9: the legacy convolution API's algorithms and the graph API's
// engines (see the .cpp for why both).
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "cuda/cuda_context.hpp"
#include "cuda/cudnn_descriptors.hpp"
#include "cuda/cudnn_engines.hpp"
#include "cudnn_algorithm_names.hpp"
#include "tessera/kernels/convolution_kernels.hpp"

namespace tessera::kernels::cuda {

class CudnnConvolutions final : public ConvolutionKernels {
 public:
  explicit CudnnConvolutions(const CudaContext& context) : context_(context) {}

  void forward(const ConvolutionGeometry& geometry, std::int64_t batch,
               const std::string& algorithm, const float* x, const float* w, float* y, float beta,
               DeviceMemory* workspace) override;
  void backward_data(const ConvolutionGeometry& geometry, std::int64_t batch,
                     const std::string& algorithm, const float* dy, const float* w, float* dx,
                     float beta, DeviceMemory* workspace) override;
  void backward_filter(const ConvolutionGeometry& geometry, std::int64_t batch,
                       const std::string& algorithm, const float* x, const float* dy, float* dw,
                       float beta, DeviceMemory* workspace) override;

 protected:
  std::vector<ConvolutionAlgorithm> every_algorithm(const ConvolutionGeometry& geometry,
                                                    std::int64_t batch,
                                                    Direction direction) override;

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

  // Descriptors and workspace sizes of the problems seen, so that repeated calls (profiling,
  // every training step) cost a lookup, not descriptor set-up while the GPU idles in a timing.
  // The graph API's plans, by engine name, beta and operand alignment (each built into a plan).
  using PlanKey = std::tuple<std::string, float, std::int64_t>;
  struct Problem {
    explicit Problem(const CudnnConvolutionLayout& of) : layout(of), descriptors(of) {}
    CudnnConvolutionLayout layout;
    ConvolutionDescriptors descriptors;
    std::map<std::pair<CudnnPass, int>, std::optional<std::size_t>> workspace_bytes;
    std::map<CudnnPass, std::vector<OfferedEngine>> engines;
    std::map<std::pair<CudnnPass, PlanKey>, std::optional<EnginePlan>> plans;
  };
  Problem& problem(const ConvolutionGeometry& geometry, std::int64_t batch);
  std::optional<std::size_t> workspace_bytes(Problem& problem, CudnnPass pass, int algorithm);
  const std::vector<OfferedEngine>& engines(Problem& problem, CudnnPass pass);
  void run_engine(Problem& problem, CudnnPass pass, const std::string& name,
                  const Operands& operands, float beta, DeviceMemory* workspace);

  const CudaContext& context_;
  std::map<std::string, std::unique_ptr<Problem>> problems_;
};

}  // namespace tessera::kernels::cuda
