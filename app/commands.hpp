#pragma once
// Each subcommand registers itself on the CLI and sets `action` to what runs once the command line
// is parsed; the action returns the exit code (0 ok, 1 runtime failure, 2 bad input).
#include <functional>

#include <CLI/CLI.hpp>

namespace tessera::app {

using Action = std::function<int()>;

void add_validate_command(CLI::App& cli, Action& action);
void add_describe_command(CLI::App& cli, Action& action);
void add_models_command(CLI::App& cli, Action& action);
void add_devices_command(CLI::App& cli, Action& action);
void add_data_command(CLI::App& cli, Action& action);
void add_run_command(CLI::App& cli, Action& action);
void add_plan_command(CLI::App& cli, Action& action);
void add_export_command(CLI::App& cli, Action& action);
void add_profile_command(CLI::App& cli, Action& action);
void add_microbatch_study_command(CLI::App& cli, Action& action);
void add_validate_sim_command(CLI::App& cli, Action& action);
void add_layer_check_command(CLI::App& cli, Action& action);
void add_model_check_command(CLI::App& cli, Action& action);

}  // namespace tessera::app
