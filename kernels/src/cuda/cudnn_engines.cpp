#include "cuda/cudnn_engines.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "cuda/cuda_check.hpp"

namespace tessera::kernels::cuda {
namespace {

// The plain convolution's tensors in every graph and variant pack.
constexpr std::int64_t kConvInputUid = 1;
constexpr std::int64_t kFilterUid = 2;
constexpr std::int64_t kConvOutputUid = 3;

bool try_set(const BackendDescriptor& descriptor, cudnnBackendAttributeName_t name,
             cudnnBackendAttributeType_t type, std::int64_t count, const void* values) {
  return cudnnBackendSetAttribute(descriptor.get(), name, type, count, values) ==
         CUDNN_STATUS_SUCCESS;
}

void set(const BackendDescriptor& descriptor, cudnnBackendAttributeName_t name,
         cudnnBackendAttributeType_t type, std::int64_t count, const void* values) {
  check(cudnnBackendSetAttribute(descriptor.get(), name, type, count, values),
        "cudnnBackendSetAttribute");
}

void set_descriptor(const BackendDescriptor& descriptor, cudnnBackendAttributeName_t name,
                    const BackendDescriptor& value) {
  cudnnBackendDescriptor_t raw = value.get();
  set(descriptor, name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw);
}

bool finalized(const BackendDescriptor& descriptor) {
  return cudnnBackendFinalize(descriptor.get()) == CUDNN_STATUS_SUCCESS;
}

void finalize(const BackendDescriptor& descriptor, const char* what) {
  check(cudnnBackendFinalize(descriptor.get()), what);
}

std::vector<std::int64_t> as_int64(const std::vector<int>& values) {
  return {values.begin(), values.end()};
}

std::vector<std::int64_t> packed_strides(const std::vector<std::int64_t>& dims) {
  std::vector<std::int64_t> strides(dims.size(), 1);
  for (std::size_t axis = dims.size(); axis-- > 1;) strides[axis - 1] = strides[axis] * dims[axis];
  return strides;
}

BackendDescriptor tensor(std::int64_t uid, const std::vector<std::int64_t>& dims,
                         const std::vector<std::int64_t>& strides, std::int64_t alignment) {
  BackendDescriptor descriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  const cudnnDataType_t type = CUDNN_DATA_FLOAT;
  set(descriptor, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type);
  set(descriptor, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64,
      static_cast<std::int64_t>(dims.size()), dims.data());
  set(descriptor, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64,
      static_cast<std::int64_t>(strides.size()), strides.data());
  set(descriptor, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
  set(descriptor, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment);
  finalize(descriptor, "cudnnBackendFinalize(tensor)");
  return descriptor;
}

BackendDescriptor tensor(std::int64_t uid, const CudnnTensorLayout& layout,
                         std::int64_t alignment) {
  return tensor(uid, as_int64(layout.dims), as_int64(layout.strides), alignment);
}

// Cross-correlation in float32, as the legacy descriptors (cudnn_descriptors.cpp); the groups
// follow from the input's and the filter's channels.
BackendDescriptor convolution(const CudnnConvolutionLayout& layout) {
  BackendDescriptor descriptor(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
  const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  const auto padding = as_int64(layout.padding);
  const auto stride = as_int64(layout.stride);
  const auto dilation = as_int64(layout.dilation);
  const auto axes = static_cast<std::int64_t>(padding.size());
  set(descriptor, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute);
  set(descriptor, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode);
  set(descriptor, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &axes);
  set(descriptor, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, axes, dilation.data());
  set(descriptor, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, axes, stride.data());
  set(descriptor, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, axes, padding.data());
  set(descriptor, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, axes, padding.data());
  finalize(descriptor, "cudnnBackendFinalize(convolution)");
  return descriptor;
}

struct OperationAttributes {
  cudnnBackendDescriptorType_t type;
  cudnnBackendAttributeName_t conv_input, filter, conv_output, convolution, alpha, beta;
};

OperationAttributes attributes_of(CudnnPass pass) {
  switch (pass) {
    case CudnnPass::forward:
      return {CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y,
              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC,
              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA};
    case CudnnPass::backward_data:
      return {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA};
    case CudnnPass::backward_filter:
      return {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA};
  }
  throw std::invalid_argument("unknown cuDNN pass");
}

// The descriptors of the pass as a one-operation graph, the graph last; none when the graph
// API cannot describe the problem.
std::optional<std::vector<BackendDescriptor>> operation_graph(cudnnHandle_t handle,
                                                              const CudnnConvolutionLayout& layout,
                                                              CudnnPass pass, float beta,
                                                              std::int64_t alignment) {
  std::vector<BackendDescriptor> parts;
  const auto filter_dims = as_int64(layout.filter_dims);
  parts.push_back(tensor(kConvInputUid, layout.conv_input, alignment));
  parts.push_back(tensor(kFilterUid, filter_dims, packed_strides(filter_dims), alignment));
  parts.push_back(tensor(kConvOutputUid, layout.conv_output, alignment));
  parts.push_back(convolution(layout));
  const OperationAttributes names = attributes_of(pass);
  BackendDescriptor operation(names.type);
  const float alpha = 1.0f;
  set_descriptor(operation, names.conv_input, parts[0]);
  set_descriptor(operation, names.filter, parts[1]);
  set_descriptor(operation, names.conv_output, parts[2]);
  set_descriptor(operation, names.convolution, parts[3]);
  set(operation, names.alpha, CUDNN_TYPE_FLOAT, 1, &alpha);
  set(operation, names.beta, CUDNN_TYPE_FLOAT, 1, &beta);
  if (!finalized(operation)) return std::nullopt;
  BackendDescriptor graph(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  set_descriptor(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, operation);
  set(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
  if (!finalized(graph)) return std::nullopt;
  parts.push_back(std::move(operation));
  parts.push_back(std::move(graph));
  return parts;
}

std::int64_t get_int64(const BackendDescriptor& descriptor, cudnnBackendAttributeName_t name) {
  std::int64_t value = 0, count = 0;
  check(cudnnBackendGetAttribute(descriptor.get(), name, CUDNN_TYPE_INT64, 1, &count, &value),
        "cudnnBackendGetAttribute");
  return value;
}

// Up to `most` values of an array attribute.
template <class Value>
std::vector<Value> get_values(const BackendDescriptor& descriptor, cudnnBackendAttributeName_t name,
                              cudnnBackendAttributeType_t type, std::int64_t most) {
  std::vector<Value> values(static_cast<std::size_t>(most));
  std::int64_t count = 0;
  check(cudnnBackendGetAttribute(descriptor.get(), name, type, most, &count, values.data()),
        "cudnnBackendGetAttribute");
  values.resize(static_cast<std::size_t>(std::min(count, most)));
  return values;
}

struct ReadConfig {
  CudnnEngineConfig config;
  CudnnEngineNotes notes;
};

ReadConfig read_config(const BackendDescriptor& config) {
  ReadConfig read;
  std::int64_t count = 0;
  BackendDescriptor engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
  cudnnBackendDescriptor_t raw_engine = engine.get();
  check(cudnnBackendGetAttribute(config.get(), CUDNN_ATTR_ENGINECFG_ENGINE,
                                 CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &count, &raw_engine),
        "cudnnBackendGetAttribute(CUDNN_ATTR_ENGINECFG_ENGINE)");
  read.config.engine = get_int64(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX);
  for (const auto note : get_values<cudnnBackendNumericalNote_t>(
           engine, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
           CUDNN_NUMERICAL_NOTE_TYPE_COUNT)) {
    read.notes.tensor_core |= note == CUDNN_NUMERICAL_NOTE_TENSOR_CORE;
    read.notes.down_converts_inputs |= note == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS;
    read.notes.reduced_precision_reduction |=
        note == CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION;
    read.notes.nondeterministic |= note == CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC;
  }
  for (const auto note : get_values<cudnnBackendBehaviorNote_t>(
           engine, CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, CUDNN_TYPE_BEHAVIOR_NOTE,
           CUDNN_BEHAVIOR_NOTE_TYPE_COUNT)) {
    read.notes.runtime_compiled |= note == CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION;
  }
  std::vector<BackendDescriptor> choices;
  std::vector<cudnnBackendDescriptor_t> raw_choices;
  for (int i = 0; i < CUDNN_KNOB_TYPE_COUNTS; ++i) {
    raw_choices.push_back(choices.emplace_back(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR).get());
  }
  check(cudnnBackendGetAttribute(config.get(), CUDNN_ATTR_ENGINECFG_KNOB_CHOICES,
                                 CUDNN_TYPE_BACKEND_DESCRIPTOR, CUDNN_KNOB_TYPE_COUNTS, &count,
                                 raw_choices.data()),
        "cudnnBackendGetAttribute(CUDNN_ATTR_ENGINECFG_KNOB_CHOICES)");
  for (std::int64_t i = 0; i < count; ++i) {
    const BackendDescriptor& choice = choices[static_cast<std::size_t>(i)];
    cudnnBackendKnobType_t type{};
    std::int64_t read_count = 0;
    check(cudnnBackendGetAttribute(choice.get(), CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE,
                                   CUDNN_TYPE_KNOB_TYPE, 1, &read_count, &type),
          "cudnnBackendGetAttribute(CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE)");
    read.config.knobs.push_back(
        {static_cast<std::int64_t>(type), get_int64(choice, CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE)});
  }
  return read;
}

}  // namespace

BackendDescriptor::BackendDescriptor(cudnnBackendDescriptorType_t type) {
  check(cudnnBackendCreateDescriptor(type, &descriptor_), "cudnnBackendCreateDescriptor");
}

BackendDescriptor::~BackendDescriptor() {
  if (descriptor_ != nullptr) cudnnBackendDestroyDescriptor(descriptor_);
}

BackendDescriptor::BackendDescriptor(BackendDescriptor&& other) noexcept
    : descriptor_(std::exchange(other.descriptor_, nullptr)) {}

BackendDescriptor& BackendDescriptor::operator=(BackendDescriptor&& other) noexcept {
  if (this != &other) {
    if (descriptor_ != nullptr) cudnnBackendDestroyDescriptor(descriptor_);
    descriptor_ = std::exchange(other.descriptor_, nullptr);
  }
  return *this;
}

std::optional<EnginePlan> engine_plan(cudnnHandle_t handle, const CudnnConvolutionLayout& layout,
                                      CudnnPass pass, const CudnnEngineConfig& config, float beta,
                                      std::int64_t alignment) {
  auto graph = operation_graph(handle, layout, pass, beta, alignment);
  if (!graph) return std::nullopt;
  EnginePlan result;
  result.parts = std::move(*graph);
  BackendDescriptor engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
  set_descriptor(engine, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, result.parts.back());
  if (!try_set(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &config.engine) ||
      !finalized(engine)) {
    return std::nullopt;
  }
  std::vector<cudnnBackendDescriptor_t> raw_choices;
  for (const CudnnKnobChoice& knob : config.knobs) {
    BackendDescriptor choice(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR);
    const auto type = static_cast<cudnnBackendKnobType_t>(knob.type);
    if (!try_set(choice, CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, 1, &type) ||
        !try_set(choice, CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, CUDNN_TYPE_INT64, 1, &knob.value) ||
        !finalized(choice)) {
      return std::nullopt;
    }
    raw_choices.push_back(choice.get());
    result.parts.push_back(std::move(choice));
  }
  BackendDescriptor engine_config(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
  set_descriptor(engine_config, CUDNN_ATTR_ENGINECFG_ENGINE, engine);
  if (!raw_choices.empty() &&
      !try_set(engine_config, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, CUDNN_TYPE_BACKEND_DESCRIPTOR,
               static_cast<std::int64_t>(raw_choices.size()), raw_choices.data())) {
    return std::nullopt;
  }
  if (!finalized(engine_config)) return std::nullopt;
  set(result.plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
  set_descriptor(result.plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, engine_config);
  if (!finalized(result.plan)) return std::nullopt;
  result.workspace_bytes = get_int64(result.plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE);
  result.parts.push_back(std::move(engine));
  result.parts.push_back(std::move(engine_config));
  return result;
}

std::vector<OfferedEngine> offered_engines(cudnnHandle_t handle,
                                           const CudnnConvolutionLayout& layout, CudnnPass pass,
                                           std::int64_t alignment) {
  auto graph = operation_graph(handle, layout, pass, 0.0f, alignment);
  if (!graph) return {};
  BackendDescriptor heuristics(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  set_descriptor(heuristics, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph->back());
  const cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_A;
  set(heuristics, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
  if (!finalized(heuristics)) return {};
  std::int64_t count = 0;
  check(cudnnBackendGetAttribute(heuristics.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                 CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, nullptr),
        "cudnnBackendGetAttribute(CUDNN_ATTR_ENGINEHEUR_RESULTS)");
  std::vector<BackendDescriptor> configs;
  std::vector<cudnnBackendDescriptor_t> raw_configs;
  for (std::int64_t i = 0; i < count; ++i) {
    raw_configs.push_back(configs.emplace_back(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR).get());
  }
  check(cudnnBackendGetAttribute(heuristics.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                 CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &count, raw_configs.data()),
        "cudnnBackendGetAttribute(CUDNN_ATTR_ENGINEHEUR_RESULTS)");
  std::vector<OfferedEngine> offered;
  for (std::int64_t i = 0; i < count && offered.size() < kCudnnEnginesOffered; ++i) {
    const ReadConfig read = read_config(configs[static_cast<std::size_t>(i)]);
    if (!offers_engine(read.notes)) continue;
    const std::string name = cudnn_engine_name(read.config);
    const bool seen = std::any_of(offered.begin(), offered.end(),
                                  [&](const OfferedEngine& kept) { return kept.name == name; });
    if (seen) continue;
    // Offered only if it builds from its name, as every later run rebuilds it, both writing its
    // result and adding to it (a micro-batch after the first sums into the filter gradient).
    auto writes = engine_plan(handle, layout, pass, read.config, 0.0f, alignment);
    auto adds = engine_plan(handle, layout, pass, read.config, 1.0f, alignment);
    if (!writes || !adds) continue;
    const std::int64_t workspace_bytes = std::max(writes->workspace_bytes, adds->workspace_bytes);
    offered.push_back(
        {name, workspace_bytes, !read.notes.nondeterministic, std::move(writes), std::move(adds)});
  }
  return offered;
}

void execute(cudnnHandle_t handle, const EnginePlan& plan, const void* conv_input,
             const void* filter, const void* conv_output, void* workspace) {
  const std::int64_t uids[] = {kConvInputUid, kFilterUid, kConvOutputUid};
  void* pointers[] = {const_cast<void*>(conv_input), const_cast<void*>(filter),
                      const_cast<void*>(conv_output)};
  BackendDescriptor pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  set(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, uids);
  set(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3, pointers);
  set(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace);
  finalize(pack, "cudnnBackendFinalize(variant pack)");
  check(cudnnBackendExecute(handle, plan.plan.get(), pack.get()), "cudnnBackendExecute");
}

}  // namespace tessera::kernels::cuda
