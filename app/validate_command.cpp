// tessera validate: check scenario files, profile databases (--profiles) and cluster files
// (--cluster) as a run would read them, and say how much of the profiles a scenario can use.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "command_guard.hpp"
#include "commands.hpp"
#include "option_checks.hpp"
#include "profile_coverage_report.hpp"
#include "scenario_target.hpp"
#include "tessera/core/common/quantity.hpp"
#include "tessera/core/cost/profile_database.hpp"
#include "tessera/core/loading/scenario_loader.hpp"
#include "tessera/core/model/layer_cost.hpp"
#include "tessera/core/model/model_file.hpp"
#include "tessera/core/point/profile_coverage.hpp"
#include "tessera/core/scenario/cluster_spec.hpp"
#include "tessera/simulator/platform/xml_platform_check.hpp"

namespace tessera::app {
namespace {

struct ValidateSettings {
  std::vector<std::string> files;
  std::vector<std::string> profiles;
  std::string cluster;
  std::vector<std::string> simgrid_xml;
  std::vector<std::string> models;
};

int validate_cluster(const std::string& path) {
  return run_guarded([&] {
    const auto cluster = load_cluster_file(path);
    const std::string jitter =
        cluster.jitter.empty()
            ? ""
            : "; rank jitter of " +
                  counted(static_cast<std::int64_t>(cluster.jitter.slowdowns.front().size()),
                          "rank") +
                  " at " + counted(static_cast<std::int64_t>(cluster.jitter.moments()), "moment");
    if (!cluster.uniform() || !cluster.failed_nodes.empty()) {
      std::cout << path << ": ok (cluster " << cluster.name << ": " << describe_node_groups(cluster)
                << jitter << ")\n";
      return kExitOk;
    }
    std::cout << path << ": ok (cluster " << cluster.name << ": " << counted(cluster.nodes, "node")
              << " x " << counted(cluster.gpus_per_node, "GPU") << " '" << cluster.gpu.model << "'"
              << jitter << ")\n";
    return kExitOk;
  });
}

int validate_model_file(const std::string& path) {
  return run_guarded([&] {
    const auto model = load_model_file(path);
    std::cout << path << ": ok (model " << model.name() << ": "
              << counted(static_cast<std::int64_t>(model.layers().size()), "layer") << ", "
              << format_count(parameter_count(model)) << " parameters)\n";
    return kExitOk;
  });
}

int validate_simgrid_xml(const std::string& path) {
  return run_guarded([&] {
    sim::check_xml_platform(path, std::nullopt);
    std::cout << path << ": ok (SimGrid platform: loads, speeds, bandwidths and routes checked)\n";
    return kExitOk;
  });
}

// One file on its own, so that an error names it; then added to `all`.
int validate_profile_file(const std::string& path, ProfileDatabase& all) {
  return run_guarded([&] {
    ProfileDatabase one;
    one.load_csv(path);
    std::int64_t machine_rows = 0;
    for (const auto& row : one.rows()) machine_rows += describes_machine(row.op) ? 1 : 0;
    std::cout << path << ": ok (" << counted(static_cast<std::int64_t>(one.size()), "row") << ", "
              << format_count(machine_rows)
              << " of them the machine's (transfers, rank passes); micro-batches timed "
              << to_string(one.sources().back().micro_batch_timing) << "; caches "
              << to_string(one.sources().back().caches) << ")\n";
    all.load_csv(path);
    return kExitOk;
  });
}

// The good files together, in order, as a run reads them (a later file's row replaces an earlier
// one's for the same key).
int validate_profiles(const std::vector<std::string>& paths, ProfileDatabase& all) {
  int worst = kExitOk;
  for (const auto& path : paths) worst = std::max(worst, validate_profile_file(path, all));
  if (all.replaced_rows() > 0) {
    std::cout << "profiles: later files replace "
              << counted(static_cast<std::int64_t>(all.replaced_rows()), "row")
              << " of earlier ones (same device, op, direction, shape, dtype, micro_batch and "
                 "algorithm)\n";
  }
  return worst;
}

int validate_scenario(const std::string& file, const ValidateSettings& settings,
                      const ProfileDatabase* profiles) {
  return run_guarded([&] {
    const auto loaded = load_checked_scenario(file, settings.cluster);
    std::cout << file << ": ok (" << loaded.model.name() << ", "
              << counted(static_cast<std::int64_t>(loaded.points.size()), "sweep point") << " on "
              << loaded.cluster.name << ")\n";
    if (profiles)
      report_profile_coverage(profile_coverage(*profiles, loaded), file, std::cout, std::cerr);
    return kExitOk;
  });
}

int validate(const ValidateSettings& settings) {
  if (settings.files.empty() && settings.profiles.empty() && settings.cluster.empty() &&
      settings.simgrid_xml.empty() && settings.models.empty()) {
    std::cerr << "error: validate: expected scenario files, --profiles FILE, --cluster FILE, "
                 "--model FILE or --simgrid-xml FILE\n";
    return kExitBadInput;
  }
  int worst = kExitOk;
  // Checked alone first, so its errors name it as given; scenarios cannot be checked against a
  // platform that does not load.
  if (!settings.cluster.empty()) {
    worst = validate_cluster(settings.cluster);
    if (worst != kExitOk) return worst;
  }
  for (const auto& path : settings.models) worst = std::max(worst, validate_model_file(path));
  for (const auto& path : settings.simgrid_xml) {
    worst = std::max(worst, validate_simgrid_xml(path));
  }
  ProfileDatabase profiles;
  const int profiles_code = validate_profiles(settings.profiles, profiles);
  worst = std::max(worst, profiles_code);
  // Coverage of a partly loaded set of profiles would mislead: only when all of them load.
  const bool coverage = !settings.profiles.empty() && profiles_code == kExitOk;
  for (const auto& file : settings.files) {
    worst = std::max(worst, validate_scenario(file, settings, coverage ? &profiles : nullptr));
  }
  return worst;
}

}  // namespace

void add_validate_command(CLI::App& cli, Action& action) {
  auto* command = cli.add_subcommand(
      "validate",
      "Check scenario files (structure, model, platform, every sweep point), profile databases "
      "and cluster files");
  auto settings = std::make_shared<ValidateSettings>();
  command->add_option("files", settings->files, "Scenario files (YAML)")->check(kNonEmptyText);
  command->add_option("--profiles", settings->profiles,
                      "Profile databases (tessera profile) to check, and with scenario files, "
                      "how many of their rows each scenario's kernels match");
  command->add_option("--cluster", settings->cluster,
                      "Cluster file to check, and with scenario files, to replace their platform "
                      "as run --cluster does");
  command->add_option("--model", settings->models, "Model files (YAML layer lists) to check");
  command->add_option("--simgrid-xml", settings->simgrid_xml,
                      "SimGrid platform files to check on their own (a scenario's own "
                      "platform.simgrid_xml file is checked with it)");
  command->callback([&action, settings] { action = [settings] { return validate(*settings); }; });
}

}  // namespace tessera::app
