#include "cudnn_engine_names.hpp"

#include <algorithm>
#include <charconv>
#include <stdexcept>

namespace tessera::kernels {
namespace {

constexpr std::string_view kPrefix = "ENGINE_";
constexpr std::string_view kKnob = "_K";

std::int64_t whole_number(std::string_view text, const std::string& name, const char* what) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) {
    throw std::invalid_argument("cuDNN engine name '" + name + "': expected " + what +
                                " as a whole number, got '" + std::string(text) + "'");
  }
  return value;
}

}  // namespace

std::string cudnn_engine_name(const CudnnEngineConfig& config) {
  std::vector<CudnnKnobChoice> knobs = config.knobs;
  std::sort(knobs.begin(), knobs.end(),
            [](const CudnnKnobChoice& a, const CudnnKnobChoice& b) { return a.type < b.type; });
  std::string name = std::string(kPrefix) + std::to_string(config.engine);
  for (const CudnnKnobChoice& knob : knobs) {
    name += std::string(kKnob) + std::to_string(knob.type) + "=" + std::to_string(knob.value);
  }
  return name;
}

bool is_cudnn_engine_name(const std::string& name) {
  return name.starts_with(kPrefix);
}

CudnnEngineConfig parse_cudnn_engine_name(const std::string& name) {
  if (!is_cudnn_engine_name(name)) {
    throw std::invalid_argument("cuDNN engine name '" + name + "': expected it to start with " +
                                std::string(kPrefix));
  }
  std::string_view rest = std::string_view(name).substr(kPrefix.size());
  CudnnEngineConfig config;
  std::size_t knob_start = rest.find(kKnob);
  config.engine = whole_number(rest.substr(0, knob_start), name, "the engine index");
  while (knob_start != std::string_view::npos) {
    rest = rest.substr(knob_start + kKnob.size());
    knob_start = rest.find(kKnob);
    const std::string_view knob = rest.substr(0, knob_start);
    const std::size_t equals = knob.find('=');
    if (equals == std::string_view::npos) {
      throw std::invalid_argument("cuDNN engine name '" + name +
                                  "': expected each knob as K<type>=<value>, got 'K" +
                                  std::string(knob) + "'");
    }
    config.knobs.push_back({whole_number(knob.substr(0, equals), name, "a knob type"),
                            whole_number(knob.substr(equals + 1), name, "a knob value")});
  }
  return config;
}

bool offers_engine(const CudnnEngineNotes& notes) {
  return !notes.tensor_core && !notes.down_converts_inputs && !notes.reduced_precision_reduction &&
         !notes.runtime_compiled;
}

std::int64_t cudnn_operand_alignment(std::uintptr_t address) {
  std::int64_t alignment = 16;
  while (alignment > 1 && address % static_cast<std::uintptr_t>(alignment) != 0) alignment /= 2;
  return alignment;
}

std::int64_t cudnn_micro_batch_alignment(std::int64_t floats_per_sample) {
  return cudnn_operand_alignment(static_cast<std::uintptr_t>(floats_per_sample) * sizeof(float));
}

}  // namespace tessera::kernels
