// Executors of the layers that work voxel by voxel or channel by channel (activations, dropout,
// batch-norm, add, concat) and of the dense end of a network (fully connected, losses). On a
// spatially split layer they run on the rank's planes; only batch-norm talks to the spatial group.
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "execution_context.hpp"
#include "pointwise_executors.hpp"

#include "sequence_executors.hpp"
#include "tessera/core/model/layer_cost.hpp"
#include "tessera/kernels/layer_kernels.hpp"

namespace tessera::kernels::real {

// What a loss layer's value and gradient are scaled by, so that the sum over every rank of the
// run is the global batch's mean: each replica holds its share of the samples (1/replicas when
// all are equal; rank_layout.hpp's replica_batch_ratio); after the redistribution each rank of
// the spatial group 1/dense_parts of the replica's (a sample held by several counted once); a
// split loss layer holds its planes of every sample, and the group's sum adds them up; each
// micro-batch 1/micro_batches of the mini-batch.
double loss_scale(const LocalShapes& shapes, std::int64_t positions_per_sample,
                  const ExecutionContext& context) {
  const double parts = shapes.shares_samples ? static_cast<double>(context.dense_parts) : 1.0;
  return 1.0 / (static_cast<double>(shapes.batch) * static_cast<double>(positions_per_sample) *
                context.layout.replica_batch_ratio() * parts *
                static_cast<double>(context.micro_batches));
}

namespace {

LayerKernels& kernels_of(ExecutionContext& context) {
  return context.device.layers();
}

class NoOp : public LayerExecutor {
 public:
  using LayerExecutor::LayerExecutor;
  void forward(StepPart) override {}
};

// Backward reads what core says the layer keeps (layer_cost.hpp's backward_needs): a ReLU its
// output, whose sign is its input's (the input may be gone by then, memory_plan.hpp), a leaky
// ReLU its input.
class LeakyRelu : public LayerExecutor {
 public:
  LeakyRelu(std::string name, float slope, std::int64_t floats, bool reads_output,
            ExecutionContext& context)
      : LayerExecutor(std::move(name)),
        slope_(slope),
        floats_(floats),
        reads_output_(reads_output),
        context_(context) {}
  void forward(StepPart) override {
    kernels_of(context_).leaky_relu_forward(floats_, slope_, t_.x[0], t_.y);
  }
  void backward_data(StepPart) override {
    if (t_.dx[0] == nullptr) return;
    kernels_of(context_).leaky_relu_backward(floats_, slope_, reads_output_ ? t_.y : t_.x[0], t_.dy,
                                             t_.dx[0]);
  }

 private:
  float slope_;
  std::int64_t floats_;
  bool reads_output_;
  ExecutionContext& context_;
};

// Masks are drawn per sample from (seed, layer, step, global sample index), so a sample gets the
// same mask whichever replica runs it: data parallelism stays exact. On a spatially split layer
// each shard would draw its planes' mask from the start of that sequence, not the one-rank mask
// (CosmoFlow's dropouts are all in the dense part, which runs whole).
class Dropout : public LayerExecutor {
 public:
  Dropout(std::string name, std::size_t layer_index, float drop, const LocalShapes& shapes,
          ExecutionContext& context)
      : LayerExecutor(std::move(name)),
        layer_index_(layer_index),
        drop_(drop),
        shapes_(shapes),
        context_(context) {
    mask_ = context.device.allocate(static_cast<std::size_t>(shapes.output_floats) * sizeof(float));
  }
  void forward(StepPart) override {
    if (shapes_.batch == 0) return;
    const DropoutDraw draw{
        .seed = mix_seed(mix_seed(context_.seed, layer_index_),
                         static_cast<std::uint64_t>(context_.step)),
        .first_sample = static_cast<std::uint64_t>(context_.first_sample + shapes_.first_sample),
        .per_sample = shapes_.output_floats / shapes_.batch};
    kernels_of(context_).dropout_forward(shapes_.output_floats, drop_, draw, t_.x[0], mask_->data(),
                                         t_.y);
  }
  void backward_data(StepPart) override {
    if (t_.dx[0] != nullptr) {
      kernels_of(context_).dropout_backward(shapes_.output_floats, mask_->data(), t_.dy, t_.dx[0]);
    }
  }

 private:
  std::size_t layer_index_;
  float drop_;
  LocalShapes shapes_;
  ExecutionContext& context_;
  std::unique_ptr<DeviceMemory> mask_;
};

// Training-mode batch-norm. Where the step program sums its statistics over the spatial group
// (a split layer, whose group holds each sample's planes, or one after the redistribution, whose
// group's ranks share the mini-batch's samples: Oyama et al.'s global statistics), each pass is
// its local sums (statistics), the group's all-reduce (sum_statistics), then the normalisation
// (apply); otherwise one whole pass. Across data-parallel replicas statistics stay per replica,
// as in ordinary data parallelism.
class BatchNorm : public LayerExecutor {
 public:
  BatchNorm(const ResolvedLayer& layer, std::size_t index, bool split, const LocalShapes& shapes,
            const StepProgram& program, ExecutionContext& context)
      : LayerExecutor(layer.layer.name),
        channels_(layer.output_shape.c),
        shapes_(shapes),
        context_(context) {
    const auto& params = std::get<BatchNormParams>(layer.layer.params);
    if (!params.affine) {
      throw std::invalid_argument("layer " + name_ +
                                  ": batch-norm without scale and shift is not yet supported by "
                                  "the real backend");
    }
    for (const auto& op : program.ops) {
      if (op.kind != StepOpKind::group_allreduce || op.layer != index) continue;
      group_ = true;
      over_replicas_ = op.group == CollectiveGroup::stage;
    }
    // The elements the summed statistics cover: a split layer's whole samples, the group's
    // shares of them after the redistribution, every replica's when synchronised across them.
    const double voxels = static_cast<double>(
        group_ && split ? layer.output_shape.spatial_elements() : shapes.output_voxels);
    const double ranks =
        group_ && shapes.shares_samples ? static_cast<double>(context.dense_parts) : 1.0;
    const double replicas = over_replicas_ ? context.layout.replica_batch_ratio() : 1.0;
    count_ = static_cast<double>(shapes.batch) * voxels * ranks * replicas;
  }
  std::int64_t parameter_floats() const override { return 2 * channels_; }
  void initialize(std::uint64_t, std::span<float> values) const override {
    for (std::size_t c = 0; c < values.size(); ++c) {
      values[c] = c < static_cast<std::size_t>(channels_) ? 1.0F : 0.0F;
    }
  }
  // On a tensor group's share of the channels: their scales, then their shifts.
  void take_part(std::span<const float> whole, std::span<float> part) const override {
    const std::int64_t whole_channels = channels_ * shapes_.tensor.parts;
    const std::int64_t first = channels_ * shapes_.tensor.index;
    if (shapes_.tensor.split != TensorSplit::follows) return LayerExecutor::take_part(whole, part);
    std::copy_n(whole.begin() + first, channels_, part.begin());
    std::copy_n(whole.begin() + whole_channels + first, channels_, part.begin() + channels_);
  }

  void forward(StepPart part) override {
    if (part != StepPart::apply) {
      sums_ = kernels_of(context_).batch_norm_sums(shapes_.batch, channels_, shapes_.output_voxels,
                                                   t_.x[0]);
    }
    if (part == StepPart::statistics) return;
    const auto channels = static_cast<std::size_t>(channels_);
    mean_.assign(channels, 0);
    inv_std_.assign(channels, 0);
    for (std::size_t c = 0; c < channels; ++c) {
      mean_[c] = sums_.first[c] / count_;
      const double variance = std::max(0.0, sums_.second[c] / count_ - mean_[c] * mean_[c]);
      inv_std_[c] = 1.0 / std::sqrt(variance + kEpsilon);
    }
    kernels_of(context_).batch_norm_apply(shapes_.batch, channels_, shapes_.output_voxels, t_.x[0],
                                          mean_, inv_std_, weights_, weights_ + channels_, t_.y);
  }

  void backward_data(StepPart part) override {
    if (part != StepPart::apply) {
      sums_ = kernels_of(context_).batch_norm_backward_sums(
          shapes_.batch, channels_, shapes_.output_voxels, t_.x[0], t_.dy, mean_, inv_std_);
    }
    if (part == StepPart::statistics) return;
    kernels_of(context_).batch_norm_backward_apply(
        shapes_.batch, channels_, shapes_.output_voxels, t_.x[0], t_.dy, mean_, inv_std_, weights_,
        sums_, count_, t_.dx[0], gradients_, gradients_ + channels_);
    // From group sums the scale and shift gradients are the group's totals, the same on each of
    // its ranks; one rank keeps them for the all-reduce over every rank, which sums partials.
    const bool keeps = !group_ || (context_.layout.shard == 0 &&
                                   (!over_replicas_ || context_.layout.replica == 0));
    if (!keeps) context_.device.fill(gradients_, static_cast<std::size_t>(2 * channels_), 0);
  }

  void sum_statistics(Direction) override {
    if (!group_) refuse("a sum of statistics over the group");
    std::vector<double> both = sums_.first;
    both.insert(both.end(), sums_.second.begin(), sums_.second.end());
    auto& group = over_replicas_ ? *context_.layout.gradient_group : *context_.layout.spatial_group;
    if (group.size() > 1) group.allreduce_sum(both.data(), both.size());
    const auto half = both.begin() + static_cast<std::ptrdiff_t>(sums_.first.size());
    sums_ = {{both.begin(), half}, {half, both.end()}};
  }

 private:
  static constexpr double kEpsilon = 1e-5;

  std::int64_t channels_;
  LocalShapes shapes_;
  ExecutionContext& context_;
  bool group_ = false;
  bool over_replicas_ = false;
  double count_ = 1;
  ChannelSums sums_;
  std::vector<double> mean_;
  std::vector<double> inv_std_;
};

class FullyConnected : public LayerExecutor {
 public:
  FullyConnected(const ResolvedLayer& layer, const LocalShapes& shapes, ExecutionContext& context)
      : LayerExecutor(layer.layer.name),
        batch_(shapes.batch),
        in_(shapes.input_floats.at(0) / shapes.batch),
        out_(layer.output_shape.c),
        bias_(std::get<FullyConnectedParams>(layer.layer.params).bias),
        part_(shapes.tensor),
        context_(context) {}
  std::int64_t parameter_floats() const override { return in_ * out_ + (bias_ ? out_ : 0); }
  void initialize(std::uint64_t seed, std::span<float> values) const override {
    linear_initial_part(part_, in_, out_, bias_, seed, values);
  }
  void take_part(std::span<const float> whole, std::span<float> part) const override {
    take_matrix_part(part_, in_, out_, bias_, whole, part);
  }
  void forward(StepPart) override {
    kernels_of(context_).fully_connected_forward(
        batch_, in_, out_, t_.x[0], weights_, part_.adds_product_bias() ? bias(weights_) : nullptr,
        t_.y);
  }
  void backward_data(StepPart) override {
    if (t_.dx[0] != nullptr) {
      kernels_of(context_).fully_connected_backward_data(batch_, in_, out_, t_.dy, weights_,
                                                         t_.dx[0]);
    }
  }
  void backward_filter() override {
    kernels_of(context_).fully_connected_backward_weights(batch_, in_, out_, t_.x[0], t_.dy,
                                                          gradients_, bias(gradients_), 0);
  }

 private:
  float* bias(float* base) const { return bias_ ? base + in_ * out_ : nullptr; }
  const float* bias(const float* base) const { return bias_ ? base + in_ * out_ : nullptr; }
  std::int64_t batch_, in_, out_;
  bool bias_;
  TensorPart part_;
  ExecutionContext& context_;
};

class Add : public LayerExecutor {
 public:
  Add(std::string name, std::int64_t floats, ExecutionContext& context)
      : LayerExecutor(std::move(name)), floats_(floats), context_(context) {}
  void forward(StepPart) override { kernels_of(context_).add(floats_, t_.x[0], t_.x[1], t_.y); }
  void backward_data(StepPart) override {
    for (float* gradient : t_.dx) {
      if (gradient != nullptr) {
        context_.device.copy_on_device(t_.dy, gradient, static_cast<std::size_t>(floats_));
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
      : LayerExecutor(layer.layer.name),
        batch_(shapes.batch),
        voxels_(shapes.output_voxels),
        context_(context) {
    for (const auto& shape : layer.input_shapes) channels_.push_back(shape.c);
  }
  void forward(StepPart) override {
    kernels_of(context_).concat_forward(batch_, voxels_, t_.x, channels_, t_.y);
  }
  void backward_data(StepPart) override {
    kernels_of(context_).concat_backward(batch_, voxels_, t_.dy, channels_, t_.dx);
  }

 private:
  std::int64_t batch_, voxels_;
  std::vector<std::int64_t> channels_;
  ExecutionContext& context_;
};

// Mean squared error against the step's targets (the rank's samples).
class MseLoss : public LayerExecutor {
 public:
  MseLoss(const ResolvedLayer& layer, const LocalShapes& shapes, ExecutionContext& context)
      : LayerExecutor(layer.layer.name),
        floats_(shapes.input_floats.at(0)),
        scale_(loss_scale(shapes, layer.input_shapes.at(0).elements_per_sample(), context)),
        context_(context) {
    gradient_ = context.device.allocate(static_cast<std::size_t>(floats_) * sizeof(float));
  }
  void forward(StepPart) override {
    // The kernel's mean over the rank's values, and its gradient, rescaled to the global mean.
    const double mean =
        kernels_of(context_).mse_loss(floats_, t_.x[0], context_.targets, gradient_->data());
    loss_ = mean * static_cast<double>(floats_) * scale_;
  }
  void backward_data(StepPart) override {
    const auto floats = static_cast<std::size_t>(floats_);
    context_.device.fill(t_.dx[0], floats, 0);
    kernels_of(context_).axpy(floats_, static_cast<float>(static_cast<double>(floats_) * scale_),
                              gradient_->data(), t_.dx[0]);
  }
  double loss() const override { return loss_; }

 private:
  std::int64_t floats_;
  double scale_;
  ExecutionContext& context_;
  std::unique_ptr<DeviceMemory> gradient_;
  double loss_ = 0;
};

// Softmax cross-entropy against the step's labels: one per sample (classification) or one per
// voxel of the rank's planes (segmentation); after a sampled softmax's projection, whose channel
// 0 is each position's target, label 0 everywhere.
class CrossEntropyLoss : public LayerExecutor {
 public:
  CrossEntropyLoss(const ResolvedLayer& layer, const LocalShapes& shapes, ExecutionContext& context,
                   bool target_first)
      : LayerExecutor(layer.layer.name),
        batch_(shapes.batch),
        classes_(layer.input_shapes.at(0).c),
        positions_(shapes.input_voxels.at(0)),
        scale_(loss_scale(shapes, layer.input_shapes.at(0).spatial_elements(), context)),
        context_(context) {
    gradient_ = context.device.allocate(static_cast<std::size_t>(shapes.input_floats.at(0)) *
                                        sizeof(float));
    if (target_first) first_channel_.assign(static_cast<std::size_t>(batch_ * positions_), 0);
  }
  void forward(StepPart) override {
    const auto& labels = first_channel_.empty() ? context_.labels : first_channel_;
    loss_ = scale_ * kernels_of(context_).softmax_cross_entropy(batch_, classes_, positions_,
                                                                t_.x[0], labels, gradient_->data(),
                                                                static_cast<float>(scale_));
  }
  void backward_data(StepPart) override {
    context_.device.copy_on_device(gradient_->data(), t_.dx[0],
                                   static_cast<std::size_t>(batch_ * classes_ * positions_));
  }
  double loss() const override { return loss_; }

 private:
  std::int64_t batch_, classes_, positions_;
  double scale_;
  ExecutionContext& context_;
  std::unique_ptr<DeviceMemory> gradient_;
  std::vector<std::int32_t> first_channel_;  // the labels after a sampled softmax
  double loss_ = 0;
};

}  // namespace

std::unique_ptr<LayerExecutor> make_pointwise_executor(const ModelGraph& model, std::size_t index,
                                                       bool spatially_split,
                                                       const LocalShapes& shapes,
                                                       const StepProgram& program,
                                                       ExecutionContext& context) {
  const auto& layer = model.layers().at(index);
  const std::string& name = layer.layer.name;
  switch (layer.layer.kind) {
    case LayerKind::input:
      return std::make_unique<NoOp>(name);
    case LayerKind::relu:
    case LayerKind::leaky_relu: {
      const float slope =
          layer.layer.kind == LayerKind::relu
              ? 0.0F
              : static_cast<float>(std::get<LeakyReluParams>(layer.layer.params).negative_slope);
      return std::make_unique<LeakyRelu>(name, slope, shapes.output_floats,
                                         backward_needs(layer.layer).output, context);
    }
    case LayerKind::gelu:
      return make_gelu_executor(layer, shapes, context);
    case LayerKind::layer_norm:
      return make_layer_norm_executor(layer, shapes, context);
    case LayerKind::dropout:
      return std::make_unique<Dropout>(
          name, index,
          static_cast<float>(std::get<DropoutParams>(layer.layer.params).drop_probability), shapes,
          context);
    case LayerKind::batch_norm:
      return std::make_unique<BatchNorm>(layer, index, spatially_split, shapes, program, context);
    case LayerKind::fully_connected:
      return std::make_unique<FullyConnected>(layer, shapes, context);
    case LayerKind::add:
      return std::make_unique<Add>(name, shapes.output_floats, context);
    case LayerKind::concat:
      return std::make_unique<Concat>(layer, shapes, context);
    case LayerKind::mse_loss:
      return std::make_unique<MseLoss>(layer, shapes, context);
    case LayerKind::softmax_cross_entropy:
      if (shapes.tensor.split == TensorSplit::vocabulary) {
        return make_split_cross_entropy_executor(layer, shapes, context);
      }
      return std::make_unique<CrossEntropyLoss>(layer, shapes, context,
                                                scores_target_first(model, index));
    default:
      throw std::invalid_argument("layer " + layer.layer.name + ": " + to_string(layer.layer.kind) +
                                  " layers are not yet supported by the real backend");
  }
}

}  // namespace tessera::kernels::real
