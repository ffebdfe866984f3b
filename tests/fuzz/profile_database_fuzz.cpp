// libFuzzer target: any byte string given to the profile database loader must end in a loaded
// database or an InputError. Any other exception, crash or sanitizer report is a bug.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "tessera/core/common/input_error.hpp"
#include "tessera/core/cost/profile_database.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    tessera::ProfileDatabase profiles;
    profiles.load_csv_text(text, "fuzz.csv");
    // What a loaded database hands the cost model and the writer must hold up too, and every
    // row keeps the loader's rules (profile_database.hpp).
    for (const auto& row : profiles.rows()) {
      if (!(row.time_seconds >= 0 && row.time_seconds <= 1e6) ||
          !(row.workspace_bytes >= 0 && row.workspace_bytes <= 9007199254740992.0) ||
          row.workspace_bytes != std::floor(row.workspace_bytes) || row.micro_batch < 1 ||
          row.device.empty() || row.op.empty() || row.shape.empty() || row.algorithm.empty()) {
        __builtin_trap();
      }
      (void)profiles.best(row.device, row.op, row.direction, row.shape, row.dtype, row.micro_batch,
                          row.workspace_bytes);
    }
    tessera::ProfileDatabase reread;
    reread.load_csv_text(profiles.to_csv({}), "fuzz-rewritten.csv");
    if (reread.size() != profiles.size()) __builtin_trap();  // the writer lost or added rows
  } catch (const tessera::InputError&) {
    // The expected outcome for malformed input.
  }
  return 0;
}
