#include "tessera/core/point/rank_programs.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include "tessera/core/point/point_programs.hpp"

namespace tessera {

RankPrograms plan_rank_programs(const ClusterSpec& played, std::int64_t played_gpus,
                                std::int64_t mini_batch,
                                const std::vector<std::int64_t>& batch_of_played_rank,
                                const ProgramBuilder& build) {
  RankPrograms programs;
  programs.sets.push_back(build(played.gpu_of_group(0), mini_batch));
  if (played.uniform() && batch_of_played_rank.empty()) return programs;
  // One set per (group, batch), made on first use; (0, mini-batch) is set 0.
  std::map<std::pair<std::size_t, std::int64_t>, int> set_of;
  set_of[{0, mini_batch}] = 0;
  for (std::int64_t rank = 0; rank < played_gpus; ++rank) {
    const std::size_t group = played.group_index_of_rank(rank);
    const std::int64_t batch = batch_of_played_rank.empty()
                                   ? mini_batch
                                   : batch_of_played_rank.at(static_cast<std::size_t>(rank));
    auto [it, inserted] = set_of.try_emplace({group, batch}, 0);
    if (inserted) {
      it->second = static_cast<int>(programs.sets.size());
      programs.sets.push_back(build(played.gpu_of_group(group), batch));
    }
    programs.set_of_rank.push_back(it->second);
    programs.stretch_of_rank.push_back(1.0 / played.gpu_clock_fraction(rank));
  }
  return programs;
}

RankPrograms point_rank_programs(const LoadedScenario& scenario, const SweepPoint& point,
                                 const ProfileDatabase* profiles, Epoch epoch) {
  const auto recipe = point_recipe(scenario, point, epoch);
  const auto build = program_builder(scenario, point.plan, profiles, recipe);
  std::vector<std::int64_t> batches;
  if (scenario.scenario.parallelism.data_split != DataSplit::equal) {
    batches = point_batches_of_ranks(scenario, point, profiles);
  }
  return plan_rank_programs(scenario.cluster, point.config.gpus(), point.config.mini_batch, batches,
                            build);
}

}  // namespace tessera
