#include "tessera/core/sweep_runner.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tessera/core/atomic_file.hpp"
#include "tessera/core/network_micro_batch_plan.hpp"
#include "tessera/core/utc_time.hpp"

namespace tessera {
namespace {

// The previous run's rows, with the per-layer times its JSON has (the CSV does not carry them).
std::vector<PointResult> read_previous(const std::string& csv_path, const std::string& json_path) {
  std::ifstream in(csv_path, std::ios::binary);
  if (!in) return {};
  std::ostringstream text;
  text << in.rdbuf();
  auto rows = results_from_csv(text.str(), csv_path);
  std::ifstream json_in(json_path, std::ios::binary);
  attach_json_only_fields(rows,
                          nlohmann::json::parse(json_in, nullptr, /*allow_exceptions=*/false));
  return rows;
}

// Whether the previous run's JSON was made on the same platform with the same backend settings
// (network model, simulation mode, profiles, ...): points of another configuration are not
// resumed, they are simulated or measured again.
bool same_configuration(const std::string& json_path, const RunResult& current) {
  std::ifstream in(json_path, std::ios::binary);
  if (!in) return false;
  const auto previous = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (previous.is_discarded() || !previous.is_object()) return false;
  return previous.value("platform", std::string()) == current.platform &&
         previous.value("settings", nlohmann::json()) == current.settings;
}

}  // namespace

bool result_matches_point(const PointResult& row, const std::string& scenario,
                          const std::string& backend, const SweepPoint& point) {
  const auto& c = point.config;
  return row.scenario == scenario && row.backend == backend &&
         row.point == static_cast<std::int64_t>(point.index) && row.gpus == c.gpus() &&
         row.data == c.data && row.spatial_grid == grid_to_string(c.spatial_grid) &&
         row.model_degree == c.model_degree && row.mini_batch == c.mini_batch &&
         row.status != PointStatus::failed;
}

SweepRunResult run_sweep(const LoadedScenario& scenario, const SweepRunOptions& options,
                         const PointRunner& run_point, const SweepProgress& progress) {
  const auto& s = scenario.scenario;
  const std::filesystem::path directory =
      options.output_directory.empty() ? s.outputs.directory : options.output_directory;
  SweepRunResult run;
  run.csv_path = (directory / (options.backend + ".csv")).string();
  run.json_path = (directory / (options.backend + ".json")).string();
  RunResult document;
  document.scenario = s.name;
  document.scenario_file = s.file;
  document.backend = options.backend;
  document.tessera_version = options.tessera_version;
  document.platform = scenario.cluster.name;
  document.model = scenario.model.name();
  document.settings = options.settings;
  const bool resumable = options.resume && same_configuration(run.json_path, document);
  const auto previous =
      resumable ? read_previous(run.csv_path, run.json_path) : std::vector<PointResult>{};

  // The plan is a function of the scenario, the point and the profiles: recorded here for
  // points whose backend did not record the one it ran (the simulator's is this one).
  const ComputeCostModel costs(roofline_of(scenario.cluster.gpu), options.profiles,
                               s.micro_batching);
  auto with_plan = [&](PointResult result, const SweepPoint& point) {
    if (result.micro_batching.is_null()) {
      result.micro_batching =
          to_json(plan_network(scenario.model, point.plan, costs, s.model.dtype));
    }
    return result;
  };

  const std::size_t total = scenario.points.size();
  for (std::size_t i = 0; i < total; ++i) {
    const auto& point = scenario.points[i];
    const PointResult* kept = nullptr;
    for (const auto& row : previous) {
      if (result_matches_point(row, s.name, options.backend, point)) kept = &row;
    }
    if (kept) {
      run.points.push_back(with_plan(*kept, point));
      ++run.resumed;
      if (progress) progress(i + 1, total, point, &run.points.back(), true);
      continue;
    }
    if (progress) progress(i, total, point, nullptr, false);
    run.points.push_back(with_plan(run_point(point), point));
    document.points = run.points;
    document.created_utc = utc_now();
    // Written after every point: an interrupted sweep loses at most the point in flight.
    write_results_csv(run.csv_path, run.points);
    write_run_json(run.json_path, document);
    if (progress) progress(i + 1, total, point, &run.points.back(), false);
  }
  document.points = run.points;
  document.created_utc = utc_now();
  write_results_csv(run.csv_path, run.points);
  write_run_json(run.json_path, document);
  return run;
}

std::vector<double> parallel_efficiency(const std::vector<PointResult>& points, Scaling scaling) {
  std::vector<double> efficiency;
  if (points.empty()) return efficiency;
  const auto& first = points.front();
  for (const auto& p : points) {
    if (p.step_seconds <= 0 || first.step_seconds <= 0) {
      efficiency.push_back(0);
      continue;
    }
    const double ratio = first.step_seconds / p.step_seconds;
    efficiency.push_back(scaling == Scaling::weak ? ratio
                                                  : ratio * static_cast<double>(first.gpus) /
                                                        static_cast<double>(p.gpus));
  }
  return efficiency;
}

}  // namespace tessera
