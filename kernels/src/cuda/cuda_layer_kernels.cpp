#include "cuda/cuda_layer_kernels.hpp"

#include <cmath>
#include <limits>
#include <string>

#include "argument_check.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/cuda_elementwise_kernels.hpp"
#include "cuda/cuda_max_pooling_kernels.hpp"
#include "cuda/cudnn_descriptors.hpp"
#include "cudnn_layout.hpp"

namespace tessera::kernels::cuda {
namespace {

void require_count(std::int64_t count, const char* kernel) {
  require_argument(count >= 0, kernel, "element count must be >= 0, got " + std::to_string(count));
}

// An element-wise kernel: its count checked, then `launch(stream)` on the compute stream.
template <typename Launch>
void enqueue_element_wise(const CudaContext& context, std::int64_t count, const char* kernel,
                          Launch&& launch) {
  require_count(count, kernel);
  context.make_current();
  launch(context.compute_stream());
}

// cuBLAS's classic interface takes int dimensions.
int blas_extent(std::int64_t value, const char* kernel) {
  require_argument(value >= 1 && value <= std::numeric_limits<int>::max(), kernel,
                   "matrix extent " + std::to_string(value) + " outside 1 .. 2^31-1");
  return static_cast<int>(value);
}

// The per-channel bias as cuDNN broadcasts it: 1 x C x 1 x 1 against N x C x 1 x spatial.
struct BiasDescriptors {
  BiasDescriptors(std::int64_t batch, std::int64_t channels, std::int64_t spatial)
      : tensor(tensor_descriptor(cudnn_packed_layout(batch, channels, {spatial}))),
        bias(tensor_descriptor(cudnn_packed_layout(1, channels, {1}))) {}
  TensorDescriptor tensor;
  TensorDescriptor bias;
};

constexpr float kOne = 1.0f;
constexpr float kZero = 0.0f;

}  // namespace

double* CudaLayerKernels::scratch_doubles(std::size_t count) {
  return static_cast<double*>(scratch_.reserve(count * sizeof(double)));
}

void CudaLayerKernels::upload(const void* host, void* device, std::size_t bytes) {
  // From pageable memory cudaMemcpyAsync returns once the host data is staged, so `host` may go.
  if (bytes > 0) {
    TESSERA_CUDA_CHECK(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, stream()));
  }
}

void CudaLayerKernels::download(const void* device, void* host, std::size_t bytes) {
  if (bytes > 0) {
    TESSERA_CUDA_CHECK(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, stream()));
  }
  context_.synchronize_compute();
}

// Max pooling runs our own kernels (cuda_max_pooling_kernels.hpp); average pooling cuDNN's,
// whose layout refuses ceil mode for it (cudnn_layout.hpp), so it never needs a padded copy.
void CudaLayerKernels::pooling_forward(const PoolingGeometry& geometry, std::int64_t batch,
                                       const float* x, float* y) {
  context_.make_current();
  const CudnnPoolingLayout layout = cudnn_pooling_layout(geometry, batch);  // checks the geometry
  if (geometry.max) {
    launch_max_pooling_forward(geometry, batch, x, y, stream());
    return;
  }
  const PoolingDescriptor pooling = pooling_descriptor(geometry.max, layout);
  const TensorDescriptor input = tensor_descriptor(layout.input);
  const TensorDescriptor output = tensor_descriptor(layout.output);
  TESSERA_CUDA_CHECK(cudnnPoolingForward(context_.cudnn(), pooling.get(), &kOne, input.get(), x,
                                         &kZero, output.get(), y));
}

void CudaLayerKernels::pooling_backward(const PoolingGeometry& geometry, std::int64_t batch,
                                        const float* x, const float* y, const float* dy,
                                        float* dx) {
  context_.make_current();
  const CudnnPoolingLayout layout = cudnn_pooling_layout(geometry, batch);
  if (geometry.max) {
    launch_max_pooling_backward(geometry, batch, x, y, dy, dx, stream());
    return;
  }
  const PoolingDescriptor pooling = pooling_descriptor(geometry.max, layout);
  const TensorDescriptor input = tensor_descriptor(layout.input);
  const TensorDescriptor output = tensor_descriptor(layout.output);
  TESSERA_CUDA_CHECK(cudnnPoolingBackward(context_.cudnn(), pooling.get(), &kOne, output.get(), y,
                                          output.get(), dy, input.get(), x, &kZero, input.get(),
                                          dx));
}

void CudaLayerKernels::leaky_relu_forward(std::int64_t count, float slope, const float* x,
                                          float* y) {
  enqueue_element_wise(context_, count, "leaky_relu_forward", [&](cudaStream_t queue) {
    launch_leaky_relu_forward(count, slope, x, y, queue);
  });
}

void CudaLayerKernels::leaky_relu_backward(std::int64_t count, float slope, const float* x,
                                           const float* dy, float* dx) {
  enqueue_element_wise(context_, count, "leaky_relu_backward", [&](cudaStream_t queue) {
    launch_leaky_relu_backward(count, slope, x, dy, dx, queue);
  });
}

void CudaLayerKernels::gelu_forward(std::int64_t count, bool tanh_approximation, const float* x,
                                    float* y) {
  enqueue_element_wise(context_, count, "gelu_forward", [&](cudaStream_t queue) {
    launch_gelu_forward(count, tanh_approximation, x, y, queue);
  });
}

void CudaLayerKernels::gelu_backward(std::int64_t count, bool tanh_approximation, const float* x,
                                     const float* dy, float* dx) {
  enqueue_element_wise(context_, count, "gelu_backward", [&](cudaStream_t queue) {
    launch_gelu_backward(count, tanh_approximation, x, dy, dx, queue);
  });
}

void CudaLayerKernels::dropout_forward(std::int64_t count, float drop_probability,
                                       const DropoutDraw& draw, const float* x, float* mask,
                                       float* y) {
  require_dropout_arguments(count, drop_probability, draw);
  if (count == 0) return;
  context_.make_current();
  launch_dropout_forward(count, drop_probability, draw, x, mask, y, stream());
}

void CudaLayerKernels::dropout_backward(std::int64_t count, const float* mask, const float* dy,
                                        float* dx) {
  enqueue_element_wise(context_, count, "dropout_backward",
                       [&](cudaStream_t queue) { launch_multiply(count, mask, dy, dx, queue); });
}

// Row-major matrices are column-major transposes to cuBLAS: with X = x^T (in x batch),
// W = w^T (in x out) and Y = y^T (out x batch), y = x w^T is Y = W^T X.
void CudaLayerKernels::fully_connected_forward(std::int64_t batch, std::int64_t in,
                                               std::int64_t out, const float* x, const float* w,
                                               const float* b, float* y) {
  constexpr const char* kernel = "fully_connected_forward";
  const int n = blas_extent(batch, kernel), k = blas_extent(in, kernel);
  const int m = blas_extent(out, kernel);
  context_.make_current();
  TESSERA_CUDA_CHECK(cublasSgemm(context_.cublas(), CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &kOne, w, k,
                                 x, k, &kZero, y, m));
  if (b != nullptr) bias_forward(batch, out, 1, b, y);
}

// dx = dy w:  DX (in x batch) = W (in x out) DY (out x batch).
void CudaLayerKernels::fully_connected_backward_data(std::int64_t batch, std::int64_t in,
                                                     std::int64_t out, const float* dy,
                                                     const float* w, float* dx) {
  constexpr const char* kernel = "fully_connected_backward_data";
  const int n = blas_extent(batch, kernel), m = blas_extent(in, kernel);
  const int k = blas_extent(out, kernel);
  context_.make_current();
  TESSERA_CUDA_CHECK(cublasSgemm(context_.cublas(), CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &kOne, w, m,
                                 dy, k, &kZero, dx, m));
}

// dw = dy^T x:  DW (in x out) = X (in x batch) DY^T (batch x out).
void CudaLayerKernels::fully_connected_backward_weights(std::int64_t batch, std::int64_t in,
                                                        std::int64_t out, const float* x,
                                                        const float* dy, float* dw, float* db,
                                                        float beta) {
  constexpr const char* kernel = "fully_connected_backward_weights";
  require_argument(beta == 0.0f || beta == 1.0f, kernel,
                   "beta must be 0 or 1, got " + std::to_string(beta));
  const int k = blas_extent(batch, kernel), m = blas_extent(in, kernel);
  const int n = blas_extent(out, kernel);
  context_.make_current();
  TESSERA_CUDA_CHECK(cublasSgemm(context_.cublas(), CUBLAS_OP_N, CUBLAS_OP_T, m, n, k, &kOne, x, m,
                                 dy, n, &beta, dw, m));
  if (db != nullptr) bias_backward(batch, out, 1, dy, db, beta);
}

void CudaLayerKernels::bias_forward(std::int64_t batch, std::int64_t channels, std::int64_t spatial,
                                    const float* b, float* y) {
  if (batch * channels * spatial == 0) return;
  context_.make_current();
  const BiasDescriptors d(batch, channels, spatial);
  TESSERA_CUDA_CHECK(
      cudnnAddTensor(context_.cudnn(), &kOne, d.bias.get(), b, &kOne, d.tensor.get(), y));
}

void CudaLayerKernels::bias_backward(std::int64_t batch, std::int64_t channels,
                                     std::int64_t spatial, const float* dy, float* db, float beta) {
  require_argument(channels >= 1, "bias_backward", "channels must be >= 1");
  context_.make_current();
  if (batch * spatial == 0) {  // nothing summed: db = beta * db
    if (beta == 0.0f) {
      TESSERA_CUDA_CHECK(cudaMemsetAsync(db, 0, channels * sizeof(float), stream()));
    }
    return;
  }
  const BiasDescriptors d(batch, channels, spatial);
  TESSERA_CUDA_CHECK(cudnnConvolutionBackwardBias(context_.cudnn(), &kOne, d.tensor.get(), dy,
                                                  &beta, d.bias.get(), db));
}

// Each input is a batch x (channels[i] x spatial) block of the output's rows: one strided 2D copy.
void CudaLayerKernels::concat_forward(std::int64_t batch, std::int64_t spatial,
                                      const std::vector<const float*>& inputs,
                                      const std::vector<std::int64_t>& channels, float* y) {
  const std::int64_t total =
      concat_channel_total("concat_forward", inputs.size(), "input", channels);
  if (batch <= 0 || spatial <= 0) return;
  context_.make_current();
  const std::size_t row_bytes = static_cast<std::size_t>(total * spatial) * sizeof(float);
  std::int64_t offset = 0;
  for (std::size_t index = 0; index < inputs.size(); ++index) {
    const std::size_t part_bytes =
        static_cast<std::size_t>(channels[index] * spatial) * sizeof(float);
    if (part_bytes > 0) {
      TESSERA_CUDA_CHECK(cudaMemcpy2DAsync(y + offset * spatial, row_bytes, inputs[index],
                                           part_bytes, part_bytes, static_cast<std::size_t>(batch),
                                           cudaMemcpyDeviceToDevice, stream()));
    }
    offset += channels[index];
  }
}

void CudaLayerKernels::concat_backward(std::int64_t batch, std::int64_t spatial, const float* dy,
                                       const std::vector<std::int64_t>& channels,
                                       const std::vector<float*>& dinputs) {
  const std::int64_t total =
      concat_channel_total("concat_backward", dinputs.size(), "input gradient", channels);
  if (batch <= 0 || spatial <= 0) return;
  context_.make_current();
  const std::size_t row_bytes = static_cast<std::size_t>(total * spatial) * sizeof(float);
  std::int64_t offset = 0;
  for (std::size_t index = 0; index < dinputs.size(); ++index) {
    const std::size_t part_bytes =
        static_cast<std::size_t>(channels[index] * spatial) * sizeof(float);
    if (part_bytes > 0 && dinputs[index] != nullptr) {  // null: no gradient wanted
      TESSERA_CUDA_CHECK(cudaMemcpy2DAsync(dinputs[index], part_bytes, dy + offset * spatial,
                                           row_bytes, part_bytes, static_cast<std::size_t>(batch),
                                           cudaMemcpyDeviceToDevice, stream()));
    }
    offset += channels[index];
  }
}

void CudaLayerKernels::add(std::int64_t count, const float* a, const float* b, float* y) {
  enqueue_element_wise(context_, count, "add",
                       [&](cudaStream_t queue) { launch_add(count, a, b, y, queue); });
}

void CudaLayerKernels::axpy(std::int64_t count, float alpha, const float* x, float* y) {
  require_count(count, "axpy");
  if (count == 0) return;
  context_.make_current();
  TESSERA_CUDA_CHECK(cublasSaxpy_64(context_.cublas(), count, &alpha, x, 1, y, 1));
}

void CudaLayerKernels::sgd_update(std::int64_t count, float learning_rate, float momentum,
                                  float weight_decay, const float* g, float* w, float* velocity) {
  require_count(count, "sgd_update");
  require_argument(momentum == 0.0f || velocity != nullptr, "sgd_update",
                   "momentum needs a velocity buffer");
  context_.make_current();
  launch_sgd_update(count, learning_rate, momentum, weight_decay, g, w,
                    momentum == 0.0f ? nullptr : velocity, stream());
}

void CudaLayerKernels::adam_update(std::int64_t count, float learning_rate, float beta1,
                                   float beta2, float epsilon, std::int64_t step, const float* g,
                                   float* w, float* m, float* v) {
  require_count(count, "adam_update");
  require_argument(step >= 1, "adam_update", "step counts from 1, got " + std::to_string(step));
  const double exponent = static_cast<double>(step);
  const auto first_correction = static_cast<float>(1.0 / (1.0 - std::pow(beta1, exponent)));
  const auto second_correction = static_cast<float>(1.0 / (1.0 - std::pow(beta2, exponent)));
  context_.make_current();
  launch_adam_update(count, learning_rate, beta1, beta2, epsilon, first_correction,
                     second_correction, g, w, m, v, stream());
}

}  // namespace tessera::kernels::cuda
