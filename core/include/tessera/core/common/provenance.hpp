#pragma once
// Where a number comes from: a field of every result (result_schema.hpp) and of every timed
// kernel (cost_model.hpp, step_program.hpp).
#include <string>

namespace tessera {

enum class Provenance {
  measured,   // timed on real hardware by the real backend
  simulated,  // played by the simulator
  profile,    // compute durations from the measured profile database
  roofline,   // compute durations from device specifications
  mixed,      // compute durations from both profile and roofline
  estimated,  // analytical (e.g. the memory model of core)
  none,       // not available for this point
};
std::string to_string(Provenance provenance);
Provenance provenance_from_string(const std::string& text);  // throws std::invalid_argument

}  // namespace tessera
