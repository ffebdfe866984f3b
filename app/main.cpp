// tessera: plan, simulate and run deep-learning training scenarios.
#include <iostream>

#include "command_guard.hpp"
#include "commands.hpp"
#include "version_text.hpp"

int main(int argc, char** argv) {
  using namespace tessera::app;
  CLI::App cli{"Tessera: how deep-learning training scales on GPU clusters, measured and simulated",
               "tessera"};
  cli.set_version_flag("--version", version_text);
  cli.require_subcommand(1);
  Action action;
  add_validate_command(cli, action);
  add_describe_command(cli, action);
  add_run_command(cli, action);
  add_plan_command(cli, action);
  add_export_command(cli, action);
  add_profile_command(cli, action);
  add_microbatch_study_command(cli, action);
  add_validate_sim_command(cli, action);
  add_layer_check_command(cli, action);
  add_model_check_command(cli, action);
  add_models_command(cli, action);
  add_devices_command(cli, action);
  add_data_command(cli, action);
  try {
    cli.parse(argc, argv);
  } catch (const CLI::CallForHelp& help) {
    return cli.exit(help);
  } catch (const CLI::CallForAllHelp& help) {
    return cli.exit(help);
  } catch (const CLI::CallForVersion& version) {
    return cli.exit(version);
  } catch (const CLI::ParseError& error) {
    std::cerr << "error: " << error.what() << "\nRun 'tessera --help' for usage.\n";
    return kExitBadInput;
  }
  return action ? action() : kExitBadInput;
}
