#pragma once
// LayerKernels on one GPU: cuDNN for average pooling and per-channel bias, cuBLAS for fully
// connected layers and axpy, copies for concat, and small kernels of our own (cuda_*_kernels.cu)
// for what neither library has in the form the interface needs: max pooling with ceil-mode
// extents, the split batch-norm with double sums, leaky ReLU, dropout matching the CPU's mask,
// fused losses and optimizers. Everything runs on the context's compute stream; calls that
// return host values synchronise it.
#include "cuda/cuda_context.hpp"
#include "cuda/cuda_memory.hpp"
#include "cudnn_layout.hpp"
#include "tessera/kernels/layer_kernels.hpp"

namespace tessera::kernels::cuda {

class CudaLayerKernels final : public LayerKernels {
 public:
  explicit CudaLayerKernels(const CudaContext& context)
      : context_(context), scratch_(context.compute_stream()) {}

  void pooling_forward(const PoolingGeometry& geometry, std::int64_t batch, const float* x,
                       float* y) override;
  void pooling_backward(const PoolingGeometry& geometry, std::int64_t batch, const float* x,
                        const float* y, const float* dy, float* dx) override;

  ChannelSums batch_norm_sums(std::int64_t batch, std::int64_t channels, std::int64_t spatial,
                              const float* x) override;
  void batch_norm_apply(std::int64_t batch, std::int64_t channels, std::int64_t spatial,
                        const float* x, const std::vector<double>& mean,
                        const std::vector<double>& inv_std, const float* scale, const float* shift,
                        float* y) override;
  ChannelSums batch_norm_backward_sums(std::int64_t batch, std::int64_t channels,
                                       std::int64_t spatial, const float* x, const float* dy,
                                       const std::vector<double>& mean,
                                       const std::vector<double>& inv_std) override;
  void batch_norm_backward_apply(std::int64_t batch, std::int64_t channels, std::int64_t spatial,
                                 const float* x, const float* dy, const std::vector<double>& mean,
                                 const std::vector<double>& inv_std, const float* scale,
                                 const ChannelSums& group_sums, double group_count, float* dx,
                                 float* dscale, float* dshift) override;

  void layer_norm_forward(std::int64_t batch, std::int64_t channels, std::int64_t positions,
                          const float* x, const float* scale, const float* shift, float* y,
                          float* mean, float* inv_std) override;
  void layer_norm_backward(std::int64_t batch, std::int64_t channels, std::int64_t positions,
                           const float* x, const float* dy, const float* mean, const float* inv_std,
                           const float* scale, float* dx, float* dscale, float* dshift,
                           float beta) override;
  void leaky_relu_forward(std::int64_t count, float slope, const float* x, float* y) override;
  void leaky_relu_backward(std::int64_t count, float slope, const float* x, const float* dy,
                           float* dx) override;
  void gelu_forward(std::int64_t count, bool tanh_approximation, const float* x, float* y) override;
  void gelu_backward(std::int64_t count, bool tanh_approximation, const float* x, const float* dy,
                     float* dx) override;

  void dropout_forward(std::int64_t count, float drop_probability, const DropoutDraw& draw,
                       const float* x, float* mask, float* y) override;
  void dropout_backward(std::int64_t count, const float* mask, const float* dy, float* dx) override;

  void fully_connected_forward(std::int64_t batch, std::int64_t in, std::int64_t out,
                               const float* x, const float* w, const float* b, float* y) override;
  void fully_connected_backward_data(std::int64_t batch, std::int64_t in, std::int64_t out,
                                     const float* dy, const float* w, float* dx) override;
  void fully_connected_backward_weights(std::int64_t batch, std::int64_t in, std::int64_t out,
                                        const float* x, const float* dy, float* dw, float* db,
                                        float beta) override;

  void bias_forward(std::int64_t batch, std::int64_t channels, std::int64_t spatial, const float* b,
                    float* y) override;
  void bias_backward(std::int64_t batch, std::int64_t channels, std::int64_t spatial,
                     const float* dy, float* db, float beta) override;

  void concat_forward(std::int64_t batch, std::int64_t spatial,
                      const std::vector<const float*>& inputs,
                      const std::vector<std::int64_t>& channels, float* y) override;
  void concat_backward(std::int64_t batch, std::int64_t spatial, const float* dy,
                       const std::vector<std::int64_t>& channels,
                       const std::vector<float*>& dinputs) override;
  void add(std::int64_t count, const float* a, const float* b, float* y) override;
  void axpy(std::int64_t count, float alpha, const float* x, float* y) override;

  double softmax_cross_entropy(std::int64_t batch, std::int64_t classes, std::int64_t positions,
                               const float* logits, const std::vector<std::int32_t>& labels,
                               float* dlogits, float gradient_scale) override;
  double mse_loss(std::int64_t count, const float* prediction, const float* target,
                  float* dprediction) override;

  void sgd_update(std::int64_t count, float learning_rate, float momentum, float weight_decay,
                  const float* g, float* w, float* velocity) override;
  void adam_update(std::int64_t count, float learning_rate, float beta1, float beta2, float epsilon,
                   std::int64_t step, const float* g, float* w, float* m, float* v) override;

 private:
  // Small host values (statistics, labels) in and results out through scratch_, ordered on the
  // compute stream; download synchronises it.
  double* scratch_doubles(std::size_t count);
  void upload(const void* host, void* device, std::size_t bytes);
  void download(const void* device, void* host, std::size_t bytes);
  ChannelSums channel_sums_on_host(const double* device_sums, std::size_t channels);
  cudaStream_t stream() const { return context_.compute_stream(); }

  const CudaContext& context_;
  DeviceScratch scratch_;
};

}  // namespace tessera::kernels::cuda
