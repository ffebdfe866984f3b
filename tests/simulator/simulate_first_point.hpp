#pragma once
// A scenario's first point simulated in a child process, the simulator tests' common case.
#include <cstdint>

#include "tessera/core/loading/scenario_loader.hpp"
#include "tessera/simulator/simulate_point.hpp"

namespace tessera::test {

inline PointResult simulate_first_point(
    const LoadedScenario& loaded,
    std::int64_t min_played_nodes = sim::SimulationOptions{}.min_played_nodes) {
  sim::SimulationOptions options;
  options.min_played_nodes = min_played_nodes;
  return sim::simulate_point_isolated(loaded, loaded.points.front(), options).result;
}

}  // namespace tessera::test
