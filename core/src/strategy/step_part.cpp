#include "tessera/core/strategy/step_part.hpp"

namespace tessera {

std::string to_string(StepPart part) {
  static const char* const names[] = {"whole",      "interior", "boundary",
                                      "statistics", "apply",    "gradient sum"};
  return names[static_cast<int>(part)];
}

}  // namespace tessera
