#pragma once
// A halo exchange moves faces through contiguous messages: the sender packs the planes it sends,
// the receiver copies them into its halo planes (forward) or sums them into the planes they
// overlap (backward). The program times both faces of an exchange (halo_start: packing,
// halo_wait: unpacking); every GPU of a stage plays the same program, and a GPU at the grid's
// edge swaps faces with the neighbours it has only. A split window layer also loads its shard into
// a buffer with room for the halo planes before its forward's first exchange, and stores the
// owned part of that buffer's input gradient after its backward's last: every GPU copies those
// whole (StepOp::window_seconds).
#include "tessera/core/strategy/step_program.hpp"

namespace tessera {

// What one GPU spends on a halo op's copies, given which neighbours it has along the op's axis:
// its share of `seconds` and the whole of `window_seconds`; 0 for other ops.
double halo_copy_seconds(const StepOp& op, bool has_lower_neighbour, bool has_upper_neighbour);
// The face bytes behind that share: what the GPU packs (halo_start) or unpacks (halo_wait) for
// the neighbours it has; 0 for other ops.
double halo_face_bytes(const StepOp& op, bool has_lower_neighbour, bool has_upper_neighbour);

}  // namespace tessera
