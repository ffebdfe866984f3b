#include "rank_count_validation.hpp"

#include <algorithm>
#include <fstream>
#include <iostream>
#include <optional>

#include "child_process.hpp"
#include "tessera/core/common/atomic_file.hpp"
#include "tessera/core/result/measurement_length.hpp"
#include "tessera/core/result/point_identity.hpp"
#include "tessera/simulator/simulate_point.hpp"

namespace tessera::app {
namespace {

namespace fs = std::filesystem;

std::string join(const std::vector<std::string>& words, const std::string& separator) {
  std::string text;
  for (const auto& word : words) text += (text.empty() ? "" : separator) + word;
  return text;
}

// The profile of a rank count's kernels and the cluster it describes (steps 1 and 2).
struct ProfiledMachine {
  ProfileDatabase profiles;
  fs::path profiles_csv;
  fs::path cluster_yaml;
};

std::vector<PointResult> failed(const Validation& validation, const RankCount& count,
                                const std::string& note) {
  std::vector<PointResult> results;
  for (const auto* point : count.points) {
    results.push_back(unmeasured(validation.loaded, *point, PointStatus::failed, note));
  }
  return results;
}

// Steps 1 and 2; the failure's note where a profile run failed.
std::optional<ProfiledMachine> profile_machine(Validation& validation, const RankCount& count,
                                               std::string& failure) {
  const auto& settings = validation.settings;
  ProfiledMachine profiled;
  profiled.profiles_csv = count.directory / "profiles.csv";
  const fs::path profile_log = count.directory / "profile.log";
  std::cerr << count.ranks << " rank(s), point(s) " << count.indices(", ") << ": profiling ("
            << profile_log.string() << ")\n";
  std::vector<std::string> profile_arguments{"profile",
                                             settings.file,
                                             "--points",
                                             count.indices(),
                                             "--output",
                                             profiled.profiles_csv.string(),
                                             "--seconds-per-measurement",
                                             std::to_string(settings.seconds_per_measurement),
                                             "--jitter-seconds",
                                             std::to_string(settings.jitter_seconds)};
  if (settings.warm_caches) profile_arguments.push_back("--warm-caches");
  if (!settings.skipped_algorithms.empty()) {
    profile_arguments.push_back("--skip-algorithms");
    profile_arguments.push_back(join(settings.skipped_algorithms, ","));
  }
  validation.drift.sample(count.ranks, "before profiling");
  const int profiled_exit = run_child(
      tessera_command(validation.launcher, count.ranks, profile_arguments, settings.fresh),
      profile_log);
  if (profiled_exit != 0) {
    failure = "profiling failed (exit " + std::to_string(profiled_exit) + "), see " +
              profile_log.string();
    return std::nullopt;
  }
  // The machine's description before the real run, which trains on it too: a pipeline's stages
  // are balanced by the cluster's device, and both sides must split the model alike.
  const auto describe = [&] {
    profiled.profiles = ProfileDatabase{};
    profiled.profiles.load_csv(profiled.profiles_csv.string());
    profiled.cluster_yaml = write_rank_cluster(
        count.directory, profiled.profiles, validation.jitter_passes(profiled.profiles),
        static_cast<int>(count.ranks), validation.largest_point, validation.machine, count.threads);
  };
  describe();
  // The profile balanced a pipeline's stages on the scenario's own platform, not yet on the
  // device it measured: again on cluster.yaml, so that each rank times the kernels of the stage
  // it trains and the stages' optimizer updates get rows at their sizes (rows kept, the rest
  // measured).
  const bool pipelined =
      std::any_of(count.points.begin(), count.points.end(),
                  [](const SweepPoint* point) { return point->plan.stages > 1; });
  if (pipelined) {
    auto on_cluster = profile_arguments;
    on_cluster.insert(on_cluster.end(),
                      {"--cluster", profiled.cluster_yaml.string(), "--no-copies"});
    const int again =
        run_child(tessera_command(validation.launcher, count.ranks, on_cluster), profile_log);
    if (again != 0) {
      failure = "profiling on " + profiled.cluster_yaml.string() + " failed (exit " +
                std::to_string(again) + "), see " + profile_log.string();
      return std::nullopt;
    }
    describe();
  }
  return profiled;
}

// The rank count's points simulated on `on_machine` with `kernel_times`, their timelines written
// as ranks-R/sim-trace-P.json (a later simulation's replace an earlier one's).
std::vector<PointResult> simulate_points(const RankCount& count, const LoadedScenario& on_machine,
                                         const ProfileDatabase& kernel_times) {
  sim::SimulationOptions options;
  options.profiles = &kernel_times;
  options.trace = true;
  std::vector<PointResult> results;
  for (const auto* point : count.points) {
    auto outcome =
        sim::simulate_point_isolated(on_machine, on_machine.points[point->index], options);
    if (!outcome.trace.is_null()) {  // a failed simulation has none; its row says why
      write_file_atomically(
          (count.directory / ("sim-trace-" + std::to_string(point->index) + ".json")).string(),
          outcome.trace.dump() + "\n");
    }
    results.push_back(std::move(outcome.result));
  }
  return results;
}

double shortest_step_seconds(const std::vector<PointResult>& results) {
  double shortest = 0;
  for (const auto& result : results) {
    if (result.status != PointStatus::ok || result.step_seconds <= 0) continue;
    shortest = shortest > 0 ? std::min(shortest, result.step_seconds) : result.step_seconds;
  }
  return shortest;
}

// Step 4: the real run of the rank count's points, for about --measure-seconds given the
// simulated step, its rows timed again between the steps into `interleaved_csv` where the
// validation interleaves. Returns its exit status.
int train_for_real(Validation& validation, const RankCount& count, const ProfiledMachine& profiled,
                   double simulated_step_seconds, const fs::path& interleaved_csv) {
  const auto& settings = validation.settings;
  const auto steps = steps_for_seconds(validation.loaded.scenario.real, settings.measure_seconds,
                                       simulated_step_seconds);
  const fs::path real_log = count.directory / "real.log";
  validation.drift.sample(count.ranks, "before training");
  std::cerr << count.ranks << " rank(s): training for real, " << steps.warmup << " warm-up and "
            << steps.measured << " measured steps"
            << (validation.interleave ? ", the profile's rows timed again between them" : "")
            << " (" << real_log.string() << ")\n";
  std::vector<std::string> run_arguments{"run",
                                         settings.file,
                                         "--backend",
                                         "real",
                                         "--points",
                                         count.indices(),
                                         "--cluster",
                                         profiled.cluster_yaml.string(),
                                         "--output",
                                         (count.directory / "real").string(),
                                         "--profiles",
                                         profiled.profiles_csv.string(),
                                         "--warmup-steps",
                                         std::to_string(steps.warmup),
                                         "--measured-steps",
                                         std::to_string(steps.measured),
                                         "--fresh",
                                         "--trace",
                                         (count.directory / "real-trace-{point}.json").string()};
  if (validation.interleave) {
    run_arguments.insert(run_arguments.end(), {"--interleaved-profile", interleaved_csv.string()});
    if (settings.warm_caches) run_arguments.push_back("--interleaved-warm-caches");
    if (settings.jitter_seconds > 0) run_arguments.push_back("--interleaved-rank-passes");
  }
  const int trained =
      run_child(tessera_command(validation.launcher, count.ranks, run_arguments), real_log);
  validation.drift.sample(count.ranks, "after training");
  return trained;
}

// The real run's results of the rank count's points, from ranks-R/real/.
std::vector<PointResult> read_real_results(const RankCount& count) {
  const fs::path real_csv = count.directory / "real" / "real.csv";
  if (!fs::exists(real_csv)) return {};
  std::ifstream real_file(real_csv);
  const std::string real_text((std::istreambuf_iterator<char>(real_file)),
                              std::istreambuf_iterator<char>());
  auto real_rows = results_from_csv(real_text, real_csv.string());
  std::ifstream real_json(count.directory / "real" / "real.json");
  attach_json_only_fields(real_rows, nlohmann::json::parse(real_json, nullptr, false));
  std::vector<PointResult> measured;
  for (const auto& result : real_rows) {
    if (result.gpus == count.ranks) measured.push_back(result);
  }
  return measured;
}

}  // namespace

const ProfileDatabase& Validation::jitter_passes(const ProfileDatabase& rows) const {
  static const ProfileDatabase no_passes;
  return settings.jitter_seconds > 0 ? rows : no_passes;
}

std::string RankCount::indices(const std::string& separator) const {
  std::vector<std::string> words;
  for (const auto* point : points) words.push_back(std::to_string(point->index));
  return join(words, separator);
}

PointResult unmeasured(const LoadedScenario& loaded, const SweepPoint& point, PointStatus status,
                       const std::string& note) {
  auto result = point_identity(loaded.scenario.name, static_cast<std::int64_t>(point.index), "real",
                               point.config);
  result.status = status;
  result.note = note;
  return result;
}

RankCountOutcome validate_rank_count(Validation& validation, const RankCount& count) {
  RankCountOutcome outcome;
  std::string failure;
  const auto profiled = profile_machine(validation, count, failure);
  if (!profiled) {
    outcome.measured = failed(validation, count, failure);
    return outcome;
  }
  const auto& settings = validation.settings;
  // Simulated first: its step sets how many steps the real run measures.
  const auto on_this_machine =
      load_scenario(settings.file, {.cluster_file = profiled->cluster_yaml.string()});
  std::cerr << count.ranks << " rank(s): simulating on " << profiled->cluster_yaml.string() << "\n";
  // Its timelines stand unless step 5 writes its own.
  outcome.simulated_before = simulate_points(count, on_this_machine, profiled->profiles);

  const fs::path interleaved_csv = count.directory / "interleaved-profile.csv";
  // What is read below is this run's, or nothing.
  fs::remove(count.directory / "real" / "real.csv");
  fs::remove(interleaved_csv);
  const int trained =
      train_for_real(validation, count, *profiled, shortest_step_seconds(outcome.simulated_before),
                     interleaved_csv);
  // A run in which a point failed exits 1 but writes the others: those are kept.
  if (trained != 0) {
    outcome.measured = failed(validation, count,
                              "real run failed (exit " + std::to_string(trained) + "), see " +
                                  (count.directory / "real.log").string());
  }
  // Simulated again with the rows timed between the steps, which replace the earlier ones.
  if (validation.interleave && fs::exists(interleaved_csv)) {
    ProfileDatabase between_steps;
    between_steps.load_csv(interleaved_csv.string());
    ProfileDatabase retimed = profiled->profiles;
    retimed.merge(between_steps);
    // The rank jitter of the moments the steps ran in, not of the profile's passes.
    const fs::path cluster_during_training = write_rank_cluster(
        count.directory, profiled->profiles, validation.jitter_passes(between_steps),
        static_cast<int>(count.ranks), validation.largest_point, validation.machine, count.threads,
        "cluster-during-training.yaml");
    const auto on_machine_during_training =
        load_scenario(settings.file, {.cluster_file = cluster_during_training.string()});
    outcome.simulated = simulate_points(count, on_machine_during_training, retimed);
  } else {
    outcome.simulated = outcome.simulated_before;
  }
  // A point the run measured replaces its failure.
  for (auto& result : read_real_results(count)) {
    std::erase_if(outcome.measured,
                  [&](const PointResult& other) { return other.point == result.point; });
    outcome.measured.push_back(std::move(result));
  }
  return outcome;
}

}  // namespace tessera::app
