#pragma once
// One optimizer step over `count` parameters, as the real backend runs it and `tessera profile`
// times it: SGD, SGD with momentum 0.9, or Adam (0.9, 0.999, 1e-8). Momentum needs
// `first_moment`, Adam both moments (device memory, `count` floats each); others may be null.
#include <cstdint>

#include "tessera/core/scenario/scenario.hpp"

namespace tessera::kernels {

class LayerKernels;

void optimizer_update(LayerKernels& kernels, Optimizer optimizer, std::int64_t count,
                      float learning_rate, std::int64_t step, const float* gradients,
                      float* weights, float* first_moment, float* second_moment);

}  // namespace tessera::kernels
