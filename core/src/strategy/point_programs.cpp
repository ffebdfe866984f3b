#include "tessera/core/point_programs.hpp"

#include "tessera/core/memory_estimate.hpp"

namespace tessera {

PointPrograms point_programs(const LoadedScenario& loaded, const SweepPoint& point,
                             const ProfileDatabase* profiles, Epoch epoch) {
  // The same steps as simulate_point (simulator/src/simulate_point.cpp), in the same order.
  const auto& s = loaded.scenario;
  const auto memory_inputs = memory_inputs_of(s, loaded.device_capacity_bytes);
  PointPrograms result;
  result.offload = decide_offload(loaded.model, point.plan, memory_inputs);
  const ComputeCostModel costs(roofline_of(loaded.cluster.gpu), profiles,
                               micro_batching_under(s, result.offload));
  const auto input = plan_input(loaded, point.config.gpus());
  const auto options = step_options_of(s, loaded.cluster.gpu.overlaps_communication,
                                       input.of(epoch), result.offload);
  result.programs = build_step_programs(loaded.model, point.plan, costs, options);
  return result;
}

ShardPlan plan_at_mini_batch(const LoadedScenario& loaded, const ShardPlan& plan,
                             std::int64_t mini_batch) {
  if (mini_batch == plan.config.mini_batch) return plan;
  auto config = plan.config;
  config.mini_batch = mini_batch;
  return plan_shards(loaded.model, config, loaded.scenario.parallelism.spatial_until, {});
}

ProgramBuilder program_builder(const LoadedScenario& loaded, const ShardPlan& plan,
                               const ProfileDatabase* profiles, const StepOptions& options,
                               const OffloadDecision& offload) {
  return [&loaded, &plan, profiles, options, offload](const GpuSpec& gpu, std::int64_t mini_batch) {
    const ComputeCostModel costs(roofline_of(gpu), profiles,
                                 micro_batching_under(loaded.scenario, offload));
    return build_step_programs(loaded.model, plan_at_mini_batch(loaded, plan, mini_batch), costs,
                               options);
  };
}

std::vector<std::int64_t> point_batches_of_ranks(const LoadedScenario& loaded,
                                                 const SweepPoint& point,
                                                 const ProfileDatabase* profiles) {
  const auto& s = loaded.scenario;
  // An equal split times nothing: no programs to build.
  if (s.parallelism.data_split == DataSplit::equal) {
    return batches_of_ranks(loaded.cluster, point.config, DataSplit::equal, {});
  }
  const auto offload =
      decide_offload(loaded.model, point.plan, memory_inputs_of(s, loaded.device_capacity_bytes));
  const auto input = plan_input(loaded, point.config.gpus());
  const auto options = step_options_of(s, loaded.cluster.gpu.overlaps_communication,
                                       input.of(Epoch::later), offload);
  return batches_of_ranks(loaded.cluster, point.config, s.parallelism.data_split,
                          program_builder(loaded, point.plan, profiles, options, offload));
}

}  // namespace tessera
