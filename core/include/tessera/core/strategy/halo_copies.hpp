#pragma once
// A halo exchange moves faces through contiguous messages: the sender packs the planes it sends,
// the receiver copies them into its halo planes (forward) or sums them into the planes they
// overlap (backward). The program times both faces of an exchange (halo_start: packing,
// halo_wait: unpacking); every GPU of a stage plays the same program, and a GPU at the grid's
// edge swaps faces with the neighbours it has only.
#include "tessera/core/strategy/step_program.hpp"

namespace tessera {

// The part of a halo op's `seconds` one GPU spends, given which neighbours it has along the op's
// axis; 0 for other ops.
double halo_copy_seconds(const StepOp& op, bool has_lower_neighbour, bool has_upper_neighbour);

}  // namespace tessera
