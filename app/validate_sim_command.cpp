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
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <thread>

#include "command_guard.hpp"
#include "command_line_words.hpp"
#include "commands.hpp"
#include "machine_drift.hpp"
#include "tessera/core/common/atomic_file.hpp"
#include "tessera/core/common/input_error.hpp"
#include "tessera/core/cost/profile_database.hpp"
#include "tessera/core/cost/rank_passes.hpp"
#include "tessera/core/loading/scenario_loader.hpp"
#include "tessera/core/result/layer_time_comparison.hpp"
#include "tessera/core/result/measurement_length.hpp"
#include "tessera/core/result/point_identity.hpp"
#include "tessera/core/result/result_schema.hpp"
#include "tessera/core/result/sim_real_comparison.hpp"
#include "tessera/core/scenario/cluster_spec.hpp"
#include "tessera/core/strategy/parallel_strategy.hpp"
#include "tessera/kernels/device_inventory.hpp"
#include "tessera/kernels/profile/kernel_profiler.hpp"
#include "tessera/kernels/profile/machine_description.hpp"
#include "tessera/simulator/simulate_point.hpp"

extern char** environ;

namespace tessera::app {
namespace {

namespace fs = std::filesystem;

struct ValidateSimSettings {
  std::string file;
  std::string output;
  std::string mpirun = "mpirun";
  std::int64_t max_ranks = 0;                   // 0: twice the cores (CPU) or the GPU count
  double seconds_per_measurement = 0.2;         // as `tessera profile`
  double jitter_seconds = 0;                    // as `tessera profile`: rank passes; 0: none
  int threads_per_rank = 0;                     // 0: the cores / ranks, at least 1
  bool fresh = false;                           // profile again instead of resuming
  bool warm_caches = false;                     // profile without flushing caches between runs
  std::vector<std::string> skipped_algorithms;  // by name prefix, as `tessera profile`
  double measure_seconds = 20;                  // 0: the scenario's real.measured_steps
  bool interleave = true;                       // time the profile's rows again between steps
};

struct Machine {
  int cuda_devices = 0;
  int cpu_cores = 1;
};

Machine measured_machine() {
  Machine machine;
  for (const auto& device : kernels::discover_devices().devices) {
    if (device.kind == "cuda") ++machine.cuda_devices;
  }
  machine.cpu_cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  return machine;
}

// Runs `arguments` with its output appended to `log`; returns its exit status (127: not started).
int run_child(const std::vector<std::string>& arguments, const fs::path& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  std::vector<char*> argv;
  for (const auto& argument : arguments) argv.push_back(const_cast<char*>(argument.c_str()));
  argv.push_back(nullptr);
  pid_t child = 0;
  const int spawned = posix_spawnp(&child, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return 127;
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) return 127;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// `tessera ARGS...` with R ranks: under the `launcher` command line (--mpirun's words) when R > 1,
// passing OMP_NUM_THREADS on.
std::vector<std::string> tessera_command(const std::vector<std::string>& launcher,
                                         std::int64_t ranks, std::vector<std::string> arguments,
                                         bool fresh = false) {
  if (fresh) arguments.push_back("--fresh");
  std::vector<std::string> command;
  if (ranks > 1) {
    command = launcher;
    command.insert(command.end(),
                   {"-np", std::to_string(ranks), "--oversubscribe", "-x", "OMP_NUM_THREADS"});
  }
  command.push_back(fs::read_symlink("/proc/self/exe").string());
  command.insert(command.end(), arguments.begin(), arguments.end());
  return command;
}

std::string join(const std::vector<std::string>& words, const std::string& separator) {
  std::string text;
  for (const auto& word : words) text += (text.empty() ? "" : separator) + word;
  return text;
}

PointResult unmeasured(const LoadedScenario& loaded, const SweepPoint& point, PointStatus status,
                       const std::string& note) {
  auto result = point_identity(loaded.scenario.name, static_cast<std::int64_t>(point.index), "real",
                               point.config);
  result.status = status;
  result.note = note;
  return result;
}

// this_machine.yaml's device in one node joined by the rank link measured among `ranks` ranks,
// with the rank jitter of the rank_pass rows in `passes` (none without them).
// The node holds `devices_per_node` (the sweep's largest point) so that the scenario still loads;
// a point of `ranks` devices plays on its own devices and links only. Returns the file's path.
fs::path write_rank_cluster(const fs::path& directory, const ProfileDatabase& profiles,
                            const ProfileDatabase& passes, int ranks, std::int64_t devices_per_node,
                            const Machine& machine, int threads_per_rank,
                            const std::string& file_name = "cluster.yaml") {
  const auto single = load_cluster_file((directory / "this_machine.yaml").string());
  kernels::MachineFigures figures;
  figures.device_name = single.gpu.model;
  figures.library = single.description;
  figures.memory_bytes = single.gpu.memory_bytes;
  figures.memory_bandwidth_bytes_per_second = single.gpu.memory_bandwidth_bytes_per_second;
  figures.fp32_flops_per_second = single.gpu.fp32_flops_per_second;
  figures.host_link_bandwidth_bytes_per_second = single.node.pcie_bandwidth_bytes_per_second;
  figures.overlaps_communication = single.gpu.overlaps_communication;
  figures.ranks = ranks;
  figures.devices_per_node = static_cast<int>(std::max<std::int64_t>(ranks, devices_per_node));
  if (machine.cuda_devices == 0) {
    figures.cpu_cores = machine.cpu_cores;
    figures.threads_per_rank = threads_per_rank;
    // CPU ranks share the machine's memory, as the real backend's ranks do.
    figures.host_memory_bytes = single.node.host_memory_bytes;
    figures.memory_bytes = single.gpu.memory_bytes / ranks;
  }
  if (const auto link = kernels::fit_rank_link(profiles, figures.device_name, ranks,
                                               kernels::transfer_sizes_bytes())) {
    figures.rank_link_bandwidth_bytes_per_second = link->bandwidth_bytes_per_second;
    figures.rank_link_latency_seconds = link->latency_seconds;
  }
  figures.rank_jitter = rank_jitter_from_passes(passes, figures.device_name, ranks);
  const fs::path path = directory / file_name;
  write_file_atomically(path.string(), kernels::cluster_yaml(figures, "this validate-sim run"));
  return path;
}

int validate_sim(const ValidateSimSettings& settings) {
  // A bad --mpirun stops here, not after profiling.
  const auto launcher = command_line_words(settings.mpirun, "--mpirun");
  const auto loaded = load_scenario(settings.file);
  const Machine machine = measured_machine();
  const std::int64_t max_ranks =
      settings.max_ranks > 0
          ? settings.max_ranks
          : (machine.cuda_devices > 0 ? machine.cuda_devices : 2 * machine.cpu_cores);
  const fs::path output = settings.output.empty()
                              ? fs::path("results") / loaded.scenario.name / "validate-sim"
                              : fs::path(settings.output);

  std::map<std::int64_t, PointResult> measured;                     // by point index
  std::map<std::int64_t, std::vector<const SweepPoint*>> runnable;  // by rank count
  for (const auto& point : loaded.points) {
    const auto ranks = point.config.gpus();
    const auto index = static_cast<std::int64_t>(point.index);
    if (ranks > max_ranks) {
      measured[index] = unmeasured(
          loaded, point, PointStatus::skipped,
          "needs " + std::to_string(ranks) + " ranks; at most " + std::to_string(max_ranks) +
              " run here (" + (machine.cuda_devices > 0 ? "one per GPU" : "twice the CPU cores") +
              ", --max-ranks)");
    } else {
      runnable[ranks].push_back(&point);
    }
  }

  std::int64_t largest_point = 1;
  for (const auto& point : loaded.points) {
    largest_point = std::max(largest_point, point.config.gpus());
  }
  // Between the real run's steps its kernels are timed again (InterleavedProfiler), so that both
  // sides see the same moments of the machine; not where the steps read files, whose reads a
  // pause between steps would hide, and on CPU ranks only: no GPU has run it yet.
  const bool interleave = settings.interleave &&
                          loaded.scenario.io.format == DatasetFormat::synthetic &&
                          machine.cuda_devices == 0;
  // Rank jitter only where asked for (--jitter-seconds): on this project's development VM it did
  // not predict the 2-rank steps better, measured either way (docs/measurements/
  // 2026-12-04-cpu-rank-jitter.md, 2026-12-05-cpu-rank-passes.md).
  const ProfileDatabase no_passes;
  const auto jitter_passes = [&](const ProfileDatabase& rows) -> const ProfileDatabase& {
    return settings.jitter_seconds > 0 ? rows : no_passes;
  };
  std::vector<PointResult> simulated;
  std::vector<PointResult> simulated_before;  // from the profile measured before training alone
  MachineDrift drift(machine.cuda_devices > 0 ? "cuda:0" : "cpu");
  for (const auto& rank_points : runnable) {
    // Not a structured binding: a lambda below captures `points`, which clang 14 cannot do to one.
    const std::int64_t ranks = rank_points.first;
    const std::vector<const SweepPoint*>& points = rank_points.second;
    const fs::path directory = output / ("ranks-" + std::to_string(ranks));
    fs::create_directories(directory);
    const int threads = settings.threads_per_rank > 0
                            ? settings.threads_per_rank
                            : std::max<int>(1, machine.cpu_cores / static_cast<int>(ranks));
    if (machine.cuda_devices == 0) ::setenv("OMP_NUM_THREADS", std::to_string(threads).c_str(), 1);
    std::vector<std::string> indices;
    for (const auto* point : points) indices.push_back(std::to_string(point->index));
    const auto fail_points = [&](const std::string& note) {
      for (const auto* point : points) {
        measured[static_cast<std::int64_t>(point->index)] =
            unmeasured(loaded, *point, PointStatus::failed, note);
      }
    };
    const fs::path profiles_csv = directory / "profiles.csv";
    const fs::path profile_log = directory / "profile.log";
    std::cerr << ranks << " rank(s), point(s) " << join(indices, ", ") << ": profiling ("
              << profile_log.string() << ")\n";
    std::vector<std::string> profile_arguments{"profile",
                                               settings.file,
                                               "--points",
                                               join(indices, ","),
                                               "--output",
                                               profiles_csv.string(),
                                               "--seconds-per-measurement",
                                               std::to_string(settings.seconds_per_measurement),
                                               "--jitter-seconds",
                                               std::to_string(settings.jitter_seconds)};
    if (settings.warm_caches) profile_arguments.push_back("--warm-caches");
    if (!settings.skipped_algorithms.empty()) {
      profile_arguments.push_back("--skip-algorithms");
      profile_arguments.push_back(join(settings.skipped_algorithms, ","));
    }
    drift.sample(ranks, "before profiling");
    const int profiled =
        run_child(tessera_command(launcher, ranks, profile_arguments, settings.fresh), profile_log);
    if (profiled != 0) {
      fail_points("profiling failed (exit " + std::to_string(profiled) + "), see " +
                  profile_log.string());
      continue;
    }
    // The machine's description before the real run, which trains on it too: a pipeline's stages
    // are balanced by the cluster's device, and both sides must split the model alike.
    ProfileDatabase profiles;
    profiles.load_csv(profiles_csv.string());
    fs::path cluster_yaml =
        write_rank_cluster(directory, profiles, jitter_passes(profiles), static_cast<int>(ranks),
                           largest_point, machine, threads);
    // The profile balanced a pipeline's stages on the scenario's own platform, not yet on the
    // device it measured: again on cluster.yaml, so that each rank times the kernels of the stage
    // it trains and the stages' optimizer updates get rows at their sizes (rows kept, the rest
    // measured).
    const bool pipelined = std::any_of(points.begin(), points.end(), [](const SweepPoint* point) {
      return point->plan.stages > 1;
    });
    if (pipelined) {
      auto on_cluster = profile_arguments;
      on_cluster.insert(on_cluster.end(), {"--cluster", cluster_yaml.string(), "--no-copies"});
      const int again = run_child(tessera_command(launcher, ranks, on_cluster), profile_log);
      if (again != 0) {
        fail_points("profiling on " + cluster_yaml.string() + " failed (exit " +
                    std::to_string(again) + "), see " + profile_log.string());
        continue;
      }
      profiles = ProfileDatabase{};
      profiles.load_csv(profiles_csv.string());
      cluster_yaml = write_rank_cluster(directory, profiles, jitter_passes(profiles),
                                        static_cast<int>(ranks), largest_point, machine, threads);
    }
    // Simulated first: its step sets how many steps the real run measures.
    const auto on_this_machine =
        load_scenario(settings.file, {.cluster_file = cluster_yaml.string()});
    const auto simulate_points = [&](const LoadedScenario& on_machine,
                                     const ProfileDatabase& kernel_times, bool keep_traces) {
      sim::SimulationOptions options;
      options.profiles = &kernel_times;
      options.trace = keep_traces;
      std::vector<PointResult> results;
      for (const auto* point : points) {
        auto outcome =
            sim::simulate_point_isolated(on_machine, on_machine.points[point->index], options);
        if (keep_traces) {
          write_file_atomically(
              (directory / ("sim-trace-" + std::to_string(point->index) + ".json")).string(),
              outcome.trace.dump() + "\n");
        }
        results.push_back(std::move(outcome.result));
      }
      return results;
    };
    std::cerr << ranks << " rank(s): simulating on " << cluster_yaml.string() << "\n";
    // Its timelines stand unless step 5 writes its own.
    auto from_profile = simulate_points(on_this_machine, profiles, true);
    double shortest_step_seconds = 0;
    for (const auto& result : from_profile) {
      if (result.status != PointStatus::ok || result.step_seconds <= 0) continue;
      shortest_step_seconds = shortest_step_seconds > 0
                                  ? std::min(shortest_step_seconds, result.step_seconds)
                                  : result.step_seconds;
    }

    const auto steps =
        steps_for_seconds(loaded.scenario.real, settings.measure_seconds, shortest_step_seconds);
    const fs::path real_log = directory / "real.log";
    const fs::path real_csv = directory / "real" / "real.csv";
    const fs::path interleaved_csv = directory / "interleaved-profile.csv";
    fs::remove(real_csv);  // what is read below is this run's, or nothing
    fs::remove(interleaved_csv);
    drift.sample(ranks, "before training");
    std::cerr << ranks << " rank(s): training for real, " << steps.warmup << " warm-up and "
              << steps.measured << " measured steps"
              << (interleave ? ", the profile's rows timed again between them" : "") << " ("
              << real_log.string() << ")\n";
    std::vector<std::string> run_arguments{"run",
                                           settings.file,
                                           "--backend",
                                           "real",
                                           "--points",
                                           join(indices, ","),
                                           "--cluster",
                                           cluster_yaml.string(),
                                           "--output",
                                           (directory / "real").string(),
                                           "--profiles",
                                           profiles_csv.string(),
                                           "--warmup-steps",
                                           std::to_string(steps.warmup),
                                           "--measured-steps",
                                           std::to_string(steps.measured),
                                           "--fresh",
                                           "--trace",
                                           (directory / "real-trace-{point}.json").string()};
    if (interleave) {
      run_arguments.insert(run_arguments.end(),
                           {"--interleaved-profile", interleaved_csv.string()});
      if (settings.warm_caches) run_arguments.push_back("--interleaved-warm-caches");
      if (settings.jitter_seconds > 0) run_arguments.push_back("--interleaved-rank-passes");
    }
    const int trained = run_child(tessera_command(launcher, ranks, run_arguments), real_log);
    drift.sample(ranks, "after training");
    // A run in which a point failed exits 1 but writes the others: those are kept.
    if (trained != 0) {
      fail_points("real run failed (exit " + std::to_string(trained) + "), see " +
                  real_log.string());
    }
    // Simulated again with the rows timed between the steps, which replace the earlier ones.
    if (interleave && fs::exists(interleaved_csv)) {
      ProfileDatabase between_steps;
      between_steps.load_csv(interleaved_csv.string());
      ProfileDatabase retimed = profiles;
      retimed.load_csv(interleaved_csv.string());
      // The rank jitter of the moments the steps ran in, not of the profile's passes.
      const fs::path cluster_during_training = write_rank_cluster(
          directory, profiles, jitter_passes(between_steps), static_cast<int>(ranks), largest_point,
          machine, threads, "cluster-during-training.yaml");
      const auto on_machine_during_training =
          load_scenario(settings.file, {.cluster_file = cluster_during_training.string()});
      auto results = simulate_points(on_machine_during_training, retimed, true);
      simulated.insert(simulated.end(), results.begin(), results.end());
    } else {
      simulated.insert(simulated.end(), from_profile.begin(), from_profile.end());
    }
    simulated_before.insert(simulated_before.end(), from_profile.begin(), from_profile.end());
    if (!fs::exists(real_csv)) continue;
    std::ifstream real_file(real_csv);
    const std::string real_text((std::istreambuf_iterator<char>(real_file)),
                                std::istreambuf_iterator<char>());
    auto real_rows = results_from_csv(real_text, real_csv.string());
    std::ifstream real_json(directory / "real" / "real.json");
    attach_json_only_fields(real_rows, nlohmann::json::parse(real_json, nullptr, false));
    for (const auto& result : real_rows) {
      if (result.gpus == ranks) measured[result.point] = result;
    }
  }

  std::vector<PointResult> measured_in_order;
  for (const auto& [index, result] : measured) measured_in_order.push_back(result);
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
  if (interleave) {
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
  write_file_atomically(speed_csv.string(), drift.to_csv());
  std::cout << loaded.scenario.name << ": measured on this machine against simulated on its "
            << "measured description\n\n"
            << comparison_report(comparison) << before_line << "\n"
            << layer_comparison_report(layers, 5) << drift.report() << "\n"
            << "comparison: " << csv.string() << "; per layer and pass: " << layers_csv.string()
            << "; both sides in the result schema: " << (output / "real.csv").string() << ", "
            << (output / "sim.csv").string() << "; this machine's speed: " << speed_csv.string()
            << "\n";
  return kExitOk;
}

}  // namespace

void add_validate_sim_command(CLI::App& cli, Action& action) {
  auto* command = cli.add_subcommand(
      "validate-sim",
      "Train a scenario's locally runnable points for real, simulate them on this machine's "
      "measured description, and compare (error per point, MAPE)");
  auto settings = std::make_shared<ValidateSimSettings>();
  command->add_option("file", settings->file, "Scenario file (YAML)")->required();
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
      ->check(CLI::PositiveNumber);
  command
      ->add_option("--seconds-per-measurement", settings->seconds_per_measurement,
                   "Profiling: repeat each kernel until this much time is spent")
      ->check(CLI::PositiveNumber);
  command
      ->add_option("--jitter-seconds", settings->jitter_seconds,
                   "Profiling with several ranks: time passes over every rank's kernels, all "
                   "ranks together, for this long (tessera profile --jitter-seconds); the "
                   "simulation plays each measured moment's slowdowns (the profile's passes "
                   "before training, passes over the step's kernels between the real run's steps "
                   "after) and reports the median step. Default 0: every rank at its usual speed")
      ->check(CLI::NonNegativeNumber);
  command
      ->add_option("--threads-per-rank", settings->threads_per_rank,
                   "CPU ranks: compute threads of each rank, in the real runs and the profiling "
                   "alike (default: the cores divided by the point's ranks, at least 1)")
      ->check(CLI::PositiveNumber);
  command
      ->add_option("--measure-seconds", settings->measure_seconds,
                   "Real runs: measure each rank count's points for about this long (steps from "
                   "the simulated step, at least the scenario's real.measured_steps; warm-up for "
                   "a tenth of it), so that they sample a machine whose speed moves over seconds "
                   "as the minutes of profiling do; 0: the scenario's steps")
      ->check(CLI::Range(0.0, 3600.0));
  command->add_flag("!--no-interleave", settings->interleave,
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
