// Losses as plain loops: each is one pass that produces the loss and its gradient together,
// which oneDNN (softmax, eltwise, reduction as separate primitives) would split into several
// passes and temporaries over tensors that are small (batch x classes, or the network output).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>

#include "argument_check.hpp"
#include "cpu/cpu_layer_kernels.hpp"

namespace tessera::kernels {

// Numerically stable: exponentials of (logit - maximum over the classes), in double.
double CpuLayerKernels::softmax_cross_entropy(std::int64_t batch, std::int64_t classes,
                                              std::int64_t positions, const float* logits,
                                              const std::vector<std::int32_t>& labels,
                                              float* dlogits, float gradient_scale) {
  constexpr const char* kernel = "softmax_cross_entropy";
  require_classification_labels(kernel, batch, classes, positions, labels);
  const auto class_count = static_cast<std::size_t>(classes);
  const auto stride = static_cast<std::size_t>(positions);
  std::vector<double> exponentials(class_count);
  double total_loss = 0.0;
  for (std::size_t index = 0; index < labels.size(); ++index) {
    const std::size_t sample = index / stride, position = index % stride;
    const float* first = logits + sample * class_count * stride + position;
    double maximum = first[0];
    for (std::size_t c = 1; c < class_count; ++c)
      maximum = std::max<double>(maximum, first[c * stride]);
    double normaliser = 0.0;
    for (std::size_t c = 0; c < class_count; ++c) {
      exponentials[c] = std::exp(first[c * stride] - maximum);
      normaliser += exponentials[c];
    }
    const auto label = static_cast<std::size_t>(labels[index]);
    total_loss += std::log(normaliser) + maximum - first[label * stride];
    if (dlogits == nullptr) continue;
    float* gradient = dlogits + sample * class_count * stride + position;
    for (std::size_t c = 0; c < class_count; ++c) {
      const double target = c == label ? 1.0 : 0.0;
      gradient[c * stride] =
          static_cast<float>((exponentials[c] / normaliser - target) * gradient_scale);
    }
  }
  return total_loss;
}

double CpuLayerKernels::mse_loss(std::int64_t count, const float* prediction, const float* target,
                                 float* dprediction) {
  require_argument(count >= 1, "mse_loss", "element count must be >= 1");
  const double inverse_count = 1.0 / static_cast<double>(count);
  const auto gradient_scale = static_cast<float>(2.0 * inverse_count);
  double sum_of_squares = 0.0;
  for (std::size_t index = 0; index < static_cast<std::size_t>(count); ++index) {
    const float difference = prediction[index] - target[index];
    sum_of_squares += static_cast<double>(difference) * difference;
    if (dprediction != nullptr) dprediction[index] = gradient_scale * difference;
  }
  return sum_of_squares * inverse_count;
}

}  // namespace tessera::kernels
