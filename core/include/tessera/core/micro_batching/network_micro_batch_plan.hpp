#pragma once
// The micro-batching plan of a whole network at one sweep point: every convolution kernel
// (forward, backward-data, backward-filter of every conv layer) mapped to its MicroBatchPlan.
//  - per_layer: each kernel's fastest plan within the per-kernel workspace limit (the DP of
//    micro_batch_planner.hpp);
//  - whole_network: per model-parallel stage (one GPU's kernels), the fastest assignment of Pareto
//    plans whose workspaces together fit the budget (workspace_budget_ilp.hpp).
// Kernel tables come from the cost model's profile database; a kernel without profile rows runs
// undivided at its roofline time, and says so. The step program costs conv kernels by this plan,
// the real backend executes it, describe prints it and results record it.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "tessera/core/cost/cost_model.hpp"
#include "tessera/core/micro_batching/micro_batch_plan.hpp"
#include "tessera/core/model/model_graph.hpp"
#include "tessera/core/strategy/parallel_strategy.hpp"

namespace tessera {

struct ConvKernelPlan {
  std::size_t layer = 0;
  std::string layer_name;
  Direction direction = Direction::forward;
  int stage = 0;
  std::int64_t batch = 0;  // the shard's samples on the busiest GPU
  MicroBatchPlan plan;
  // profile: planned from measured rows; roofline: no usable rows, so one micro-batch of the
  // whole batch with an empty algorithm (the backend picks its own).
  Provenance provenance = Provenance::roofline;
  bool limit_met = true;  // false: nothing fitted; the least-workspace plan was taken
  // The best undivided algorithm under the same limit (whole network: in the best all-undivided
  // assignment under the same budget); nullopt when the profile has no row for the whole batch.
  std::optional<double> undivided_seconds;

  std::optional<double> speedup() const;  // undivided / planned time
};

struct NetworkMicroBatchPlan {
  MicroBatchingSection settings;
  std::vector<ConvKernelPlan> kernels;  // by layer, then forward, backward-data, backward-filter

  const ConvKernelPlan* find(std::size_t layer, Direction direction) const;
  double seconds() const;  // all kernels, every stage
  // Nullopt unless every kernel has an undivided baseline.
  std::optional<double> undivided_seconds() const;
  std::optional<double> speedup() const;
  // per_layer: the largest kernel's workspace; whole_network: the largest stage's sum.
  double workspace_bytes() const;
  bool limit_met() const;
};

// The kernels as a step runs them: a pipeline's at its micro-batch (micro_batch_plan), so that
// every caller (the step program, the real backend, results, describe) plans the same kernels.
NetworkMicroBatchPlan plan_network(const ModelGraph& model, const ShardPlan& plan,
                                   const ComputeCostModel& costs, DType dtype);

nlohmann::json to_json(const NetworkMicroBatchPlan& plan);

}  // namespace tessera
