#pragma once
// How each window of a split convolution runs (window_kernels.hpp). A window follows its layer's
// plan (network_micro_batch_plan.hpp: micro-batches and algorithms chosen for the shard's
// problem) where the window's profile rows say each of those algorithms ran at those micro-batch
// sizes, at the window's measured times. Where one did not (a boundary slab too thin for an FFT,
// say), the window falls back to the fastest algorithm its rows list for the whole batch within
// the plan's workspace (the least-needing one where none fits): the step program says so, and
// both backends follow it. A window without rows has no plan: the library picks, as for any
// unprofiled kernel, and the program times it by its share of the layer's time.
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/core/cost/cost_model.hpp"
#include "tessera/core/micro_batching/micro_batch_plan.hpp"
#include "tessera/core/strategy/window_kernels.hpp"

namespace tessera {

enum class WindowPlanSource { follows_layer, falls_back, unprofiled };
std::string to_string(WindowPlanSource source);

struct WindowKernelPlan {
  WindowKernel kernel;
  Direction direction = Direction::forward;
  MicroBatchPlan plan;  // empty when unprofiled
  WindowPlanSource source = WindowPlanSource::unprofiled;
};

// `layer_plan`: the layer's plan for this direction and batch (empty or unprofiled: the window
// takes its own fastest within the scenario's per-kernel workspace limit).
WindowKernelPlan plan_window_kernel(const WindowKernel& window, Direction direction,
                                    std::int64_t batch, const MicroBatchPlan* layer_plan,
                                    const ComputeCostModel& costs, DType dtype);

}  // namespace tessera
