#pragma once
// Other tessera commands run as children of one that drives them (validate-sim): each with its
// output in a log file, under an MPI launcher where it needs several ranks.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace tessera::app {

// Runs `arguments` with its output appended to `log`; returns its exit status (127: not started).
int run_child(const std::vector<std::string>& arguments, const std::filesystem::path& log);

// `tessera ARGS...` with R ranks: under the `launcher` command line (--mpirun's words) when R > 1,
// passing OMP_NUM_THREADS on; `fresh` adds --fresh.
std::vector<std::string> tessera_command(const std::vector<std::string>& launcher,
                                         std::int64_t ranks, std::vector<std::string> arguments,
                                         bool fresh = false);

}  // namespace tessera::app
