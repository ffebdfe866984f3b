#include "window_executors.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

#include "execution_context.hpp"
#include "tessera/kernels/convolution_runner.hpp"
#include "tessera/kernels/layer_geometry.hpp"
#include "tessera/kernels/layer_kernels.hpp"
#include "tessera/kernels/partitioned_convolution.hpp"
#include "tessera/kernels/partitioned_pooling.hpp"

namespace tessera::kernels::real {
namespace {

class Convolution : public LayerExecutor {
 public:
  Convolution(const ResolvedLayer& layer, std::size_t index, bool split, const LocalShapes& shapes,
              ExecutionContext& context)
      : context_(context),
        geometry_(convolution_geometry(layer.layer, layer.input_shapes.at(0), layer.output_shape)),
        batch_(shapes.batch),
        output_voxels_(shapes.output_voxels),
        bias_(std::get<ConvolutionParams>(layer.layer.params).bias) {
    auto runner =
        std::make_unique<ConvolutionRunner>(context.device, context.convolution_workspace);
    follow_plans(*runner, index, layer.layer.name);
    if (split) {
      if (geometry_.transposed) {
        throw std::invalid_argument("layer " + layer.layer.name +
                                    ": spatially split transposed convolutions are not yet "
                                    "supported by the real backend");
      }
      partitioned_ = std::make_unique<PartitionedConvolution>(
          *context.halo_exchange, geometry_, context.spatial_grid, batch_, HaloOverlap::automatic,
          FilterGradients::per_shard, std::move(runner));
    } else {
      runner_ = std::move(runner);
    }
  }

  std::int64_t parameter_floats() const override {
    return geometry_.filter_floats() + (bias_ ? geometry_.out_channels : 0);
  }
  void initialize(std::uint64_t seed, std::span<float> values) const override {
    // He-uniform over the fan-in, suited to the (leaky) ReLUs that follow; biases start at zero.
    const auto fan_in = geometry_.filter_floats() / geometry_.out_channels;
    const auto filter = static_cast<std::size_t>(geometry_.filter_floats());
    fill_uniform(seed, 0, static_cast<float>(std::sqrt(6.0 / static_cast<double>(fan_in))),
                 values.first(filter));
    for (std::size_t i = filter; i < values.size(); ++i) values[i] = 0;
  }

  void forward(const std::vector<const float*>& x, float* y) override {
    if (partitioned_) {
      partitioned_->forward({x[0]}, weights_, {y});
    } else {
      runner_->forward(geometry_, batch_, x[0], weights_, y, 0);
    }
    if (bias_) {
      context_.device.layers().bias_forward(batch_, geometry_.out_channels, output_voxels_,
                                            weights_ + geometry_.filter_floats(), y);
    }
  }

  void backward(const std::vector<const float*>& x, const float*, const float* dy,
                const std::vector<float*>& dx) override {
    if (partitioned_) {
      std::vector<float*> input_gradients;
      if (dx[0] != nullptr) input_gradients.push_back(dx[0]);
      partitioned_->backward({dy}, weights_, input_gradients, {gradients_});
    } else {
      if (dx[0] != nullptr) runner_->backward_data(geometry_, batch_, dy, weights_, dx[0], 0);
      runner_->backward_filter(geometry_, batch_, x[0], dy, gradients_, 0);
    }
    // A split layer leaves its planes' part of the filter and bias gradients: the trainer's one
    // all-reduce over every rank sums them (rank_layout.hpp).
    if (bias_) {
      float* bias_gradient = gradients_ + geometry_.filter_floats();
      context_.device.layers().bias_backward(batch_, geometry_.out_channels, output_voxels_, dy,
                                             bias_gradient, 0);
    }
  }

 private:
  // The kernels the network plan made from profiles, the ones the simulator times: an unsplit
  // layer runs them as they are; a split one on its windows, which hold the shard's planes and
  // its halos (the runner falls back to the library's first choice where a window cannot take
  // the planned algorithm).
  void follow_plans(ConvolutionRunner& runner, std::size_t index, const std::string& name) const {
    if (context_.micro_batching == nullptr) return;
    for (const auto direction :
         {Direction::forward, Direction::backward_data, Direction::backward_filter}) {
      const auto* kernel = context_.micro_batching->find(index, direction);
      if (kernel == nullptr || kernel->provenance != Provenance::profile) continue;
      if (kernel->plan.samples() != batch_) {
        throw std::invalid_argument("layer " + name + ": the micro-batching plan covers " +
                                    std::to_string(kernel->plan.samples()) +
                                    " samples, the rank runs " + std::to_string(batch_));
      }
      runner.follow(direction, kernel->plan);
    }
  }

  ExecutionContext& context_;
  ConvolutionGeometry geometry_;
  std::int64_t batch_;
  std::int64_t output_voxels_;
  bool bias_;
  std::unique_ptr<ConvolutionRunner> runner_;  // unsplit layers
  std::unique_ptr<PartitionedConvolution> partitioned_;
};

class Pooling : public LayerExecutor {
 public:
  Pooling(const ResolvedLayer& layer, bool split, const LocalShapes& shapes,
          ExecutionContext& context)
      : context_(context),
        geometry_(pooling_geometry(layer.layer, layer.input_shapes.at(0), layer.output_shape)),
        batch_(shapes.batch) {
    if (split) {
      partitioned_ = std::make_unique<PartitionedPooling>(*context.halo_exchange, geometry_,
                                                          context.spatial_grid, batch_);
    }
  }

  void forward(const std::vector<const float*>& x, float* y) override {
    if (partitioned_) {
      partitioned_->forward({x[0]}, {y});
    } else {
      context_.device.layers().pooling_forward(geometry_, batch_, x[0], y);
    }
  }
  void backward(const std::vector<const float*>& x, const float* y, const float* dy,
                const std::vector<float*>& dx) override {
    if (dx[0] == nullptr) return;
    if (partitioned_) {
      partitioned_->backward({dy}, {dx[0]});
    } else {
      context_.device.layers().pooling_backward(geometry_, batch_, x[0], y, dy, dx[0]);
    }
  }

 private:
  ExecutionContext& context_;
  PoolingGeometry geometry_;
  std::int64_t batch_;
  std::unique_ptr<PartitionedPooling> partitioned_;
};

}  // namespace

std::unique_ptr<LayerExecutor> make_convolution_executor(const ResolvedLayer& layer,
                                                         std::size_t index, bool spatially_split,
                                                         const LocalShapes& shapes,
                                                         ExecutionContext& context) {
  return std::make_unique<Convolution>(layer, index, spatially_split, shapes, context);
}

std::unique_ptr<LayerExecutor> make_pooling_executor(const ResolvedLayer& layer,
                                                     bool spatially_split,
                                                     const LocalShapes& shapes,
                                                     ExecutionContext& context) {
  return std::make_unique<Pooling>(layer, spatially_split, shapes, context);
}

}  // namespace tessera::kernels::real
