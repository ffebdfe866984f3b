// Two ways into cuDNN 9's convolutions, each an algorithm by name. The legacy API
// (cudnnConvolutionForward and friends, deprecated in cuDNN 9): cudnnGetConvolution*Algorithm_v7
// reports every algorithm of a problem with its status and workspace bytes, one-to-one with the
// mu-cuDNN model the planner uses, and each algorithm has a name that is the same on every GPU and
// cuDNN release ("IMPLICIT_PRECOMP_GEMM"), so profiles taken on one machine key plans on another.
// But some problems have a much faster engine that no legacy algorithm reaches (3D
// backward-filter convolutions with few channels, 15 times on an H200:
// docs/measurements/2026-12-04-mlperf-hpc-v0.7.md). So the graph API's engine configurations that
// cuDNN's heuristics rank first are offered beside them (cudnn_engines.hpp), named by engine and
// knobs ("ENGINE_12_K3=1"): names that hold for one GPU architecture and cuDNN release.
#include "cuda/cudnn_convolutions.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <utility>

#include "cuda/cuda_check.hpp"
#include "cudnn_engine_names.hpp"
#include "tessera/kernels/device.hpp"

namespace tessera::kernels::cuda {
namespace {

// The name tables (cudnn_algorithm_names.cpp) follow cuDNN's enumerators.
static_assert(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM == 1);
static_assert(CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED == 7);
static_assert(CUDNN_CONVOLUTION_FWD_ALGO_COUNT == 8);
static_assert(CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING == 3);
static_assert(CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT == 6);
static_assert(CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3 == 3);
static_assert(CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT_TILING == 6);
static_assert(CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT == 7);

struct SupportedAlgorithm {
  int index = 0;
  bool deterministic = true;
};

// The algorithms cuDNN reports as able to run the problem, in its heuristics' order (the first is
// what cuDNN would pick untold).
std::vector<SupportedAlgorithm> supported_algorithms(cudnnHandle_t handle, CudnnPass pass,
                                                     const ConvolutionDescriptors& d) {
  std::vector<SupportedAlgorithm> supported;
  int returned = 0;
  // Tensor-core variants are left out: the descriptor asks for FMA math (float32 throughout).
  auto collect = [&](const auto& results) {
    for (int index = 0; index < returned; ++index) {
      const bool float32_math = results[index].mathType == CUDNN_FMA_MATH ||
                                results[index].mathType == CUDNN_DEFAULT_MATH;
      if (results[index].status == CUDNN_STATUS_SUCCESS && float32_math) {
        supported.push_back({static_cast<int>(results[index].algo),
                             results[index].determinism == CUDNN_DETERMINISTIC});
      }
    }
  };
  switch (pass) {
    case CudnnPass::forward: {
      cudnnConvolutionFwdAlgoPerf_t results[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
      TESSERA_CUDA_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(
          handle, d.conv_input.get(), d.filter.get(), d.convolution.get(), d.conv_output.get(),
          CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, results));
      collect(results);
      break;
    }
    case CudnnPass::backward_data: {
      cudnnConvolutionBwdDataAlgoPerf_t results[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
      TESSERA_CUDA_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(
          handle, d.filter.get(), d.conv_output.get(), d.convolution.get(), d.conv_input.get(),
          CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &returned, results));
      collect(results);
      break;
    }
    case CudnnPass::backward_filter: {
      cudnnConvolutionBwdFilterAlgoPerf_t results[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
      TESSERA_CUDA_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(
          handle, d.conv_input.get(), d.conv_output.get(), d.convolution.get(), d.filter.get(),
          CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &returned, results));
      collect(results);
      break;
    }
  }
  std::vector<SupportedAlgorithm> unique;
  for (const SupportedAlgorithm& algorithm : supported) {
    const bool seen = std::any_of(unique.begin(), unique.end(),
                                  [&](const auto& kept) { return kept.index == algorithm.index; });
    if (!seen) unique.push_back(algorithm);
  }
  return unique;
}

// Workspace of one algorithm with these descriptors (FMA math); nothing when cuDNN refuses it.
std::optional<std::size_t> query_workspace_bytes(cudnnHandle_t handle, CudnnPass pass,
                                                 int algorithm, const ConvolutionDescriptors& d) {
  std::size_t bytes = 0;
  cudnnStatus_t status = CUDNN_STATUS_SUCCESS;
  switch (pass) {
    case CudnnPass::forward:
      status = cudnnGetConvolutionForwardWorkspaceSize(
          handle, d.conv_input.get(), d.filter.get(), d.convolution.get(), d.conv_output.get(),
          static_cast<cudnnConvolutionFwdAlgo_t>(algorithm), &bytes);
      break;
    case CudnnPass::backward_data:
      status = cudnnGetConvolutionBackwardDataWorkspaceSize(
          handle, d.filter.get(), d.conv_output.get(), d.convolution.get(), d.conv_input.get(),
          static_cast<cudnnConvolutionBwdDataAlgo_t>(algorithm), &bytes);
      break;
    case CudnnPass::backward_filter:
      status = cudnnGetConvolutionBackwardFilterWorkspaceSize(
          handle, d.conv_input.get(), d.conv_output.get(), d.convolution.get(), d.filter.get(),
          static_cast<cudnnConvolutionBwdFilterAlgo_t>(algorithm), &bytes);
      break;
  }
  if (status != CUDNN_STATUS_SUCCESS) return std::nullopt;
  return bytes;
}

std::string axes(const std::vector<std::int64_t>& values) {
  std::string text;
  for (std::int64_t value : values) text += std::to_string(value) + ",";
  return text;
}

// Everything cudnn_convolution_layout reads.
std::string problem_key(const ConvolutionGeometry& geometry, std::int64_t batch) {
  return std::to_string(geometry.transposed) + "|" + std::to_string(geometry.in_channels) + "|" +
         std::to_string(geometry.out_channels) + "|" + std::to_string(geometry.groups) + "|" +
         axes(geometry.input_spatial) + "|" + axes(geometry.output_spatial) + "|" +
         axes(geometry.kernel) + "|" + axes(geometry.stride) + "|" + axes(geometry.padding) + "|" +
         axes(geometry.dilation) + "|" + std::to_string(batch);
}

constexpr std::size_t kMaxCachedProblems = 4096;  // a whole zoo model's shards, micro-batches

// How errors name a choice: "cuDNN forward algorithm GEMM", "cuDNN backward-filter engine
// configuration ENGINE_3".
std::string choice_name(CudnnPass pass, const std::string& algorithm) {
  return "cuDNN " + to_string(pass) +
         (is_cudnn_engine_name(algorithm) ? " engine configuration " : " algorithm ") + algorithm;
}

// The workspace pointer a call takes; refuses a workspace smaller than `needed`.
void* fitting_workspace(const std::string& choice, std::size_t needed, DeviceMemory* workspace) {
  const std::size_t available = workspace != nullptr ? workspace->bytes() : 0;
  if (available < needed) {
    throw std::invalid_argument(choice + " needs " + std::to_string(needed) +
                                " bytes of workspace, got " + std::to_string(available));
  }
  return needed > 0 ? workspace->data() : nullptr;
}

}  // namespace

CudnnConvolutions::Problem& CudnnConvolutions::problem(const ConvolutionGeometry& geometry,
                                                       std::int64_t batch) {
  const std::string key = problem_key(geometry, batch);
  auto found = problems_.find(key);
  if (found != problems_.end()) return *found->second;
  if (problems_.size() >= kMaxCachedProblems) problems_.clear();
  auto created = std::make_unique<Problem>(cudnn_convolution_layout(geometry, batch));
  return *problems_.emplace(key, std::move(created)).first->second;
}

std::optional<std::size_t> CudnnConvolutions::workspace_bytes(Problem& problem, CudnnPass pass,
                                                              int algorithm) {
  const auto key = std::make_pair(pass, algorithm);
  auto found = problem.workspace_bytes.find(key);
  if (found != problem.workspace_bytes.end()) return found->second;
  const auto bytes = query_workspace_bytes(context_.cudnn(), pass, algorithm, problem.descriptors);
  problem.workspace_bytes.emplace(key, bytes);
  return bytes;
}

std::vector<ConvolutionAlgorithm> CudnnConvolutions::every_algorithm(
    const ConvolutionGeometry& geometry, std::int64_t batch, Direction direction) {
  context_.make_current();
  const CudnnPass pass = cudnn_pass(geometry.transposed, direction);
  Problem& cached = problem(geometry, batch);
  std::vector<ConvolutionAlgorithm> result;
  for (const auto& algorithm : supported_algorithms(context_.cudnn(), pass, cached.descriptors)) {
    const auto bytes = workspace_bytes(cached, pass, algorithm.index);
    if (!bytes) continue;
    result.push_back({cudnn_algorithm_name(pass, algorithm.index), static_cast<double>(*bytes),
                      algorithm.deterministic});
  }
  for (const OfferedEngine& engine : engines(cached, pass)) {
    result.push_back(
        {engine.name, static_cast<double>(engine.workspace_bytes), engine.deterministic});
  }
  return result;
}

const std::vector<OfferedEngine>& CudnnConvolutions::engines(Problem& problem, CudnnPass pass) {
  auto found = problem.engines.find(pass);
  if (found != problem.engines.end()) return found->second;
  // Every micro-batch's operands start at a multiple of the micro-batch in an allocation; the
  // filter is whole.
  const auto samples_alignment = [](const CudnnTensorLayout& layout) {
    return cudnn_micro_batch_alignment(layout.strides.front());
  };
  const std::int64_t alignment = std::min(samples_alignment(problem.layout.conv_input),
                                          samples_alignment(problem.layout.conv_output));
  std::vector<OfferedEngine> offered;
  try {
    offered = offered_engines(context_.cudnn(), problem.layout, pass, alignment);
  } catch (const std::runtime_error&) {
    // A graph the backend API rejects costs the problem its engines, not its legacy algorithms.
  }
  for (OfferedEngine& engine : offered) {
    problem.plans.emplace(std::make_pair(pass, PlanKey{engine.name, 0.0f, alignment}),
                          std::move(engine.writes));
    problem.plans.emplace(std::make_pair(pass, PlanKey{engine.name, 1.0f, alignment}),
                          std::move(engine.adds));
  }
  return problem.engines.emplace(pass, std::move(offered)).first->second;
}

void CudnnConvolutions::run_engine(Problem& problem, CudnnPass pass, const std::string& name,
                                   const Operands& operands, float beta, DeviceMemory* workspace) {
  std::int64_t alignment = 16;
  for (const void* operand : {static_cast<const void*>(operands.conv_input),
                              static_cast<const void*>(operands.conv_output),
                              static_cast<const void*>(operands.filter)}) {
    alignment =
        std::min(alignment, cudnn_operand_alignment(reinterpret_cast<std::uintptr_t>(operand)));
  }
  const auto key = std::make_pair(pass, PlanKey{name, beta, alignment});
  auto found = problem.plans.find(key);
  if (found == problem.plans.end()) {
    found = problem.plans
                .emplace(key, engine_plan(context_.cudnn(), problem.layout, pass,
                                          parse_cudnn_engine_name(name), beta, alignment))
                .first;
  }
  const std::optional<EnginePlan>& plan = found->second;
  const std::string choice = choice_name(pass, name);
  if (!plan) {
    throw std::invalid_argument(choice + " cannot run this convolution on this GPU (operands " +
                                "aligned to " + std::to_string(alignment) + " bytes)");
  }
  void* space =
      fitting_workspace(choice, static_cast<std::size_t>(plan->workspace_bytes), workspace);
  try {
    execute(context_.cudnn(), *plan, operands.conv_input, operands.filter, operands.conv_output,
            space);
  } catch (const std::runtime_error& error) {
    throw std::runtime_error(choice + ": " + error.what());
  }
}

void CudnnConvolutions::run(const ConvolutionGeometry& geometry, std::int64_t batch,
                            Direction direction, const std::string& algorithm,
                            const Operands& operands, float beta, DeviceMemory* workspace) {
  context_.make_current();
  const CudnnPass pass = cudnn_pass(geometry.transposed, direction);
  Problem& cached = problem(geometry, batch);
  if (is_cudnn_engine_name(algorithm)) {
    run_engine(cached, pass, algorithm, operands, beta, workspace);
    return;
  }
  const int index = cudnn_algorithm_index(pass, algorithm);
  const ConvolutionDescriptors& d = cached.descriptors;
  const cudnnHandle_t handle = context_.cudnn();
  const std::string choice = choice_name(pass, algorithm);
  const auto needed = workspace_bytes(cached, pass, index);
  if (!needed) throw std::invalid_argument(choice + " cannot run this convolution");
  void* space = fitting_workspace(choice, *needed, workspace);
  const float alpha = 1.0f;
  try {
    switch (pass) {
      case CudnnPass::forward:
        TESSERA_CUDA_CHECK(cudnnConvolutionForward(
            handle, &alpha, d.conv_input.get(), operands.conv_input, d.filter.get(),
            operands.filter, d.convolution.get(), static_cast<cudnnConvolutionFwdAlgo_t>(index),
            space, *needed, &beta, d.conv_output.get(), operands.result));
        break;
      case CudnnPass::backward_data:
        TESSERA_CUDA_CHECK(cudnnConvolutionBackwardData(
            handle, &alpha, d.filter.get(), operands.filter, d.conv_output.get(),
            operands.conv_output, d.convolution.get(),
            static_cast<cudnnConvolutionBwdDataAlgo_t>(index), space, *needed, &beta,
            d.conv_input.get(), operands.result));
        break;
      case CudnnPass::backward_filter:
        TESSERA_CUDA_CHECK(cudnnConvolutionBackwardFilter(
            handle, &alpha, d.conv_input.get(), operands.conv_input, d.conv_output.get(),
            operands.conv_output, d.convolution.get(),
            static_cast<cudnnConvolutionBwdFilterAlgo_t>(index), space, *needed, &beta,
            d.filter.get(), operands.result));
        break;
    }
  } catch (const std::runtime_error& error) {
    // Which algorithm failed matters to the profiler, which records it as not ok.
    throw std::runtime_error(choice + ": " + error.what());
  }
}

// A transposed layer's input lives on the plain convolution's output side and vice versa.
void CudnnConvolutions::forward(const ConvolutionGeometry& geometry, std::int64_t batch,
                                const std::string& algorithm, const float* x, const float* w,
                                float* y, float beta, DeviceMemory* workspace) {
  const Operands operands = geometry.transposed ? Operands{y, x, w, y} : Operands{x, y, w, y};
  run(geometry, batch, Direction::forward, algorithm, operands, beta, workspace);
}

void CudnnConvolutions::backward_data(const ConvolutionGeometry& geometry, std::int64_t batch,
                                      const std::string& algorithm, const float* dy, const float* w,
                                      float* dx, float beta, DeviceMemory* workspace) {
  const Operands operands = geometry.transposed ? Operands{dy, dx, w, dx} : Operands{dx, dy, w, dx};
  run(geometry, batch, Direction::backward_data, algorithm, operands, beta, workspace);
}

void CudnnConvolutions::backward_filter(const ConvolutionGeometry& geometry, std::int64_t batch,
                                        const std::string& algorithm, const float* x,
                                        const float* dy, float* dw, float beta,
                                        DeviceMemory* workspace) {
  const Operands operands = geometry.transposed ? Operands{dy, x, dw, dw} : Operands{x, dy, dw, dw};
  run(geometry, batch, Direction::backward_filter, algorithm, operands, beta, workspace);
}

}  // namespace tessera::kernels::cuda
