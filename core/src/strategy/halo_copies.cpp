#include "tessera/core/strategy/halo_copies.hpp"

namespace tessera {

double halo_face_bytes(const StepOp& op, bool has_lower_neighbour, bool has_upper_neighbour) {
  if (op.kind != StepOpKind::halo_start && op.kind != StepOpKind::halo_wait) return 0;
  // The lower neighbour receives bytes_to_lower from me and sends me what it sends its upper
  // side (bytes_to_upper): every GPU plays the same op.
  const bool packing = op.kind == StepOpKind::halo_start;
  const double from_lower = packing ? op.bytes_to_lower : op.bytes_to_upper;
  const double from_upper = packing ? op.bytes_to_upper : op.bytes_to_lower;
  return (has_lower_neighbour ? from_lower : 0.0) + (has_upper_neighbour ? from_upper : 0.0);
}

double halo_copy_seconds(const StepOp& op, bool has_lower_neighbour, bool has_upper_neighbour) {
  if (op.kind != StepOpKind::halo_start && op.kind != StepOpKind::halo_wait) return 0;
  const double faces = op.bytes_to_lower + op.bytes_to_upper;
  if (faces <= 0 || op.seconds <= 0) return op.window_seconds;
  const double mine = halo_face_bytes(op, has_lower_neighbour, has_upper_neighbour);
  return op.window_seconds + op.seconds * mine / faces;
}

}  // namespace tessera
