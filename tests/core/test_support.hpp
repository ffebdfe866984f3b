#pragma once
// Small helpers the core tests share.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <stdexcept>
#include <string>

#include "tessera/core/common/input_error.hpp"
#include "tessera/core/cost/cost_model.hpp"
#include "tessera/core/zoo/model_zoo.hpp"

namespace tessera::test {

// The zoo's GPT-2 at 2 blocks of 64 with 4 heads, 16 tokens and a vocabulary of 50: the
// transformer the strategy tests split.
struct TinyGptShape {
  std::int64_t layers = 2, hidden = 64, heads = 4, steps = 16, vocabulary = 50;
};
inline constexpr TinyGptShape kTinyGpt{};

inline ModelGraph tiny_gpt() {
  return build_zoo_model("gpt2", {{"layers", std::to_string(kTinyGpt.layers)},
                                  {"hidden", std::to_string(kTinyGpt.hidden)},
                                  {"heads", std::to_string(kTinyGpt.heads)},
                                  {"sequence_length", std::to_string(kTinyGpt.steps)},
                                  {"vocabulary", std::to_string(kTinyGpt.vocabulary)}});
}

// A made-up GPU the step-program tests time their ops on: 10 TFLOP/s, 1 TB/s, half of each
// reached, 1 us per kernel.
inline DeviceRoofline program_test_device() {
  DeviceRoofline device;
  device.device = "test-gpu";
  device.fp32_flops_per_second = 10e12;
  device.memory_bandwidth_bytes_per_second = 1e12;
  device.compute_efficiency = 0.5;
  device.memory_efficiency = 0.5;
  device.launch_latency_seconds = 1e-6;
  return device;
}

// The index of layer `name` of `model`; throws when it has none.
inline std::size_t layer_index(const ModelGraph& model, const std::string& name) {
  const auto index = model.index_of(name);
  if (!index) throw std::runtime_error("model " + model.name() + " has no layer " + name);
  return *index;
}

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The InputError that `call` throws; any other outcome fails the current test.
template <typename Call>
InputError input_error(Call&& call) {
  try {
    call();
  } catch (const InputError& error) {
    return error;
  } catch (const std::exception& error) {
    ADD_FAILURE() << "expected an InputError, got: " << error.what();
    return InputError({}, "", "");
  }
  ADD_FAILURE() << "expected an InputError, but the input was accepted";
  return InputError({}, "", "");
}

}  // namespace tessera::test
