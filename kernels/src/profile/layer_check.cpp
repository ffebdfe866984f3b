#include "tessera/kernels/profile/layer_check.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <stdexcept>

#include "tessera/core/common/lower_median.hpp"
#include "tessera/kernels/convolution_runner.hpp"
#include "tessera/kernels/device.hpp"
#include "tessera/kernels/layer_geometry.hpp"
#include "tessera/kernels/sequence_kernels.hpp"

namespace tessera::kernels {
namespace {

std::vector<float> random_values(std::int64_t count, std::mt19937& random) {
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::vector<float> values(static_cast<std::size_t>(count));
  for (float& each : values) each = value(random);
  return values;
}

std::vector<std::int64_t> batched(std::int64_t batch, std::int64_t channels,
                                  const std::vector<std::int64_t>& spatial) {
  std::vector<std::int64_t> shape{batch, channels};
  shape.insert(shape.end(), spatial.begin(), spatial.end());
  return shape;
}

std::int64_t elements(const std::vector<std::int64_t>& shape) {
  std::int64_t count = 1;
  for (std::int64_t extent : shape) count *= extent;
  return count;
}

// Host tensors mirrored on the device; results are read back by name.
class Tensors {
 public:
  explicit Tensors(Device& device) : device_(device) {}
  float* operand(const std::string& name, std::vector<std::int64_t> shape, std::mt19937& random) {
    CheckedTensor tensor{name, std::move(shape), {}};
    tensor.values = random_values(elements(tensor.shape), random);
    float* data = allocate(tensor.values.size());
    device_.copy_to_device(tensor.values.data(), data, tensor.values.size());
    operands_.push_back(std::move(tensor));
    return data;
  }
  // NaN first: a result the kernel never writes cannot pass for a computed one.
  float* result(const std::string& name, std::vector<std::int64_t> shape) {
    const auto floats = static_cast<std::size_t>(elements(shape));
    float* data = allocate(floats);
    device_.fill(data, floats, std::numeric_limits<float>::quiet_NaN());
    results_.push_back({name, std::move(shape), {}});
    result_data_.push_back(data);
    return data;
  }
  void read_results() {
    for (std::size_t i = 0; i < results_.size(); ++i) {
      results_[i].values.resize(static_cast<std::size_t>(elements(results_[i].shape)));
      device_.copy_to_host(result_data_[i], results_[i].values.data(), results_[i].values.size());
    }
    device_.synchronize();
  }
  std::vector<CheckedTensor> operands() { return std::move(operands_); }
  std::vector<CheckedTensor> results() { return std::move(results_); }

 private:
  float* allocate(std::size_t floats) {
    memory_.push_back(device_.allocate(std::max<std::size_t>(floats, 1) * sizeof(float)));
    return memory_.back()->data();
  }
  Device& device_;
  std::vector<std::unique_ptr<DeviceMemory>> memory_;
  std::vector<CheckedTensor> operands_, results_;
  std::vector<float*> result_data_;
};

DirectionTime timed(Device& device, const std::string& direction, const std::string& algorithm,
                    const std::function<void()>& work, int runs) {
  std::vector<double> seconds;
  for (int run = 0; run < std::max(runs, 1); ++run) seconds.push_back(device.time_seconds(work));
  return {direction, algorithm, lower_median(seconds), static_cast<int>(seconds.size())};
}

// A layer with one forward and one backward call: each runs once for its results, which are
// read back, then `timed_runs` times for its median time.
void run_forward_backward(Device& device, Tensors& tensors, const std::function<void()>& forward,
                          const std::function<void()>& backward, int timed_runs,
                          LayerCheck& check) {
  forward();
  backward();
  tensors.read_results();
  check.times.push_back(timed(device, "forward", "default", forward, timed_runs));
  check.times.push_back(timed(device, "backward", "default", backward, timed_runs));
  check.operands = tensors.operands();
  check.results = tensors.results();
}

void check_convolution(Device& device, const ConvolutionGeometry& conv, std::int64_t batch,
                       std::mt19937& random, int timed_runs, LayerCheck& check) {
  Tensors tensors(device);
  // In the transposed geometry the plain convolution runs from output to input, and the filter
  // is in x out/groups: both are what PyTorch's conv_transpose takes.
  const auto x_shape = batched(batch, conv.in_channels, conv.input_spatial);
  const auto y_shape = batched(batch, conv.out_channels, conv.output_spatial);
  std::vector<std::int64_t> w_shape{
      conv.transposed ? conv.in_channels : conv.out_channels,
      (conv.transposed ? conv.out_channels : conv.in_channels) / conv.groups};
  w_shape.insert(w_shape.end(), conv.kernel.begin(), conv.kernel.end());
  const float* x = tensors.operand("x", x_shape, random);
  const float* w = tensors.operand("w", w_shape, random);
  const float* dy = tensors.operand("dy", y_shape, random);
  float* y = tensors.result("y", y_shape);
  float* dx = tensors.result("dx", x_shape);
  float* dw = tensors.result("dw", w_shape);

  ConvolutionRunner runner(device);
  const std::vector<std::pair<Direction, std::function<void()>>> directions{
      {Direction::forward, [&] { runner.forward(conv, batch, x, w, y, 0.0f); }},
      {Direction::backward_data, [&] { runner.backward_data(conv, batch, dy, w, dx, 0.0f); }},
      {Direction::backward_filter, [&] { runner.backward_filter(conv, batch, x, dy, dw, 0.0f); }},
  };
  for (const auto& [direction, work] : directions) work();  // results, workspace, algorithm
  tensors.read_results();
  for (const auto& [direction, work] : directions) {
    std::string algorithm;
    for (const auto& micro : runner.plan(conv, batch, direction).micro_batches) {
      algorithm += (algorithm.empty() ? "" : "+") + micro.algorithm;
    }
    check.times.push_back(timed(device, to_string(direction), algorithm, work, timed_runs));
  }
  check.operands = tensors.operands();
  check.results = tensors.results();
}

void check_pooling(Device& device, const PoolingGeometry& pool, std::int64_t batch,
                   std::mt19937& random, int timed_runs, LayerCheck& check) {
  Tensors tensors(device);
  const auto x_shape = batched(batch, pool.channels, pool.input_spatial);
  const auto y_shape = batched(batch, pool.channels, pool.output_spatial);
  const float* x = tensors.operand("x", x_shape, random);
  const float* dy = tensors.operand("dy", y_shape, random);
  float* y = tensors.result("y", y_shape);
  float* dx = tensors.result("dx", x_shape);
  LayerKernels& layers = device.layers();
  const std::function<void()> forward = [&] { layers.pooling_forward(pool, batch, x, y); };
  const std::function<void()> backward = [&] {
    layers.pooling_backward(pool, batch, x, y, dy, dx);
  };
  run_forward_backward(device, tensors, forward, backward, timed_runs, check);
}

// The transformers' layers, forward and backward (the parameters' gradients come out of the
// backward call with the input's). Shapes as PyTorch's functions take them after the N x C x T
// tensors are permuted: LayerNorm's scale and shift C, attention's in_proj 3C x C (Q, K, V rows)
// and out_proj C x C.
void check_sequence_layer(Device& device, const SequenceLayerGeometry& g, std::int64_t batch,
                          std::mt19937& random, int timed_runs, LayerCheck& check) {
  Tensors tensors(device);
  const std::vector<std::int64_t> x_shape{batch, g.channels, g.steps};
  const std::int64_t c = g.channels;
  const float* x = tensors.operand("x", x_shape, random);
  const float* dy = tensors.operand("dy", x_shape, random);
  float* y = tensors.result("y", x_shape);
  float* dx = tensors.result("dx", x_shape);
  std::function<void()> forward, backward;
  std::vector<std::unique_ptr<DeviceMemory>> scratch;
  LayerKernels& layers = device.layers();
  if (g.kind == LayerKind::gelu) {
    const std::int64_t count = batch * c * g.steps;
    forward = [&, count] { layers.gelu_forward(count, g.tanh_approximation, x, y); };
    backward = [&, count] { layers.gelu_backward(count, g.tanh_approximation, x, dy, dx); };
  } else if (g.kind == LayerKind::layer_norm) {
    const float* scale = tensors.operand("scale", {c}, random);
    const float* shift = tensors.operand("shift", {c}, random);
    float* dscale = tensors.result("dscale", {c});
    float* dshift = tensors.result("dshift", {c});
    for (int i = 0; i < 2; ++i) {
      scratch.push_back(device.allocate(static_cast<std::size_t>(batch * g.steps) * sizeof(float)));
    }
    float* mean = scratch[0]->data();
    float* inv_std = scratch[1]->data();
    forward = [=, &layers] {
      layers.layer_norm_forward(batch, c, g.steps, x, scale, shift, y, mean, inv_std);
    };
    backward = [=, &layers] {
      layers.layer_norm_backward(batch, c, g.steps, x, dy, mean, inv_std, scale, dx, dscale, dshift,
                                 0.0f);
    };
  } else {
    SequenceKernels* sequences = device.sequences();
    if (sequences == nullptr) {
      throw std::invalid_argument(check.layer + ": " + device.info().name +
                                  " has no self-attention kernels (the CPU has)");
    }
    const SelfAttentionShape shape{batch, c, g.steps, g.heads, g.causal};
    const SelfAttentionWeights weights{tensors.operand("in_proj_weight", {3 * c, c}, random),
                                       tensors.operand("in_proj_bias", {3 * c}, random),
                                       tensors.operand("out_proj_weight", {c, c}, random),
                                       tensors.operand("out_proj_bias", {c}, random)};
    const SelfAttentionGradients gradients{
        tensors.result("d_in_proj_weight", {3 * c, c}), tensors.result("d_in_proj_bias", {3 * c}),
        tensors.result("d_out_proj_weight", {c, c}), tensors.result("d_out_proj_bias", {c})};
    scratch.push_back(device.allocate(
        static_cast<std::size_t>(sequences->self_attention_workspace_floats(shape)) *
        sizeof(float)));
    float* workspace = scratch[0]->data();
    forward = [=] { sequences->self_attention_forward(shape, x, weights, y, workspace); };
    backward = [=] {
      sequences->self_attention_backward(shape, x, weights, workspace, dy, dx, gradients);
    };
  }
  run_forward_backward(device, tensors, forward, backward, timed_runs, check);
}

SequenceLayerGeometry sequence_geometry(const Layer& layer, const TensorShape& input) {
  SequenceLayerGeometry g{.kind = layer.kind, .channels = input.c, .steps = input.spatial.at(0)};
  if (const auto* gelu = std::get_if<GeluParams>(&layer.params)) {
    g.tanh_approximation = gelu->approximation == GeluApproximation::tanh;
  } else if (const auto* attention = std::get_if<SelfAttentionParams>(&layer.params)) {
    g.heads = attention->heads;
    g.causal = attention->causal;
  }
  return g;
}

}  // namespace

bool checkable_layer(const Layer& layer) {
  switch (layer.kind) {
    case LayerKind::convolution:
    case LayerKind::transposed_convolution:
    case LayerKind::pooling:
      return true;
    case LayerKind::layer_norm:
      return std::get<LayerNormParams>(layer.params).affine;
    case LayerKind::self_attention:
      return std::get<SelfAttentionParams>(layer.params).bias;
    case LayerKind::gelu:
      return true;
    default:
      return false;
  }
}

LayerCheck check_layer(Device& device, const Layer& layer, const TensorShape& input,
                       const TensorShape& output, std::int64_t batch, std::uint32_t seed,
                       int timed_runs) {
  if (!checkable_layer(layer)) {
    throw std::invalid_argument(layer.name +
                                ": only convolution, pooling, GELU, affine layer-norm and "
                                "self-attention layers with biases are checked");
  }
  LayerCheck check;
  check.layer = layer.name;
  check.batch = batch;
  std::mt19937 random(seed);
  if (!is_convolution(layer.kind) && layer.kind != LayerKind::pooling) {
    // GELU and layer norm work on any N x C x spatial tensor: its positions are the steps.
    const TensorShape sequence{input.n, input.c, {input.spatial_elements()}};
    const SequenceLayerGeometry g = sequence_geometry(layer, sequence);
    check.geometry = g;
    check_sequence_layer(device, g, batch, random, timed_runs, check);
  } else if (layer.kind == LayerKind::pooling) {
    const PoolingGeometry pool = pooling_geometry(layer, input, output);
    check.geometry = pool;
    check_pooling(device, pool, batch, random, timed_runs, check);
  } else {
    const ConvolutionGeometry conv = convolution_geometry(layer, input, output);
    check.geometry = conv;
    check_convolution(device, conv, batch, random, timed_runs, check);
  }
  return check;
}

}  // namespace tessera::kernels
