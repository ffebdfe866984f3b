#pragma once
// Which part of a layer's pass a compute op is. A window layer split over GPUs computes the
// outputs that need no halo (interior) while the halos fly and the rest (boundary) after; a
// batch-norm summing its statistics over the spatial group computes them (statistics), then,
// after the group's all-reduce, normalises with them (apply).
#include <string>

namespace tessera {

enum class StepPart { whole, interior, boundary, statistics, apply };
std::string to_string(StepPart part);

}  // namespace tessera
