#pragma once
// The cluster validate-sim simulates on: this machine's measured device (this_machine.yaml, written
// by `tessera profile`) as many times as a point has ranks, in one node, joined by the link
// measured among those ranks.
#include <cstdint>
#include <filesystem>
#include <string>

#include "tessera/core/cost/profile_database.hpp"

namespace tessera::app {

// What validate-sim runs its ranks on.
struct Machine {
  int cuda_devices = 0;
  int cpu_cores = 1;
};
Machine measured_machine();

// this_machine.yaml's device in one node joined by the rank link measured among `ranks` ranks,
// with the rank jitter of the rank_pass rows in `passes` (none without them), written to
// `file_name` in `directory` (which holds this_machine.yaml). The node holds `devices_per_node`
// (the sweep's largest point) so that the scenario still loads; a point of `ranks` devices plays
// on its own devices and links only. Returns the file's path.
std::filesystem::path write_rank_cluster(const std::filesystem::path& directory,
                                         const ProfileDatabase& profiles,
                                         const ProfileDatabase& passes, int ranks,
                                         std::int64_t devices_per_node, const Machine& machine,
                                         int threads_per_rank,
                                         const std::string& file_name = "cluster.yaml");

}  // namespace tessera::app
