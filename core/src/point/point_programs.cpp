#include "tessera/core/point/point_programs.hpp"

#include <algorithm>
#include <utility>

#include "tessera/core/strategy/memory_estimate.hpp"

namespace tessera {

PointPrograms point_programs(const LoadedScenario& loaded, const SweepPoint& point,
                             const ProfileDatabase* profiles, Epoch epoch) {
  const auto recipe = point_recipe(loaded, point, epoch);
  return {
      .programs = recipe.build(loaded.model, point.plan, roofline_of(loaded.cluster.gpu), profiles),
      .offload = recipe.offload};
}

ShardPlan plan_at_mini_batch(const LoadedScenario& loaded, const ShardPlan& plan,
                             std::int64_t mini_batch) {
  if (mini_batch == plan.config.mini_batch) return plan;
  auto config = plan.config;
  config.mini_batch = mini_batch;
  return plan_shards(loaded.model, config, loaded.scenario.parallelism.spatial_until, {});
}

ProgramBuilder program_builder(const LoadedScenario& loaded, const ShardPlan& plan,
                               const ProfileDatabase* profiles, const ProgramRecipe& recipe) {
  return [&loaded, &plan, profiles, recipe](const GpuSpec& gpu, std::int64_t mini_batch) {
    return recipe.build(loaded.model, plan_at_mini_batch(loaded, plan, mini_batch),
                        roofline_of(gpu), profiles);
  };
}

MemoryEstimate point_memory(const LoadedScenario& loaded, const SweepPoint& point,
                            const std::vector<std::int64_t>& batches) {
  const auto& s = loaded.scenario;
  const auto& cluster = loaded.cluster;
  // Each (node group, batch) once, in rank order; the first is the point's own mini-batch on the
  // first group's GPU, which every point has.
  std::vector<std::pair<std::size_t, std::int64_t>> kinds{{0, point.config.mini_batch}};
  for (std::size_t rank = 0; rank < batches.size(); ++rank) {
    const std::pair<std::size_t, std::int64_t> kind{
        cluster.group_index_of_rank(static_cast<std::int64_t>(rank)), batches[rank]};
    if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) kinds.push_back(kind);
  }
  MemoryEstimate worst;
  double worst_fraction = -1;
  for (const auto& [group, batch] : kinds) {
    const double capacity =
        s.memory.device_capacity_bytes.value_or(cluster.gpu_of_group(group).memory_bytes);
    auto estimate = estimate_memory(loaded.model, plan_at_mini_batch(loaded, point.plan, batch),
                                    memory_inputs_of(s, capacity));
    const double fraction = estimate.total_bytes / std::max(capacity, 1.0);
    if (fraction > worst_fraction) {
      worst_fraction = fraction;
      worst = std::move(estimate);
    }
  }
  return worst;
}

std::vector<std::int64_t> point_batches_of_ranks(const LoadedScenario& loaded,
                                                 const SweepPoint& point,
                                                 const ProfileDatabase* profiles) {
  const auto& s = loaded.scenario;
  // An equal split times nothing: no programs to build.
  if (s.parallelism.data_split == DataSplit::equal) {
    return batches_of_ranks(loaded.cluster, point.config, DataSplit::equal, {});
  }
  return batches_of_ranks(
      loaded.cluster, point.config, s.parallelism.data_split,
      program_builder(loaded, point.plan, profiles, point_recipe(loaded, point, Epoch::later)));
}

}  // namespace tessera
