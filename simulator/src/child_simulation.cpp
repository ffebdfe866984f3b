#include "child_simulation.hpp"

#include "tessera/core/result/point_identity.hpp"

namespace tessera::sim {

nlohmann::json simulation_message(const SimulationOutcome& outcome) {
  nlohmann::json message{{"csv", results_to_csv({outcome.result})},
                         {"layer_compute", to_json(outcome.result.layer_compute)},
                         {"wall_seconds", outcome.wall_seconds},
                         {"actors", outcome.simulated_actors}};
  if (!outcome.trace.is_null()) message["trace"] = outcome.trace;
  return message;
}

SimulationOutcome simulation_outcome(const ChildOutcome& child, const std::string& scenario,
                                     const SweepPoint& point) {
  SimulationOutcome outcome;
  std::string problem;
  if (child.signal != 0) {
    problem = crash_text(child.signal);
  } else if (!child.message) {
    problem = "returned no result";
  } else if (child.message->contains("error")) {
    problem = "failed: " + (*child.message)["error"].get<std::string>();
  }
  if (!problem.empty()) {
    auto& r = outcome.result;
    r = point_identity(scenario, static_cast<std::int64_t>(point.index), "sim", point.config);
    r.status = PointStatus::failed;
    r.note = "simulation " + problem;
    return outcome;
  }
  const auto& message = *child.message;
  outcome.result = results_from_csv(message["csv"].get<std::string>(), "simulation").at(0);
  outcome.result.layer_compute = layer_compute_from_json(message["layer_compute"]);
  if (message.contains("trace")) outcome.trace = message["trace"];
  outcome.wall_seconds = message["wall_seconds"].get<double>();
  outcome.simulated_actors = message["actors"].get<double>();
  return outcome;
}

void add_first_epoch(SimulationOutcome& steady, const SimulationOutcome& first_epoch) {
  if (steady.result.status == PointStatus::failed) return;
  if (first_epoch.result.status == PointStatus::failed) {
    steady.result.status = PointStatus::failed;
    steady.result.note += "; first epoch: " + first_epoch.result.note;
    return;
  }
  steady.result.first_epoch_step_seconds = first_epoch.result.step_seconds;
  steady.wall_seconds += first_epoch.wall_seconds;
}

}  // namespace tessera::sim
