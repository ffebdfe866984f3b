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

// Numerically stable: exponentials of (logit - row maximum), in double.
double CpuLayerKernels::softmax_cross_entropy(std::int64_t batch, std::int64_t classes,
                                              const float* logits,
                                              const std::vector<std::int32_t>& labels,
                                              float* dlogits) {
  constexpr const char* kernel = "softmax_cross_entropy";
  require_classification_labels(kernel, batch, classes, labels);
  const auto class_count = static_cast<std::size_t>(classes);
  const double inverse_batch = 1.0 / static_cast<double>(batch);
  std::vector<double> exponentials(class_count);
  double total_loss = 0.0;
  for (std::size_t sample = 0; sample < labels.size(); ++sample) {
    const float* row = logits + sample * class_count;
    const double maximum = *std::max_element(row, row + class_count);
    double normaliser = 0.0;
    for (std::size_t index = 0; index < class_count; ++index) {
      exponentials[index] = std::exp(row[index] - maximum);
      normaliser += exponentials[index];
    }
    const auto label_index = static_cast<std::size_t>(labels[sample]);
    total_loss += std::log(normaliser) + maximum - row[label_index];
    if (dlogits == nullptr) continue;
    float* gradient = dlogits + sample * class_count;
    for (std::size_t index = 0; index < class_count; ++index) {
      const double target = index == label_index ? 1.0 : 0.0;
      gradient[index] =
          static_cast<float>((exponentials[index] / normaliser - target) * inverse_batch);
    }
  }
  return total_loss * inverse_batch;
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
