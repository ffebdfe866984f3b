#pragma once
// What every layer executor of one rank shares: the device, the rank's groups, the halo exchange
// and convolution workspace, the step being run, and the record of what the rank executed. Owned
// by the Trainer, outliving its executors.
#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "tessera/core/strategy/step_program.hpp"
#include "tessera/core/strategy/table_copies.hpp"
#include "tessera/kernels/convolution_runner.hpp"
#include "tessera/kernels/device.hpp"
#include "tessera/kernels/halo_exchange.hpp"
#include "tessera/kernels/real/rank_layout.hpp"
#include "tessera/kernels/real/trainer.hpp"

namespace tessera::kernels::real {

double seconds_since(std::chrono::steady_clock::time_point start);

struct ExecutionContext {
  Device& device;
  RankLayout& layout;
  std::vector<std::int64_t> spatial_grid;
  std::unique_ptr<HaloExchange> halo_exchange;                  // records what it exchanges
  std::shared_ptr<ConvolutionWorkspace> convolution_workspace;  // one for every layer
  std::int64_t step = 0;
  std::int64_t first_sample = 0;  // global index of the replica's first sample in this step
  std::uint64_t seed = 1;
  const float* targets = nullptr;    // device memory: the regression losses' targets
  std::vector<std::int32_t> labels;  // host: the cross-entropy losses' class labels
  // Ranks of the spatial group sharing the dense part's samples after the redistribution (1: the
  // group is one rank). Losses divide their gradients by it, and their value is the group's sum
  // over it, so that every sample counts once (spatial_redistribution.hpp).
  std::int64_t dense_parts = 1;
  // Micro-batches of the replica's mini-batch (a pipeline): losses divide by them too, so that
  // the gradients the micro-batches add up are the mini-batch's mean.
  std::int64_t micro_batches = 1;
  // Which layer holds the parameters each layer works on, over the stages (table_copies.hpp).
  TableCopies tables;
  // What this step executed, op by op, where the work happened: a kernel run for a layer's pass,
  // an exchange started on an axis, a bucket's all-reduce posted (trainer.hpp).
  std::vector<ExecutedOp> executed;
  std::size_t current_layer = SIZE_MAX;  // the layer whose op the player is running

  ExecutionContext(Device& device_in, RankLayout& layout_in, std::vector<std::int64_t> grid);
  void record(ExecutedOp op) { executed.push_back(op); }
};

}  // namespace tessera::kernels::real
