// libFuzzer target: any byte string given to the scenario loader must end in a valid scenario or
// an InputError. Any other exception, crash or sanitizer report is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "tessera/core/common/input_error.hpp"
#include "tessera/core/loading/scenario_loader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    // Relative model and cluster files resolve against the source tree's test data.
    (void)tessera::load_scenario_text(text, "fuzz.yaml", TESSERA_TEST_DATA_DIR "/scenarios/good");
  } catch (const tessera::InputError&) {
    // The expected outcome for malformed input.
  }
  return 0;
}
