#include "tessera/core/micro_batching/window_kernel_plan.hpp"

#include <algorithm>
#include <optional>

#include "tessera/core/micro_batching/micro_batch_planner.hpp"

namespace tessera {
namespace {

std::optional<MicroBatchPlan> followed(const MicroBatchPlan& layer_plan,
                                       const std::vector<ProfileEntry>& rows) {
  MicroBatchPlan plan;
  for (const MicroBatch& part : layer_plan.micro_batches) {
    const auto row = std::find_if(rows.begin(), rows.end(), [&](const ProfileEntry& entry) {
      return entry.ok && entry.micro_batch == part.samples && entry.algorithm == part.algorithm;
    });
    if (row == rows.end()) return std::nullopt;
    plan.micro_batches.push_back(
        {part.samples, part.algorithm, row->time_seconds, row->workspace_bytes});
  }
  return plan;
}

bool profiled(const MicroBatchPlan* plan) {
  return plan != nullptr && !plan->micro_batches.empty() &&
         std::all_of(plan->micro_batches.begin(), plan->micro_batches.end(),
                     [](const MicroBatch& part) { return !part.algorithm.empty(); });
}

}  // namespace

std::string to_string(WindowPlanSource source) {
  static const char* const names[] = {"follows the layer", "falls back", "unprofiled"};
  return names[static_cast<int>(source)];
}

WindowKernelPlan plan_window_kernel(const WindowKernel& window, Direction direction,
                                    std::int64_t batch, const MicroBatchPlan* layer_plan,
                                    const ComputeCostModel& costs, DType dtype) {
  WindowKernelPlan result{window, direction, {}, WindowPlanSource::unprofiled};
  if (costs.profiles() == nullptr) return result;
  const auto rows = costs.profiles()->entries_for(
      costs.device().device, to_string(window.layer.kind), direction, window.shape, dtype);
  if (rows.empty()) return result;
  const bool follows = profiled(layer_plan);
  if (follows) {
    if (auto plan = followed(*layer_plan, rows)) {
      result.plan = std::move(*plan);
      result.source = WindowPlanSource::follows_layer;
      return result;
    }
  }
  // The fastest undivided row within the limit, else the least-needing one.
  const double limit =
      follows ? layer_plan->workspace_bytes() : costs.micro_batching().workspace_limit_bytes;
  if (auto planned = plan_kernel(rows, MicroBatchPolicy::undivided, batch, limit)) {
    result.plan = std::move(planned->plan);
    result.source = WindowPlanSource::falls_back;
  }
  return result;
}

}  // namespace tessera
