// tessera validate-sim: the scenario's locally runnable points trained for real and simulated on
// a platform measured on this machine, side by side, with the error of each prediction and the
// MAPE.
//
// Per rank count R among the points (ascending), in DIR/ranks-R/:
//   1. `tessera profile` under `mpirun -np R` (one rank: no mpirun) measures the points' kernels,
//      resumably, into profiles.csv, and with R > 1 the MPI send/receive and all-reduce between
//      the ranks. The ranks measure at the same time, so each kernel is timed while R ranks share
//      the cores, as in training: each rank its own pipeline stage's kernels, every kernel without
//      model parallelism. this_machine.yaml is written beside it.
//   2. cluster.yaml: this_machine.yaml's measured device with R of them in one node, joined by
//      the send/receive link fitted from step 1 (kernels/machine_description.hpp). Where a point
//      is pipelined, step 1 runs again with --cluster cluster.yaml: its stages are balanced on
//      that device, as both sides will run them, and their optimizer updates get rows.
//   3. The points simulated in this process with profiles.csv and cluster.yaml.
//   4. `tessera run --backend real --points ... --cluster cluster.yaml` under the same mpirun,
//      with those profiles (so both sides run the same micro-batching plan and balance pipeline
//      stages on the same device), trains the points that have exactly R ranks and no other. A
//      point with fewer ranks than the launch would leave idle ranks polling MPI on cores the
//      measured ranks need, so each rank count gets its own launch. It measures for about
//      --measure-seconds (steps_for_seconds from the shortest simulated step): the profile's
//      kernels were timed over minutes, each at its own moment of a machine whose speed moves
//      over seconds, and a few steps would see one moment only. On CPU ranks with synthetic
//      input it times the profile's rows again between its steps (--interleaved-profile).
//   5. The points simulated again with those rows replacing the profile's, so that both sides
//      were measured in the same minutes; comparison-profile-before.csv keeps step 3's.
// The machine's own speed is sampled before profiling and before and after training
// (machine_speed.csv, machine_drift.hpp): a drift there is no model's error.
// Each point's measured and simulated step are written as timelines side by side
// (ranks-R/real-trace-P.json, ranks-R/sim-trace-P.json; outputs.trace_gpus' ranks).
// On CPU ranks every child gets OMP_NUM_THREADS = max(1, cores / R): oneDNN's OpenMP teams of
// several ranks on shared cores wait on each other's barriers; one team per rank, each sized to
// its share of the cores, is what the ranks really get and what the profiles then measured.
// Children's output goes to log files beside their results; a child that fails leaves its points
// failed with the log's path, and the comparison still completes.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>

#include "command_guard.hpp"
#include "command_line_words.hpp"
#include "commands.hpp"
#include "option_checks.hpp"
#include "output_directory.hpp"
#include "rank_count_validation.hpp"
#include "tessera/core/common/atomic_file.hpp"
#include "tessera/core/result/layer_time_comparison.hpp"
#include "tessera/core/result/result_files.hpp"
#include "tessera/core/result/sim_real_comparison.hpp"

namespace tessera::app {
namespace {

namespace fs = std::filesystem;

// comparison.csv, layers.csv, both sides in the result schema, comparison-profile-before.csv
// (interleaved runs) and machine_speed.csv in `output`, and the report on standard output.
void write_comparison(const Validation& validation, const fs::path& output,
                      const std::vector<PointResult>& measured_in_order,
                      const std::vector<PointResult>& simulated,
                      const std::vector<PointResult>& simulated_before) {
  const auto comparison = compare_sim_real(measured_in_order, simulated);
  const fs::path csv = output / "comparison.csv";
  write_file_atomically(csv.string(), comparison_to_csv(comparison));
  const auto layers = compare_layer_times(measured_in_order, simulated);
  const fs::path layers_csv = output / "layers.csv";
  write_file_atomically(layers_csv.string(), layer_comparison_to_csv(layers));
  // Both sides in the result schema too, so analysis/plot_scaling.py overlays them.
  write_results_csv((output / "real.csv").string(), measured_in_order);
  write_results_csv((output / "sim.csv").string(), simulated);
  // The same comparison with the profile measured before training alone: what the interleaved
  // rows changed.
  std::string before_line;
  if (validation.interleave) {
    const auto before = compare_sim_real(measured_in_order, simulated_before);
    const fs::path before_csv = output / "comparison-profile-before.csv";
    write_file_atomically(before_csv.string(), comparison_to_csv(before));
    char mape[64] = "no point compared";
    if (before.mape_percent) std::snprintf(mape, sizeof mape, "MAPE %.1f%%", *before.mape_percent);
    before_line = std::string(
                      "simulated with the profile measured before training alone (not "
                      "the rows timed again between the steps): ") +
                  mape + " (" + before_csv.string() + ")\n";
  }
  const fs::path speed_csv = output / "machine_speed.csv";
  write_file_atomically(speed_csv.string(), validation.drift.to_csv());
  std::cout << validation.loaded.scenario.name
            << ": measured on this machine against simulated on its measured description\n\n"
            << comparison_report(comparison) << before_line << "\n"
            << layer_comparison_report(layers, 5) << validation.drift.report() << "\n"
            << "comparison: " << csv.string() << "; per layer and pass: " << layers_csv.string()
            << "; both sides in the result schema: " << (output / "real.csv").string() << ", "
            << (output / "sim.csv").string() << "; this machine's speed: " << speed_csv.string()
            << "\n";
}

int validate_sim(const ValidateSimSettings& settings) {
  const auto loaded = load_scenario(settings.file);
  const fs::path output = settings.output.empty()
                              ? fs::path("results") / loaded.scenario.name / "validate-sim"
                              : fs::path(settings.output);
  const Machine machine = measured_machine();
  Validation validation{.settings = settings,
                        // A bad --mpirun stops here, not after profiling.
                        .launcher = command_line_words(settings.mpirun, "--mpirun"),
                        .loaded = loaded,
                        .machine = machine,
                        .interleave = !settings.no_interleave &&
                                      loaded.scenario.io.format == DatasetFormat::synthetic &&
                                      machine.cuda_devices == 0,
                        .drift = MachineDrift(machine.cuda_devices > 0 ? "cuda:0" : "cpu")};
  prepare_output_directory(output.string(), "--output");
  const std::int64_t max_ranks =
      settings.max_ranks > 0
          ? settings.max_ranks
          : (machine.cuda_devices > 0 ? machine.cuda_devices : 2 * machine.cpu_cores);

  validation.largest_point = largest_point_gpus(loaded);
  std::map<std::int64_t, PointResult> measured;  // by point index
  std::map<std::int64_t, RankCount> counts;      // by rank count
  for (const auto& point : loaded.points) {
    const auto ranks = point.config.gpus();
    if (ranks > max_ranks) {
      measured[static_cast<std::int64_t>(point.index)] = unmeasured(
          loaded, point, PointStatus::skipped,
          "needs " + std::to_string(ranks) + " ranks; at most " + std::to_string(max_ranks) +
              " run here (" + (machine.cuda_devices > 0 ? "one per GPU" : "twice the CPU cores") +
              ", --max-ranks)");
    } else {
      counts[ranks].points.push_back(&point);
    }
  }

  std::vector<PointResult> simulated;
  std::vector<PointResult> simulated_before;
  for (auto& [ranks, count] : counts) {
    count.ranks = ranks;
    count.directory = output / ("ranks-" + std::to_string(ranks));
    fs::create_directories(count.directory);
    count.threads = settings.threads_per_rank > 0
                        ? settings.threads_per_rank
                        : std::max<int>(1, machine.cpu_cores / static_cast<int>(ranks));
    if (machine.cuda_devices == 0) {
      ::setenv("OMP_NUM_THREADS", std::to_string(count.threads).c_str(), 1);
    }
    auto outcome = validate_rank_count(validation, count);
    simulated.insert(simulated.end(), outcome.simulated.begin(), outcome.simulated.end());
    simulated_before.insert(simulated_before.end(), outcome.simulated_before.begin(),
                            outcome.simulated_before.end());
    for (auto& result : outcome.measured) measured[result.point] = std::move(result);
  }

  std::vector<PointResult> measured_in_order;
  for (const auto& [index, result] : measured) measured_in_order.push_back(result);
  write_comparison(validation, output, measured_in_order, simulated, simulated_before);
  return kExitOk;
}

}  // namespace

void add_validate_sim_command(CLI::App& cli, Action& action) {
  auto* command = cli.add_subcommand(
      "validate-sim",
      "Train a scenario's locally runnable points for real, simulate them on this machine's "
      "measured description, and compare (error per point, MAPE)");
  auto settings = std::make_shared<ValidateSimSettings>();
  command->add_option("file", settings->file, "Scenario file (YAML)")
      ->check(kNonEmptyText)
      ->required();
  command->add_option("--output", settings->output,
                      "Directory for profiles, runs and comparison.csv (default: "
                      "results/<scenario>/validate-sim)");
  command->add_option("--mpirun", settings->mpirun,
                      "MPI launcher for points of several ranks: a command line, e.g. \"mpirun "
                      "--bind-to none\" (default: mpirun)");
  command
      ->add_option("--max-ranks", settings->max_ranks,
                   "Run points of at most this many ranks (default: the GPUs, or twice the CPU "
                   "cores)")
      ->check(whole_number_in(1, std::int64_t{1} << 20));
  command
      ->add_option("--seconds-per-measurement", settings->seconds_per_measurement,
                   "Profiling: repeat each kernel until this much time is spent")
      ->check(kPositiveNumber);
  command
      ->add_option("--jitter-seconds", settings->jitter_seconds,
                   "Profiling with several ranks: time passes over every rank's kernels, all "
                   "ranks together, for this long (tessera profile --jitter-seconds); the "
                   "simulation plays each measured moment's slowdowns (the profile's passes "
                   "before training, passes over the step's kernels between the real run's steps "
                   "after) and reports the median step. Default 0: every rank at its usual speed")
      ->check(kNonNegativeNumber);
  command
      ->add_option("--threads-per-rank", settings->threads_per_rank,
                   "CPU ranks: compute threads of each rank, in the real runs and the profiling "
                   "alike (default: the cores divided by the point's ranks, at least 1)")
      ->check(whole_number_in(1, 4096));
  command
      ->add_option("--measure-seconds", settings->measure_seconds,
                   "Real runs: measure each rank count's points for about this long (steps from "
                   "the simulated step, at least the scenario's real.measured_steps; warm-up for "
                   "a tenth of it), so that they sample a machine whose speed moves over seconds "
                   "as the minutes of profiling do; 0: the scenario's steps")
      ->check(number_in(0.0, 3600.0));
  command->add_flag("--no-interleave", settings->no_interleave,
                    "Simulate with the profile measured before training alone, instead of with "
                    "its rows timed again between the real run's steps (which is done only on CPU "
                    "ranks and where the scenario's input is synthetic: between steps that read "
                    "files, a pause would hide their reads)");
  command->add_flag("--warm-caches", settings->warm_caches,
                    "Profile each kernel run right after the previous one (default: caches "
                    "prepared as in a training step in between, see tessera profile)");
  command
      ->add_option("--skip-algorithms", settings->skipped_algorithms,
                   "Profiling: algorithms not to measure, by name prefix (e.g. ref: for oneDNN's "
                   "reference implementations, far slower than the others); the real runs follow "
                   "plans made from the rest")
      ->delimiter(',');
  command->add_flag("--fresh", settings->fresh,
                    "Profile every kernel and this machine again (default: keep what the output "
                    "directory has)");
  command->callback([&action, settings] {
    action = [settings] { return run_guarded([&] { return validate_sim(*settings); }); };
  });
}

}  // namespace tessera::app
