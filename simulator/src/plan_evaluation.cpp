#include "tessera/simulator/plan_evaluation.hpp"

namespace tessera::sim {

std::vector<PointResult> simulate_candidates(
    const LoadedScenario& base, const std::vector<const ScreenedCandidate*>& candidates,
    const SimulationOptions& options, int jobs) {
  std::vector<LoadedScenario> scenarios;
  scenarios.reserve(candidates.size());
  for (const auto* candidate : candidates) {
    scenarios.push_back(candidate_scenario(base, candidate->candidate.strategy));
    scenarios.back().points.front().index = candidate->candidate.index;
  }
  std::vector<PointToSimulate> points;
  for (const auto& scenario : scenarios) points.push_back({&scenario, &scenario.points.front()});
  std::vector<PointResult> rows;
  for (auto& outcome : simulate_points(points, options, jobs)) {
    outcome.result.layer_compute.clear();
    rows.push_back(std::move(outcome.result));
  }
  return rows;
}

WaveEvaluator local_wave_evaluator(const LoadedScenario& base, const SimulationOptions& options,
                                   int jobs) {
  return [&base, options, jobs](const std::vector<const ScreenedCandidate*>& wave) {
    return simulate_candidates(base, wave, options, jobs);
  };
}

}  // namespace tessera::sim
