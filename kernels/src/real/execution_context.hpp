#pragma once
// What every layer executor of one rank shares: the device, the rank's groups, the halo exchange
// and convolution workspace, the step being run, and the per-category timers the step report is
// made of. Owned by the Trainer, outliving its executors.
#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "tessera/core/network_micro_batch_plan.hpp"
#include "tessera/kernels/convolution_runner.hpp"
#include "tessera/kernels/device.hpp"
#include "tessera/kernels/halo_exchange.hpp"
#include "tessera/kernels/real/rank_layout.hpp"

namespace tessera::kernels::real {

// Seconds per category, accumulated over a step. Communication is timed where it blocks, so these
// are exposed times, as the simulator's breakdown reports them.
struct CategoryTimes {
  double halo = 0;
  double allreduce = 0;
  double other_communication = 0;
  double communication() const { return halo + allreduce + other_communication; }
};

double seconds_since(std::chrono::steady_clock::time_point start);

struct ExecutionContext {
  Device& device;
  RankLayout& layout;
  std::vector<std::int64_t> spatial_grid;
  CategoryTimes times;
  std::unique_ptr<HaloExchange> halo_exchange;                  // timed (timed_halo_exchange)
  std::shared_ptr<ConvolutionWorkspace> convolution_workspace;  // one for every layer
  std::int64_t step = 0;
  std::int64_t first_sample = 0;  // global index of the replica's first sample in this step
  std::uint64_t seed = 1;
  const float* targets = nullptr;  // device memory, mini-batch x target values
  const NetworkMicroBatchPlan* micro_batching = nullptr;
  // Ranks of the spatial group sharing the dense part's samples after the redistribution (1: the
  // group is one rank). Losses divide their gradients by it, and their value is the group's sum
  // over it, so that every sample counts once (spatial_redistribution.hpp).
  std::int64_t dense_parts = 1;

  ExecutionContext(Device& device_in, RankLayout& layout_in, std::vector<std::int64_t> grid);

  // Blocking sum over the spatial group of host doubles (batch-norm sums), timed as other
  // communication like the step program's group_allreduce.
  void sum_over_spatial_group(std::vector<double>& values);
};

// Wraps `inner`, adding the time spent in start/finish to times.halo and in sum_over_shards (the
// filter gradients of partitioned layers) to times.allreduce.
std::unique_ptr<HaloExchange> timed_halo_exchange(std::unique_ptr<HaloExchange> inner,
                                                  CategoryTimes& times);

}  // namespace tessera::kernels::real
