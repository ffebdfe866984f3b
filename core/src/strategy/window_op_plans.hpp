#pragma once
// A compute op of a split window layer (window_kernels.hpp) with each distinct window of every
// shard planned once (window_kernel_plan.hpp): the program writer (step_program.cpp) adds these
// plans to the op, which both backends follow.
#include "tessera/core/cost/cost_model.hpp"
#include "tessera/core/micro_batching/micro_batch_plan.hpp"
#include "tessera/core/model/model_graph.hpp"
#include "tessera/core/strategy/parallel_strategy.hpp"
#include "tessera/core/strategy/step_program.hpp"

namespace tessera {

// Fills op.window_plans for layer `layer` (op.layer's) of `plan`; `layer_plan` is the layer's
// micro-batch plan for op.direction (null: none). The timed shard's windows give the op's time
// where all of them are profiled, and the label counts the windows that fall back.
void plan_op_windows(StepOp& op, const ResolvedLayer& layer, const ShardPlan& plan,
                     const MicroBatchPlan* layer_plan, const ComputeCostModel& costs, DType dtype);

}  // namespace tessera
