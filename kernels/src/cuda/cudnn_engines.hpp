#pragma once
// One convolution pass through cuDNN's graph (backend) API: the engine configurations its
// heuristics offer, and execution plans rebuilt from an engine's name (cudnn_engine_names.hpp).
// The legacy API reaches only some of cuDNN 9's engines; a 3D backward-filter convolution with
// few channels ran 15 times faster through this one on an H200
// (docs/measurements/2026-12-04-mlperf-hpc-v0.7.md).
#include <cudnn.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cudnn_algorithm_names.hpp"
#include "cudnn_engine_names.hpp"
#include "cudnn_layout.hpp"

namespace tessera::kernels::cuda {

// Owns one cudnnBackendDescriptor_t.
class BackendDescriptor {
 public:
  explicit BackendDescriptor(cudnnBackendDescriptorType_t type);
  ~BackendDescriptor();
  BackendDescriptor(BackendDescriptor&& other) noexcept;
  BackendDescriptor& operator=(BackendDescriptor&& other) noexcept;
  BackendDescriptor(const BackendDescriptor&) = delete;
  BackendDescriptor& operator=(const BackendDescriptor&) = delete;
  cudnnBackendDescriptor_t get() const { return descriptor_; }

 private:
  cudnnBackendDescriptor_t descriptor_ = nullptr;
};

// A finalized execution plan of one engine configuration for one pass of one problem, with the
// graph it was built from (cuDNN keeps references to it).
struct EnginePlan {
  std::vector<BackendDescriptor> parts;  // tensors, convolution, operation, graph, engine, config
  BackendDescriptor plan{CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR};
  std::int64_t workspace_bytes = 0;
};

struct OfferedEngine {
  std::string name;
  std::int64_t workspace_bytes = 0;
  bool deterministic = true;
  // The plans it was offered on, writing its result (beta 0) and adding to it (beta 1), for the
  // caller to keep rather than build again.
  std::optional<EnginePlan> writes;
  std::optional<EnginePlan> adds;
};

// The engine configurations cuDNN's heuristics (mode A) rank for the pass that offers_engine
// accepts (cudnn_engine_names.hpp), in the heuristics' order, at most kCudnnEnginesOffered, each
// finalized as plans with operands of `alignment` bytes, beta 0 and 1; the workspace is the
// larger of the two plans'.
std::vector<OfferedEngine> offered_engines(cudnnHandle_t handle,
                                           const CudnnConvolutionLayout& layout, CudnnPass pass,
                                           std::int64_t alignment);

// The plan of a named configuration, with `beta` and the operands' alignment built in; nothing
// when cuDNN cannot run the configuration here (another GPU's name, an alignment it needs).
std::optional<EnginePlan> engine_plan(cudnnHandle_t handle, const CudnnConvolutionLayout& layout,
                                      CudnnPass pass, const CudnnEngineConfig& config, float beta,
                                      std::int64_t alignment);

// Runs the plan on the plain convolution's tensors (cudnn_layout.hpp): the pass reads two of
// them and writes (beta 0) or adds to (beta 1) the third.
void execute(cudnnHandle_t handle, const EnginePlan& plan, const void* conv_input,
             const void* filter, const void* conv_output, void* workspace);

}  // namespace tessera::kernels::cuda
