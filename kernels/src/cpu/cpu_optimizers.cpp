// SGD with momentum and weight decay, and Adam with bias correction, as single fused passes over
// the parameters (plain loops: oneDNN has no optimizer primitives). Update rules follow PyTorch's
// torch.optim.SGD and torch.optim.Adam, so results can be compared with it.
#include <cmath>
#include <cstddef>
#include <string>

#include "argument_check.hpp"
#include "cpu/cpu_layer_kernels.hpp"

namespace tessera::kernels {

void CpuLayerKernels::sgd_update(std::int64_t count, float learning_rate, float momentum,
                                 float weight_decay, const float* g, float* w, float* velocity) {
  require_argument(count >= 0, "sgd_update", "element count must be >= 0");
  require_argument(momentum == 0.0f || velocity != nullptr, "sgd_update",
                   "momentum needs a velocity buffer");
  const auto size = static_cast<std::size_t>(count);
  if (momentum == 0.0f) {
    for (std::size_t index = 0; index < size; ++index) {
      w[index] -= learning_rate * (g[index] + weight_decay * w[index]);
    }
    return;
  }
  for (std::size_t index = 0; index < size; ++index) {
    velocity[index] = momentum * velocity[index] + g[index] + weight_decay * w[index];
    w[index] -= learning_rate * velocity[index];
  }
}

void CpuLayerKernels::adam_update(std::int64_t count, float learning_rate, float beta1, float beta2,
                                  float epsilon, std::int64_t step, const float* g, float* w,
                                  float* m, float* v) {
  require_argument(count >= 0, "adam_update", "element count must be >= 0");
  require_argument(step >= 1, "adam_update", "step counts from 1, got " + std::to_string(step));
  const double exponent = static_cast<double>(step);
  const auto first_correction = static_cast<float>(1.0 / (1.0 - std::pow(beta1, exponent)));
  const auto second_correction = static_cast<float>(1.0 / (1.0 - std::pow(beta2, exponent)));
  for (std::size_t index = 0; index < static_cast<std::size_t>(count); ++index) {
    const float gradient = g[index];
    m[index] = beta1 * m[index] + (1.0f - beta1) * gradient;
    v[index] = beta2 * v[index] + (1.0f - beta2) * gradient * gradient;
    const float second_moment = std::sqrt(v[index] * second_correction);
    w[index] -= learning_rate * (m[index] * first_correction) / (second_moment + epsilon);
  }
}

}  // namespace tessera::kernels
