#pragma once
// The case the vDNN training tests share (the CPU's in tests/kernels_real, the GPU's here): a
// deep stack of blocks trained for two steps with momentum under an offload policy.
#include <string>

#include "real_training_support.hpp"
#include "tessera/core/model/model_file.hpp"

namespace tessera::kernels::testing {

inline ModelGraph deep_blocks() {
  return load_model_file(std::string(TESSERA_TEST_DATA_DIR) + "/models/vdnn_blocks.yaml");
}

inline TrainingCase blocks_case(OffloadPolicy policy) {
  TrainingCase c;
  c.config.mini_batch = 8;
  c.steps = 2;
  c.optimizer = Optimizer::momentum;
  c.offload = {policy, false};
  return c;
}

}  // namespace tessera::kernels::testing
