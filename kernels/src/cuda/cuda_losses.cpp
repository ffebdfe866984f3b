// Losses of CudaLayerKernels: labels go up through the scratch block, the loss comes back as one
// device double (cuda_loss_kernels.cu does the element work).
#include <string>

#include "argument_check.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/cuda_layer_kernels.hpp"
#include "cuda/cuda_loss_kernels.hpp"

namespace tessera::kernels::cuda {

double CudaLayerKernels::softmax_cross_entropy(std::int64_t batch, std::int64_t classes,
                                               std::int64_t positions, const float* logits,
                                               const std::vector<std::int32_t>& labels,
                                               float* dlogits, float gradient_scale) {
  constexpr const char* kernel = "softmax_cross_entropy";
  require_classification_labels(kernel, batch, classes, positions, labels);
  context_.make_current();
  // One double for the loss, the partial sums, then the labels (8-byte aligned after them).
  const std::size_t label_doubles = (labels.size() * sizeof(std::int32_t) + 7) / 8;
  const auto partials = static_cast<std::size_t>(softmax_cross_entropy_partials(batch, positions));
  double* loss_sum = scratch_doubles(1 + partials + label_doubles);
  auto* device_labels = reinterpret_cast<std::int32_t*>(loss_sum + 1 + partials);
  TESSERA_CUDA_CHECK(cudaMemsetAsync(loss_sum, 0, sizeof(double), stream()));
  upload(labels.data(), device_labels, labels.size() * sizeof(std::int32_t));
  launch_softmax_cross_entropy(batch, classes, positions, logits, device_labels, dlogits,
                               gradient_scale, loss_sum, loss_sum + 1, stream());
  double loss = 0;
  download(loss_sum, &loss, sizeof(double));
  return loss;
}

double CudaLayerKernels::mse_loss(std::int64_t count, const float* prediction, const float* target,
                                  float* dprediction) {
  require_argument(count >= 1, "mse_loss", "element count must be >= 1");
  context_.make_current();
  double* loss_sum = scratch_doubles(1 + static_cast<std::size_t>(mse_partials(count)));
  TESSERA_CUDA_CHECK(cudaMemsetAsync(loss_sum, 0, sizeof(double), stream()));
  launch_mse(count, prediction, target, dprediction, loss_sum, loss_sum + 1, stream());
  double loss = 0;
  download(loss_sum, &loss, sizeof(double));
  return loss / static_cast<double>(count);
}

}  // namespace tessera::kernels::cuda
