#include "step_plays.hpp"

#include <algorithm>
#include <cstdio>

namespace tessera::sim {

bool reads_data_store_across_nodes(const ClusterSpec& cluster, const ParallelConfig& config,
                                   InputSource source) {
  return source == InputSource::peer_memory && config.gpus() > cluster.gpus_per_node;
}

StepPlays step_plays(const LoadedScenario& scenario, const SweepPoint& point,
                     const SimulationOptions& options) {
  StepPlays plays;
  const auto& jitter = scenario.cluster.jitter;
  plays.jitter = !jitter.empty();
  plays.store_draws = reads_data_store_across_nodes(
      scenario.cluster, point.config, plan_input(scenario, point.config.gpus()).of(options.epoch));
  const std::size_t moments = plays.jitter ? jitter.moments() : 1;
  std::size_t count = plays.jitter ? std::min(moments, kMostJitterPlays) : 1;
  if (plays.store_draws) count = std::max(count, kStoreDraws);
  for (std::size_t p = 0; p < count; ++p) {
    auto play = options;
    if (plays.jitter) play.jitter_moment = p * moments / count;
    if (plays.store_draws) play.store_draw = p;
    plays.options.push_back(play);
  }
  return plays;
}

namespace {

// What the plays varied, for the note: "rank jitter: the median step of 7 plays, one per ...".
std::string what_varied(const StepPlays& what, std::size_t count) {
  const std::string median = "the median step of " + std::to_string(count) + " plays, ";
  if (what.jitter && what.store_draws) {
    return "rank jitter and data store: " + median +
           "each at a measured moment of the ranks' slowdowns and with its own draw of the "
           "nodes holding the step's samples";
  }
  if (what.jitter)
    return "rank jitter: " + median + "one per measured moment of the ranks' slowdowns";
  return "data store: " + median + "each with its own draw of the nodes holding the step's samples";
}

}  // namespace

SimulationOutcome median_play(std::vector<SimulationOutcome> plays, const StepPlays& what) {
  if (plays.size() == 1) {
    auto only = std::move(plays.front());
    if (what.jitter && only.result.status != PointStatus::failed) {
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
  std::stable_sort(ok.begin(), ok.end(),
                   [](const SimulationOutcome& a, const SimulationOutcome& b) {
                     return a.result.step_seconds < b.result.step_seconds;
                   });
  const double fastest = ok.front().result.step_seconds;
  const double slowest = ok.back().result.step_seconds;
  const std::size_t count = ok.size();
  SimulationOutcome median = std::move(ok[(count - 1) / 2]);
  char steps[80];
  std::snprintf(steps, sizeof steps, " (steps %.6g to %.6g s)", fastest, slowest);
  median.result.note += "; " + what_varied(what, count) + steps;
  median.wall_seconds = wall_seconds;
  return median;
}

}  // namespace tessera::sim
