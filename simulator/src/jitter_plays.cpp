#include "jitter_plays.hpp"

#include <algorithm>
#include <cstdio>

namespace tessera::sim {

std::vector<SimulationOptions> jitter_plays(const ClusterSpec& cluster,
                                            const SimulationOptions& options) {
  if (cluster.jitter.empty()) return {options};
  const std::size_t moments = cluster.jitter.moments();
  const std::size_t plays = std::min(moments, kMostJitterPlays);
  std::vector<SimulationOptions> all;
  for (std::size_t p = 0; p < plays; ++p) {
    auto play = options;
    play.jitter_moment = p * moments / plays;
    all.push_back(play);
  }
  return all;
}

SimulationOutcome median_play(std::vector<SimulationOutcome> plays, const ClusterSpec& cluster) {
  if (plays.size() == 1) {
    auto only = std::move(plays.front());
    if (!cluster.jitter.empty() && only.result.status != PointStatus::failed) {
      only.result.note +=
          "; rank jitter: the one measured moment of the ranks' slowdowns, played as it is";
    }
    return only;
  }
  std::vector<SimulationOutcome> ok;
  for (auto& play : plays) {
    if (play.result.status != PointStatus::failed) ok.push_back(std::move(play));
  }
  if (ok.empty()) return std::move(plays.front());
  double wall_seconds = 0;
  for (const auto& play : ok) wall_seconds += play.wall_seconds;
  std::sort(ok.begin(), ok.end(), [](const SimulationOutcome& a, const SimulationOutcome& b) {
    return a.result.step_seconds < b.result.step_seconds;
  });
  const double fastest = ok.front().result.step_seconds;
  const double slowest = ok.back().result.step_seconds;
  const std::size_t count = ok.size();
  SimulationOutcome median = std::move(ok[(count - 1) / 2]);
  char text[200];
  std::snprintf(text, sizeof text,
                "; rank jitter: the median step of %zu plays, one per measured moment of the "
                "ranks' slowdowns (steps %.6g to %.6g s)",
                count, fastest, slowest);
  median.result.note += text;
  median.wall_seconds = wall_seconds;
  return median;
}

}  // namespace tessera::sim
