#pragma once
// cuDNN's graph-API convolution engines as algorithms by name, beside the legacy API's
// (cudnn_algorithm_names.hpp). An engine configuration is an engine's global index and its knob
// choices; its name spells both, so that a profile row or a micro-batching plan names what to run
// and the backend rebuilds it from the name alone. Unlike the legacy names, these hold for one GPU
// architecture and cuDNN release: a profile from another machine may name engines this one lacks.
// Host-only (no CUDA headers), so it is tested without the toolkit.
#include <cstdint>
#include <string>
#include <vector>

namespace tessera::kernels {

struct CudnnKnobChoice {
  std::int64_t type = 0;  // cudnnBackendKnobType_t
  std::int64_t value = 0;
  friend bool operator==(const CudnnKnobChoice&, const CudnnKnobChoice&) = default;
};

struct CudnnEngineConfig {
  std::int64_t engine = 0;             // CUDNN_ATTR_ENGINE_GLOBAL_INDEX
  std::vector<CudnnKnobChoice> knobs;  // any order; named in ascending type
  friend bool operator==(const CudnnEngineConfig&, const CudnnEngineConfig&) = default;
};

// "ENGINE_<index>", then "_K<type>=<value>" per knob by ascending type: "ENGINE_12_K3=1_K7=-1".
// No comma or space, so that a profile file keeps it in one field.
std::string cudnn_engine_name(const CudnnEngineConfig& config);
bool is_cudnn_engine_name(const std::string& name);
// Inverse of cudnn_engine_name (knobs by ascending type); throws std::invalid_argument saying
// what was expected.
CudnnEngineConfig parse_cudnn_engine_name(const std::string& name);

// What an engine's notes say (CUDNN_ATTR_ENGINE_NUMERICAL_NOTE and _BEHAVIOR_NOTE).
struct CudnnEngineNotes {
  bool tensor_core = false;  // TF32 for float32 data
  bool down_converts_inputs = false;
  bool reduced_precision_reduction = false;
  bool nondeterministic = false;
  bool runtime_compiled = false;
};
// Whether an engine is offered as an algorithm: it keeps float32 products and sums, as the legacy
// algorithms run with FMA math (no TF32 tensor cores, no lower-precision inputs or reductions),
// and it is built without compiling a kernel at run time (which takes long enough per plan that
// profiling a network would be spent compiling).
bool offers_engine(const CudnnEngineNotes& notes);

// The byte alignment a tensor descriptor may promise for an operand at `address`: the largest
// power of two dividing it, at most 16.
std::int64_t cudnn_operand_alignment(std::uintptr_t address);
// The alignment every micro-batch of a tensor of `floats_per_sample` has, micro-batches starting
// at multiples of the micro-batch within an allocation (aligned to at least 16 bytes).
std::int64_t cudnn_micro_batch_alignment(std::int64_t floats_per_sample);

// How many of cuDNN's heuristic engine configurations a convolution pass offers, in the
// heuristics' order, each of them a row that profiling times at every micro-batch.
inline constexpr std::size_t kCudnnEnginesOffered = 6;

}  // namespace tessera::kernels
