#pragma once
// The simulator backend's entry point: one sweep point of a scenario, simulated in a fresh child
// process (SimGrid allows one engine per process), giving a result row and, on request, a
// Chrome/Perfetto timeline of the traced GPUs.
#include <cstddef>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "tessera/core/cost/profile_database.hpp"
#include "tessera/core/loading/scenario_loader.hpp"
#include "tessera/core/result/result_schema.hpp"
#include "tessera/core/strategy/input_source.hpp"
#include "tessera/simulator/collectives/collectives.hpp"

namespace tessera::sim {

struct SimulationOptions {
  const ProfileDatabase* profiles = nullptr;  // measured kernel times; roofline where absent
  bool trace = false;                         // record the timeline of scenario.outputs.trace_gpus
  Granularity granularity = Granularity::aggregated;
  // Symmetric mode (scenario sim.mode): play at least this many nodes (see
  // play/symmetric_reduction.hpp); more is closer to the full simulation and slower.
  std::int64_t min_played_nodes = 32;
  // Which epoch's step to play (input_source.hpp): they differ only in where samples come from.
  Epoch epoch = Epoch::later;
  // With a cluster's rank jitter: the measured moment whose slowdowns stretch each rank's compute
  // (simulate_point_isolated and simulate_points play every moment and keep the median step).
  std::optional<std::size_t> jitter_moment;
  // Where the steps read the data store (io.store: memory): the draw of the nodes holding the
  // step's samples (core's sample_holders.hpp; simulate_point_isolated and simulate_points play
  // several draws and keep the median step).
  std::uint64_t store_draw = 0;
};

struct SimulationOutcome {
  PointResult result;
  nlohmann::json trace;  // Chrome trace-event JSON, empty unless requested
  double wall_seconds = 0;
  double simulated_actors = 0;
};

// Runs in the calling process; call at most once per process (see simulate_point_isolated).
SimulationOutcome simulate_point(const LoadedScenario& scenario, const SweepPoint& point,
                                 const SimulationOptions& options);

// The same in a forked child, so a sweep can simulate many points from one process. Where the
// first epoch reads its samples elsewhere than later ones, both steps are played (one child
// each): the result is the steady state's, with the first epoch's step in
// first_epoch_step_seconds. A child that crashes (out of memory, say) or throws gives a failed
// result whose note says why, so that a sweep goes on to its other points.
SimulationOutcome simulate_point_isolated(const LoadedScenario& scenario, const SweepPoint& point,
                                          const SimulationOptions& options);

// The network model the simulator configures (named in every result's note).
std::string network_model_description(const Scenario& scenario);

}  // namespace tessera::sim
