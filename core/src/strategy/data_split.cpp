#include "tessera/core/strategy/data_split.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

namespace tessera {
namespace {

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

std::vector<std::int64_t> split_in_proportion(
    std::int64_t global_batch, const std::vector<double>& speeds_samples_per_second) {
  const auto& speeds = speeds_samples_per_second;
  const auto replicas = static_cast<std::int64_t>(speeds.size());
  if (replicas == 0 || global_batch < replicas) {
    throw std::invalid_argument("cannot share " + std::to_string(global_batch) +
                                " samples between " + std::to_string(replicas) +
                                " replicas, at least one each");
  }
  double total = 0;
  for (double speed : speeds) {
    if (!(speed > 0) || !std::isfinite(speed)) {
      throw std::invalid_argument("replica speeds must be positive and finite");
    }
    total += speed;
  }
  std::vector<std::int64_t> shares(speeds.size());
  std::vector<double> remainders(speeds.size());
  std::int64_t given = 0;
  for (std::size_t r = 0; r < speeds.size(); ++r) {
    const double exact = static_cast<double>(global_batch) * speeds[r] / total;
    shares[r] = static_cast<std::int64_t>(std::floor(exact));
    remainders[r] = exact - static_cast<double>(shares[r]);
    given += shares[r];
  }
  std::vector<std::size_t> order(speeds.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return remainders[a] > remainders[b]; });
  for (std::size_t i = 0; given < global_batch; ++i, ++given) ++shares[order[i % order.size()]];
  // A replica with no sample would not train; it takes one from the largest share.
  for (auto& share : shares) {
    if (share > 0) continue;
    *std::max_element(shares.begin(), shares.end()) -= 1;
    share = 1;
  }
  return shares;
}

std::vector<std::int64_t> batches_of_ranks(const ClusterSpec& cluster, const ParallelConfig& config,
                                           DataSplit split, const ProgramBuilder& build) {
  const auto gpus = static_cast<std::size_t>(config.gpus());
  if (split == DataSplit::equal) return std::vector<std::int64_t>(gpus, config.mini_batch);
  const std::size_t groups = std::max<std::size_t>(cluster.groups.size(), 1);
  std::vector<double> seconds_of_group;
  for (std::size_t g = 0; g < groups; ++g) {
    const GpuSpec& gpu = cluster.gpu_of_group(g);
    seconds_of_group.push_back(compute_seconds(build(gpu, config.mini_batch)));
  }
  std::vector<double> speeds;
  for (std::size_t rank = 0; rank < gpus; ++rank) {
    const auto r = static_cast<std::int64_t>(rank);
    const double seconds =
        seconds_of_group[cluster.group_index_of_rank(r)] / cluster.gpu_clock_fraction(r);
    speeds.push_back(static_cast<double>(config.mini_batch) / seconds);
  }
  return split_in_proportion(config.global_batch(), speeds);
}

}  // namespace tessera
