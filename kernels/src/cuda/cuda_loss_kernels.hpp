#pragma once
// Loss kernels of the CUDA layer kernels (cuda_loss_kernels.cu). Each adds its un-normalised loss
// to a device double (*loss_sum) and writes the gradient of the normalised loss unless its
// pointer is null. The loss is summed through per-block partial sums (`partials`: device room
// for the count the *_partials function gives) added in a fixed order, the same bits every run.
#include <cuda_runtime.h>

#include <cstdint>

namespace tessera::kernels::cuda {

// loss_sum += sum over samples and positions of -log softmax(logits)[label]; dlogits =
// (softmax - one_hot(label)) * gradient_scale. Logits batch x classes x positions; labels device
// int32 per sample and position, already validated.
std::int64_t softmax_cross_entropy_partials(std::int64_t batch, std::int64_t positions);
void launch_softmax_cross_entropy(std::int64_t batch, std::int64_t classes, std::int64_t positions,
                                  const float* logits, const std::int32_t* labels, float* dlogits,
                                  float gradient_scale, double* loss_sum, double* partials,
                                  cudaStream_t stream);
// loss_sum += sum of (prediction - target)^2; dprediction = 2 (prediction - target) / count.
std::int64_t mse_partials(std::int64_t count);
void launch_mse(std::int64_t count, const float* prediction, const float* target,
                float* dprediction, double* loss_sum, double* partials, cudaStream_t stream);

}  // namespace tessera::kernels::cuda
