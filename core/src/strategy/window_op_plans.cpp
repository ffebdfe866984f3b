#include "window_op_plans.hpp"

#include <algorithm>
#include <map>
#include <string>

#include "tessera/core/micro_batching/window_kernel_plan.hpp"
#include "tessera/core/strategy/window_kernels.hpp"

namespace tessera {

void plan_op_windows(StepOp& op, const ResolvedLayer& layer, const ShardPlan& plan,
                     const MicroBatchPlan* layer_plan, const ComputeCostModel& costs, DType dtype) {
  const std::int64_t batch = plan.layers[op.layer].local_batch;
  const auto& grid = plan.config.spatial_grid;
  const auto by_shard = window_kernels_by_shard(layer, grid, op.direction, op.part);
  std::map<std::string, std::size_t> index_of;
  for (const auto& windows : by_shard) {
    for (const auto& window : windows) {
      if (!index_of.emplace(window.shape, op.window_plans.size()).second) continue;
      op.window_plans.push_back(
          plan_window_kernel(window, op.direction, batch, layer_plan, costs, dtype));
    }
  }
  double seconds = 0;
  bool profiled = true;
  for (const auto& window : by_shard.at(static_cast<std::size_t>(timed_shard(grid)))) {
    const auto& planned = op.window_plans[index_of.at(window.shape)];
    profiled = profiled && planned.source != WindowPlanSource::unprofiled;
    seconds += planned.plan.seconds();
  }
  if (profiled) {
    op.seconds = seconds;
    op.provenance = Provenance::profile;
  }
  const auto falling_back = std::count_if(
      op.window_plans.begin(), op.window_plans.end(),
      [](const auto& planned) { return planned.source == WindowPlanSource::falls_back; });
  if (falling_back > 0) {
    op.label += " [" + std::to_string(falling_back) + " of " +
                std::to_string(op.window_plans.size()) + " windows fall back]";
  }
}

}  // namespace tessera
