// tessera: plan, simulate and run deep-learning training scenarios.
#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "command_guard.hpp"
#include "commands.hpp"
#include "version_text.hpp"

namespace {

// The error, and the help of the (sub)command it is in ('tessera data inspect --help'). Where a
// command's subcommand is missing, the word given in its place (if any) is named, with the
// subcommands it could have been: CLI11 says only "A subcommand is required".
std::string parse_error_text(const CLI::App& cli, const CLI::ParseError& error, int argc,
                             char** argv) {
  const std::vector<std::string> words(argv + 1, argv + argc);
  auto after_path = words.begin();  // the first word after the (sub)command names
  const CLI::App* innermost = &cli;
  std::string command = "tessera";
  for (auto parsed = cli.get_subcommands(); !parsed.empty();
       parsed = innermost->get_subcommands()) {
    innermost = parsed.front();
    command += " " + innermost->get_name();
    after_path = std::find(after_path, words.end(), innermost->get_name()) + 1;
  }
  std::string message = error.what();
  const auto subcommands =
      const_cast<CLI::App*>(innermost)->get_subcommands([](CLI::App*) { return true; });
  if (!subcommands.empty()) {
    // Nothing where the command should be, a mistyped command, or an option before any.
    const auto given = std::find_if(after_path, words.end(), [](const std::string& word) {
      return word.empty() || word.front() != '-';
    });
    if (after_path == words.end()) {
      message = "expected one of the commands:";
    } else {
      message =
          (given != words.end() ? "unknown command '" + *given : "unknown option '" + *after_path) +
          "'; expected one of the commands:";
    }
    for (const CLI::App* sub : subcommands) message += " " + sub->get_name();
  }
  return "error: " + message + "\nRun '" + command + " --help' for usage.\n";
}

}  // namespace

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
    std::cerr << parse_error_text(cli, error, argc, argv);
    return kExitBadInput;
  }
  return action ? action() : kExitBadInput;
}
