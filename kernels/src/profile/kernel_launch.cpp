#include "kernel_launch.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "tessera/kernels/layer_geometry.hpp"
#include "tessera/kernels/layer_kernels.hpp"
#include "tessera/kernels/optimizer_update.hpp"

namespace tessera::kernels {
namespace {

std::size_t to_size(std::int64_t value) {
  return static_cast<std::size_t>(value);
}

// Mean and 1/std per channel from the forward sums, as a training-mode batch-norm computes them.
void moments(const ChannelSums& sums, double count, std::vector<double>& mean,
             std::vector<double>& inv_std) {
  mean.resize(sums.first.size());
  inv_std.resize(sums.first.size());
  for (std::size_t c = 0; c < mean.size(); ++c) {
    mean[c] = sums.first[c] / count;
    const double variance = std::max(0.0, sums.second[c] / count - mean[c] * mean[c]);
    inv_std[c] = 1.0 / std::sqrt(variance + 1e-5);
  }
}

}  // namespace

std::vector<ConvolutionAlgorithm> algorithms_for(Device& device, const KernelToProfile& kernel,
                                                 std::int64_t batch, Direction direction) {
  if (!is_convolution(kernel.layer.kind)) return {{"default", 0}};
  const auto geometry = convolution_geometry(kernel.layer, kernel.inputs.front(), kernel.output);
  return device.convolutions().algorithms(geometry, batch, direction);
}

ParameterKernelLaunch::ParameterKernelLaunch(Device& device, const ParameterKernelToProfile& kernel)
    : device_(device), kernel_(kernel) {
  const auto floats = static_cast<std::size_t>(
      std::max<std::int64_t>(static_cast<std::int64_t>(kernel.parameters), 1));
  const int buffers = kernel.kernel == ParameterKernel::update ? 4 : 2;
  for (int buffer = 0; buffer < buffers; ++buffer) {
    memory_.push_back(device_.allocate(floats * sizeof(float)));
    device_.fill(memory_.back()->data(), floats, 1e-3F);
  }
}

std::function<void()> ParameterKernelLaunch::producer() {
  if (kernel_.kernel != ParameterKernel::gradient_sum) return {};
  return [this] { device_.fill(memory_[0]->data(), memory_[0]->floats(), 1e-3F); };
}

void ParameterKernelLaunch::call() {
  const auto parameters = static_cast<std::int64_t>(kernel_.parameters);
  switch (kernel_.kernel) {
    case ParameterKernel::update:
      optimizer_update(device_.layers(), kernel_.optimizer, parameters, 1e-3F, ++step_,
                       memory_[1]->data(), memory_[0]->data(), memory_[2]->data(),
                       memory_[3]->data());
      return;
    case ParameterKernel::gradient_sum:
      device_.layers().axpy(parameters, 1.0F, memory_[0]->data(), memory_[1]->data());
      return;
  }
}

std::function<void()> then_producer(std::function<void()> shadow, std::function<void()> producer) {
  if (!producer) return shadow;
  return [shadow = std::move(shadow), producer = std::move(producer)] {
    if (shadow) shadow();
    producer();
  };
}

CachePreparation::CachePreparation(Device& device, const ProfilerOptions& options)
    : device_(device), caches_(options.caches) {
  if (caches_ != RunCaches::warm && options.cache_flush_bytes > 0) {
    buffer_ = device.allocate(static_cast<std::size_t>(options.cache_flush_bytes));
  }
}

void CachePreparation::before_run(const std::function<void()>& shadow) const {
  if (buffer_) device_.fill(buffer_->data(), buffer_->floats(), 0.5f);
  if (runs_shadow(caches_) && shadow) shadow();
  device_.synchronize();
}

KernelLaunch::KernelLaunch(Device& device, const KernelToProfile& kernel, std::int64_t batch)
    : device_(device), kernel_(kernel), batch_(batch) {}

float* KernelLaunch::operand(std::size_t floats) {
  auto memory = device_.allocate(std::max<std::size_t>(floats, 1) * sizeof(float));
  // Generated where it lives, from a fixed seed per operand: reproducible, and no host copy of
  // tensors of gigabytes (CosmoFlow-512's whole layers), which cost many times the kernels.
  device_.fill_uniform(memory->data(), floats, memory_.size() + 1);
  memory_.push_back(std::move(memory));
  return memory_.back()->data();
}

std::optional<std::function<void()>> KernelLaunch::call(Direction direction,
                                                        const ConvolutionAlgorithm& algorithm) {
  const Layer& layer = kernel_.layer;
  const TensorShape& input = kernel_.inputs.front();
  const TensorShape& output = kernel_.output;
  const std::int64_t n = batch_;
  const std::size_t in_floats = to_size(n * input.elements_per_sample());
  const std::size_t out_floats = to_size(n * output.elements_per_sample());
  LayerKernels& layers = device_.layers();
  const bool forward = direction == Direction::forward;
  const bool filter = direction == Direction::backward_filter;

  switch (layer.kind) {
    case LayerKind::convolution:
    case LayerKind::transposed_convolution: {
      const auto geometry = convolution_geometry(layer, input, output);
      const bool bias = std::get<ConvolutionParams>(layer.params).bias;
      float* x = operand(to_size(n * geometry.input_floats_per_sample()));
      float* w = operand(to_size(geometry.filter_floats()));
      float* y = operand(to_size(n * geometry.output_floats_per_sample()));
      float* b = bias ? operand(to_size(geometry.out_channels)) : nullptr;
      DeviceMemory* workspace = nullptr;
      if (algorithm.workspace_bytes > 0) {
        memory_.push_back(device_.allocate(static_cast<std::size_t>(algorithm.workspace_bytes)));
        workspace = memory_.back().get();
      }
      ConvolutionKernels& convolutions = device_.convolutions();
      std::int64_t spatial = 1;
      for (std::int64_t extent : geometry.output_spatial) spatial *= extent;
      const std::string& name = algorithm.name;
      if (forward) {
        return [=, &convolutions, &layers] {
          convolutions.forward(geometry, n, name, x, w, y, 0.0f, workspace);
          if (b) layers.bias_forward(n, geometry.out_channels, spatial, b, y);
        };
      }
      if (filter) {
        return [=, &convolutions, &layers] {
          convolutions.backward_filter(geometry, n, name, x, y, w, 0.0f, workspace);
          if (b) layers.bias_backward(n, geometry.out_channels, spatial, y, b, 0.0f);
        };
      }
      return [=, &convolutions] {
        convolutions.backward_data(geometry, n, name, y, w, x, 0.0f, workspace);
      };
    }
    case LayerKind::pooling: {
      const auto geometry = pooling_geometry(layer, input, output);
      std::int64_t in_spatial = 1;
      for (std::int64_t extent : geometry.input_spatial) in_spatial *= extent;
      float* x = operand(to_size(n * geometry.channels * in_spatial));
      float* y = operand(out_floats);
      if (forward) return [=, &layers] { layers.pooling_forward(geometry, n, x, y); };
      float* dy = operand(out_floats);
      float* dx = operand(to_size(n * geometry.channels * in_spatial));
      // cuDNN's max-pooling backward finds each window's maximum by comparing x with y: y is x
      // pooled, as in training, not random values that no window holds.
      layers.pooling_forward(geometry, n, x, y);
      return [=, &layers] { layers.pooling_backward(geometry, n, x, y, dy, dx); };
    }
    case LayerKind::batch_norm: {
      // The scale and shift gradients come out of the backward-data call.
      if (filter) return std::nullopt;
      const std::int64_t channels = input.c;
      const std::int64_t spatial = input.spatial_elements();
      float* x = operand(in_floats);
      float* y = operand(in_floats);
      float* scale = operand(to_size(channels));
      float* shift = operand(to_size(channels));
      const double count = static_cast<double>(n * spatial);
      if (forward) {
        return [=, &layers] {
          std::vector<double> mean, inv_std;
          moments(layers.batch_norm_sums(n, channels, spatial, x), count, mean, inv_std);
          layers.batch_norm_apply(n, channels, spatial, x, mean, inv_std, scale, shift, y);
        };
      }
      std::vector<double> mean, inv_std;
      moments(layers.batch_norm_sums(n, channels, spatial, x), count, mean, inv_std);
      float* dx = operand(in_floats);
      float* dscale = operand(to_size(channels));
      float* dshift = operand(to_size(channels));
      return [=, &layers] {
        const ChannelSums sums =
            layers.batch_norm_backward_sums(n, channels, spatial, x, y, mean, inv_std);
        layers.batch_norm_backward_apply(n, channels, spatial, x, y, mean, inv_std, scale, sums,
                                         count, dx, dscale, dshift);
      };
    }
    case LayerKind::layer_norm: {
      // The scale and shift gradients come out of the backward-data call.
      if (filter) return std::nullopt;
      const bool affine = std::get<LayerNormParams>(layer.params).affine;
      const std::int64_t channels = input.c;
      const std::int64_t positions = input.spatial_elements();
      float* x = operand(in_floats);
      float* y = operand(in_floats);
      float* scale = affine ? operand(to_size(channels)) : nullptr;
      float* shift = affine ? operand(to_size(channels)) : nullptr;
      float* mean = operand(to_size(n * positions));
      float* inv_std = operand(to_size(n * positions));
      if (forward) {
        return [=, &layers] {
          layers.layer_norm_forward(n, channels, positions, x, scale, shift, y, mean, inv_std);
        };
      }
      layers.layer_norm_forward(n, channels, positions, x, scale, shift, y, mean, inv_std);
      float* dx = operand(in_floats);
      float* dscale = affine ? operand(to_size(channels)) : nullptr;
      float* dshift = affine ? operand(to_size(channels)) : nullptr;
      return [=, &layers] {
        layers.layer_norm_backward(n, channels, positions, x, y, mean, inv_std, scale, dx, dscale,
                                   dshift, 0.0f);
      };
    }
    case LayerKind::relu:
    case LayerKind::leaky_relu: {
      const float slope =
          layer.kind == LayerKind::relu
              ? 0.0f
              : static_cast<float>(std::get<LeakyReluParams>(layer.params).negative_slope);
      const auto count = static_cast<std::int64_t>(in_floats);
      float* x = operand(in_floats);
      float* y = operand(in_floats);
      if (forward) return [=, &layers] { layers.leaky_relu_forward(count, slope, x, y); };
      float* dx = operand(in_floats);
      return [=, &layers] { layers.leaky_relu_backward(count, slope, x, y, dx); };
    }
    case LayerKind::gelu: {
      const bool tanh_approximation =
          std::get<GeluParams>(layer.params).approximation == GeluApproximation::tanh;
      const auto count = static_cast<std::int64_t>(in_floats);
      float* x = operand(in_floats);
      float* y = operand(in_floats);
      if (forward) return [=, &layers] { layers.gelu_forward(count, tanh_approximation, x, y); };
      float* dx = operand(in_floats);
      return [=, &layers] { layers.gelu_backward(count, tanh_approximation, x, y, dx); };
    }
    case LayerKind::dropout: {
      const auto p = static_cast<float>(std::get<DropoutParams>(layer.params).drop_probability);
      const auto count = static_cast<std::int64_t>(in_floats);
      float* x = operand(in_floats);
      float* mask = operand(in_floats);
      float* y = operand(in_floats);
      if (forward)
        return [=, &layers] {
          layers.dropout_forward(count, p, {.seed = 1, .per_sample = count}, x, mask, y);
        };
      return [=, &layers] { layers.dropout_backward(count, mask, y, x); };
    }
    case LayerKind::fully_connected: {
      const std::int64_t in = input.elements_per_sample();
      const std::int64_t out = output.elements_per_sample();
      const bool bias = std::get<FullyConnectedParams>(layer.params).bias;
      float* x = operand(in_floats);
      float* w = operand(to_size(in * out));
      float* y = operand(out_floats);
      float* b = bias ? operand(to_size(out)) : nullptr;
      if (forward) return [=, &layers] { layers.fully_connected_forward(n, in, out, x, w, b, y); };
      if (filter) {
        return [=, &layers] { layers.fully_connected_backward_weights(n, in, out, x, y, w, b, 0); };
      }
      return [=, &layers] { layers.fully_connected_backward_data(n, in, out, y, w, x); };
    }
    case LayerKind::concat: {
      std::vector<std::int64_t> channels;
      std::vector<float*> parts;
      for (const TensorShape& part : kernel_.inputs) {
        channels.push_back(part.c);
        parts.push_back(operand(to_size(n * part.elements_per_sample())));
      }
      const std::int64_t spatial = output.spatial_elements();
      float* y = operand(out_floats);
      if (forward) {
        const std::vector<const float*> sources(parts.begin(), parts.end());
        return [=, &layers] { layers.concat_forward(n, spatial, sources, channels, y); };
      }
      return [=, &layers] { layers.concat_backward(n, spatial, y, channels, parts); };
    }
    case LayerKind::add: {
      const auto count = static_cast<std::int64_t>(out_floats);
      float* a = operand(out_floats);
      float* b = operand(out_floats);
      float* y = operand(out_floats);
      if (forward) return [=, &layers] { layers.add(count, a, b, y); };
      Device* device = &device_;
      return [=] {
        device->copy_on_device(y, a, out_floats);
        device->copy_on_device(y, b, out_floats);
      };
    }
    case LayerKind::softmax_cross_entropy:
    case LayerKind::mse_loss: {
      // A loss computes its gradient with its value, in the forward call.
      if (!forward) return std::nullopt;
      float* prediction = operand(in_floats);
      float* gradient = operand(in_floats);
      if (layer.kind == LayerKind::mse_loss) {
        float* target = operand(in_floats);
        const auto count = static_cast<std::int64_t>(in_floats);
        return [=, &layers] { layers.mse_loss(count, prediction, target, gradient); };
      }
      // Classes are the channels; a spatial input labels every position (segmentation).
      const std::int64_t classes = input.c;
      const std::int64_t positions = input.spatial_elements();
      std::vector<std::int32_t> labels(to_size(n * positions));
      for (std::size_t i = 0; i < labels.size(); ++i) {
        labels[i] = static_cast<std::int32_t>(static_cast<std::int64_t>(i * 7919) % classes);
      }
      const auto scale = static_cast<float>(1.0 / static_cast<double>(n * positions));
      return [=, &layers] {
        layers.softmax_cross_entropy(n, classes, positions, prediction, labels, gradient, scale);
      };
    }
    case LayerKind::input:
    // Sequence layers are not profiled: the real backend runs them on CPU ranks only (oneDNN's
    // LSTM and matmuls, no cuDNN RNN or GPU attention yet), and `tessera profile` leaves them out
    // (kernels_to_profile); the simulator times them by their roofline.
    case LayerKind::lstm:
    case LayerKind::embedding:
    case LayerKind::attention:
    case LayerKind::projection:
    case LayerKind::self_attention:
    case LayerKind::position_embedding:
      break;
  }
  throw std::invalid_argument("no device kernel for layer " + layer.name + " (" +
                              to_string(layer.kind) + ")");
}

}  // namespace tessera::kernels
