#pragma once
// LayerKernels on the host CPU: oneDNN primitives where oneDNN has the operation (pooling, fully
// connected, element-wise, sum, concat), plain loops where it does not (split batch-norm sums,
// dropout with a seeded mask, losses, optimizers). Pointers are host memory.
#include <cstddef>
#include <cstdint>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "tessera/kernels/layer_kernels.hpp"

namespace tessera::kernels {

class CpuLayerKernels final : public LayerKernels {
 public:
  CpuLayerKernels();

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
  // oneDNN memory of `desc` in grow-only host buffer number `slot`, kept across calls: layout
  // copies and workspaces of several MiB, freshly allocated each call, would cost more in page
  // faults than the kernels themselves. (Like the stream, this makes an instance single-threaded.)
  dnnl::memory scratch_memory(std::size_t slot, const dnnl::memory::desc& desc);

  dnnl::engine engine_;
  dnnl::stream stream_;
  std::vector<std::vector<float>> scratch_;
};

}  // namespace tessera::kernels
