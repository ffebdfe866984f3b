#include "tessera/simulator/simulate_pool.hpp"

#include "child_simulation.hpp"
#include "process/child_pool.hpp"
#include "step_plays.hpp"
#include "tessera/core/point/point_input.hpp"

namespace tessera::sim {

std::vector<std::optional<SimulationOutcome>> simulate_points(
    const std::vector<PointToSimulate>& points, const SimulationOptions& options, int jobs,
    const RunLimits& limits) {
  // One task per point, epoch that differs (the steady state, then the first epoch where its
  // samples come from elsewhere) and play (step_plays.hpp: one per moment of a cluster's rank
  // jitter or draw of the data store's holders).
  struct Task {
    std::size_t point;
    bool first_epoch;
  };
  std::vector<Task> tasks;
  std::vector<std::function<nlohmann::json()>> work;
  std::vector<StepPlays> steady_what(points.size()), first_what(points.size());
  const auto add_plays = [&](std::size_t i, bool first_epoch, const SimulationOptions& epoch) {
    const auto& p = points[i];
    auto& what = (first_epoch ? first_what : steady_what)[i];
    what = step_plays(*p.scenario, *p.point, epoch);
    for (const auto& play : what.options) {
      tasks.push_back({i, first_epoch});
      work.emplace_back(
          [p, play] { return simulation_message(simulate_point(*p.scenario, *p.point, play)); });
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
    (task.first_epoch ? first_plays : steady_plays)[task.point].push_back(simulation_outcome(
        children[t], points[task.point].scenario->scenario.name, *points[task.point].point));
  }
  std::vector<std::optional<SimulationOutcome>> outcomes(points.size());
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (cut_off[i] || steady_plays[i].empty()) continue;
    auto& into = outcomes[i].emplace(median_play(std::move(steady_plays[i]), steady_what[i]));
    if (first_plays[i].empty()) continue;
    add_first_epoch(into, median_play(std::move(first_plays[i]), first_what[i]));
  }
  return outcomes;
}

}  // namespace tessera::sim
