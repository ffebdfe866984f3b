#include <iostream>

#include "command_guard.hpp"
#include "commands.hpp"
#include "option_checks.hpp"
#include "profile_coverage_report.hpp"
#include "scenario_target.hpp"
#include "tessera/core/cost/profile_database.hpp"
#include "tessera/core/loading/scenario_loader.hpp"
#include "tessera/core/model/model_json.hpp"
#include "tessera/core/report/describe_report.hpp"

namespace tessera::app {

void add_describe_command(CLI::App& cli, Action& action) {
  auto* command = cli.add_subcommand(
      "describe", "Show a scenario's model layer by layer and the memory each GPU needs");
  struct Settings {
    std::string file;
    std::size_t point = 0;
    bool no_layers = false;
    std::vector<std::string> profiles;
    bool json = false;
  };
  auto settings = std::make_shared<Settings>();
  command
      ->add_option("file", settings->file, "Scenario file (YAML); 'default' for the built-in one")
      ->check(kNonEmptyText)
      ->required();
  command->add_option("--point", settings->point, "Sweep point whose per-GPU shards to show")
      ->default_val(0)
      ->check(kPointIndex);
  command->add_flag("--no-layers", settings->no_layers,
                    "Omit the per-layer table and the micro-batching plan");
  command->add_option("--profiles", settings->profiles,
                      "Measured kernel times (tessera-profile/1 CSV) the micro-batching plan is "
                      "made from; without them conv kernels run undivided at the roofline");
  command->add_flag("--json", settings->json,
                    "Print the scenario's model graph as JSON instead (every layer's op, "
                    "parameters, producers and shapes; with the mini-batch and optimizer)");
  command->callback([&action, settings] {
    action = [settings] {
      return run_guarded([&] {
        const auto loaded = load_checked_scenario(settings->file);
        if (settings->point >= loaded.points.size()) {
          std::cerr << "error: --point " << settings->point << " is out of range; the scenario has "
                    << loaded.points.size() << " point(s)\n";
          return kExitBadInput;
        }
        if (settings->json) {
          auto json = to_json(loaded.model);
          json["mini_batch"] = loaded.points[settings->point].config.mini_batch;
          json["optimizer"] = to_string(loaded.scenario.model.optimizer);
          json["dtype"] = to_string(loaded.scenario.model.dtype);
          std::cout << json.dump(2) << "\n";
          return kExitOk;
        }
        const auto profiles =
            load_scenario_profiles(settings->profiles, loaded, settings->file, true);
        std::cout << describe_scenario(loaded, {settings->point, !settings->no_layers,
                                                profiles.size() > 0 ? &profiles : nullptr});
        return kExitOk;
      });
    };
  });
}

}  // namespace tessera::app
