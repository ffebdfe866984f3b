#pragma once
// How one convolution kernel (a layer's forward, backward-data or backward-filter) runs its
// mini-batch: as a sequence of micro-batches, each with its own algorithm (mu-cuDNN). Times add;
// one workspace buffer is reused, so the kernel needs the largest micro-batch's workspace.
// The planner (core/planner) makes these, the real backend executes them, the simulator costs them.
#include <cstdint>
#include <string>
#include <vector>

namespace tessera {

struct MicroBatch {
  std::int64_t samples = 0;
  std::string algorithm;  // the library's name for it, as in the profile database
  double seconds = 0;     // predicted time of this micro-batch
  double workspace_bytes = 0;
};

struct MicroBatchPlan {
  std::vector<MicroBatch> micro_batches;  // in execution order; samples add up to the batch

  std::int64_t samples() const;
  double seconds() const;          // sum over micro-batches
  double workspace_bytes() const;  // largest micro-batch's workspace
  bool undivided() const { return micro_batches.size() == 1; }
};

// "8 x 32 fast" or "1 x 128 gemm + 1 x 64 fft"
std::string describe(const MicroBatchPlan& plan);

}  // namespace tessera
