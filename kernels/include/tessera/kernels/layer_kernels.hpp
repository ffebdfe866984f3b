#pragma once
// Every non-convolution primitive needed to train the zoo models, on one device. Pointers are
// device memory, tensors dense float32 NC(D)HW. Batch-norm is split into a local reduction and
// an apply step so that a spatially partitioned layer can all-reduce the per-channel sums in its
// spatial group in between (the reduction returns sums, not means).
#include <cstdint>
#include <vector>

namespace tessera::kernels {

struct PoolingGeometry {
  bool max = true;  // else average (padding excluded from the count)
  std::int64_t channels = 1;
  std::vector<std::int64_t> input_spatial;
  std::vector<std::int64_t> output_spatial;
  std::vector<std::int64_t> kernel;
  std::vector<std::int64_t> stride;
  std::vector<std::int64_t> padding;
};

// Per-channel sums over batch and space: sum and sum of squares (forward), or sum(dy) and
// sum(dy * x_hat) (backward). Host vectors of `channels` doubles.
struct ChannelSums {
  std::vector<double> first;
  std::vector<double> second;
};

// Where a dropout call draws its mask from (LayerKernels::dropout_forward).
struct DropoutDraw {
  std::uint64_t seed = 0;
  std::uint64_t first_sample = 0;  // the stream of the call's first sample
  std::int64_t per_sample = 1;     // elements of one sample; the call's count is a multiple
};

class LayerKernels {
 public:
  virtual ~LayerKernels() = default;

  // Pooling. Backward recomputes what it needs from x and y (cuDNN's convention).
  virtual void pooling_forward(const PoolingGeometry& geometry, std::int64_t batch, const float* x,
                               float* y) = 0;
  virtual void pooling_backward(const PoolingGeometry& geometry, std::int64_t batch, const float* x,
                                const float* y, const float* dy, float* dx) = 0;

  // Batch-norm in training mode over `batch` x `channels` x `spatial` elements.
  virtual ChannelSums batch_norm_sums(std::int64_t batch, std::int64_t channels,
                                      std::int64_t spatial, const float* x) = 0;
  // y = scale * (x - mean) * inv_std + shift, with mean/inv_std host vectors per channel.
  virtual void batch_norm_apply(std::int64_t batch, std::int64_t channels, std::int64_t spatial,
                                const float* x, const std::vector<double>& mean,
                                const std::vector<double>& inv_std, const float* scale,
                                const float* shift, float* y) = 0;
  // Local sums for backward: first = sum(dy), second = sum(dy * x_hat) per channel.
  virtual ChannelSums batch_norm_backward_sums(std::int64_t batch, std::int64_t channels,
                                               std::int64_t spatial, const float* x,
                                               const float* dy, const std::vector<double>& mean,
                                               const std::vector<double>& inv_std) = 0;
  // dx from the (group-wide) sums and element count; also writes dscale/dshift from them. dx,
  // dscale and dshift may each be null (a batch-norm reading the model's input has no dx).
  virtual void batch_norm_backward_apply(std::int64_t batch, std::int64_t channels,
                                         std::int64_t spatial, const float* x, const float* dy,
                                         const std::vector<double>& mean,
                                         const std::vector<double>& inv_std, const float* scale,
                                         const ChannelSums& group_sums, double group_count,
                                         float* dx, float* dscale, float* dshift) = 0;

  // Layer normalisation of each of the batch x positions vectors of `channels` values (N x C x
  // positions, so a vector's values are `positions` apart), epsilon 1e-5 as PyTorch's:
  // y = (x - mean) * inv_std * scale + shift, scale and shift per channel (both null: none).
  // Writes each vector's mean and inv_std (batch x positions floats, device memory) for backward.
  virtual void layer_norm_forward(std::int64_t batch, std::int64_t channels, std::int64_t positions,
                                  const float* x, const float* scale, const float* shift, float* y,
                                  float* mean, float* inv_std) = 0;
  // dx (skipped when null) from dy and the forward's statistics; dscale and dshift (null without
  // scale and shift) = beta * themselves + their gradients summed over every vector (beta 0 or 1).
  virtual void layer_norm_backward(std::int64_t batch, std::int64_t channels,
                                   std::int64_t positions, const float* x, const float* dy,
                                   const float* mean, const float* inv_std, const float* scale,
                                   float* dx, float* dscale, float* dshift, float beta) = 0;

  // ReLU is leaky_relu with slope 0.
  virtual void leaky_relu_forward(std::int64_t count, float slope, const float* x, float* y) = 0;
  virtual void leaky_relu_backward(std::int64_t count, float slope, const float* x, const float* dy,
                                   float* dx) = 0;

  // GELU, y = x Phi(x): exact (erf) or PyTorch's tanh approximation; backward reads x.
  virtual void gelu_forward(std::int64_t count, bool tanh_approximation, const float* x,
                            float* y) = 0;
  virtual void gelu_backward(std::int64_t count, bool tanh_approximation, const float* x,
                             const float* dy, float* dx) = 0;

  // Inverted dropout of `count` elements, whole samples of `draw.per_sample` each; `mask` holds 0
  // or 1/(1-p) per element. Sample s of the call draws its mask from the stream
  // counter_stream_seed(draw.seed, draw.first_sample + s), so a sample gets the same mask
  // whichever replica or call runs it, and a batch is one call (one launch on a GPU).
  virtual void dropout_forward(std::int64_t count, float drop_probability, const DropoutDraw& draw,
                               const float* x, float* mask, float* y) = 0;
  virtual void dropout_backward(std::int64_t count, const float* mask, const float* dy,
                                float* dx) = 0;

  // y[batch x out] = x[batch x in] * w^T + b   (w: out x in, row-major; b may be null).
  virtual void fully_connected_forward(std::int64_t batch, std::int64_t in, std::int64_t out,
                                       const float* x, const float* w, const float* b,
                                       float* y) = 0;
  virtual void fully_connected_backward_data(std::int64_t batch, std::int64_t in, std::int64_t out,
                                             const float* dy, const float* w, float* dx) = 0;
  // dw (+)= dy^T x, db (+)= sum over batch of dy (db may be null); beta 0 or 1.
  virtual void fully_connected_backward_weights(std::int64_t batch, std::int64_t in,
                                                std::int64_t out, const float* x, const float* dy,
                                                float* dw, float* db, float beta) = 0;

  // Per-channel bias of a convolution output: y += b; db (+)= sum of dy over batch and space.
  virtual void bias_forward(std::int64_t batch, std::int64_t channels, std::int64_t spatial,
                            const float* b, float* y) = 0;
  virtual void bias_backward(std::int64_t batch, std::int64_t channels, std::int64_t spatial,
                             const float* dy, float* db, float beta) = 0;

  // Channel concat of per-sample blocks (each input: batch x channels[i] x spatial) and its
  // backward (split).
  virtual void concat_forward(std::int64_t batch, std::int64_t spatial,
                              const std::vector<const float*>& inputs,
                              const std::vector<std::int64_t>& channels, float* y) = 0;
  virtual void concat_backward(std::int64_t batch, std::int64_t spatial, const float* dy,
                               const std::vector<std::int64_t>& channels,
                               const std::vector<float*>& dinputs) = 0;
  // y = a + b (backward of add is a copy of dy to each input).
  virtual void add(std::int64_t count, const float* a, const float* b, float* y) = 0;
  // y = y + alpha * x
  virtual void axpy(std::int64_t count, float alpha, const float* x, float* y) = 0;

  // Softmax cross-entropy over `classes` at each of batch x positions: logits batch x classes x
  // positions (positions: 1 to classify samples, the voxels to label each one), labels (host)
  // class indices of each sample's positions in order. Writes dlogits = (softmax - one-hot) *
  // gradient_scale (dlogits may be null) and returns the sum of the per-position losses.
  virtual double softmax_cross_entropy(std::int64_t batch, std::int64_t classes,
                                       std::int64_t positions, const float* logits,
                                       const std::vector<std::int32_t>& labels, float* dlogits,
                                       float gradient_scale) = 0;
  // Mean squared error over all elements; writes dprediction, returns the loss.
  virtual double mse_loss(std::int64_t count, const float* prediction, const float* target,
                          float* dprediction) = 0;

  // w -= lr * (g + weight_decay * w), with momentum: v = momentum * v + g; w -= lr * v.
  virtual void sgd_update(std::int64_t count, float learning_rate, float momentum,
                          float weight_decay, const float* g, float* w, float* velocity) = 0;
  // Adam with bias correction; `step` counts from 1.
  virtual void adam_update(std::int64_t count, float learning_rate, float beta1, float beta2,
                           float epsilon, std::int64_t step, const float* g, float* w, float* m,
                           float* v) = 0;
};

}  // namespace tessera::kernels
