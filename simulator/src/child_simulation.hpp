#pragma once
// A point's simulation played in a forked child (one SimGrid engine per process): what the child
// sends back, what the parent makes of it, and how a point's two epochs join. Shared by `run`'s
// one-point children (simulate_point_isolated) and plan's pool (simulate_points), so a crash
// reads the same in both: a failed row naming the cause, and the sweep goes on.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "process/child_process.hpp"
#include "tessera/simulator/simulate_point.hpp"

namespace tessera::sim {

// The child's answer: the result row (CSV keeps every double exactly), its layer times and its
// cost, with the timeline where one was asked for.
nlohmann::json simulation_message(const SimulationOutcome& outcome);

// The parent's reading of a child: its outcome, or a failed row of `scenario`'s `point` (its
// identity set) whose note says why (a crash by its signal, an exception by its text, no answer).
SimulationOutcome simulation_outcome(const ChildOutcome& child, const std::string& scenario,
                                     const SweepPoint& point);

// The steady state's outcome with the first epoch's step in first_epoch_step_seconds; failed
// where the first epoch failed, its note saying so.
void add_first_epoch(SimulationOutcome& steady, const SimulationOutcome& first_epoch);

}  // namespace tessera::sim
