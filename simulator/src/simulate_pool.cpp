#include "tessera/simulator/simulate_pool.hpp"

#include "jitter_plays.hpp"
#include "process/child_pool.hpp"
#include "tessera/core/point/point_input.hpp"

namespace tessera::sim {
namespace {

// What a child sends back: the result row (CSV keeps every double exactly) and its cost.
nlohmann::json outcome_message(const SimulationOutcome& outcome) {
  return {{"csv", results_to_csv({outcome.result})},
          {"layer_compute", to_json(outcome.result.layer_compute)},
          {"wall_seconds", outcome.wall_seconds},
          {"actors", outcome.simulated_actors}};
}

SimulationOutcome outcome_of(const ChildOutcome& child, const PointToSimulate& point) {
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
    r.scenario = point.scenario->scenario.name;
    r.point = static_cast<std::int64_t>(point.point->index);
    r.backend = "sim";
    r.status = PointStatus::failed;
    r.note = "simulation " + problem;
    return outcome;
  }
  const auto& message = *child.message;
  outcome.result = results_from_csv(message["csv"].get<std::string>(), "simulation").at(0);
  outcome.result.layer_compute = layer_compute_from_json(message["layer_compute"]);
  outcome.wall_seconds = message["wall_seconds"].get<double>();
  outcome.simulated_actors = message["actors"].get<double>();
  return outcome;
}

}  // namespace

std::vector<std::optional<SimulationOutcome>> simulate_points(
    const std::vector<PointToSimulate>& points, const SimulationOptions& options, int jobs,
    const RunLimits& limits) {
  // One task per point, epoch that differs (the steady state, then the first epoch where its
  // samples come from elsewhere) and play (one per moment of a cluster's rank jitter).
  struct Task {
    std::size_t point;
    bool first_epoch;
  };
  std::vector<Task> tasks;
  std::vector<std::function<nlohmann::json()>> work;
  const auto add_plays = [&](std::size_t i, bool first_epoch, const SimulationOptions& epoch) {
    const auto& p = points[i];
    for (const auto& play : jitter_plays(p.scenario->cluster, epoch)) {
      tasks.push_back({i, first_epoch});
      work.emplace_back(
          [p, play] { return outcome_message(simulate_point(*p.scenario, *p.point, play)); });
    }
  };
  for (std::size_t i = 0; i < points.size(); ++i) {
    auto steady = options;
    steady.epoch = Epoch::later;
    steady.trace = false;
    add_plays(i, false, steady);
    if (plan_input(*points[i].scenario, points[i].point->config.gpus()).epochs_differ()) {
      auto first = steady;
      first.epoch = Epoch::first;
      add_plays(i, true, first);
    }
  }
  const auto children = run_in_children(work, jobs, limits);
  std::vector<std::vector<SimulationOutcome>> steady_plays(points.size()),
      first_plays(points.size());
  std::vector<bool> cut_off(points.size(), false);
  for (std::size_t t = 0; t < tasks.size(); ++t) {
    const auto& task = tasks[t];
    if (children[t].cut_off) cut_off[task.point] = true;
    if (cut_off[task.point]) continue;
    (task.first_epoch ? first_plays : steady_plays)[task.point].push_back(
        outcome_of(children[t], points[task.point]));
  }
  std::vector<std::optional<SimulationOutcome>> outcomes(points.size());
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (cut_off[i] || steady_plays[i].empty()) continue;
    auto& into =
        outcomes[i].emplace(median_play(std::move(steady_plays[i]), points[i].scenario->cluster));
    if (first_plays[i].empty()) continue;
    const auto outcome = median_play(std::move(first_plays[i]), points[i].scenario->cluster);
    if (outcome.result.status == PointStatus::failed) {
      into.result.status = PointStatus::failed;
      into.result.note += "; first epoch: " + outcome.result.note;
    } else {
      into.result.first_epoch_step_seconds = outcome.result.step_seconds;
      into.wall_seconds += outcome.wall_seconds;
    }
  }
  return outcomes;
}

}  // namespace tessera::sim
