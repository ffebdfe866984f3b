#pragma once
// ConvolutionKernels on oneDNN: every implementation oneDNN offers for a problem (walked with
// next_impl() for each algorithm kind, on the plain layout and on oneDNN's preferred one), run by
// name with the caller's workspace as its only scratch memory.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "cpu/onednn_convolution_execution.hpp"
#include "cpu/onednn_convolution_problem.hpp"
#include "tessera/kernels/convolution_kernels.hpp"

namespace tessera::kernels::onednn {

class OnednnConvolutions final : public ConvolutionKernels {
 public:
  OnednnConvolutions(const dnnl::engine& engine, const dnnl::stream& stream);

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
  // How to re-create a named implementation: the kind and layout request it was found under.
  struct Candidate {
    std::string name;
    dnnl::algorithm kind;
    LayoutRequest layout;
  };
  const std::vector<Candidate>& candidates(const ConvolutionProblem& problem);
  // Cached by (problem, algorithm, beta) so that repeated calls, as in profiling, reuse the
  // primitives.
  ConvolutionExecution& execution(const ConvolutionProblem& problem, const std::string& algorithm,
                                  float beta);
  void run(const ConvolutionProblem& problem, const std::string& algorithm,
           const float* first_input, const float* second_input, float* result, float beta,
           DeviceMemory* workspace);

  dnnl::engine engine_;
  dnnl::stream stream_;
  std::map<std::string, std::vector<Candidate>> candidates_;
  std::map<std::string, std::unique_ptr<ConvolutionExecution>> executions_;
};

}  // namespace tessera::kernels::onednn
