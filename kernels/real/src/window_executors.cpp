#include "window_executors.hpp"

#include <cmath>
#include <stdexcept>

#include "execution_context.hpp"
#include "tessera/core/strategy/tensor_distribution.hpp"
#include "tessera/core/strategy/window_kernels.hpp"
#include "tessera/kernels/convolution_runner.hpp"
#include "tessera/kernels/layer_geometry.hpp"
#include "tessera/kernels/layer_kernels.hpp"
#include "tessera/kernels/partitioned_convolution.hpp"
#include "tessera/kernels/partitioned_pooling.hpp"

namespace tessera::kernels::real {
namespace {

HaloDirection halo_direction(Direction pass) {
  return pass == Direction::forward ? HaloDirection::fill : HaloDirection::add_adjoint;
}

OutputPart output_part(StepPart part) {
  switch (part) {
    case StepPart::interior:
      return OutputPart::interior;
    case StepPart::boundary:
      return OutputPart::boundary;
    default:
      return OutputPart::whole;
  }
}

// What a sliding-window executor does around its kernels when the layer is split over the spatial
// group (a PartitionedConvolution or PartitionedPooling): load its shard's inputs, exchange halos,
// store its input gradients; an unsplit layer has no `partitioned_` and refuses halo ops.
template <typename Partitioned>
class WindowExecutor : public LayerExecutor {
 public:
  using LayerExecutor::LayerExecutor;

  void begin_pass(Direction pass) override {
    if (partitioned_ && pass == Direction::forward) partitioned_->load_inputs({t_.x[0]});
  }
  void end_pass(Direction pass) override {
    if (partitioned_ && pass != Direction::forward && t_.dx[0] != nullptr) {
      partitioned_->store_input_gradients({t_.dx[0]});
    }
  }
  void halo_start(Direction pass, int axis) override {
    if (!partitioned_) refuse("a halo exchange of an unsplit layer");
    partitioned_->start_halo(halo_direction(pass), axis);
  }
  void halo_wait(Direction) override {
    if (!partitioned_) refuse("a halo wait of an unsplit layer");
    partitioned_->finish_halo();
  }

 protected:
  std::unique_ptr<Partitioned> partitioned_;
};

class Convolution : public WindowExecutor<PartitionedConvolution> {
 public:
  Convolution(const ResolvedLayer& layer, std::size_t index, bool split, const LocalShapes& shapes,
              const StepProgram& program, ExecutionContext& context)
      : WindowExecutor(layer.layer.name),
        context_(context),
        geometry_(convolution_geometry(layer.layer, layer.input_shapes.at(0), layer.output_shape)),
        batch_(shapes.batch),
        output_voxels_(shapes.output_voxels),
        bias_(std::get<ConvolutionParams>(layer.layer.params).bias),
        part_(shapes.tensor) {
    auto runner =
        std::make_unique<ConvolutionRunner>(context.device, context.convolution_workspace);
    // Each shard's outputs of a split transposed convolution come from its own inputs alone: one
    // local kernel, no exchange. A split convolution runs windows.
    const bool windows = runs_window_kernels(layer.layer, split);
    if (split && !windows) geometry_ = local_transposed_geometry(layer, index, program, context);
    follow_plans(*runner, index, program, windows);
    if (windows) {
      // The program says whether the interior is computed while the halos fly.
      const bool interior = program_has(program, index, StepOpKind::compute, StepPart::interior);
      partitioned_ = std::make_unique<PartitionedConvolution>(
          *context.halo_exchange, geometry_, context.spatial_grid, batch_,
          interior ? HaloOverlap::always : HaloOverlap::never, FilterGradients::per_shard,
          std::move(runner));
    } else {
      runner_ = std::move(runner);
    }
  }

  std::int64_t parameter_floats() const override {
    return geometry_.filter_floats() + (bias_ ? geometry_.out_channels : 0);
  }
  void initialize(std::uint64_t seed, std::span<float> values) const override {
    // He-uniform over the fan-in, suited to the (leaky) ReLUs that follow; biases start at zero.
    // A rank of a tensor group takes its part of the whole layer's (tensor_part.hpp): the
    // filters as out channels x (in channels x window).
    const std::int64_t fan_in = part_.whole_in(filter_inputs());
    const std::int64_t out = part_.whole_out(geometry_.out_channels);
    auto whole =
        uniform_values(seed, 0, static_cast<float>(std::sqrt(6.0 / static_cast<double>(fan_in))),
                       fan_in * out + (bias_ ? out : 0));
    std::fill(whole.begin() + fan_in * out, whole.end(), 0.0F);
    take_part(whole, values);
  }
  void take_part(std::span<const float> whole, std::span<float> part) const override {
    take_matrix_part(part_, filter_inputs(), geometry_.out_channels, bias_, whole, part);
  }

  void forward(StepPart part) override {
    if (partitioned_) {
      partitioned_->forward_outputs(output_part(part), {t_.x[0]}, weights_, {t_.y});
    } else {
      runner_->forward(geometry_, batch_, t_.x[0], weights_, t_.y, 0);
    }
    // The bias once the whole output is there (after the boundary or the whole shard).
    if (bias_ && part != StepPart::interior && part_.adds_product_bias()) {
      context_.device.layers().bias_forward(batch_, geometry_.out_channels, output_voxels_,
                                            weights_ + geometry_.filter_floats(), t_.y);
    }
  }

  void backward_data(StepPart) override {
    if (t_.dx[0] == nullptr) return;
    if (partitioned_) {
      partitioned_->backward_data({t_.dy}, weights_);
    } else {
      runner_->backward_data(geometry_, batch_, t_.dy, weights_, t_.dx[0], 0);
    }
  }

  ConvolutionPlanCounts convolution_plan_counts() const override {
    return (partitioned_ ? partitioned_->runner() : *runner_).plan_counts();
  }

  // A split layer leaves its planes' part of the filter and bias gradients: the gradient
  // all-reduce over every rank sums them (rank_layout.hpp).
  void backward_filter() override {
    if (partitioned_) {
      partitioned_->backward_filter({t_.dy}, {gradients_});
    } else {
      runner_->backward_filter(geometry_, batch_, t_.x[0], t_.dy, gradients_, 0);
    }
    if (bias_) {
      context_.device.layers().bias_backward(batch_, geometry_.out_channels, output_voxels_, t_.dy,
                                             gradients_ + geometry_.filter_floats(), 0);
    }
  }

 private:
  // The micro-batches and algorithms the program's ops run as, where planned from profiles (the
  // ones the simulator times): an unsplit layer's problem, a split transposed convolution's local
  // one, or each window of a split convolution as the program planned it, fallbacks included.
  void follow_plans(ConvolutionRunner& runner, std::size_t index, const StepProgram& program,
                    bool windows) {
    for (const auto& op : program.ops) {
      if (op.kind != StepOpKind::compute || op.layer != index) continue;
      if (windows) {
        for (const auto& window : op.window_plans) {
          runner.follow(
              convolution_geometry(window.kernel.layer, window.kernel.input, window.kernel.output),
              batch_, op.direction, window.plan);
        }
      } else if (!op.micro_batches.micro_batches.empty() && op.provenance == Provenance::profile) {
        runner.follow(geometry_, batch_, op.direction, op.micro_batches);
      }
    }
  }

  // A split transposed convolution whose shards need no halo (kernel no wider than the stride,
  // no padding: 3D U-Net's up-convolutions) is the same transposed convolution on each shard's
  // own planes, its outputs the shard's outputs. Others would need an exchange the program has
  // not got.
  ConvolutionGeometry local_transposed_geometry(const ResolvedLayer& layer, std::size_t index,
                                                const StepProgram& program,
                                                const ExecutionContext& context) const {
    const TensorDistribution inputs(layer.input_shapes.at(0).spatial, context.spatial_grid);
    const TensorDistribution outputs(layer.output_shape.spatial, context.spatial_grid);
    const auto in = inputs.owned(context.layout.shard);
    const auto out = outputs.owned(context.layout.shard);
    auto local = geometry_;
    local.input_spatial = in.count;
    local = with_output(local);
    bool aligned =
        local.output_spatial == out.count && !program_has(program, index, StepOpKind::halo_start);
    for (int axis = 0; aligned && axis < local.spatial_rank(); ++axis) {
      const auto a = static_cast<std::size_t>(axis);
      aligned = out.first[a] == in.first[a] * local.stride[a] - local.padding[a];
    }
    if (!aligned) {
      throw std::invalid_argument(
          "layer " + name_ +
          ": the real backend splits a transposed convolution only where each shard's outputs "
          "come from its own inputs (kernel no wider than the stride, no padding)");
    }
    return local;
  }

  ExecutionContext& context_;
  ConvolutionGeometry geometry_;
  std::int64_t batch_;
  std::int64_t output_voxels_;
  // Of each filter: its input channels times its window.
  std::int64_t filter_inputs() const { return geometry_.filter_floats() / geometry_.out_channels; }

  bool bias_;
  TensorPart part_;
  std::unique_ptr<ConvolutionRunner> runner_;  // unsplit layers, and split halo-free ones
};

class Pooling : public WindowExecutor<PartitionedPooling> {
 public:
  Pooling(const ResolvedLayer& layer, bool split, const LocalShapes& shapes,
          ExecutionContext& context)
      : WindowExecutor(layer.layer.name),
        context_(context),
        geometry_(pooling_geometry(layer.layer, layer.input_shapes.at(0), layer.output_shape)),
        batch_(shapes.batch) {
    if (split) {
      partitioned_ = std::make_unique<PartitionedPooling>(*context.halo_exchange, geometry_,
                                                          context.spatial_grid, batch_);
    }
  }

  void forward(StepPart) override {
    if (partitioned_) {
      partitioned_->forward_outputs({t_.y});
    } else {
      context_.device.layers().pooling_forward(geometry_, batch_, t_.x[0], t_.y);
    }
  }
  void backward_data(StepPart) override {
    if (t_.dx[0] == nullptr) return;
    if (partitioned_) {
      partitioned_->backward_data({t_.dy});
    } else {
      context_.device.layers().pooling_backward(geometry_, batch_, t_.x[0], t_.y, t_.dy, t_.dx[0]);
    }
  }

 private:
  ExecutionContext& context_;
  PoolingGeometry geometry_;
  std::int64_t batch_;
};

}  // namespace

std::unique_ptr<LayerExecutor> make_convolution_executor(const ResolvedLayer& layer,
                                                         std::size_t index, bool spatially_split,
                                                         const LocalShapes& shapes,
                                                         const StepProgram& program,
                                                         ExecutionContext& context) {
  return std::make_unique<Convolution>(layer, index, spatially_split, shapes, program, context);
}

std::unique_ptr<LayerExecutor> make_pooling_executor(const ResolvedLayer& layer,
                                                     bool spatially_split,
                                                     const LocalShapes& shapes,
                                                     ExecutionContext& context) {
  return std::make_unique<Pooling>(layer, spatially_split, shapes, context);
}

}  // namespace tessera::kernels::real
