#pragma once
// One step's input on this rank: its samples (the replica's mini-batch) over its shard's planes
// of the input layer, and the targets of those samples (host memory).
#include <vector>

namespace tessera::kernels::real {

struct StepInput {
  std::vector<float> volume;   // mini_batch x C x shard planes
  std::vector<float> targets;  // mini_batch x target values
};

}  // namespace tessera::kernels::real
