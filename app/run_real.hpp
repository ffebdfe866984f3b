#pragma once
// `tessera run --backend real`: every sweep point trained for real on this run's MPI ranks (one
// per device; `mpirun -np N tessera run ...`, or one rank without mpirun).
#include <cstdint>
#include <string>
#include <vector>

namespace tessera::app {

struct RealRunSettings {
  std::string file;                   // scenario file or "default"
  std::string cluster;                // cluster file replacing the scenario's platform, or ""
  std::string output;                 // results directory, or "" for the scenario's
  std::vector<std::string> profiles;  // profile databases: the conv kernels' micro-batching plan
  bool fresh = false;
  std::vector<std::size_t> points;  // only these sweep points (empty: every point)
  std::string trace_file;           // the measured timeline of one point, or "" for none
  std::int64_t trace_point = -1;    // which point: -1 for the last
  // Replace the scenario's real.warmup_steps / real.measured_steps when set (-1: the scenario's).
  std::int64_t warmup_steps = -1;
  std::int64_t measured_steps = -1;
  // With `profiles`: time their rows of each point's kernels again between its measured steps
  // and write the medians here (a profile file); "" for none.
  std::string interleaved_profile;
  bool interleaved_warm_caches = false;  // those runs back to back, without flushing the caches
  bool interleaved_rank_passes = false;  // every other pause a pass over the step's kernels
};

// Collective: every rank calls it. Rank 0 writes the results and prints the summary.
int run_real_backend(const RealRunSettings& settings);

}  // namespace tessera::app
