#include <iostream>

#include "command_guard.hpp"
#include "commands.hpp"
#include "tessera/core/common/quantity.hpp"
#include "tessera/core/common/text_table.hpp"
#include "tessera/core/model/layer_cost.hpp"
#include "tessera/core/scenario/cluster_spec.hpp"
#include "tessera/core/zoo/model_zoo.hpp"

namespace tessera::app {
namespace {

std::string option_summary(const ModelOptionSpec& spec) {
  std::string text = spec.name + "=" + spec.default_value;
  if (!spec.allowed.empty()) {
    std::string allowed;
    for (const auto& value : spec.allowed) allowed += (allowed.empty() ? "" : "|") + value;
    text += " (" + allowed + ")";
  } else if (spec.type == OptionType::integer) {
    text += " [" + std::to_string(spec.minimum) + ".." + std::to_string(spec.maximum) + "]";
  }
  return text;
}

}  // namespace

void add_models_command(CLI::App& cli, Action& action) {
  auto* command = cli.add_subcommand(
      "models",
      "List the built-in models (with options and default-option parameter counts) "
      "and cluster presets");
  command->callback([&action] {
    action = [] {
      return run_guarded([] {
        using Align = TextTable::Align;
        TextTable models({"model", "parameters", "options (default)", "definition"},
                         {Align::left, Align::right, Align::left, Align::left});
        for (const auto& model : model_zoo()) {
          std::string options;
          for (const auto& spec : model.options) {
            options += (options.empty() ? "" : ", ") + option_summary(spec);
          }
          models.add_row({model.name, format_count(parameter_count(build_zoo_model(model.name))),
                          options, model.definition});
        }
        std::cout << models.render() << "\nCluster presets (platform.preset):\n";
        for (const auto& name : cluster_preset_names()) {
          const auto cluster = load_cluster_preset(name, {}, "platform.preset");
          if (!cluster.uniform() || !cluster.failed_nodes.empty()) {
            std::cout << "  " << name << ": " << describe_node_groups(cluster) << "\n";
            continue;
          }
          std::cout << "  " << name << ": " << counted(cluster.nodes, "node") << " x "
                    << cluster.gpus_per_node << " " << cluster.gpu.model << "\n";
        }
        return kExitOk;
      });
    };
  });
}

}  // namespace tessera::app
