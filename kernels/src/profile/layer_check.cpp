#include "tessera/kernels/profile/layer_check.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <stdexcept>

#include "tessera/kernels/convolution_runner.hpp"
#include "tessera/kernels/device.hpp"
#include "tessera/kernels/layer_geometry.hpp"

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
  std::sort(seconds.begin(), seconds.end());
  return {direction, algorithm, seconds[seconds.size() / 2], static_cast<int>(seconds.size())};
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
  forward();
  backward();
  tensors.read_results();
  check.times.push_back(timed(device, "forward", "default", forward, timed_runs));
  check.times.push_back(timed(device, "backward", "default", backward, timed_runs));
  check.operands = tensors.operands();
  check.results = tensors.results();
}

}  // namespace

bool checkable_layer(const Layer& layer) {
  return layer.kind == LayerKind::convolution || layer.kind == LayerKind::transposed_convolution ||
         layer.kind == LayerKind::pooling;
}

LayerCheck check_layer(Device& device, const Layer& layer, const TensorShape& input,
                       const TensorShape& output, std::int64_t batch, std::uint32_t seed,
                       int timed_runs) {
  if (!checkable_layer(layer)) {
    throw std::invalid_argument(layer.name + ": only convolution and pooling layers are checked");
  }
  LayerCheck check;
  check.layer = layer.name;
  check.batch = batch;
  std::mt19937 random(seed);
  if (layer.kind == LayerKind::pooling) {
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
