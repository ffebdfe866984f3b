#pragma once
// Compute time of one pass of one layer in a step, on the GPU that computes it (the busiest of
// those that do; a pipeline's stages compute different layers): the real backend times it around
// the layer's kernels, the simulator takes it from the step program it plays (layer_compute_times,
// step_program.hpp); the optimizer update is the longest of any GPU. Pass is "forward", "backward"
// (backward-data and backward-filter) or "update" (the optimizer step, layer "optimizer"). A field
// of a result (result_schema.hpp).
#include <string>

namespace tessera {

struct LayerComputeTime {
  std::string layer;
  std::string pass;
  double seconds = 0;
  bool operator==(const LayerComputeTime&) const = default;
};

}  // namespace tessera
