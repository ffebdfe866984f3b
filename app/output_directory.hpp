#pragma once
// Where a command will write, checked before it works: a folder that cannot be made or written
// would otherwise fail the command after minutes of simulating, measuring or searching.
#include <string>

#include <cstddef>
#include <vector>

#include "tessera/core/loading/scenario_loader.hpp"
#include "tessera/core/scenario/scenario.hpp"
#include "trace_files.hpp"

namespace tessera::app {

// Makes `directory` (and its parents) unless it exists, and writes and removes a file in it;
// InputError naming `option` (exit 2) when either fails.
void prepare_output_directory(const std::string& directory, const std::string& option);

// A command's results folder: `output_option` (--output) when given, else `subfolder` of the
// scenario's outputs.directory (results/<name> unless the file says). Checked as above, a failure
// naming --output, or the scenario file and its outputs.directory. Returns the folder.
std::string prepare_results_directory(const std::string& output_option, const Scenario& scenario,
                                      const std::string& subfolder = "");

// Where a run writes, before it runs: the --trace file of every point it traces among `selected`
// (--points; every point when empty), then its results folder (prepare_results_directory), so
// that a bad --trace leaves no results folder behind.
void prepare_run_outputs(const std::string& output_option, const TraceFiles& traces,
                         const LoadedScenario& loaded, const std::vector<std::size_t>& selected);

// The same for the folder `file` will be written into (the current one for a bare name), and
// `file` itself is not empty and not a folder.
void prepare_output_file(const std::string& file, const std::string& option);

}  // namespace tessera::app
