// tessera plan: search the strategy space of a scenario's model on its cluster (plan_space.hpp),
// prune by validity, memory and a compute lower bound (plan_screen.hpp, plan_search.hpp),
// simulate the rest in forked children, spread over MPI ranks under mpirun, and report the best,
// the Pareto front and, with --explain, why.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "command_guard.hpp"
#include "commands.hpp"
#include "option_checks.hpp"
#include "output_directory.hpp"
#include "plan_progress.hpp"
#include "plan_report.hpp"
#include "profile_coverage_report.hpp"
#include "rank_spread.hpp"
#include "scenario_target.hpp"
#include "tessera/core/common/atomic_file.hpp"
#include "tessera/core/common/embedded_files.hpp"
#include "tessera/core/common/plausible_figures.hpp"
#include "tessera/core/common/quantity.hpp"
#include "tessera/core/common/utc_time.hpp"
#include "tessera/core/plan_search/best_scenario.hpp"
#include "tessera/core/plan_search/plan_explain.hpp"
#include "tessera/core/plan_search/plan_store.hpp"
#include "tessera/core/result/run_inputs.hpp"
#include "tessera/core/scenario/scenario_json.hpp"
#include "tessera/simulator/plan_evaluation.hpp"
#include "version_text.hpp"

namespace tessera::app {
namespace {

struct PlanSettings {
  std::string file;
  std::vector<std::int64_t> gpus;
  std::int64_t global_batch = 0;
  std::int64_t mini_batch = 0;
  std::string objective = "step";
  std::string memory_limit;
  double budget_seconds = 0;
  std::size_t top = 5;
  std::string output;
  bool explain = false;
  bool exhaustive = false;
  bool pareto = false;
  bool fresh = false;
  bool every_offload = false;
  std::size_t wave = 8;
  int jobs = 1;
  std::vector<std::string> pins;
  std::int64_t max_model_degree = 8;
  std::int64_t max_tensor_degree = 8;
  std::int64_t max_spatial_parts = 64;
  std::int64_t max_micro_batches = 8;
  std::vector<std::string> profiles;
  std::string cluster;
};

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

[[noreturn]] void bad_option(const std::string& option, const std::string& problem) {
  throw InputError({"command line", 0, 0}, option, problem);
}

PlanObjective objective_from(const std::string& name) {
  if (name == "step") return PlanObjective::step;
  if (name == "time-to-train") return PlanObjective::time_to_train;
  return PlanObjective::samples_per_joule;
}

PlanSpaceOptions space_options(const LoadedScenario& loaded, const PlanSettings& settings) {
  auto options = default_space_options(loaded);
  if (!settings.gpus.empty()) options.gpus = settings.gpus;
  for (const auto gpus : settings.gpus) {
    if (gpus > loaded.cluster.total_gpus()) {
      bad_option("--gpus", "expected at most the " + std::to_string(loaded.cluster.total_gpus()) +
                               " GPUs of cluster " + loaded.cluster.name + ", got " +
                               std::to_string(gpus));
    }
  }
  if (settings.global_batch > 0 && settings.mini_batch > 0) {
    bad_option("--global-batch", "give --global-batch or --mini-batch, not both");
  }
  if (settings.global_batch > 0) {
    options.global_batch = settings.global_batch;
    options.mini_batch.reset();
  }
  if (settings.mini_batch > 0) {
    options.mini_batch = settings.mini_batch;
    options.global_batch.reset();
  }
  const auto& keys = plan_search_keys();
  for (const auto& pin : settings.pins) {
    if (std::find(keys.begin(), keys.end(), pin) == keys.end()) {
      std::string list;
      for (const auto& key : keys) list += (list.empty() ? "" : ", ") + key;
      bad_option("--pin", "expected one of " + list + ", got '" + pin + "'");
    }
    options.pinned.insert(pin);
  }
  options.max_model_degree = settings.max_model_degree;
  options.max_tensor_degree = settings.max_tensor_degree;
  options.max_spatial_parts = settings.max_spatial_parts;
  options.max_micro_batches = settings.max_micro_batches;
  options.every_offload_policy = settings.every_offload;
  // Workspace limits matter only where profiles time the kernels by algorithm (plan_space.hpp).
  if (!settings.profiles.empty()) {
    const double mib = 1024.0 * 1024.0;
    options.workspace_limits_bytes = {0, 16 * mib, 64 * mib, 256 * mib, 1024 * mib};
    const double own = loaded.scenario.micro_batching.workspace_limit_bytes;
    if (std::find(options.workspace_limits_bytes.begin(), options.workspace_limits_bytes.end(),
                  own) == options.workspace_limits_bytes.end()) {
      options.workspace_limits_bytes.push_back(own);
      std::sort(options.workspace_limits_bytes.begin(), options.workspace_limits_bytes.end());
    }
  }
  return options;
}

// The scenario's own strategy at a GPU count planned for (its last such sweep point), as the
// search spells it: with the least offloading that fits unless offload policies are searched
// one by one or pinned.
std::optional<PlanStrategy> own_strategy(const LoadedScenario& loaded,
                                         const PlanSpaceOptions& space) {
  for (std::size_t i = loaded.points.size(); i-- > 0;) {
    const auto gpus = loaded.points[i].config.gpus();
    if (std::find(space.gpus.begin(), space.gpus.end(), gpus) == space.gpus.end()) continue;
    auto own = scenario_strategy(loaded, i);
    if (!space.every_offload_policy && !space.pinned.count("memory.offload") &&
        loaded.scenario.memory.allocation == MemoryAllocation::layer_wise) {
      own.offload = OffloadPolicy::dyn;
    }
    return own;
  }
  return std::nullopt;
}

std::string scenario_text(const std::string& file) {
  if (file == "default") return std::string(*embedded_file("scenarios/default.yaml"));
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Simulates a wave: this rank's share of it in forked children, then every rank's results.
class WaveSimulator {
 public:
  WaveSimulator(const LoadedScenario& base, const RankSpread& spread,
                sim::SimulationOptions options, int jobs, std::function<void()> on_simulated)
      : base_(base),
        spread_(spread),
        options_(options),
        jobs_(jobs),
        on_simulated_(std::move(on_simulated)) {}

  std::vector<std::optional<PointResult>> operator()(
      const std::vector<const ScreenedCandidate*>& wave, const SearchDeadline& deadline) const {
    std::vector<const ScreenedCandidate*> share;
    std::vector<std::size_t> positions;
    for (std::size_t k = 0; k < wave.size(); ++k) {
      if (!spread_.mine(k)) continue;
      share.push_back(wave[k]);
      positions.push_back(k);
    }
    const auto rows = sim::simulate_candidates(
        base_, share, options_, jobs_, {.deadline = deadline, .on_finished = on_simulated_});
    nlohmann::json mine = nlohmann::json::array();
    for (std::size_t i = 0; i < rows.size(); ++i) {
      // One the deadline stopped has no row: every rank then leaves that position empty.
      if (rows[i]) mine.push_back({{"position", positions[i]}, {"row", to_json(*rows[i])}});
    }
    std::vector<std::optional<PointResult>> results(wave.size());
    for (const auto& text : spread_.gather_all(mine.dump())) {
      for (const auto& entry : nlohmann::json::parse(text)) {
        results.at(entry["position"].get<std::size_t>()) = point_result_from_json(entry["row"]);
      }
    }
    return results;
  }

 private:
  const LoadedScenario& base_;
  const RankSpread& spread_;
  sim::SimulationOptions options_;
  int jobs_;
  std::function<void()> on_simulated_;
};

int plan(const PlanSettings& settings) {
  const auto start = Clock::now();
  RankSpread spread;
  auto loaded = load_checked_scenario(settings.file, settings.cluster);
  std::optional<double> memory_limit;
  if (!settings.memory_limit.empty()) {
    memory_limit = parse_quantity(settings.memory_limit, QuantityKind::bytes);
    // As a cluster file's gpu.memory: beyond 1 EiB a size is a typo (and the scenario plan
    // writes would not hold it).
    const auto sizes = memory_cap_range();
    if (!memory_limit || !sizes.holds(*memory_limit)) {
      bad_option("--memory-limit", "expected " + quantity_syntax(QuantityKind::bytes) + " " +
                                       sizes.text + ", got '" + settings.memory_limit + "'");
    }
    apply_memory_limit(loaded, *memory_limit);
  }
  const auto profiles =
      load_scenario_profiles(settings.profiles, loaded, settings.file, spread.writer());
  const ProfileDatabase* profile_db = profiles.size() > 0 ? &profiles : nullptr;

  PlanSearchOptions options;
  options.objective = objective_from(settings.objective);
  options.top = std::max<std::size_t>(settings.top, 1);
  options.wave = std::max<std::size_t>(settings.wave, 1);
  options.exhaustive = settings.exhaustive;
  options.pareto = settings.pareto;
  options.budget_seconds = settings.budget_seconds;
  if (spread.size() > 1) {
    options.agreed_seconds = [&spread](double own_seconds) {
      return std::stod(spread.broadcast(std::to_string(own_seconds)));
    };
  }
  options.efficiency = loaded.statistical_efficiency;
  options.scenario_name = loaded.scenario.name;
  if (options.objective == PlanObjective::time_to_train &&
      options.efficiency.target == TrainingTarget::none) {
    bad_option("--objective",
               "time-to-train needs steps to a target quality: the scenario has no "
               "training key and model " +
                   loaded.model.name() + " no published figures (docs/design/time-to-train.md)");
  }
  if (options.objective == PlanObjective::samples_per_joule) {
    if (loaded.cluster.gpu.power_watts <= 0) {
      bad_option("--objective", "samples-per-joule needs the GPU's power: cluster " +
                                    loaded.cluster.name + " gives no gpu.power (its TDP)");
    }
    options.gpu_power_watts = loaded.cluster.gpu.power_watts;
  }

  const auto space = space_options(loaded, settings);
  const auto candidates = enumerate_candidates(loaded, space);
  auto screened =
      screen_candidates(loaded, candidates, profile_db, static_cast<std::size_t>(settings.jobs));
  const double screening_seconds = seconds_since(start);

  const nlohmann::json backend_settings = {{"granularity", "aggregated"},
                                           {"profiles", settings.profiles}};
  options.inputs = digest_run_inputs(loaded, {.backend = "sim",
                                              .settings = backend_settings,
                                              .tessera_version = build_identity(),
                                              .profile_files = settings.profiles});
  const std::string directory =
      settings.output.empty() ? loaded.scenario.outputs.directory + "/plan" : settings.output;
  // Checked before the search (not under mpirun: a rank stopping alone would leave the others
  // waiting for it).
  if (spread.size() == 1) prepare_results_directory(settings.output, loaded.scenario, "plan");
  const auto files = plan_files(directory);
  // Rank 0 reads what an earlier run stored and tells the others: ranks on other machines may
  // not see the file, and all must skip the same simulations. Its text (a plan's is hundreds of
  // megabytes) is let go once read.
  const auto stored = [&] {
    std::string stored_text;
    if (!settings.fresh && spread.writer()) {
      std::ifstream in(files.json_path, std::ios::binary);
      std::ostringstream text;
      text << in.rdbuf();
      stored_text = text.str();
    }
    return StoredPlanResults::from_text(spread.broadcast(stored_text), files.json_path,
                                        options.inputs);
  }();

  RunResult document;
  document.scenario = loaded.scenario.name;
  document.scenario_file = loaded.scenario.file;
  document.backend = "sim";
  document.tessera_version = build_identity();
  document.platform = loaded.cluster.name;
  document.model = loaded.model.name();
  document.resolved_scenario = to_json(loaded.scenario);
  document.statistical_efficiency = to_json(loaded.statistical_efficiency);
  nlohmann::json pins = settings.pins;
  document.settings = backend_settings;
  document.settings["plan"] = {{"objective", to_string(options.objective)},
                               {"gpus", space.gpus},
                               {"global_batch", space.global_batch.value_or(0)},
                               {"mini_batch", space.mini_batch.value_or(0)},
                               {"pinned", pins},
                               {"max_model_degree", space.max_model_degree},
                               {"max_tensor_degree", space.max_tensor_degree},
                               {"max_spatial_parts", space.max_spatial_parts},
                               {"max_micro_batches", space.max_micro_batches},
                               {"every_offload_policy", space.every_offload_policy},
                               {"memory_limit_bytes", memory_limit.value_or(0)},
                               {"top", options.top},
                               {"wave", options.wave},
                               {"exhaustive", options.exhaustive},
                               {"pareto", options.pareto},
                               {"budget_seconds", options.budget_seconds}};

  options.budget_start = start;  // the budget counts from the command's start
  PlanProgress progress(std::cerr, ::isatty(STDERR_FILENO) != 0, start, candidates.size(),
                        settings.budget_seconds, options.objective);
  if (spread.writer()) progress.screened(screening_seconds);
  sim::SimulationOptions simulation;
  simulation.profiles = profile_db;
  const WaveSimulator simulate(loaded, spread, simulation, settings.jobs, [&] {
    if (spread.writer()) progress.simulation_finished();
  });
  auto last_write = Clock::now();
  double write_seconds = 0;  // the last write's
  std::string write_error;
  const auto search = search_plan(
      std::move(screened), options, std::cref(simulate),
      [&](const PlanCandidate& candidate) { return stored.find(candidate); },
      [&](const PlanSearchResult& so_far, bool last) {
        if (!spread.writer()) return;
        progress.wave_finished(so_far);
        // The files hold every decided candidate (tens of MB for a large space): rewritten at
        // most every two seconds, and at most a tenth of the time.
        // A failed write is reported after the search: the other ranks wait for this one.
        const double interval = std::max(2.0, 10 * write_seconds);
        if ((last || seconds_since(last_write) > interval) && write_error.empty()) {
          const auto write_start = Clock::now();
          try {
            write_plan_results(files, document, so_far);
          } catch (const std::exception& error) {
            write_error = error.what();
          }
          last_write = Clock::now();
          write_seconds = seconds_since(write_start);
        }
      });
  if (!spread.writer()) return kExitOk;
  if (!write_error.empty()) throw std::runtime_error(write_error);
  progress.end();

  std::cout << "Plan for " << loaded.scenario.name << ": " << loaded.model.name() << " on "
            << loaded.cluster.name << ", objective " << to_string(options.objective) << "\n";
  std::cout << search_counts(search) << "\n";
  if (search.ranking.empty()) {
    std::cout << explain_pruned(search, 5);
    std::cerr << "error: no candidate could be simulated (see above)\n";
    return kExitFailure;
  }
  std::cout << "\nBest " << std::min(options.top, search.ranking.size()) << " by "
            << to_string(options.objective) << ":\n"
            << ranking_table(search, options, options.top);
  std::cout << "\nPareto front, " << objective_label(options.objective) << " against memory per GPU"
            << (options.pareto ? "" : ", among the simulated candidates (--pareto proves it)")
            << ":\n"
            << pareto_table(search, options);
  if (search.budget_ran_out) {
    std::cout << "\nThe time budget ran out: the ranking is exact only among the candidates "
                 "simulated.\n";
  }

  // The winner as a scenario that validates and runs.
  const auto& best = search.outcomes[search.ranking.front()];
  BestScenarioSource source{scenario_text(settings.file),
                            std::filesystem::path(loaded.scenario.file).parent_path().string(),
                            settings.cluster, memory_limit};
  const std::string header = "The best strategy tessera plan found for " + loaded.scenario.file +
                             " (" + to_string(options.objective) + "):\n" +
                             describe(best.screened.candidate.strategy) + "\npredicted step " +
                             format_seconds(best.result.step_seconds) + ", " +
                             format_bytes(best.result.peak_memory_bytes) + " per GPU";
  write_file_atomically(files.best_path,
                        best_scenario_yaml(source, best.screened.candidate.strategy, directory,
                                           loaded.scenario.name + "-plan", header));
  // It must read back as the strategy it describes.
  const auto reread = load_scenario(files.best_path);
  if (!(scenario_strategy(reread, 0) == best.screened.candidate.strategy)) {
    throw std::runtime_error("the written scenario " + files.best_path +
                             " does not hold the best strategy");
  }
  auto summary = plan_summary_json(search, options);
  write_file_atomically(files.summary_path, summary.dump(2) + "\n");

  if (settings.explain) {
    std::cout << "\n" << explain_winner(search, options);
    if (const auto own = own_strategy(loaded, space)) {
      std::cout << explain_own_strategy(search, *own, options);
    }
    std::cout << "\n" << explain_pruned(search, 5);
  }
  std::cout << "\nbest scenario: " << files.best_path << "\nresults: " << files.csv_path << ", "
            << files.json_path << ", " << files.summary_path << "\n";
  std::cerr << "plan: " << candidates.size() << " candidates screened in "
            << format_seconds(screening_seconds) << ", " << search.simulated << " simulated in "
            << format_seconds(search.wall_seconds) << " (" << spread.size() << " rank"
            << (spread.size() > 1 ? "s" : "") << " x " << settings.jobs << " job"
            << (settings.jobs > 1 ? "s" : "") << "), " << format_seconds(seconds_since(start))
            << " in all\n";
  return kExitOk;
}

}  // namespace

void add_plan_command(CLI::App& cli, Action& action) {
  auto* command = cli.add_subcommand(
      "plan",
      "Search the best hybrid strategy (data, spatial, model and tensor parallelism, ZeRO "
      "sharding, offloading, workspace) for a scenario's model on its cluster");
  auto settings = std::make_shared<PlanSettings>();
  command
      ->add_option("file", settings->file,
                   "Scenario file (YAML) giving the model, cluster, I/O and batch; 'default' for "
                   "the built-in one")
      ->check(kNonEmptyText)
      ->required();
  command
      ->add_option("--gpus", settings->gpus,
                   "GPU counts to plan for (default: the largest of the scenario's points)")
      ->check(whole_number_in(1, std::int64_t{1} << 24));
  command
      ->add_option("--global-batch", settings->global_batch,
                   "Keep this global batch (default: the scenario's, or its batch per "
                   "replica for a weak-scaling sweep)")
      ->check(whole_number_in(1, std::int64_t{1} << 24));
  command
      ->add_option("--mini-batch", settings->mini_batch,
                   "Keep this batch per data-parallel replica instead of a global batch")
      ->check(whole_number_in(1, std::int64_t{1} << 24));
  command
      ->add_option("--objective", settings->objective,
                   "step (step per sample), time-to-train or samples-per-joule")
      ->check(CLI::IsMember({"step", "time-to-train", "samples-per-joule"}));
  command->add_option("--memory-limit", settings->memory_limit,
                      "GPU memory every candidate must fit, e.g. 12 GiB (default: the GPU's)");
  command
      ->add_option(
          "--budget-s", settings->budget_seconds,
          "Stop the search this many seconds after the command started, the simulations then "
          "running included (0: no limit)")
      ->check(kNonNegativeNumber);
  command->add_option("--top", settings->top, "How many of the best to print (and keep exact)")
      ->check(whole_number_in(1, 1000000));
  command->add_option("--output", settings->output,
                      "Directory for plan.csv, plan.json, summary.json and best.yaml (default: "
                      "the scenario's outputs.directory/plan)");
  command->add_flag("--explain", settings->explain,
                    "Say why the winner beats the runner-up and why candidates were pruned");
  command->add_flag("--pareto", settings->pareto,
                    "Prove the Pareto front of objective against memory too: simulate every "
                    "candidate that may be on it (default: prove the best --top only; the front "
                    "is then drawn from the simulated candidates)");
  command->add_flag("--exhaustive", settings->exhaustive,
                    "Simulate every valid candidate that fits (no bound pruning)");
  command->add_flag("--fresh", settings->fresh, "Ignore earlier results instead of resuming");
  command->add_flag("--every-offload", settings->every_offload,
                    "Try offload none, conv and all each (default: the least that fits, dyn)");
  command
      ->add_option("--wave", settings->wave,
                   "Candidates simulated between pruning decisions (the output depends on it, "
                   "not on --jobs or MPI ranks)")
      ->check(whole_number_in(1, 1000000));
  command
      ->add_option("--jobs", settings->jobs,
                   "Simulations side by side on this machine (forked children per rank), and "
                   "threads screening the candidates")
      ->check(whole_number_in(1, 256));
  command->add_option("--pin", settings->pins,
                      "Keep the scenario's value of a key: parallelism.data, "
                      "parallelism.spatial.grid, parallelism.spatial.until, "
                      "parallelism.model.degree (with its stages or placement), "
                      "parallelism.model.micro_batches, parallelism.model.schedule, "
                      "parallelism.tensor, memory.shard, memory.offload, "
                      "kernels.micro_batching.workspace_limit");
  command
      ->add_option("--max-model-degree", settings->max_model_degree,
                   "Largest model-parallel degree to try")
      ->check(whole_number_in(1, 1024));
  command
      ->add_option("--max-tensor-degree", settings->max_tensor_degree,
                   "Largest tensor-parallel degree to try (default 8, a DGX node)")
      ->check(whole_number_in(1, 1024));
  command
      ->add_option("--max-spatial-parts", settings->max_spatial_parts,
                   "Most GPUs one sample's spatial split may span (default 64)")
      ->check(whole_number_in(1, 1 << 24));
  command
      ->add_option("--max-micro-batches", settings->max_micro_batches,
                   "Most micro-batches to pipeline through model-parallel stages (default 8)")
      ->check(whole_number_in(1, 1 << 20));
  command->add_option("--profiles", settings->profiles,
                      "Profile databases (tessera profile) with measured kernel times; with them "
                      "workspace limits are searched too");
  command->add_option("--cluster", settings->cluster,
                      "Cluster file replacing the scenario's platform");
  command->callback([&action, settings] {
    action = [settings] { return run_guarded([&] { return plan(*settings); }); };
  });
}

}  // namespace tessera::app
