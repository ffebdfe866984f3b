#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <map>
#include <set>

#include "command_guard.hpp"
#include "commands.hpp"
#include "option_checks.hpp"
#include "output_directory.hpp"
#include "profile_coverage_report.hpp"
#include "rank_spread.hpp"
#include "run_real.hpp"
#include "scenario_target.hpp"
#include "sweep_outcome.hpp"
#include "tessera/core/common/atomic_file.hpp"
#include "tessera/core/common/quantity.hpp"
#include "tessera/core/common/text_table.hpp"
#include "tessera/core/cost/profile_database.hpp"
#include "tessera/core/loading/scenario_loader.hpp"
#include "tessera/core/point/point_input.hpp"
#include "tessera/core/result/sweep_runner.hpp"
#include "tessera/core/strategy/input_source.hpp"
#include "tessera/core/time_to_train/time_to_train.hpp"
#include "tessera/simulator/simulate_point.hpp"
#include "trace_files.hpp"
#include "version_text.hpp"

namespace tessera::app {
namespace {

struct RunSettings {
  std::string file;
  std::string backend = "sim";
  std::string trace_file;
  std::int64_t trace_point = -1;  // default: the last point
  std::string output;
  std::vector<std::string> profiles;
  std::string cluster;
  std::vector<std::size_t> points;  // --points: only these sweep points (empty: every point)
  bool fresh = false;
  bool message_level = false;
  std::int64_t warmup_steps = -1;    // --warmup-steps: replaces real.warmup_steps (real backend)
  std::int64_t measured_steps = -1;  // --measured-steps: replaces real.measured_steps
  std::string interleaved_profile;   // real backend: rows timed again between the steps
  bool interleaved_warm_caches = false;
  bool interleaved_rank_passes = false;
};

// One line per point; on a terminal, a bar redrawn in place.
void show_progress(std::size_t done, std::size_t total, const SweepPoint& point,
                   const PointResult* result, bool resumed) {
  const bool terminal = ::isatty(STDERR_FILENO) != 0;
  const int width = 30;
  const int filled = total == 0 ? width : static_cast<int>(width * done / total);
  std::string line = "[" + std::string(static_cast<std::size_t>(filled), '#') +
                     std::string(static_cast<std::size_t>(width - filled), ' ') + "] " +
                     std::to_string(done) + "/" + std::to_string(total) + "  point " +
                     std::to_string(point.index) + ": " + std::to_string(point.config.gpus()) +
                     " GPUs";
  if (!result) {
    if (terminal) std::cerr << "\r" << line << "  simulating...\x1b[K" << std::flush;
    return;
  }
  if (resumed) {
    line += "  (kept from the previous run)";
  } else if (result->status == PointStatus::failed) {
    line += "  failed (see the end)";
  } else {
    line += "  step " + format_seconds(result->step_seconds);
  }
  if (terminal) {
    std::cerr << "\r" << line << "\x1b[K" << (done == total ? "\n" : "") << std::flush;
  } else {
    std::cerr << line << "\n";
  }
}

std::string summary(const LoadedScenario& loaded, const std::vector<PointResult>& points) {
  const Scaling scaling = loaded.scenario.sweep ? loaded.scenario.sweep->scaling : Scaling::weak;
  const auto efficiency = parallel_efficiency(points, scaling);
  // A first-epoch column only where some point's first epoch reads elsewhere (a data store).
  // A staging column where some point stages its data set before the first step.
  bool epochs_differ = false, stages = false;
  for (const auto& p : points) {
    epochs_differ |= p.first_epoch_step_seconds != p.step_seconds;
    stages |= p.staging_seconds > 0;
  }
  std::vector<std::string> columns{"point", "GPUs", "grid", "global batch", "step"};
  if (epochs_differ) columns.push_back("1st-epoch step");
  if (stages) columns.push_back("staging");
  const bool with_target = loaded.statistical_efficiency.target != TrainingTarget::none;
  if (with_target) {
    columns.push_back("epochs");
    columns.push_back("time to train");
  }
  for (const char* column : {"samples/s", "efficiency", "compute", "halo", "allreduce",
                             "other comm", "I/O", "offload", "idle", "memory/GPU"}) {
    columns.push_back(column);
  }
  // Offloading (vDNN): the time-averaged memory beside the peak.
  const bool offloads = loaded.scenario.memory.offload != OffloadPolicy::none;
  if (offloads) columns.push_back("avg memory");
  columns.push_back("fits");
  TextTable table(columns);
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto& p = points[i];
    const auto& b = p.breakdown;
    char rate[32], eff[32];
    std::snprintf(rate, sizeof rate, "%.2f", p.samples_per_second);
    std::snprintf(eff, sizeof eff, "%.1f%%", 100 * efficiency[i]);
    std::vector<std::string> row{std::to_string(p.point), std::to_string(p.gpus), p.spatial_grid,
                                 std::to_string(p.global_batch)};
    // A failed point has no figures: its status stands in the step's cell (the reason follows
    // the table), dashes in the others.
    if (p.status == PointStatus::failed) {
      row.push_back(to_string(p.status));
      row.resize(columns.size(), "-");
      table.add_row(std::move(row));
      continue;
    }
    row.push_back(format_seconds(p.step_seconds));
    if (epochs_differ) row.push_back(format_seconds(p.first_epoch_step_seconds));
    if (stages) row.push_back(format_seconds(p.staging_seconds));
    if (with_target) {
      char epochs[32];
      std::snprintf(epochs, sizeof epochs, "%.2f", p.epochs);
      row.push_back(epochs);
      row.push_back(format_time_to_train(p.time_to_train_seconds));
    }
    for (auto cell : {std::string(rate), std::string(eff), format_seconds(b.compute_seconds),
                      format_seconds(b.halo_seconds), format_seconds(b.allreduce_seconds),
                      format_seconds(b.other_communication_seconds), format_seconds(b.io_seconds),
                      format_seconds(b.offload_seconds), format_seconds(b.idle_seconds),
                      format_bytes(p.peak_memory_bytes)}) {
      row.push_back(std::move(cell));
    }
    if (offloads) row.push_back(format_bytes(p.average_memory_bytes));
    row.push_back(p.fits ? "yes" : "NO");
    table.add_row(std::move(row));
  }
  std::string text = table.render();
  if (!loaded.points.empty()) {
    text += "input: " + plan_input(loaded, loaded.points.back().config.gpus()).description() + "\n";
  }
  if (with_target) {
    text +=
        "time to train: " + describe_statistical_efficiency(loaded.statistical_efficiency) + "\n";
    for (const auto& p : points) {
      const auto at = p.note.find("time to train extrapolated");
      if (at != std::string::npos) {
        text += "point " + std::to_string(p.point) + ": " + p.note.substr(at) + "\n";
      }
    }
  }
  return text;
}

int run(const RunSettings& settings) {
  if (settings.trace_point >= 0 && settings.trace_file.empty()) {
    std::cerr << "error: --trace-point: names the point --trace writes; give --trace FILE too\n";
    return kExitBadInput;
  }
  if (settings.backend == "real") {
    if (settings.message_level) {
      std::cerr << "error: --message-level applies to --backend sim only\n";
      return kExitBadInput;
    }
    return run_real_backend({.file = settings.file,
                             .cluster = settings.cluster,
                             .output = settings.output,
                             .profiles = settings.profiles,
                             .fresh = settings.fresh,
                             .points = settings.points,
                             .trace_file = settings.trace_file,
                             .trace_point = settings.trace_point,
                             .warmup_steps = settings.warmup_steps,
                             .measured_steps = settings.measured_steps,
                             .interleaved_profile = settings.interleaved_profile,
                             .interleaved_warm_caches = settings.interleaved_warm_caches,
                             .interleaved_rank_passes = settings.interleaved_rank_passes});
  }
  if (settings.warmup_steps >= 0 || settings.measured_steps >= 0 ||
      !settings.interleaved_profile.empty() || settings.interleaved_warm_caches ||
      settings.interleaved_rank_passes) {
    std::cerr << "error: --warmup-steps, --measured-steps and the --interleaved-* options apply "
                 "to --backend real only\n";
    return kExitBadInput;
  }
  const auto loaded = load_checked_scenario(settings.file, settings.cluster);
  check_point_indices(loaded, settings.points);
  check_trace_point(loaded, settings.trace_point, settings.points);
  RankSpread spread;
  const auto profiles =
      load_scenario_profiles(settings.profiles, loaded, settings.file, spread.writer());
  sim::SimulationOptions options;
  options.profiles = profiles.size() > 0 ? &profiles : nullptr;
  options.granularity =
      settings.message_level ? sim::Granularity::message : sim::Granularity::aggregated;
  const TraceFiles traces{settings.trace_file, traced_point(settings.trace_point, settings.points,
                                                            loaded.points.size())};
  SweepRunOptions run_options;
  run_options.backend = settings.backend;
  run_options.output_directory = settings.output;
  run_options.resume = !settings.fresh;
  run_options.only_points = settings.points;
  run_options.tessera_version = build_identity();
  run_options.profiles = options.profiles;
  run_options.profile_files = settings.profiles;
  run_options.settings = {{"network_model", loaded.scenario.sim.network_model},
                          {"allreduce", to_string(loaded.scenario.sim.allreduce)},
                          {"granularity", settings.message_level ? "message" : "aggregated"},
                          {"profiles", settings.profiles}};
  auto simulate = [&](const SweepPoint& point, nlohmann::json* trace) {
    auto point_options = options;
    point_options.trace = traces.traces(point.index);
    auto outcome = sim::simulate_point_isolated(loaded, point, point_options);
    if (point_options.trace && trace) *trace = std::move(outcome.trace);
    return outcome.result;
  };
  // Under mpirun the points to run are shared out over the ranks (rank r takes every r-th),
  // every rank's results go to rank 0, and rank 0 alone records them, as one process would.
  std::set<std::size_t> traced;  // the points whose timeline this run wrote
  const auto write_trace = [&](std::size_t index, const nlohmann::json& trace) {
    if (!traces.traces(index) || trace.is_null()) return;
    write_file_atomically(traces.path(index), trace.dump() + "\n");
    traced.insert(index);
  };
  // Checked before the sweep (not under mpirun: a rank stopping alone would leave the others
  // waiting for it).
  if (spread.size() == 1) {
    prepare_run_outputs(settings.output, traces, loaded, settings.points);
  }
  std::map<std::size_t, std::pair<PointResult, nlohmann::json>> simulated_elsewhere;
  if (spread.size() > 1) {
    nlohmann::json to_run = nlohmann::json::array();
    if (spread.writer()) to_run = points_to_run(loaded, run_options);
    const auto indices = nlohmann::json::parse(spread.broadcast(to_run.dump()));
    nlohmann::json mine = nlohmann::json::array();
    for (std::size_t k = 0; k < indices.size(); ++k) {
      if (!spread.mine(k)) continue;
      const auto& point = loaded.points.at(indices[k].get<std::size_t>());
      // A failure travels to every rank, so that all stop with it rather than wait for this one.
      try {
        nlohmann::json trace;
        const auto row = simulate(point, &trace);
        mine.push_back({{"index", indices[k]}, {"row", to_json(row)}, {"trace", trace}});
      } catch (const std::exception& error) {
        mine.push_back({{"index", indices[k]}, {"error", error.what()}});
      }
    }
    for (const auto& text : spread.gather_all(mine.dump())) {
      for (const auto& entry : nlohmann::json::parse(text)) {
        if (entry.contains("error")) throw std::runtime_error(entry["error"].get<std::string>());
        simulated_elsewhere[entry["index"].get<std::size_t>()] = {
            point_result_from_json(entry["row"]), entry["trace"]};
      }
    }
    if (!spread.writer()) return kExitOk;
  }
  const auto result = run_sweep(
      loaded, run_options,
      [&](const SweepPoint& point) {
        nlohmann::json trace;
        PointResult row;
        const auto done = simulated_elsewhere.find(point.index);
        if (done != simulated_elsewhere.end()) {
          row = done->second.first;
          trace = done->second.second;
        } else {
          row = simulate(point, &trace);
        }
        write_trace(point.index, trace);
        return row;
      },
      show_progress);
  // A traced point kept from an earlier run was not simulated: its step is played again for the
  // timeline alone (the same inputs give the same step).
  for (const auto& row : result.points) {
    const auto index = static_cast<std::size_t>(row.point);
    if (!point_selected(run_options, index) || !traces.traces(index) || traced.contains(index)) {
      continue;
    }
    nlohmann::json trace;
    simulate(loaded.points.at(index), &trace);
    write_trace(index, trace);
  }
  std::cout << summary(loaded, result.points);
  std::cout << "\n"
            << sim::network_model_description(loaded.scenario) << "; results: " << result.csv_path
            << ", " << result.json_path;
  if (const auto resumed = resume_summary(result); !resumed.empty()) {
    std::cout << " (" << resumed << ")";
  }
  std::cout << trace_report(traces, traced, "simulated",
                            "the traced point's simulation gave none (see its note)")
            << "\n";
  return sweep_exit_code(result.points);
}

}  // namespace

void add_run_command(CLI::App& cli, Action& action) {
  auto* command = cli.add_subcommand("run", "Run every sweep point of a scenario on a backend");
  auto settings = std::make_shared<RunSettings>();
  command
      ->add_option("file", settings->file, "Scenario file (YAML); 'default' for the built-in one")
      ->check(kNonEmptyText)
      ->required();
  command
      ->add_option("--backend", settings->backend,
                   "sim (SimGrid simulation) or real (train on this run's MPI ranks, one per "
                   "device: mpirun -np N tessera run ... --backend real)")
      ->check(CLI::IsMember({"sim", "real"}))
      ->default_val("sim");
  command
      ->add_option("--trace", settings->trace_file,
                   "Write a Chrome/Perfetto timeline of one step of the traced GPUs "
                   "(outputs.trace_gpus) to this file: simulated (sim) or measured (real: "
                   "the step the result reports); a name with {point} traces every point")
      ->check(kNonEmptyText);
  command
      ->add_option("--trace-point", settings->trace_point,
                   "Sweep point to trace (default: the last one run)")
      ->check(kPointIndex);
  command
      ->add_option("--output", settings->output,
                   "Directory for the results (default: the scenario's outputs.directory)")
      ->check(kNonEmptyText);
  command->add_option("--profiles", settings->profiles,
                      "Profile databases (tessera profile) with measured kernel times");
  command->add_option("--cluster", settings->cluster,
                      "Cluster file replacing the scenario's platform (e.g. the one tessera "
                      "profile writes for this machine)");
  command
      ->add_option("--points", settings->points,
                   "Only these sweep points (indices, e.g. 1,3); the results keep the other "
                   "points' rows from an earlier run")
      ->delimiter(',')
      ->check(kPointIndex);
  command->add_flag("--fresh", settings->fresh, "Ignore earlier results instead of resuming");
  command
      ->add_option("--warmup-steps", settings->warmup_steps,
                   "Real backend: steps trained before the measured ones (replaces the "
                   "scenario's real.warmup_steps)")
      ->check(whole_number_in(0, 1000000));
  command
      ->add_option("--measured-steps", settings->measured_steps,
                   "Real backend: steps measured, of which the median is reported (replaces the "
                   "scenario's real.measured_steps)")
      ->check(whole_number_in(1, 1000000));
  command->add_option(
      "--interleaved-profile", settings->interleaved_profile,
      "Real backend, with --profiles: between the measured steps, time their rows of each "
      "point's kernels and optimizer updates again (every algorithm and micro-batch, one run at "
      "a time, in turn, for as long as each step took) and write the medians to this profile "
      "file, measured while the steps were (tessera validate-sim compares with it; run on CPU "
      "ranks so far, not yet on a GPU)");
  command->add_flag("--interleaved-warm-caches", settings->interleaved_warm_caches,
                    "With --interleaved-profile: time runs back to back instead of preparing "
                    "the caches before each (tessera profile --warm-caches)");
  command->add_flag("--interleaved-rank-passes", settings->interleaved_rank_passes,
                    "With --interleaved-profile and several ranks: every other pause is a pass "
                    "over the step's kernels (fastest algorithm, whole batch) on all ranks "
                    "together, each rank's time of it written as a rank_pass row (the ranks' "
                    "jitter during training; tessera validate-sim --jitter-seconds)");
  command->add_flag("--message-level", settings->message_level,
                    "Simulate collectives message by message (slow; the reference model)");
  command->callback([&action, settings] {
    action = [settings] { return run_guarded([&] { return run(*settings); }); };
  });
}

}  // namespace tessera::app
