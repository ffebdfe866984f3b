#include <iostream>
#include <string>
#include <vector>

#include "command_guard.hpp"
#include "commands.hpp"
#include "tessera/core/quantity.hpp"
#include "tessera/core/scenario_loader.hpp"

namespace tessera::app {

void add_validate_command(CLI::App& cli, Action& action) {
  auto* command = cli.add_subcommand(
      "validate", "Check scenario files: structure, model, platform and every sweep point");
  auto files = std::make_shared<std::vector<std::string>>();
  command->add_option("files", *files, "Scenario files (YAML)")->required();
  command->callback([&action, files] {
    action = [files] {
      int worst = kExitOk;
      for (const auto& file : *files) {
        const int code = run_guarded([&] {
          const auto loaded = load_scenario(file);
          std::cout << file << ": ok (" << loaded.model.name() << ", "
                    << counted(static_cast<std::int64_t>(loaded.points.size()), "sweep point")
                    << " on " << loaded.cluster.name << ")\n";
          return kExitOk;
        });
        worst = std::max(worst, code);
      }
      return worst;
    };
  });
}

}  // namespace tessera::app
