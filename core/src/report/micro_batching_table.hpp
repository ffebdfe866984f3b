#pragma once
// The micro-batching plan as `tessera describe` prints it.
#include <string>

#include "tessera/core/micro_batching/network_micro_batch_plan.hpp"

namespace tessera {

// Per conv kernel: micro-batches and algorithms, time, workspace, the best undivided algorithm
// under the same limit and the speed-up over it; then the network's totals.
std::string micro_batching_table(const NetworkMicroBatchPlan& plan);

}  // namespace tessera
