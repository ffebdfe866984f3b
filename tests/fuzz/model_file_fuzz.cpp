// libFuzzer target: any byte string given to the model file parser must end in a model or an
// InputError. Any other exception, crash or sanitizer report is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "tessera/core/common/input_error.hpp"
#include "tessera/core/common/yaml_reader.hpp"
#include "tessera/core/model/layer_cost.hpp"
#include "tessera/core/model/model_file.hpp"
#include "tessera/core/model/shape_inference.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto model = tessera::parse_model_file(tessera::parse_yaml_text(text, "fuzz.yaml"));
    // A loaded model's sizes stay inside the bounds the rest of Tessera multiplies them under.
    for (const auto& layer : model.layers()) {
      const auto elements = layer.output_shape.elements_per_sample();
      if (elements <= 0 || elements > tessera::kMaxElementsPerSample) __builtin_trap();
      const auto parameters = tessera::parameter_count(layer);
      if (parameters < 0 || parameters > tessera::kMaxLayerParameters + (1 << 24)) __builtin_trap();
    }
  } catch (const tessera::InputError&) {
    // The expected outcome for malformed input.
  }
  return 0;
}
