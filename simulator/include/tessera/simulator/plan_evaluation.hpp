#pragma once
// The simulator's part in `tessera plan`: candidates of a wave simulated in forked children
// (simulate_pool.hpp), each as its own one-point scenario (candidate_scenario).
#include <vector>

#include "tessera/core/plan_search/plan_search.hpp"
#include "tessera/simulator/simulate_pool.hpp"

namespace tessera::sim {

// Results in the order of `candidates`; a failed simulation gives a failed row, not an
// exception, and one not finished by the limits' deadline none. Rows carry no per-layer compute
// times (plan keeps its rows small).
std::vector<std::optional<PointResult>> simulate_candidates(
    const LoadedScenario& base, const std::vector<const ScreenedCandidate*>& candidates,
    const SimulationOptions& options, int jobs, const RunLimits& limits = {});

// A wave evaluator for search_plan that simulates every candidate on this machine.
WaveEvaluator local_wave_evaluator(const LoadedScenario& base, const SimulationOptions& options,
                                   int jobs);

}  // namespace tessera::sim
