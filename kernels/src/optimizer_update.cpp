#include "tessera/kernels/optimizer_update.hpp"

#include "tessera/kernels/layer_kernels.hpp"

namespace tessera::kernels {

void optimizer_update(LayerKernels& kernels, Optimizer optimizer, std::int64_t count,
                      float learning_rate, std::int64_t step, const float* gradients,
                      float* weights, float* first_moment, float* second_moment) {
  switch (optimizer) {
    case Optimizer::sgd:
      kernels.sgd_update(count, learning_rate, 0.0F, 0.0F, gradients, weights, nullptr);
      break;
    case Optimizer::momentum:
      kernels.sgd_update(count, learning_rate, 0.9F, 0.0F, gradients, weights, first_moment);
      break;
    case Optimizer::adam:
      kernels.adam_update(count, learning_rate, 0.9F, 0.999F, 1e-8F, step, gradients, weights,
                          first_moment, second_moment);
      break;
  }
}

}  // namespace tessera::kernels
