#pragma once
// The compute threads of this process's CPU kernels (oneDNN's OpenMP team). Ranks sharing a
// machine should split its cores: teams that together exceed them wait on one another's
// barriers whenever a core is taken away, which made steps many times slower on a loaded machine
// (docs/measurements/2026-11-21.md, figures from code comments).

namespace tessera::kernels {

struct CpuThreads {
  int threads = 1;
  bool from_environment = false;  // OMP_NUM_THREADS set them
};

// max(1, cores / ranks_on_this_machine) threads from now on, unless OMP_NUM_THREADS is set, which
// wins. Returns what the kernels will use.
CpuThreads share_cpu_cores(int ranks_on_this_machine);

}  // namespace tessera::kernels
