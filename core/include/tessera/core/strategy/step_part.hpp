#pragma once
// Which part of a layer's pass a compute op is. A window layer split over GPUs computes the
// outputs that need no halo (interior) while the halos fly and the rest (boundary) after; a
// batch-norm summing its statistics over the spatial group computes them (statistics), then,
// after the group's all-reduce, normalises with them (apply). In a pipeline a layer's parameter
// gradients add up over the micro-batches: each micro-batch but the first to reach its backward
// computes its own, then adds them into the step's (gradient_sum).
#include <string>

namespace tessera {

enum class StepPart { whole, interior, boundary, statistics, apply, gradient_sum };
std::string to_string(StepPart part);

}  // namespace tessera
