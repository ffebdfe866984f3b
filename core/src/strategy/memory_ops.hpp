#pragma once
// The memory plan's events (memory_plan.hpp) as step-program ops: allocations and releases,
// vDNN's copies and their waits, for one micro-batch of the pipeline. On a device that copies on
// its own cores (overlap_copies false: a CPU rank) each copy is waited for where it starts.
#include <cstdint>
#include <vector>

#include "tessera/core/model/model_graph.hpp"
#include "tessera/core/strategy/memory_plan.hpp"
#include "tessera/core/strategy/step_program.hpp"

namespace tessera {

std::vector<StepOp> memory_ops(const ModelGraph& model, const std::vector<MemoryEvent>& events,
                               std::int64_t micro_batch, bool overlap_copies = true);

}  // namespace tessera
