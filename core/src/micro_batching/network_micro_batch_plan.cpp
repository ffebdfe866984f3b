#include "tessera/core/micro_batching/network_micro_batch_plan.hpp"

#include <algorithm>
#include <map>

#include "tessera/core/micro_batching/micro_batch_planner.hpp"
#include "tessera/core/micro_batching/workspace_budget_ilp.hpp"

namespace tessera {
namespace {

// The Pareto plans of one kernel's profile rows within the limit (see pareto_plans_within).
struct KernelFronts {
  std::vector<MicroBatchPlan> front;            // under the scenario's policy
  std::vector<MicroBatchPlan> undivided_front;  // the whole batch at once
};

struct KernelTable {
  ConvKernelPlan kernel;  // identity and, for roofline kernels, the plan
  KernelFronts fronts;
};

std::vector<KernelTable> kernel_tables(const ModelGraph& model, const ShardPlan& plan,
                                       const ComputeCostModel& costs, DType dtype) {
  std::vector<KernelTable> tables;
  const auto& settings = costs.micro_batching();
  // Networks repeat shapes (ResNet's blocks), and equal kernels have equal fronts.
  std::map<std::string, KernelFronts> planned_kernels;
  for (std::size_t i = 0; i < model.layers().size(); ++i) {
    const auto& shard = plan.layers[i];
    const auto& layer = shard.tensor.local_layer;
    if (!is_convolution(layer.kind)) continue;
    for (auto direction :
         {Direction::forward, Direction::backward_data, Direction::backward_filter}) {
      const auto roofline = costs.layer_time(layer, shard.local_inputs, shard.local_output,
                                             shard.local_batch, dtype, direction);
      if (roofline.provenance == Provenance::none) continue;  // a direction the layer lacks
      KernelTable table;
      auto& k = table.kernel;
      k.layer = i;
      k.layer_name = layer.name;
      k.direction = direction;
      k.stage = shard.stage;
      k.batch = shard.local_batch;
      if (costs.profiles()) {
        const auto shape = kernel_shape_key(layer, shard.local_inputs, shard.local_output);
        const auto key = to_string(layer.kind) + "|" + to_string(direction) + "|" + shape + "|" +
                         std::to_string(k.batch);
        auto cached = planned_kernels.find(key);
        if (cached == planned_kernels.end()) {
          const auto rows = costs.profiles()->entries_for(
              costs.device().device, to_string(layer.kind), direction, shape, dtype);
          // A plan over the limit (or the whole budget) cannot be part of one that meets it.
          const double limit = settings.workspace_limit_bytes;
          cached =
              planned_kernels
                  .emplace(key,
                           KernelFronts{pareto_plans_within(rows, settings.policy, k.batch, limit),
                                        pareto_plans_within(rows, MicroBatchPolicy::undivided,
                                                            k.batch, limit)})
                  .first;
        }
        table.fronts = cached->second;
      }
      // No measured way to make up the batch: undivided, at the roofline (or, if a profile row of
      // the whole batch fits the limit, that row: layer_time looked it up).
      k.plan.micro_batches = {{k.batch, "", roofline.seconds, 0}};
      k.provenance = roofline.provenance;
      k.undivided_seconds = roofline.seconds;
      tables.push_back(std::move(table));
    }
  }
  return tables;
}

void plan_per_layer(std::vector<KernelTable>& tables, const MicroBatchingSection& settings) {
  for (auto& table : tables) {
    auto& k = table.kernel;
    const auto planned = choose_within_limit(table.fronts.front, settings.workspace_limit_bytes);
    if (!planned) continue;
    k.plan = planned->plan;
    k.limit_met = planned->limit_met;
    k.provenance = Provenance::profile;
    const auto undivided =
        choose_within_limit(table.fronts.undivided_front, settings.workspace_limit_bytes);
    k.undivided_seconds =
        undivided ? std::optional<double>(undivided->plan.seconds()) : std::nullopt;
  }
}

// The configurations one kernel offers the budget: its Pareto plans, or its roofline plan.
std::vector<MicroBatchPlan> configurations(const KernelTable& table,
                                           const std::vector<MicroBatchPlan>& front) {
  return front.empty() && table.fronts.front.empty()
             ? std::vector<MicroBatchPlan>{table.kernel.plan}
             : front;
}

std::vector<WorkspaceChoice> choices_of(const std::vector<MicroBatchPlan>& plans) {
  std::vector<WorkspaceChoice> choices;
  for (const auto& plan : plans) choices.push_back({plan.seconds(), plan.workspace_bytes()});
  return choices;
}

// One GPU holds one stage's kernels, so each stage gets the whole budget.
void plan_whole_network(std::vector<KernelTable>& tables, const MicroBatchingSection& settings) {
  std::map<int, std::vector<std::size_t>> by_stage;
  for (std::size_t t = 0; t < tables.size(); ++t) by_stage[tables[t].kernel.stage].push_back(t);
  for (const auto& [stage, members] : by_stage) {
    std::vector<std::vector<MicroBatchPlan>> planned, undivided;
    for (auto t : members) {
      planned.push_back(configurations(tables[t], tables[t].fronts.front));
      auto baseline = configurations(tables[t], tables[t].fronts.undivided_front);
      if (!baseline.empty()) undivided.push_back(std::move(baseline));
    }
    std::vector<std::vector<WorkspaceChoice>> choices;
    for (const auto& plans : planned) choices.push_back(choices_of(plans));
    const auto assignment = solve_workspace_budget(choices, settings.workspace_limit_bytes);
    for (std::size_t m = 0; m < members.size(); ++m) {
      auto& k = tables[members[m]].kernel;
      k.plan = planned[m][assignment.chosen[m]];
      k.limit_met = assignment.budget_met;
      if (!tables[members[m]].fronts.front.empty()) k.provenance = Provenance::profile;
      k.undivided_seconds.reset();
    }
    // The baseline: every kernel undivided, the same budget over the kernels that have one.
    std::vector<std::vector<WorkspaceChoice>> baseline_choices;
    for (const auto& plans : undivided) baseline_choices.push_back(choices_of(plans));
    if (baseline_choices.empty()) continue;
    const auto baseline = solve_workspace_budget(baseline_choices, settings.workspace_limit_bytes);
    std::size_t b = 0;
    for (auto t : members) {
      if (configurations(tables[t], tables[t].fronts.undivided_front).empty()) continue;
      tables[t].kernel.undivided_seconds = undivided[b][baseline.chosen[b]].seconds();
      ++b;
    }
  }
}

}  // namespace

std::optional<double> ConvKernelPlan::speedup() const {
  const double planned = plan.seconds();
  if (!undivided_seconds || planned <= 0) return std::nullopt;
  return *undivided_seconds / planned;
}

const ConvKernelPlan* NetworkMicroBatchPlan::find(std::size_t layer, Direction direction) const {
  for (const auto& kernel : kernels) {
    if (kernel.layer == layer && kernel.direction == direction) return &kernel;
  }
  return nullptr;
}

double NetworkMicroBatchPlan::seconds() const {
  double total = 0;
  for (const auto& kernel : kernels) total += kernel.plan.seconds();
  return total;
}

std::optional<double> NetworkMicroBatchPlan::undivided_seconds() const {
  double total = 0;
  for (const auto& kernel : kernels) {
    if (!kernel.undivided_seconds) return std::nullopt;
    total += *kernel.undivided_seconds;
  }
  return total;
}

std::optional<double> NetworkMicroBatchPlan::speedup() const {
  const auto undivided = undivided_seconds();
  const double planned = seconds();
  if (!undivided || planned <= 0) return std::nullopt;
  return *undivided / planned;
}

double NetworkMicroBatchPlan::workspace_bytes() const {
  std::map<int, double> per_stage;
  double largest = 0;
  for (const auto& kernel : kernels) {
    const double bytes = kernel.plan.workspace_bytes();
    if (settings.mode == MicroBatchMode::whole_network) {
      largest = std::max(largest, per_stage[kernel.stage] += bytes);
    } else {
      largest = std::max(largest, bytes);
    }
  }
  return largest;
}

bool NetworkMicroBatchPlan::limit_met() const {
  return std::all_of(kernels.begin(), kernels.end(),
                     [](const ConvKernelPlan& kernel) { return kernel.limit_met; });
}

NetworkMicroBatchPlan plan_network(const ModelGraph& model, const ShardPlan& plan,
                                   const ComputeCostModel& costs, DType dtype) {
  NetworkMicroBatchPlan network;
  network.settings = costs.micro_batching();
  auto tables = kernel_tables(model, micro_batch_plan(plan), costs, dtype);
  if (network.settings.mode == MicroBatchMode::whole_network) {
    plan_whole_network(tables, network.settings);
  } else {
    plan_per_layer(tables, network.settings);
  }
  for (auto& table : tables) network.kernels.push_back(std::move(table.kernel));
  return network;
}

}  // namespace tessera
