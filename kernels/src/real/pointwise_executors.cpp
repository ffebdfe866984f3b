// Executors of the layers that work voxel by voxel or channel by channel (activations, dropout,
// batch-norm, add, concat) and of the dense end of a network (fully connected, losses). On a
// spatially split layer they run on the rank's planes; only batch-norm talks to the spatial group.
#include <cmath>
#include <stdexcept>

#include "execution_context.hpp"
#include "pointwise_executors.hpp"
#include "tessera/kernels/layer_kernels.hpp"

namespace tessera::kernels::real {
namespace {

LayerKernels& kernels_of(ExecutionContext& context) {
  return context.device.layers();
}

class NoOp : public LayerExecutor {
 public:
  void forward(const std::vector<const float*>&, float*) override {}
  void backward(const std::vector<const float*>&, const float*, const float*,
                const std::vector<float*>&) override {}
};

class LeakyRelu : public LayerExecutor {
 public:
  LeakyRelu(float slope, std::int64_t floats, ExecutionContext& context)
      : slope_(slope), floats_(floats), context_(context) {}
  void forward(const std::vector<const float*>& x, float* y) override {
    kernels_of(context_).leaky_relu_forward(floats_, slope_, x[0], y);
  }
  void backward(const std::vector<const float*>& x, const float*, const float* dy,
                const std::vector<float*>& dx) override {
    if (dx[0] != nullptr)
      kernels_of(context_).leaky_relu_backward(floats_, slope_, x[0], dy, dx[0]);
  }

 private:
  float slope_;
  std::int64_t floats_;
  ExecutionContext& context_;
};

// Masks are drawn per sample from (seed, layer, step, global sample index), so a sample gets the
// same mask whichever replica runs it: data parallelism stays exact. On a spatially split layer
// each shard would draw its planes' mask from the start of that sequence, not the one-rank mask
// (CosmoFlow's dropouts are all in the dense part, which runs whole).
class Dropout : public LayerExecutor {
 public:
  Dropout(std::size_t layer_index, float drop, const LocalShapes& shapes, ExecutionContext& context)
      : layer_index_(layer_index), drop_(drop), shapes_(shapes), context_(context) {
    mask_ = context.device.allocate(static_cast<std::size_t>(shapes.output_floats) * sizeof(float));
  }
  void forward(const std::vector<const float*>& x, float* y) override {
    const std::int64_t per_sample = shapes_.output_floats / shapes_.batch;
    for (std::int64_t s = 0; s < shapes_.batch; ++s) {
      const auto sample =
          static_cast<std::uint64_t>(context_.first_sample + shapes_.first_sample + s);
      const std::uint64_t seed = mix_seed(mix_seed(mix_seed(context_.seed, layer_index_),
                                                   static_cast<std::uint64_t>(context_.step)),
                                          sample);
      kernels_of(context_).dropout_forward(per_sample, drop_, seed, x[0] + s * per_sample,
                                           mask_->data() + s * per_sample, y + s * per_sample);
    }
  }
  void backward(const std::vector<const float*>&, const float*, const float* dy,
                const std::vector<float*>& dx) override {
    if (dx[0] != nullptr) {
      kernels_of(context_).dropout_backward(shapes_.output_floats, mask_->data(), dy, dx[0]);
    }
  }

 private:
  std::size_t layer_index_;
  float drop_;
  LocalShapes shapes_;
  ExecutionContext& context_;
  std::unique_ptr<DeviceMemory> mask_;
};

// Training-mode batch-norm; a split layer sums its statistics over the spatial group, so every
// shard normalises with the whole samples' mean and variance (Oyama et al.'s global statistics),
// and so does one after the redistribution, whose group's ranks share the mini-batch's samples.
// Across data-parallel replicas statistics stay per replica, as in ordinary data parallelism.
class BatchNorm : public LayerExecutor {
 public:
  BatchNorm(const ResolvedLayer& layer, bool split, const LocalShapes& shapes,
            ExecutionContext& context)
      : channels_(layer.output_shape.c), shapes_(shapes), context_(context) {
    const auto& params = std::get<BatchNormParams>(layer.layer.params);
    if (!params.affine) {
      throw std::invalid_argument("layer " + layer.layer.name +
                                  ": batch-norm without scale and shift is not yet supported by "
                                  "the real backend");
    }
    // Split: the group holds each sample's planes; sharing samples: the group holds the samples.
    group_ = (split || shapes.shares_samples) && params.global_statistics;
    const double voxels = static_cast<double>(
        group_ && split ? layer.output_shape.spatial_elements() : shapes.output_voxels);
    const double ranks = group_ && !split ? static_cast<double>(context.dense_parts) : 1.0;
    count_ = static_cast<double>(shapes.batch) * voxels * ranks;
  }
  std::int64_t parameter_floats() const override { return 2 * channels_; }
  void initialize(std::uint64_t, std::span<float> values) const override {
    for (std::size_t c = 0; c < values.size(); ++c) {
      values[c] = c < static_cast<std::size_t>(channels_) ? 1.0F : 0.0F;
    }
  }
  void forward(const std::vector<const float*>& x, float* y) override {
    auto sums = group_sums(kernels_of(context_).batch_norm_sums(shapes_.batch, channels_,
                                                                shapes_.output_voxels, x[0]));
    const auto channels = static_cast<std::size_t>(channels_);
    mean_.assign(channels, 0);
    inv_std_.assign(channels, 0);
    for (std::size_t c = 0; c < channels; ++c) {
      mean_[c] = sums.first[c] / count_;
      const double variance = std::max(0.0, sums.second[c] / count_ - mean_[c] * mean_[c]);
      inv_std_[c] = 1.0 / std::sqrt(variance + kEpsilon);
    }
    kernels_of(context_).batch_norm_apply(shapes_.batch, channels_, shapes_.output_voxels, x[0],
                                          mean_, inv_std_, weights_, weights_ + channels_, y);
  }
  void backward(const std::vector<const float*>& x, const float*, const float* dy,
                const std::vector<float*>& dx) override {
    auto sums = group_sums(kernels_of(context_).batch_norm_backward_sums(
        shapes_.batch, channels_, shapes_.output_voxels, x[0], dy, mean_, inv_std_));
    kernels_of(context_).batch_norm_backward_apply(
        shapes_.batch, channels_, shapes_.output_voxels, x[0], dy, mean_, inv_std_, weights_, sums,
        count_, dx[0], gradients_, gradients_ + channels_);
    // From group sums the scale and shift gradients are the group's totals, the same on each of
    // its ranks; one rank keeps them for the all-reduce over every rank, which sums partials.
    if (group_ && context_.layout.shard != 0) {
      context_.device.fill(gradients_, static_cast<std::size_t>(2 * channels_), 0);
    }
  }

 private:
  static constexpr double kEpsilon = 1e-5;
  ChannelSums group_sums(ChannelSums local) {
    if (!group_) return local;
    std::vector<double> both = local.first;
    both.insert(both.end(), local.second.begin(), local.second.end());
    context_.sum_over_spatial_group(both);
    const auto half = both.begin() + static_cast<std::ptrdiff_t>(local.first.size());
    return {{both.begin(), half}, {half, both.end()}};
  }

  std::int64_t channels_;
  LocalShapes shapes_;
  ExecutionContext& context_;
  bool group_ = false;
  double count_ = 1;
  std::vector<double> mean_;
  std::vector<double> inv_std_;
};

class FullyConnected : public LayerExecutor {
 public:
  FullyConnected(const ResolvedLayer& layer, const LocalShapes& shapes, ExecutionContext& context)
      : batch_(shapes.batch),
        in_(shapes.input_floats.at(0) / shapes.batch),
        out_(layer.output_shape.c),
        bias_(std::get<FullyConnectedParams>(layer.layer.params).bias),
        context_(context) {}
  std::int64_t parameter_floats() const override { return in_ * out_ + (bias_ ? out_ : 0); }
  void initialize(std::uint64_t seed, std::span<float> values) const override {
    // PyTorch's default: uniform within 1/sqrt(fan_in), weights and biases alike.
    fill_uniform(seed, 0, static_cast<float>(1.0 / std::sqrt(static_cast<double>(in_))), values);
  }
  void forward(const std::vector<const float*>& x, float* y) override {
    kernels_of(context_).fully_connected_forward(batch_, in_, out_, x[0], weights_, bias(weights_),
                                                 y);
  }
  void backward(const std::vector<const float*>& x, const float*, const float* dy,
                const std::vector<float*>& dx) override {
    if (dx[0] != nullptr) {
      kernels_of(context_).fully_connected_backward_data(batch_, in_, out_, dy, weights_, dx[0]);
    }
    kernels_of(context_).fully_connected_backward_weights(batch_, in_, out_, x[0], dy, gradients_,
                                                          bias(gradients_), 0);
  }

 private:
  float* bias(float* base) const { return bias_ ? base + in_ * out_ : nullptr; }
  const float* bias(const float* base) const { return bias_ ? base + in_ * out_ : nullptr; }
  std::int64_t batch_, in_, out_;
  bool bias_;
  ExecutionContext& context_;
};

class Add : public LayerExecutor {
 public:
  Add(std::int64_t floats, ExecutionContext& context) : floats_(floats), context_(context) {}
  void forward(const std::vector<const float*>& x, float* y) override {
    kernels_of(context_).add(floats_, x[0], x[1], y);
  }
  void backward(const std::vector<const float*>&, const float*, const float* dy,
                const std::vector<float*>& dx) override {
    for (float* gradient : dx) {
      if (gradient != nullptr) {
        context_.device.copy_on_device(dy, gradient, static_cast<std::size_t>(floats_));
      }
    }
  }

 private:
  std::int64_t floats_;
  ExecutionContext& context_;
};

class Concat : public LayerExecutor {
 public:
  Concat(const ResolvedLayer& layer, const LocalShapes& shapes, ExecutionContext& context)
      : batch_(shapes.batch), voxels_(shapes.output_voxels), context_(context) {
    for (const auto& shape : layer.input_shapes) channels_.push_back(shape.c);
  }
  void forward(const std::vector<const float*>& x, float* y) override {
    kernels_of(context_).concat_forward(batch_, voxels_, x, channels_, y);
  }
  void backward(const std::vector<const float*>&, const float*, const float* dy,
                const std::vector<float*>& dx) override {
    kernels_of(context_).concat_backward(batch_, voxels_, dy, channels_, dx);
  }

 private:
  std::int64_t batch_, voxels_;
  std::vector<std::int64_t> channels_;
  ExecutionContext& context_;
};

// Mean squared error against the step's targets (the rank's samples). Its gradient is divided by
// the number of replicas and of the ranks sharing the dense part, so that the sum of gradients
// over them is the global batch's mean.
class MseLoss : public LayerExecutor {
 public:
  MseLoss(const LocalShapes& shapes, ExecutionContext& context)
      : floats_(shapes.input_floats.at(0)), context_(context) {
    gradient_ = context.device.allocate(static_cast<std::size_t>(floats_) * sizeof(float));
  }
  void forward(const std::vector<const float*>& x, float*) override {
    loss_ = kernels_of(context_).mse_loss(floats_, x[0], context_.targets, gradient_->data());
  }
  void backward(const std::vector<const float*>&, const float*, const float*,
                const std::vector<float*>& dx) override {
    const auto floats = static_cast<std::size_t>(floats_);
    context_.device.fill(dx[0], floats, 0);
    kernels_of(context_).axpy(
        floats_, 1.0F / static_cast<float>(context_.layout.replicas * context_.dense_parts),
        gradient_->data(), dx[0]);
  }
  double loss() const override { return loss_; }

 private:
  std::int64_t floats_;
  ExecutionContext& context_;
  std::unique_ptr<DeviceMemory> gradient_;
  double loss_ = 0;
};

}  // namespace

std::unique_ptr<LayerExecutor> make_pointwise_executor(const ResolvedLayer& layer,
                                                       std::size_t index, bool spatially_split,
                                                       const LocalShapes& shapes,
                                                       ExecutionContext& context) {
  switch (layer.layer.kind) {
    case LayerKind::input:
      return std::make_unique<NoOp>();
    case LayerKind::relu:
      return std::make_unique<LeakyRelu>(0.0F, shapes.output_floats, context);
    case LayerKind::leaky_relu:
      return std::make_unique<LeakyRelu>(
          static_cast<float>(std::get<LeakyReluParams>(layer.layer.params).negative_slope),
          shapes.output_floats, context);
    case LayerKind::dropout:
      return std::make_unique<Dropout>(
          index, static_cast<float>(std::get<DropoutParams>(layer.layer.params).drop_probability),
          shapes, context);
    case LayerKind::batch_norm:
      return std::make_unique<BatchNorm>(layer, spatially_split, shapes, context);
    case LayerKind::fully_connected:
      return std::make_unique<FullyConnected>(layer, shapes, context);
    case LayerKind::add:
      return std::make_unique<Add>(shapes.output_floats, context);
    case LayerKind::concat:
      return std::make_unique<Concat>(layer, shapes, context);
    case LayerKind::mse_loss:
      return std::make_unique<MseLoss>(shapes, context);
    default:
      throw std::invalid_argument("layer " + layer.layer.name + ": " + to_string(layer.layer.kind) +
                                  " layers are not yet supported by the real backend");
  }
}

}  // namespace tessera::kernels::real
