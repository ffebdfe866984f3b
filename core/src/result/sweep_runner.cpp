#include "tessera/core/result/sweep_runner.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tessera/core/common/quantity.hpp"
#include "tessera/core/common/utc_time.hpp"
#include "tessera/core/micro_batching/network_micro_batch_plan.hpp"
#include "tessera/core/result/point_time_to_train.hpp"
#include "tessera/core/result/result_files.hpp"
#include "tessera/core/result/run_inputs.hpp"
#include "tessera/core/scenario/scenario_json.hpp"

namespace tessera {
namespace {

// The previous run's points, from its JSON (the record); `unreadable` when there is a document
// that cannot be read, a reason to run every point again.
std::vector<PointResult> read_previous(const std::string& json_path, bool& unreadable) {
  std::ifstream in(json_path, std::ios::binary);
  if (!in) return {};
  std::ostringstream text;
  text << in.rdbuf();
  try {
    return results_from_run_json(text.str(), json_path);
  } catch (const std::runtime_error&) {
    unreadable = true;
    return {};
  }
}

void add_reason(SweepRunResult& run, const std::string& reason) {
  if (std::find(run.recompute_reasons.begin(), run.recompute_reasons.end(), reason) ==
      run.recompute_reasons.end()) {
    run.recompute_reasons.push_back(reason);
  }
}

// JSON first: it is the record that resume reads, so a kill between the two writes leaves a CSV
// one point behind, which the next write or resume brings level.
void write_results(const SweepRunResult& run, RunResult& header) {
  header.created_utc = utc_now();
  const auto points = point_result_refs(run.points);
  write_run_json(run.json_path, header, points);
  write_results_csv(run.csv_path, points);
}

nlohmann::json inputs_of(const LoadedScenario& scenario, const SweepRunOptions& options) {
  return digest_run_inputs(scenario, {.backend = options.backend,
                                      .settings = options.settings,
                                      .machine = options.machine,
                                      .tessera_version = options.tessera_version,
                                      .profile_files = options.profile_files});
}

// The stored result of `point` that may be kept (same configuration, inputs unchanged), or
// null; counts and explains what must be recomputed in `run` when given (each point once).
const PointResult* kept_result(const std::vector<PointResult>& previous, bool unreadable,
                               const std::string& scenario, const std::string& backend,
                               const SweepPoint& point, const nlohmann::json& inputs,
                               SweepRunResult* run) {
  const PointResult* kept = nullptr;
  std::vector<std::string> reasons;
  if (unreadable) reasons.emplace_back("the previous results file could not be read");
  for (const auto& row : previous) {
    if (row.backend != backend || row.point != static_cast<std::int64_t>(point.index)) continue;
    if (row.status == PointStatus::failed) {
      if (row.scenario == scenario) reasons.emplace_back("it failed before");
      continue;
    }
    if (row.scenario != scenario) {
      reasons.emplace_back("the scenario's name changed");
      continue;
    }
    if (!result_matches_point(row, scenario, backend, point)) {
      reasons.emplace_back("the point's configuration changed (GPUs, grid or batch)");
      continue;
    }
    const auto changed = changed_inputs(row.inputs, inputs);
    if (changed.empty()) {
      kept = &row;
      continue;
    }
    for (const auto& kind : changed) reasons.push_back(describe_input_change(kind));
  }
  if (kept == nullptr && !reasons.empty() && run != nullptr) {
    ++run->recomputed;
    for (const auto& reason : reasons) add_reason(*run, reason);
  }
  return kept;
}

// The previous run's rows when some may be kept: to resume, or beside a selection of points.
std::vector<PointResult> previous_rows(const std::string& json_path, const SweepRunOptions& options,
                                       bool& unreadable) {
  if (!options.resume && options.only_points.empty()) return {};
  return read_previous(json_path, unreadable);
}

}  // namespace

std::string resume_summary(const SweepRunResult& run) {
  if (run.resumed == 0 && run.recomputed == 0 && run.not_selected == 0) return {};
  std::string text = "kept " + counted(static_cast<std::int64_t>(run.resumed), "point");
  if (run.recomputed > 0) {
    text += "; recomputed " + std::to_string(run.recomputed);
    for (std::size_t i = 0; i < run.recompute_reasons.size(); ++i) {
      text += (i == 0 ? ": " : ", ") + run.recompute_reasons[i];
    }
  }
  if (run.not_selected > 0) {
    text += "; " + counted(static_cast<std::int64_t>(run.not_selected), "point") +
            " not selected (--points) and not in the results";
  }
  return text;
}

std::string failed_points_summary(const std::vector<PointResult>& points) {
  std::string each;
  std::size_t failed = 0;
  for (const auto& point : points) {
    if (point.status != PointStatus::failed) continue;
    ++failed;
    each += "\n  point " + std::to_string(point.point) + ": " + point.note;
  }
  if (failed == 0) return {};
  return std::to_string(failed) + " of " + std::to_string(points.size()) +
         " point(s) failed (the others are written; a rerun recomputes only these):" + each;
}

bool result_matches_point(const PointResult& row, const std::string& scenario,
                          const std::string& backend, const SweepPoint& point) {
  const auto& c = point.config;
  return row.scenario == scenario && row.backend == backend &&
         row.point == static_cast<std::int64_t>(point.index) && row.gpus == c.gpus() &&
         row.data == c.data && row.spatial_grid == grid_to_string(c.spatial_grid) &&
         row.model_degree == c.model_degree && row.tensor_degree == c.tensor &&
         row.mini_batch == c.mini_batch && row.status != PointStatus::failed;
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
  document.resolved_scenario = to_json(s);
  document.statistical_efficiency = to_json(scenario.statistical_efficiency);
  const auto inputs = inputs_of(scenario, options);
  bool unreadable = false;
  const auto previous = previous_rows(run.json_path, options, unreadable);

  // The plan is a function of the scenario, the point and the profiles: recorded here for
  // points whose backend did not record the one it ran (the simulator's is this one). Time to
  // train is filled here too, for both backends and for kept points alike: it depends on the
  // step time and the training key only, which the input digests leave out.
  const ComputeCostModel costs(roofline_of(scenario.cluster.gpu), options.profiles,
                               s.micro_batching);
  auto with_plan = [&](PointResult result, const SweepPoint& point) {
    result.inputs = inputs;
    if (result.micro_batching.is_null()) {
      result.micro_batching =
          to_json(plan_network(scenario.model, point.plan, costs, s.model.dtype));
    }
    fill_time_to_train(result, scenario.statistical_efficiency);
    return result;
  };

  std::vector<const SweepPoint*> chosen;
  for (const auto& point : scenario.points) {
    if (point_selected(options, point.index)) {
      chosen.push_back(&point);
    } else if (const auto* kept = kept_result(previous, unreadable, s.name, options.backend, point,
                                              inputs, nullptr)) {
      run.points.push_back(with_plan(*kept, point));
      ++run.resumed;
    } else {
      ++run.not_selected;
    }
  }
  const std::size_t total = chosen.size();
  for (std::size_t i = 0; i < total; ++i) {
    const auto& point = *chosen[i];
    const PointResult* kept = options.resume ? kept_result(previous, unreadable, s.name,
                                                           options.backend, point, inputs, &run)
                                             : nullptr;
    if (kept) {
      run.points.push_back(with_plan(*kept, point));
      ++run.resumed;
      if (progress) progress(i + 1, total, point, &run.points.back(), true);
      continue;
    }
    if (progress) progress(i, total, point, nullptr, false);
    run.points.push_back(with_plan(run_point(point), point));
    // Written after every point: an interrupted sweep loses at most the point in flight.
    write_results(run, document);
    if (progress) progress(i + 1, total, point, &run.points.back(), false);
  }
  // Rows in sweep order, kept rows of points left out among them.
  std::stable_sort(run.points.begin(), run.points.end(),
                   [](const PointResult& a, const PointResult& b) { return a.point < b.point; });
  write_results(run, document);
  return run;
}

std::vector<std::size_t> points_to_run(const LoadedScenario& scenario,
                                       const SweepRunOptions& options) {
  const auto& s = scenario.scenario;
  const std::filesystem::path directory =
      options.output_directory.empty() ? s.outputs.directory : options.output_directory;
  const auto inputs = inputs_of(scenario, options);
  bool unreadable = false;
  const auto previous =
      options.resume ? read_previous((directory / (options.backend + ".json")).string(), unreadable)
                     : std::vector<PointResult>{};
  std::vector<std::size_t> indices;
  for (std::size_t i = 0; i < scenario.points.size(); ++i) {
    if (!point_selected(options, scenario.points[i].index)) continue;
    if (!kept_result(previous, unreadable, s.name, options.backend, scenario.points[i], inputs,
                     nullptr)) {
      indices.push_back(i);
    }
  }
  return indices;
}

std::vector<double> parallel_efficiency(const std::vector<PointResult>& points, Scaling scaling) {
  // The baseline, as analysis/scaling_efficiency.py takes it: the fewest GPUs among the points
  // with a step time, an ok one first (a sweep may list its counts in any order).
  const PointResult* base = nullptr;
  const auto better_base = [&](const PointResult& p) {
    if (p.step_seconds <= 0) return false;
    if (base == nullptr) return true;
    const bool ok = p.status == PointStatus::ok, base_ok = base->status == PointStatus::ok;
    return ok != base_ok ? ok : p.gpus < base->gpus;
  };
  for (const auto& p : points) {
    if (better_base(p)) base = &p;
  }
  std::vector<double> efficiency;
  for (const auto& p : points) {
    if (p.step_seconds <= 0 || base == nullptr) {
      efficiency.push_back(0);
      continue;
    }
    const double ratio = base->step_seconds / p.step_seconds;
    efficiency.push_back(scaling == Scaling::weak ? ratio
                                                  : ratio * static_cast<double>(base->gpus) /
                                                        static_cast<double>(p.gpus));
  }
  return efficiency;
}

bool point_selected(const SweepRunOptions& options, std::size_t index) {
  return options.only_points.empty() ||
         std::find(options.only_points.begin(), options.only_points.end(), index) !=
             options.only_points.end();
}

}  // namespace tessera
