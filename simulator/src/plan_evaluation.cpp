#include "tessera/simulator/plan_evaluation.hpp"

namespace tessera::sim {

std::vector<std::optional<PointResult>> simulate_candidates(
    const LoadedScenario& base, const std::vector<const ScreenedCandidate*>& candidates,
    const SimulationOptions& options, int jobs, const RunLimits& limits) {
  std::vector<LoadedScenario> scenarios;
  scenarios.reserve(candidates.size());
  for (const auto* candidate : candidates) {
    scenarios.push_back(candidate_scenario(base, candidate->candidate.strategy));
    scenarios.back().points.front().index = candidate->candidate.index;
  }
  std::vector<PointToSimulate> points;
  for (const auto& scenario : scenarios) points.push_back({&scenario, &scenario.points.front()});
  std::vector<std::optional<PointResult>> rows;
  for (auto& outcome : simulate_points(points, options, jobs, limits)) {
    if (!outcome) {
      rows.emplace_back();
      continue;
    }
    outcome->result.layer_compute.clear();
    rows.push_back(std::move(outcome->result));
  }
  return rows;
}

WaveEvaluator local_wave_evaluator(const LoadedScenario& base, const SimulationOptions& options,
                                   int jobs) {
  return [&base, options, jobs](const std::vector<const ScreenedCandidate*>& wave,
                                const SearchDeadline& deadline) {
    return simulate_candidates(base, wave, options, jobs, {.deadline = deadline});
  };
}

}  // namespace tessera::sim
