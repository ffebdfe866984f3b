// tessera profile: measure, on a local device, the kernels a scenario's GPUs run, into the
// profile database the simulator reads. Resumable: the database is rewritten atomically after
// every kernel, and kernels already in it are not measured again.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>

#include "command_guard.hpp"
#include "commands.hpp"
#include "option_checks.hpp"
#include "output_directory.hpp"
#include "rank_spread.hpp"
#include "scenario_target.hpp"
#include "tessera/core/common/atomic_file.hpp"
#include "tessera/core/common/quantity.hpp"
#include "tessera/core/common/utc_time.hpp"
#include "tessera/core/cost/rank_passes.hpp"
#include "tessera/core/loading/scenario_loader.hpp"
#include "tessera/core/point/profile_plan.hpp"
#include "tessera/kernels/communicator.hpp"
#include "tessera/kernels/device.hpp"
#include "tessera/kernels/device_inventory.hpp"
#include "tessera/kernels/profile/gathered_rows.hpp"
#include "tessera/kernels/profile/kernel_profiler.hpp"
#include "tessera/kernels/profile/kernel_replay.hpp"
#include "tessera/kernels/profile/machine_description.hpp"
#include "tessera/kernels/profile/microbatch_study.hpp"
#include "tessera/kernels/profile/rank_pass_profiler.hpp"

namespace tessera::app {
namespace {

struct ProfileSettings {
  std::string target;
  std::string device;
  std::string output;
  std::string cluster;
  std::vector<std::size_t> points;
  std::vector<std::string> layers;
  std::vector<std::string> skipped_algorithms;
  std::optional<std::int64_t> mini_batch;
  double seconds_per_measurement = 0.2;
  double jitter_seconds = 0;  // rank passes under mpirun (rank_pass_profiler.hpp); 0: none
  bool no_copies = false;
  bool fresh = false;
  bool warm_caches = false;
  bool in_context = false;
  bool list = false;
};

std::string default_device() {
  for (const auto& device : kernels::discover_devices().devices) {
    if (device.kind == "cuda") return "cuda:0";
  }
  return "cpu";
}

std::string slug(const std::string& text) {
  std::string result;
  for (char c : text) {
    const bool keep = std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '-';
    if (keep)
      result += c;
    else if (!result.empty() && result.back() != '_')
      result += '_';
  }
  while (!result.empty() && result.back() == '_') result.pop_back();
  return result;
}

// The scenario with only the sweep points --points names (all without it).
LoadedScenario selected_points(const LoadedScenario& loaded, const ProfileSettings& settings) {
  LoadedScenario subset = loaded;
  if (settings.points.empty()) return subset;
  check_point_indices(loaded, settings.points);
  subset.points.clear();
  for (std::size_t index : settings.points) subset.points.push_back(loaded.points[index]);
  return subset;
}

// A --layers name that is no layer of the model would profile nothing, after minutes of measuring
// the machine.
void check_layer_names(const LoadedScenario& loaded, const std::vector<std::string>& names) {
  for (const auto& name : names) {
    if (!loaded.model.index_of(name)) {
      throw InputError({"command line", 0, 0}, "--layers",
                       "a layer of model " + loaded.model.name() + ", got '" + name + "'");
    }
  }
}

std::vector<KernelToProfile> selected_kernels(const LoadedScenario& subset,
                                              const ProfileSettings& settings,
                                              const ProfilingRank& profiling = {}) {
  auto kernels = kernels_to_profile(subset, profiling);
  if (settings.layers.empty()) return kernels;
  const std::set<std::string> wanted(settings.layers.begin(), settings.layers.end());
  std::erase_if(kernels, [&](const KernelToProfile& k) { return !wanted.contains(k.layer.name); });
  return kernels;
}

// Measures the sizes of `kernel` that `database` lacks into `new_rows`; false when none.
bool measure_kernel(kernels::Device& device, KernelToProfile kernel,
                    const ProfileSettings& settings, const kernels::ProfilerOptions& options,
                    const ProfileDatabase& database, const std::string& progress,
                    ProfileDatabase& new_rows) {
  // What an earlier run measured is not measured again: sizes it has rows of, unless the library
  // now offers an algorithm they lack; the same shape at another batch (a strong-scaling sweep's
  // unsplit layers) is a kernel of its own.
  kernel.micro_batches =
      kernels::sizes_to_measure(device, database, kernel, kernel.micro_batches, options);
  if (kernel.micro_batches.empty()) return false;
  // Micro-batches as a plan runs them; the whole batch, one call, alone as without the flag.
  std::vector<std::int64_t> below_batch;
  if (settings.in_context && is_convolution(kernel.layer.kind)) {
    const auto whole =
        std::stable_partition(kernel.micro_batches.begin(), kernel.micro_batches.end(),
                              [&](std::int64_t size) { return size < kernel.batch; });
    below_batch.assign(kernel.micro_batches.begin(), whole);
    kernel.micro_batches.erase(kernel.micro_batches.begin(), whole);
  }
  if (!progress.empty()) {
    std::cerr << progress << kernel.layer.name << " " << to_string(kernel.direction) << " (batch "
              << kernel.batch;
    if (!below_batch.empty()) {
      std::cerr << "; micro-batches";
      for (std::int64_t size : below_batch) std::cerr << " " << size;
      std::cerr << " in context";
    }
    std::cerr << ")\n";
  }
  if (!below_batch.empty()) {
    kernels::profile_missing_sizes_in_context(device, kernel, below_batch, options, new_rows,
                                              &database);
  }
  if (!kernel.micro_batches.empty()) {
    kernels::profile_kernels(device, {kernel}, options, new_rows, {}, &database);
  }
  return true;
}

// Rank 0 adds the rows every other rank sends; false when none sent any.
bool gather_rows(kernels::Communicator& world, const ProfileDatabase& rows,
                 const ProfileMetadata& metadata, ProfileDatabase& database) {
  const ProfileDatabase theirs =
      kernels::rows_of_other_ranks(world, rows, metadata, "measurements");
  for (const ProfileEntry& row : theirs.rows()) database.add(row);
  return theirs.size() > 0;
}

int profile(const ProfileSettings& settings) {
  const LoadedScenario loaded =
      load_target(settings.target, settings.mini_batch, {settings.cluster});
  const LoadedScenario subset = selected_points(loaded, settings);
  check_layer_names(loaded, settings.layers);
  // The optimizer update and a pipeline's gradient sums are sized by parameter counts, not by
  // layers: measured unless --layers picks some.
  const auto parameter_kernels = settings.layers.empty() ? parameter_kernels_to_profile(subset)
                                                         : std::vector<ParameterKernelToProfile>{};
  if (settings.list) {
    const auto kernels = selected_kernels(subset, settings);
    for (const auto& kernel : kernels) {
      std::cout << kernel.layer.name << (kernel.window ? " (window)" : "") << "  "
                << to_string(kernel.direction) << "  batch " << kernel.batch << "  micro-batches "
                << kernel.micro_batches.size() << "  " << kernel.shape << "\n";
    }
    for (const auto& kernel : parameter_kernels) {
      std::cout << kernel.op << "  " << kernel.shape << "\n";
    }
    std::cout << kernels.size() << " kernels, " << parameter_kernels.size()
              << " optimizer updates and gradient sums\n";
    return kExitOk;
  }
  if (loaded.scenario.model.dtype != DType::float32) {
    throw InputError(loaded.scenario.model.where, "model.dtype",
                     "expected float32 (the device kernels run float32 only), got " +
                         to_string(loaded.scenario.model.dtype));
  }
  const auto device =
      open_device_option(settings.device.empty() ? default_device() : settings.device);
  const std::string device_name = device->info().name;
  const std::string output = !settings.output.empty() ? settings.output
                                                      : "profiles/" + slug(device_name) + "/" +
                                                            slug(loaded.scenario.name) + ".csv";

  kernels::ProfilerOptions options;
  options.seconds_per_measurement = settings.seconds_per_measurement;
  options.skipped_algorithm_prefixes = settings.skipped_algorithms;
  if (!settings.warm_caches) kernels::set_cold_caches(options, *device);
  const MicroBatchTiming timing =
      settings.in_context ? MicroBatchTiming::in_context : MicroBatchTiming::alone;
  // A file written before profiles recorded their caches keeps saying nothing of them: its
  // earlier rows' are not known.
  RunCaches caches = options.caches;
  ProfileDatabase database;
  if (!settings.fresh && std::filesystem::exists(output)) {
    database.load_csv(output);
    // One file, one way of timing: its rows do not say which they were.
    const MicroBatchTiming existing = database.sources().back().micro_batch_timing;
    if (existing != timing) {
      throw InputError({}, "--in-context",
                       output + " holds micro-batches timed " + to_string(existing) + "; profile " +
                           (settings.in_context ? "with" : "without") +
                           " --in-context into another --output, or pass --fresh");
    }
    const RunCaches recorded = database.sources().back().caches;
    if (recorded != RunCaches::unrecorded && recorded != options.caches) {
      throw InputError({}, "--warm-caches",
                       output + " holds runs timed with " + to_string(recorded) +
                           " caches, this device's would be " + to_string(options.caches) +
                           "; profile into another --output, or pass --fresh");
    }
    caches = recorded;
  }
  const ProfileMetadata metadata{device_name, device->info().library, utc_now(), timing, caches};
  const auto save = [&] {
    if (!output.empty() && std::filesystem::path(output).has_parent_path()) {
      std::filesystem::create_directories(std::filesystem::path(output).parent_path());
    }
    write_file_atomically(output, database.to_csv(metadata));
  };

  // Under mpirun with several ranks each rank times the kernels of its own stage where a point
  // has one stage per rank (kernels_to_profile), all ranks one kernel at a time, and rank 0
  // writes everyone's rows; the collectives are measured too.
  std::unique_ptr<kernels::Communicator> world;
  if (launched_with_several_ranks()) world = kernels::mpi_world();
  const bool writer = !world || world->rank() == 0;
  // Checked before measuring (not under mpirun: a rank stopping alone would leave the others
  // waiting for it).
  if (!world) prepare_output_file(output, "--output");
  const ProfilingRank profiling =
      world ? ProfilingRank{world->rank(), world->size()} : ProfilingRank{};
  const auto kernels = selected_kernels(subset, settings, profiling);
  // What rank 0 measures itself need not come from the others (every rank of a data-parallel
  // point times the same kernels, side by side as in training).
  std::set<std::string> first_rank_keys;
  for (const auto& kernel : selected_kernels(subset, settings, {0, profiling.ranks}))
    first_rank_keys.insert(kernel_identity(kernel));
  double steps = static_cast<double>(kernels.size());
  if (world) world->allreduce_max(&steps, 1);

  const std::size_t planned = selected_kernels(subset, settings).size();
  if (writer && kernels.size() < planned) {
    std::cerr << "each rank times its own stage's kernels beside the others'; " << kernels.size()
              << " of the plan's " << planned << " on rank 0\n";
  }

  // Kernels whose rows the file gets (rank 0's, and the others' that rank 0 does not run), and
  // optimizer updates and gradient sums (rank 0's), summed over the ranks at the end.
  double measured = 0;
  std::unique_ptr<kernels::KernelReplay> replay;  // this rank's kernel, run while it waits
  for (std::size_t i = 0; i < static_cast<std::size_t>(steps); ++i) {
    ProfileDatabase new_rows;
    const bool shared =
        i < kernels.size() && !first_rank_keys.contains(kernel_identity(kernels[i]));
    if (i < kernels.size()) {
      replay.reset();  // its operands would crowd the device memory the next kernel measures in
      const std::string progress =
          writer ? "[" + std::to_string(i + 1) + "/" + std::to_string(kernels.size()) + "] " : "";
      const bool new_kernel =
          measure_kernel(*device, kernels[i], settings, options, database, progress, new_rows);
      if (new_kernel && (writer || shared)) measured += 1;
      for (const ProfileEntry& row : new_rows.rows()) database.add(row);
      if (world) replay = kernels::KernelReplay::of(*device, kernels[i], database);
    }
    // A rank done before the others keeps computing its own kernels meanwhile, as it would in
    // training, rather than leave the machine to them.
    if (world)
      world->barrier_busy([&] {
        if (replay) replay->run_once();
      });
    const bool gathered =
        world && gather_rows(*world, shared ? new_rows : ProfileDatabase{}, metadata, database);
    if (writer && (new_rows.size() > 0 || gathered)) save();
  }
  for (const auto& kernel : parameter_kernels) {
    if (!database
             .entries_for(device_name, kernel.op, Direction::forward, kernel.shape, kernel.dtype)
             .empty()) {
      continue;  // measured by an earlier run
    }
    if (writer) std::cerr << kernel.op << " (" << kernel.shape << ")\n";
    kernels::profile_parameter_kernels(*device, {kernel}, options, database);
    if (writer) measured += 1;
    if (writer) save();
  }
  const std::vector<double>& sizes = kernels::transfer_sizes_bytes();
  if (!settings.no_copies && database
                                 .entries_for(device_name, "copy_d2d", Direction::forward,
                                              kernels::transfer_shape(sizes.back()), DType::float32)
                                 .empty()) {
    kernels::profile_copies(*device, sizes, options, database);
  }
  if (world) {
    kernels::profile_collectives(*world, *device, sizes, options, database);
    world->allreduce_sum(&measured, 1);
    // Rank 0 holds the rows: it says whether an earlier run timed the passes already.
    double passes_wanted =
        writer && settings.jitter_seconds > 0 &&
                rank_jitter_from_passes(database, device_name, world->size()).empty()
            ? 1.0
            : 0.0;
    world->allreduce_max(&passes_wanted, 1);
    if (passes_wanted > 0) {
      if (writer) {
        std::cerr << "rank passes: every rank's kernels once each, all ranks together, for "
                  << settings.jitter_seconds << " s (the machine's rank jitter)\n";
      }
      // At least a few passes even where one is longer than the time given (a step of seconds).
      constexpr int kFewestPasses = 16;
      kernels::profile_rank_passes(*world, *device, kernels, database, settings.jitter_seconds,
                                   kFewestPasses, database);
    }
  }
  // The machine as a cluster file, so `tessera run --cluster` simulates it with these profiles.
  const std::filesystem::path cluster_file =
      std::filesystem::path(output).parent_path() / "this_machine.yaml";
  if (writer && (settings.fresh || !std::filesystem::exists(cluster_file))) {
    const auto figures = kernels::measure_machine(*device, database);
    write_file_atomically(cluster_file.string(),
                          kernels::cluster_yaml(figures, metadata.created_utc));
    std::cout << "measured this machine: " << format_bytes(figures.memory_bytes) << ", "
              << format_bytes(figures.memory_bandwidth_bytes_per_second) << "/s memory, "
              << format_flops(figures.fp32_flops_per_second) << "/s fp32 -> "
              << cluster_file.string() << "\n";
  }
  if (writer && database.size() == 0) {
    // A header without rows matches nothing, and the loader refuses it.
    std::cout << "nothing to measure (" << planned << " kernels in the plan"
              << (settings.no_copies ? ", --no-copies" : "") << "); " << output << " not written\n";
    return kExitOk;
  }
  if (writer) {
    save();
    std::cout << "profiled " << measured << " new kernels (" << planned << " in the plan) on "
              << device_name << "; " << database.size() << " rows in " << output << "\n";
    if (largest_point_gpus(loaded) == 1 && std::filesystem::exists(settings.target)) {
      std::cout << "simulate with: tessera run " << settings.target << " --backend sim --profiles "
                << output << " --cluster " << cluster_file.string() << "\n";
    } else {
      std::cout << cluster_file.string() << " describes one device; tessera validate-sim "
                << "describes this machine for several ranks\n";
    }
  }
  return kExitOk;
}

}  // namespace

void add_profile_command(CLI::App& cli, Action& action) {
  auto* command = cli.add_subcommand(
      "profile", "Measure a scenario's kernels on a local device into a profile database");
  auto settings = std::make_shared<ProfileSettings>();
  command
      ->add_option("target", settings->target,
                   "Scenario file, 'default', or a zoo model name (one GPU, default mini-batch)")
      ->check(kNonEmptyText)
      ->required();
  command->add_option("--device", settings->device, "cpu or cuda:N (default: cuda:0 if present)");
  command->add_option("--output", settings->output,
                      "Profile database to write or extend (default: "
                      "profiles/<device>/<scenario>.csv)");
  command->add_option(
      "--cluster", settings->cluster,
      "Cluster file replacing the target's platform, as tessera run takes it: a "
      "pipeline's stages, whose kernels, optimizer updates and gradient sums are profiled, are "
      "balanced on its device");
  command
      ->add_option("--mini-batch", settings->mini_batch,
                   "With a model name: samples per GPU (default: the model's own, else 1)")
      ->check(whole_number_in(1, std::int64_t{1} << 24));
  command->add_option("--points", settings->points, "Only these sweep points (indices)")
      ->delimiter(',')
      ->check(kPointIndex);
  command->add_option("--layers", settings->layers, "Only these layers (names)")->delimiter(',');
  command
      ->add_option("--seconds-per-measurement", settings->seconds_per_measurement,
                   "Repeat each measurement until this much time is spent (median counts)")
      ->check(kPositiveNumber);
  command
      ->add_option("--skip-algorithms", settings->skipped_algorithms,
                   "Algorithms not to measure, by name prefix (e.g. ref: for oneDNN's "
                   "reference implementations); they get no row")
      ->delimiter(',');
  command
      ->add_option("--jitter-seconds", settings->jitter_seconds,
                   "Under mpirun: time every rank's kernels once each, all ranks together, again "
                   "and again for this long (at least 16 passes), as the machine's rank jitter "
                   "(rank_pass rows; validate-sim --jitter-seconds simulates with it); default 0: "
                   "none")
      ->check(kNonNegativeNumber);
  command->add_flag("--no-copies", settings->no_copies, "Skip the copy-bandwidth measurements");
  command->add_flag("--fresh", settings->fresh, "Measure everything again");
  command->add_flag("--warm-caches", settings->warm_caches,
                    "Time each run right after the previous one, its operands still cached "
                    "(default: write twice the last-level cache in between, as a training step's "
                    "other layers do, and on a CPU then run the kernel once on other operands, "
                    "which brings its code back as a step keeps it)");
  command->add_flag("--in-context", settings->in_context,
                    "Time a convolution's micro-batch sizes below its batch as a micro-batched "
                    "plan runs them: B/b calls one after another over the whole batch's operands, "
                    "the time divided by B/b (default: each size alone)");
  command->add_flag("--list", settings->list, "Print the kernels to measure and stop");
  command->callback([&action, settings] {
    action = [settings] { return run_guarded([&] { return profile(*settings); }); };
  });
}

}  // namespace tessera::app
