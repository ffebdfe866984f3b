#pragma once
// What `tessera validate-sim` is asked to do: its command line (validate_sim_command.cpp).
#include <cstdint>
#include <string>
#include <vector>

namespace tessera::app {

struct ValidateSimSettings {
  std::string file;
  std::string output;
  std::string mpirun = "mpirun";
  std::int64_t max_ranks = 0;                   // 0: twice the cores (CPU) or the GPU count
  double seconds_per_measurement = 0.2;         // as `tessera profile`
  double jitter_seconds = 0;                    // as `tessera profile`: rank passes; 0: none
  int threads_per_rank = 0;                     // 0: the cores / ranks, at least 1
  bool fresh = false;                           // profile again instead of resuming
  bool warm_caches = false;                     // profile without flushing caches between runs
  std::vector<std::string> skipped_algorithms;  // by name prefix, as `tessera profile`
  double measure_seconds = 20;                  // 0: the scenario's real.measured_steps
  bool no_interleave = false;                   // simulate with the profile before training
};

}  // namespace tessera::app
