// tessera export --chakra: one sweep point's step programs as MLCommons Chakra execution traces
// (chakra/include/tessera/chakra/chakra_export.hpp), one file per GPU, for ASTRA-sim.
#include <iostream>

#include "command_guard.hpp"
#include "commands.hpp"
#include "option_checks.hpp"
#include "output_directory.hpp"
#include "profile_coverage_report.hpp"
#include "scenario_target.hpp"
#include "tessera/chakra/chakra_export.hpp"
#include "tessera/core/loading/scenario_loader.hpp"
#include "tessera/core/point/rank_programs.hpp"

namespace tessera::app {
namespace {

struct ExportSettings {
  std::string file;
  bool chakra = false;
  std::int64_t point = 0;
  std::string output;
  std::vector<std::string> profiles;
  std::string cluster;
};

int export_point(const ExportSettings& settings) {
  if (!settings.chakra) {
    throw InputError({"command line", 0, 0}, "--chakra",
                     "expected a format to export to: --chakra (the only one so far)");
  }
  const auto loaded = load_checked_scenario(settings.file, settings.cluster);
  if (settings.point < 0 || settings.point >= static_cast<std::int64_t>(loaded.points.size())) {
    throw InputError({"command line", 0, 0}, "--point",
                     "expected a sweep point from 0 to " +
                         std::to_string(loaded.points.size() - 1) + ", got " +
                         std::to_string(settings.point));
  }
  const auto profiles = load_scenario_profiles(settings.profiles, loaded, settings.file, true);
  const auto& point = loaded.points[static_cast<std::size_t>(settings.point)];
  const std::string directory = prepare_results_directory(
      settings.output, loaded.scenario, "chakra-point" + std::to_string(settings.point));
  const auto programs =
      point_rank_programs(loaded, point, profiles.size() > 0 ? &profiles : nullptr);
  const auto summary =
      chakra::export_chakra(programs, point.config, directory, loaded.scenario.name);
  std::cout << "point " << settings.point << " (" << point.config.gpus()
            << (point.config.gpus() == 1 ? " GPU" : " GPUs") << ": data " << point.config.data
            << " x grid " << grid_to_string(point.config.spatial_grid) << " x model "
            << point.config.model_degree << " x tensor " << point.config.tensor
            << "): " << summary.files
            << (summary.files == 1 ? " Chakra trace, " : " Chakra traces, ") << summary.nodes
            << " nodes, in " << directory << "/" << loaded.scenario.name
            << ".<rank>.et; collective groups in " << summary.comm_groups_path << "\n";
  // What ASTRA-sim needs to replay them (docs/guide/plan.md, "Replaying the traces in ASTRA-sim").
  std::cout << "ASTRA-sim: --workload-configuration=" << directory << "/" << loaded.scenario.name
            << " --comm-group-configuration=" << summary.comm_groups_path
            << ", a system configuration with \"roofline-enabled\": 0 (the nodes carry times)";
  if (summary.memory_nodes > 0) {
    std::cout << ", and a remote memory configuration of PER_NPU_MEMORY_EXPANSION ("
              << summary.memory_nodes << " sample-read or copy nodes)";
  }
  std::cout << "\n";
  if (summary.files < 2) {
    std::cout << "note: ASTRA-sim replays two GPUs or more; this point has one\n";
  }
  return kExitOk;
}

}  // namespace

void add_export_command(CLI::App& cli, Action& action) {
  auto* command = cli.add_subcommand(
      "export",
      "Write a sweep point's step programs in another tool's format (--chakra: MLCommons "
      "Chakra execution traces for ASTRA-sim, one file per GPU)");
  auto settings = std::make_shared<ExportSettings>();
  command
      ->add_option("file", settings->file, "Scenario file (YAML); 'default' for the built-in one")
      ->check(kNonEmptyText)
      ->required();
  command->add_flag("--chakra", settings->chakra, "Chakra execution traces (format 0.0.4)");
  command->add_option("--point", settings->point, "Sweep point to export (default 0)")
      ->check(kPointIndex);
  command->add_option("--output", settings->output,
                      "Directory for the traces (default: outputs.directory/chakra-point<N>)");
  command->add_option("--profiles", settings->profiles,
                      "Profile databases (tessera profile) with measured kernel times");
  command->add_option("--cluster", settings->cluster,
                      "Cluster file replacing the scenario's platform");
  command->callback([&action, settings] {
    action = [settings] { return run_guarded([&] { return export_point(*settings); }); };
  });
}

}  // namespace tessera::app
