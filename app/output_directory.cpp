#include "output_directory.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "tessera/core/common/input_error.hpp"

namespace tessera::app {

namespace {

// Makes and probes `directory`; a failure is an InputError at `where`, naming `key`.
void prepare_directory(const std::string& directory, const SourceLocation& where,
                       const std::string& key) {
  namespace fs = std::filesystem;
  const fs::path path = directory.empty() ? fs::path(".") : fs::path(directory);
  const auto refuse = [&](const std::string& why) {
    throw InputError(where, key,
                     "expected a folder Tessera can write, got '" + path.string() + "': " + why);
  };
  std::error_code error;
  fs::create_directories(path, error);
  if (error) refuse(error.message());
  if (!fs::is_directory(path, error)) refuse("not a folder");
  const fs::path probe = path / (".tessera-write-check-" + std::to_string(::getpid()));
  {
    std::ofstream out(probe);
    if (!out || !(out << "x") || !out.flush()) refuse("a file cannot be written there");
  }
  fs::remove(probe, error);
}

}  // namespace

void prepare_output_directory(const std::string& directory, const std::string& option) {
  prepare_directory(directory, {"command line", 0, 0}, option);
}

std::string prepare_results_directory(const std::string& output_option, const Scenario& scenario,
                                      const std::string& subfolder) {
  if (!output_option.empty()) {
    prepare_output_directory(output_option, "--output");
    return output_option;
  }
  const std::string directory =
      scenario.outputs.directory + (subfolder.empty() ? "" : "/" + subfolder);
  const auto given = scenario.where.find("outputs.directory");
  prepare_directory(
      directory,
      given != scenario.where.end() ? given->second : SourceLocation{scenario.file, 0, 0},
      "outputs.directory");
  return directory;
}

void prepare_output_file(const std::string& file, const std::string& option) {
  std::error_code error;
  if (file.empty() || std::filesystem::is_directory(file, error)) {
    throw InputError({"command line", 0, 0}, option,
                     "expected the name of a file to write, got '" + file + "'" +
                         (file.empty() ? "" : ": a folder"));
  }
  prepare_output_directory(std::filesystem::path(file).parent_path().string(), option);
}

void prepare_run_outputs(const std::string& output_option, const TraceFiles& traces,
                         const LoadedScenario& loaded, const std::vector<std::size_t>& selected) {
  for (const auto& point : loaded.points) {
    const bool chosen = selected.empty() ||
                        std::find(selected.begin(), selected.end(), point.index) != selected.end();
    if (chosen && traces.traces(point.index)) {
      prepare_output_file(traces.path(point.index), "--trace");
    }
  }
  prepare_results_directory(output_option, loaded.scenario);
}

}  // namespace tessera::app
