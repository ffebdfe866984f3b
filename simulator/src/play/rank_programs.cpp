#include "play/rank_programs.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include "tessera/core/data_split.hpp"

namespace tessera::sim {
namespace {

const GpuSpec& gpu_of_group(const ClusterSpec& cluster, std::size_t group) {
  return cluster.groups.size() > 1 ? cluster.groups[group].gpu : cluster.gpu;
}

double compute_seconds(const std::vector<StepProgram>& programs) {
  double seconds = 0;
  for (const auto& program : programs) {
    for (const auto& op : program.ops) {
      if (op.kind == StepOpKind::compute || op.kind == StepOpKind::update) seconds += op.seconds;
    }
  }
  return seconds;
}

}  // namespace

std::vector<std::int64_t> batches_of_ranks(const ClusterSpec& cluster, const ParallelConfig& config,
                                           DataSplit split, const ProgramBuilder& build) {
  const auto gpus = static_cast<std::size_t>(config.gpus());
  if (split == DataSplit::equal) return std::vector<std::int64_t>(gpus, config.mini_batch);
  const std::size_t groups = std::max<std::size_t>(cluster.groups.size(), 1);
  std::vector<double> seconds_of_group;
  for (std::size_t g = 0; g < groups; ++g) {
    const GpuSpec& gpu = gpu_of_group(cluster, g);
    seconds_of_group.push_back(
        compute_seconds(build(gpu, gpu.model == cluster.gpu.model, config.mini_batch)));
  }
  std::vector<double> speeds;
  for (std::size_t rank = 0; rank < gpus; ++rank) {
    const auto r = static_cast<std::int64_t>(rank);
    const double seconds =
        seconds_of_group[cluster.group_index_of_node(r / cluster.gpus_per_node)] /
        cluster.gpu_clock_fraction(r);
    speeds.push_back(static_cast<double>(config.mini_batch) / seconds);
  }
  return split_in_proportion(config.global_batch(), speeds);
}

RankPrograms plan_rank_programs(const ClusterSpec& played, std::int64_t played_gpus,
                                std::int64_t mini_batch,
                                const std::vector<std::int64_t>& batch_of_played_rank,
                                const ProgramBuilder& build) {
  RankPrograms programs;
  programs.sets.push_back(build(gpu_of_group(played, 0), true, mini_batch));
  if (played.uniform() && batch_of_played_rank.empty()) return programs;
  // One set per (group, batch), made on first use; (0, mini-batch) is set 0.
  std::map<std::pair<std::size_t, std::int64_t>, int> set_of;
  set_of[{0, mini_batch}] = 0;
  for (std::int64_t rank = 0; rank < played_gpus; ++rank) {
    const std::size_t group = played.group_index_of_node(rank / played.gpus_per_node);
    const std::int64_t batch = batch_of_played_rank.empty()
                                   ? mini_batch
                                   : batch_of_played_rank.at(static_cast<std::size_t>(rank));
    auto [it, inserted] = set_of.try_emplace({group, batch}, 0);
    if (inserted) {
      it->second = static_cast<int>(programs.sets.size());
      const GpuSpec& gpu = gpu_of_group(played, group);
      programs.sets.push_back(build(gpu, gpu.model == played.gpu.model, batch));
    }
    programs.set_of_rank.push_back(it->second);
    programs.stretch_of_rank.push_back(1.0 / played.gpu_clock_fraction(rank));
  }
  return programs;
}

}  // namespace tessera::sim
