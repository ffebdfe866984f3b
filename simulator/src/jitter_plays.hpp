#pragma once
// A cluster with rank jitter (core's rank_jitter.hpp) is played once per measured moment, each
// rank's compute stretched by its slowdown then, and the point's result is the play of median
// step, as the real backend reports its median measured step. One child per play: a SimGrid
// engine runs once per process.
#include <cstddef>
#include <vector>

#include "tessera/simulator/simulate_point.hpp"

namespace tessera::sim {

// More plays than this add little to a median and cost a simulation each.
inline constexpr std::size_t kMostJitterPlays = 63;

// The options of each play: one without jitter (the options as given), else one per moment, at
// most kMostJitterPlays of them spread evenly over the measurement.
std::vector<SimulationOptions> jitter_plays(const ClusterSpec& cluster,
                                            const SimulationOptions& options);

// The play whose step is the (lower) median of the successful ones, its note saying so; a single
// play as it is, its note saying so where `cluster` has jitter (one measured moment). Failed
// plays count only when every play failed (the first failure is returned).
SimulationOutcome median_play(std::vector<SimulationOutcome> plays, const ClusterSpec& cluster);

}  // namespace tessera::sim
