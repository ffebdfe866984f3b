#pragma once
// Many points simulated side by side: each point is played in its own forked child (one SimGrid
// engine per process), at most `jobs` at a time. This is how `tessera plan` evaluates a wave of
// candidates without a process start or a scenario load per candidate.
#include <vector>

#include "tessera/simulator/run_limits.hpp"
#include "tessera/simulator/simulate_point.hpp"

namespace tessera::sim {

struct PointToSimulate {
  const LoadedScenario* scenario = nullptr;
  const SweepPoint* point = nullptr;
};

// Outcomes in the order of `points`, as simulate_point_isolated gives them (the first epoch's
// step played too where it reads elsewhere), except that a point whose child fails does not
// throw: its result has status failed and a note saying why. Traces are not recorded. A point
// not finished by the limits' deadline has no outcome.
std::vector<std::optional<SimulationOutcome>> simulate_points(
    const std::vector<PointToSimulate>& points, const SimulationOptions& options, int jobs,
    const RunLimits& limits = {});

}  // namespace tessera::sim
