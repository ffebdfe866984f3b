#pragma once
// What differs from one step to the next, played as several steps: a cluster's rank jitter (core's
// rank_jitter.hpp: each measured moment stretches every rank's compute by its slowdown then) and
// the data store's holders (core's sample_holders.hpp: each step's samples lie where the shuffle
// put them). A point is played once per moment or draw, and its result is the play of median
// step, as the real backend reports its median measured step. One child per play: a SimGrid
// engine runs once per process.
#include <cstddef>
#include <vector>

#include "tessera/core/point/point_input.hpp"
#include "tessera/simulator/simulate_point.hpp"

namespace tessera::sim {

// More plays than this add little to a median and cost a simulation each.
inline constexpr std::size_t kMostJitterPlays = 63;
// Draws of the data store's holders per point: each costs a simulation, and the median of 7 moves
// by whole samples of the busiest holder (docs/measurements/2026-12-05-data-store-holders.md).
inline constexpr std::size_t kStoreDraws = 7;

// Whether a step reading from `source` reads other nodes' host memory (the data store over more
// than one node): its holders are then drawn, and no node reads as another does.
bool reads_data_store_across_nodes(const ClusterSpec& cluster, const ParallelConfig& config,
                                   InputSource source);

struct StepPlays {
  std::vector<SimulationOptions> options;  // one per play
  bool jitter = false;                     // each play at a measured moment of the rank jitter
  bool store_draws = false;                // each play with its own draw of the holders
};

// The plays of `point`'s step in `options.epoch`: one as given where nothing differs from step to
// step; else one per moment of the jitter (at most kMostJitterPlays, spread evenly over the
// measurement) and at least kStoreDraws where the data store's holders are drawn, play p taking
// draw p.
StepPlays step_plays(const LoadedScenario& scenario, const SweepPoint& point,
                     const SimulationOptions& options);

// The play whose step is the (lower) median of the successful ones, its note saying so; a single
// play as it is, its note saying so where the cluster has jitter (one measured moment). Failed
// plays count only when every play failed (the first failure is returned).
SimulationOutcome median_play(std::vector<SimulationOutcome> plays, const StepPlays& what);

}  // namespace tessera::sim
