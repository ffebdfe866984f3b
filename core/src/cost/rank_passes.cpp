#include "tessera/core/cost/rank_passes.hpp"

#include <cstdio>
#include <map>

#include "tessera/core/common/lower_median.hpp"

namespace tessera {

std::string rank_pass_shape(int ranks, int rank, int pass) {
  return "ranks " + std::to_string(ranks) + " rank " + std::to_string(rank) + " pass " +
         std::to_string(pass);
}

ProfileEntry rank_pass_row(const std::string& device, int ranks, int rank, int pass,
                           double seconds) {
  return {.device = device,
          .op = kRankPassOp,
          .shape = rank_pass_shape(ranks, rank, pass),
          .micro_batch = 1,
          .algorithm = "default",
          .time_seconds = seconds};
}

RankJitter rank_jitter_from_passes(const ProfileDatabase& database, const std::string& device,
                                   int ranks) {
  std::map<int, std::vector<double>> passes;  // pass -> each rank's seconds
  for (const auto& row :
       database.entries_of_op(device, kRankPassOp, Direction::forward, DType::float32)) {
    int row_ranks = 0, rank = 0, pass = 0;
    if (std::sscanf(row.shape.c_str(), "ranks %d rank %d pass %d", &row_ranks, &rank, &pass) != 3 ||
        row_ranks != ranks || rank < 0 || rank >= ranks || !row.ok || row.time_seconds <= 0) {
      continue;
    }
    auto& seconds = passes[pass];
    seconds.resize(static_cast<std::size_t>(ranks), 0.0);
    seconds[static_cast<std::size_t>(rank)] = row.time_seconds;
  }
  std::vector<std::vector<double>> complete;  // passes every rank timed
  for (auto& [pass, seconds] : passes) {
    bool all = true;
    for (const double s : seconds) all = all && s > 0;
    if (all) complete.push_back(std::move(seconds));
  }
  RankJitter jitter;
  if (complete.empty()) return jitter;
  std::vector<double> medians;
  for (std::size_t r = 0; r < static_cast<std::size_t>(ranks); ++r) {
    std::vector<double> times;
    for (const auto& pass : complete) times.push_back(pass[r]);
    medians.push_back(lower_median(times));
  }
  for (const auto& pass : complete) {
    std::vector<double> slowdowns;
    for (std::size_t r = 0; r < pass.size(); ++r) slowdowns.push_back(pass[r] / medians[r]);
    jitter.slowdowns.push_back(std::move(slowdowns));
  }
  return jitter;
}

}  // namespace tessera
