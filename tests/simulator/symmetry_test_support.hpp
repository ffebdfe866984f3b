#pragma once
// One point simulated both ways, every GPU played and the symmetric reduction, for the tests that
// hold the second to the first.
#include <cstdint>

#include "tessera/core/loading/scenario_loader.hpp"
#include "tessera/simulator/simulate_point.hpp"

namespace tessera::test {

struct FullAndSymmetric {
  PointResult full;
  PointResult symmetric;
};

// `loaded`'s first point in sim.mode full, then symmetric, keeping at least `min_played_nodes`.
inline FullAndSymmetric simulate_full_and_symmetric(LoadedScenario loaded,
                                                    std::int64_t min_played_nodes) {
  sim::SimulationOptions options;
  options.min_played_nodes = min_played_nodes;
  FullAndSymmetric pair;
  loaded.scenario.sim.mode = "full";
  pair.full = sim::simulate_point_isolated(loaded, loaded.points.front(), options).result;
  loaded.scenario.sim.mode = "symmetric";
  pair.symmetric = sim::simulate_point_isolated(loaded, loaded.points.front(), options).result;
  return pair;
}

}  // namespace tessera::test
