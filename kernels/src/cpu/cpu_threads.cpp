#include "tessera/kernels/cpu/cpu_threads.hpp"

#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

namespace tessera::kernels {

CpuThreads share_cpu_cores(int ranks_on_this_machine) {
  if (const char* set = std::getenv("OMP_NUM_THREADS"); set != nullptr && std::atoi(set) > 0) {
    return {omp_get_max_threads(), true};
  }
  const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  const int threads = std::max(1, cores / std::max(1, ranks_on_this_machine));
  omp_set_num_threads(threads);
  return {threads, false};
}

}  // namespace tessera::kernels
