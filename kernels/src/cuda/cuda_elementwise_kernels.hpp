#pragma once
// Element-wise kernels of the CUDA layer kernels (cuda_elementwise_kernels.cu), enqueued on
// `stream`. Pointers are device memory.
#include <cuda_runtime.h>

#include <cstdint>

#include "tessera/kernels/layer_kernels.hpp"

namespace tessera::kernels::cuda {

void launch_fill(std::int64_t count, float value, float* data, cudaStream_t stream);
// counter_uniform(seed, i) into element i: values in [-1, 1), the CPU's bits.
void launch_fill_uniform(std::int64_t count, std::uint64_t seed, float* data, cudaStream_t stream);
void launch_leaky_relu_forward(std::int64_t count, float slope, const float* x, float* y,
                               cudaStream_t stream);
void launch_leaky_relu_backward(std::int64_t count, float slope, const float* x, const float* dy,
                                float* dx, cudaStream_t stream);
// GELU as PyTorch's (erf, or its tanh approximation); backward reads x.
void launch_gelu_forward(std::int64_t count, bool tanh_approximation, const float* x, float* y,
                         cudaStream_t stream);
void launch_gelu_backward(std::int64_t count, bool tanh_approximation, const float* x,
                          const float* dy, float* dx, cudaStream_t stream);
// mask = 0 or 1/(1-p), p in [0, 1), each sample's from SplitMix64 of (its stream's seed, index):
// the same draw gives the same mask on any GPU and grid, and the same as the CPU kernels;
// y = x * mask. One launch for the whole batch.
void launch_dropout_forward(std::int64_t count, float drop_probability, const DropoutDraw& draw,
                            const float* x, float* mask, float* y, cudaStream_t stream);
void launch_multiply(std::int64_t count, const float* a, const float* b, float* y,
                     cudaStream_t stream);
void launch_add(std::int64_t count, const float* a, const float* b, float* y, cudaStream_t stream);
// velocity is null for plain SGD (momentum 0).
void launch_sgd_update(std::int64_t count, float learning_rate, float momentum, float weight_decay,
                       const float* g, float* w, float* velocity, cudaStream_t stream);
// bias_correction1/2 = 1 / (1 - beta1^step), 1 / (1 - beta2^step), computed on the host in
// double as the CPU kernels do.
void launch_adam_update(std::int64_t count, float learning_rate, float beta1, float beta2,
                        float epsilon, float bias_correction1, float bias_correction2,
                        const float* g, float* w, float* m, float* v, cudaStream_t stream);

}  // namespace tessera::kernels::cuda
