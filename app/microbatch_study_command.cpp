// tessera microbatch-study: the mu-cuDNN micro-batching study on a local device. For DeepBench
// training convolutions (or a scenario's convolution layers) it profiles every micro-batch size
// the policies need, plans each kernel under each workspace limit and policy, runs the plan and
// the best undivided algorithm for real, and writes predicted against measured speed-ups.
// The profile database is extended, never remeasured, so a rerun or an interrupted run only
// measures what is missing.
#include <charconv>
#include <filesystem>
#include <iostream>
#include <set>

#include "command_guard.hpp"
#include "commands.hpp"
#include "option_checks.hpp"
#include "output_directory.hpp"
#include "scenario_target.hpp"
#include "tessera/core/common/atomic_file.hpp"
#include "tessera/core/common/input_error.hpp"
#include "tessera/core/common/quantity.hpp"
#include "tessera/core/common/utc_time.hpp"
#include "tessera/core/loading/scenario_loader.hpp"
#include "tessera/core/point/profile_plan.hpp"
#include "tessera/kernels/device.hpp"
#include "tessera/kernels/profile/microbatch_study.hpp"
#include "tessera/kernels/profile/microbatch_study_report.hpp"

namespace tessera::app {
namespace {

constexpr std::int64_t kDeepBenchProblems = 94;

struct StudySettings {
  std::string target = "deepbench";
  std::string problems;  // "0,5,10-20"; empty: all
  std::vector<std::string> layers;
  std::int64_t mini_batch = 0;  // 0: the model's or problem's own
  std::string limits = "8,64,512";
  std::vector<std::string> policies{"undivided", "power_of_two", "all"};
  std::int64_t all_max_batch = 64;
  std::vector<std::string> skip_algorithms;
  double seconds_per_measurement = 0.2;
  std::string device = "cpu";
  std::string output;
  bool fresh = false;
  bool in_context = false;
};

struct StudyKernel {
  std::string name;  // problem number or layer name
  KernelToProfile kernel;
};

std::int64_t parse_integer(const std::string& text, const std::string& key,
                           const std::string& expected) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size()) {
    throw InputError({}, key, expected + ", got '" + text + "'");
  }
  return value;
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(separator, start), text.size());
    parts.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

// "0,5,10-20" -> {0, 5, 10, ..., 20}; empty -> every problem.
std::vector<std::int64_t> parse_problems(const std::string& text) {
  const std::string expected = "problem numbers 0.." + std::to_string(kDeepBenchProblems - 1) +
                               " and ranges, e.g. 0,5,10-20";
  std::set<std::int64_t> problems;
  if (text.empty()) {
    for (std::int64_t p = 0; p < kDeepBenchProblems; ++p) problems.insert(p);
  }
  for (const std::string& part : text.empty() ? std::vector<std::string>{} : split(text, ',')) {
    const std::size_t dash = part.find('-');
    const std::int64_t first = parse_integer(part.substr(0, dash), "--problems", expected);
    const std::int64_t last = dash == std::string::npos
                                  ? first
                                  : parse_integer(part.substr(dash + 1), "--problems", expected);
    if (first < 0 || last >= kDeepBenchProblems || first > last) {
      throw InputError({}, "--problems", expected + ", got '" + part + "'");
    }
    for (std::int64_t p = first; p <= last; ++p) problems.insert(p);
  }
  return {problems.begin(), problems.end()};
}

// "8,64,512" (MiB) or quantities such as "8 MiB,1 GiB".
std::vector<double> parse_limits(const std::string& text) {
  std::vector<double> limits;
  for (const std::string& part : split(text, ',')) {
    double mebibytes = 0;
    const auto [end, error] = std::from_chars(part.data(), part.data() + part.size(), mebibytes);
    if (error == std::errc{} && end == part.data() + part.size() && mebibytes > 0) {
      limits.push_back(mebibytes * 1024 * 1024);
    } else if (const auto bytes = parse_quantity(part, QuantityKind::bytes); bytes && *bytes > 0) {
      limits.push_back(*bytes);
    } else {
      throw InputError({}, "--limits",
                       "positive workspace limits in MiB or with a unit (" +
                           quantity_syntax(QuantityKind::bytes) + "), got '" + part + "'");
    }
  }
  return limits;
}

std::vector<MicroBatchPolicy> parse_policies(const std::vector<std::string>& names) {
  std::vector<MicroBatchPolicy> policies;
  for (const std::string& name : names) {
    bool known = false;
    for (MicroBatchPolicy policy :
         {MicroBatchPolicy::undivided, MicroBatchPolicy::power_of_two, MicroBatchPolicy::all}) {
      if (name == to_string(policy)) {
        policies.push_back(policy);
        known = true;
      }
    }
    if (!known) {
      throw InputError({}, "--policies", "undivided, power_of_two or all, got '" + name + "'");
    }
  }
  return policies;
}

// The convolution kernels of a scenario's first sweep point, each at `mini_batch` if given.
std::vector<StudyKernel> convolution_kernels(const LoadedScenario& loaded,
                                             const StudySettings& settings,
                                             const std::string& name_prefix) {
  LoadedScenario first = loaded;
  first.points.resize(1);
  std::vector<StudyKernel> result;
  const std::set<std::string> wanted(settings.layers.begin(), settings.layers.end());
  for (KernelToProfile& kernel : kernels_to_profile(first)) {
    if (kernel.layer.kind != LayerKind::convolution || kernel.window) continue;
    if (!wanted.empty() && !wanted.contains(kernel.layer.name)) continue;
    if (settings.mini_batch > 0) kernel.batch = settings.mini_batch;
    result.push_back({name_prefix.empty() ? kernel.layer.name : name_prefix, std::move(kernel)});
  }
  return result;
}

std::vector<StudyKernel> study_kernels(const StudySettings& settings) {
  if (settings.target == "deepbench") {
    std::vector<StudyKernel> kernels;
    for (std::int64_t problem : parse_problems(settings.problems)) {
      const std::string text =
          "name: deepbench-" + std::to_string(problem) +
          "\nmodel: {zoo: deepbench_conv, options: {problem: " + std::to_string(problem) +
          "}}\nplatform: {preset: v100_node, nodes: 1}\n";
      const LoadedScenario loaded = load_scenario_text(text, "deepbench", ".");
      for (StudyKernel& kernel : convolution_kernels(loaded, settings, std::to_string(problem))) {
        kernels.push_back(std::move(kernel));
      }
    }
    return kernels;
  }
  if (!settings.problems.empty()) {
    throw InputError({}, "--problems",
                     "only with the target 'deepbench', got target '" + settings.target + "'");
  }
  // A scenario's kernels take --mini-batch in convolution_kernels; a zoo model is built with it.
  const auto mini_batch = settings.mini_batch > 0 && names_zoo_model(settings.target)
                              ? std::optional<std::int64_t>(settings.mini_batch)
                              : std::nullopt;
  return convolution_kernels(load_target(settings.target, mini_batch), settings, "");
}

std::string default_output(const StudySettings& settings) {
  std::string name = std::filesystem::path(settings.target).stem().string();
  return "results/microbatch-study/" + name;
}

int study(const StudySettings& settings) {
  kernels::StudyOptions options;
  options.workspace_limits_bytes = parse_limits(settings.limits);
  options.policies = parse_policies(settings.policies);
  options.all_policy_max_batch = settings.all_max_batch;
  options.measurement.seconds_per_measurement = settings.seconds_per_measurement;
  options.measurement.skipped_algorithm_prefixes = settings.skip_algorithms;
  const auto to_study = study_kernels(settings);
  if (to_study.empty()) {
    throw InputError({}, "--layers", "names of the target's convolution layers, got none of them");
  }

  auto device = open_device_option(settings.device);
  const std::filesystem::path output(settings.output.empty() ? default_output(settings)
                                                             : settings.output);
  prepare_output_directory(output.string(), "--output");
  const std::string profile_path =
      (output / (settings.in_context ? "profile_in_context.csv" : "profile.csv")).string();
  ProfileDatabase database;
  if (!settings.fresh && std::filesystem::exists(profile_path)) database.load_csv(profile_path);
  const ProfileMetadata metadata{
      device->info().name, device->info().library, utc_now(),
      settings.in_context ? MicroBatchTiming::in_context : MicroBatchTiming::alone,
      options.measurement.caches};

  std::vector<kernels::StudyRow> rows;
  for (std::size_t i = 0; i < to_study.size(); ++i) {
    const auto& [name, kernel] = to_study[i];
    std::cerr << "[" << i + 1 << "/" << to_study.size() << "] " << name << " "
              << to_string(kernel.direction) << " (batch " << kernel.batch << ")" << std::flush;
    const auto sizes = kernels::study_micro_batch_sizes(options, kernel.batch);
    const std::size_t profiled =
        settings.in_context
            ? kernels::profile_missing_sizes_in_context(*device, kernel, sizes, options.measurement,
                                                        database)
            : kernels::profile_missing_sizes(*device, kernel, sizes, options.measurement, database);
    if (profiled > 0) write_file_atomically(profile_path, database.to_csv(metadata));
    const auto kernel_rows = kernels::study_kernel(*device, name, kernel, database, options);
    rows.insert(rows.end(), kernel_rows.begin(), kernel_rows.end());
    std::cerr << ": " << profiled << " sizes profiled, " << kernel_rows.size() << " plans\n";
    // Written after every kernel so an interrupted study keeps what it measured.
    write_file_atomically((output / "rows.csv").string(), kernels::study_rows_csv(rows));
    write_file_atomically((output / "summary.csv").string(),
                          kernels::study_summary_csv(kernels::summarise(rows)));
  }
  const auto summaries = kernels::summarise(rows);
  std::cout << "micro-batching study on " << device->info().name << " (" << device->info().library
            << "), " << to_study.size() << " kernels\n\n"
            << kernels::study_summary_text(summaries) << "speed-up: best undivided algorithm "
            << "under the limit / the plan; error: the plan's measured time against its "
            << "prediction\nwrote " << (output / "rows.csv").string() << ", "
            << (output / "summary.csv").string() << ", " << profile_path << "\n"
            << "plot with: /usr/bin/python3 analysis/plot_microbatching.py " << output.string()
            << "\n";
  return kExitOk;
}

}  // namespace

void add_microbatch_study_command(CLI::App& cli, Action& action) {
  auto* command = cli.add_subcommand(
      "microbatch-study",
      "Micro-batching study (mu-cuDNN): predicted vs measured speed-ups of planned convolutions");
  auto settings = std::make_shared<StudySettings>();
  command
      ->add_option("target", settings->target,
                   "'deepbench' (the 94 DeepBench training convolutions), a scenario file or "
                   "a zoo model name (its convolution layers)")
      ->capture_default_str()
      ->check(kNonEmptyText);
  command->add_option("--problems", settings->problems,
                      "DeepBench problems, e.g. 0,5,10-20 (default: all 94)");
  command->add_option("--layers", settings->layers, "Only these convolution layers (names)")
      ->delimiter(',');
  command
      ->add_option("--mini-batch", settings->mini_batch,
                   "Samples per kernel call (default: the problem's N, the scenario's, or a zoo "
                   "model's own mini-batch, else 1)")
      ->check(whole_number_in(1, std::int64_t{1} << 24));
  command
      ->add_option("--limits", settings->limits,
                   "Workspace limits, in MiB or with a unit, comma-separated")
      ->capture_default_str();
  command->add_option("--policies", settings->policies, "Micro-batching policies to compare")
      ->delimiter(',')
      ->capture_default_str();
  command
      ->add_option("--all-max-batch", settings->all_max_batch,
                   "Policy 'all' profiles every size 1..B; it is not run above this batch")
      ->check(whole_number_in(1, std::int64_t{1} << 24))
      ->capture_default_str();
  command
      ->add_option("--skip-algorithms", settings->skip_algorithms,
                   "Algorithms (name prefixes, e.g. ref: for oneDNN's reference ones) neither "
                   "measured nor planned with")
      ->delimiter(',');
  command
      ->add_option("--seconds-per-measurement", settings->seconds_per_measurement,
                   "Repeat each measurement until this much time is spent (median counts)")
      ->check(kPositiveNumber)
      ->capture_default_str();
  command->add_option("--device", settings->device, "cpu or cuda:N")->capture_default_str();
  command->add_option("--output", settings->output,
                      "Directory for profile.csv, rows.csv, summary.csv (default: "
                      "results/microbatch-study/<target>)");
  command->add_flag("--fresh", settings->fresh, "Profile everything again");
  command->add_flag("--in-context", settings->in_context,
                    "Time each micro-batch size as a plan runs it (B/b micro-batches over the "
                    "whole batch) instead of alone; kept in profile_in_context.csv");
  command->callback([&action, settings] {
    action = [settings] { return run_guarded([&] { return study(*settings); }); };
  });
}

}  // namespace tessera::app
