// The CUDA layer kernels against the CPU ones (open_cpu_device(), tested against references of
// their own): the same inputs on both devices give the same outputs within float32 rounding.
// Skips without a CUDA device.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <vector>

#include "cuda_test_support.hpp"
#include "tessera/kernels/convolution_kernels.hpp"  // output_extent
#include "tessera/kernels/layer_kernels.hpp"

namespace tessera::kernels {
namespace {

using Buffers = std::vector<std::vector<float>>;
using Kernel = std::function<void(LayerKernels&, const std::vector<float*>&)>;

std::vector<float> uniform_floats(std::size_t count, unsigned seed, float low = -1.0f,
                                  float high = 1.0f) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> uniform(low, high);
  std::vector<float> values(count);
  for (float& value : values) value = uniform(generator);
  return values;
}

// Every buffer goes to the device, the kernel reads and writes them, all come back.
Buffers run_on(Device& device, const Buffers& buffers, const Kernel& kernel) {
  std::vector<std::unique_ptr<DeviceMemory>> memories;
  std::vector<float*> pointers;
  for (const auto& buffer : buffers) {
    memories.push_back(device.allocate(std::max<std::size_t>(buffer.size(), 1) * sizeof(float)));
    device.copy_to_device(buffer.data(), memories.back()->data(), buffer.size());
    pointers.push_back(memories.back()->data());
  }
  kernel(device.layers(), pointers);
  device.synchronize();
  Buffers result;
  for (std::size_t index = 0; index < buffers.size(); ++index) {
    result.emplace_back(buffers[index].size());
    device.copy_to_host(pointers[index], result.back().data(), buffers[index].size());
  }
  return result;
}

// |gpu - cpu| <= relative * (1 + |cpu|): float32 results of different summation orders.
void expect_close(const std::vector<double>& gpu, const std::vector<double>& cpu, double relative) {
  ASSERT_EQ(gpu.size(), cpu.size());
  for (std::size_t i = 0; i < gpu.size(); ++i) {
    ASSERT_LE(std::fabs(gpu[i] - cpu[i]), relative * (1.0 + std::fabs(cpu[i])))
        << "element " << i << ": gpu " << gpu[i] << ", cpu " << cpu[i];
  }
}

void expect_close(const Buffers& gpu, const Buffers& cpu, double relative = 1e-5) {
  ASSERT_EQ(gpu.size(), cpu.size());
  for (std::size_t buffer = 0; buffer < gpu.size(); ++buffer) {
    SCOPED_TRACE("buffer " + std::to_string(buffer));
    expect_close(std::vector<double>(gpu[buffer].begin(), gpu[buffer].end()),
                 std::vector<double>(cpu[buffer].begin(), cpu[buffer].end()), relative);
  }
}

class CudaLayerKernels : public testing::WithCudaDevice<> {
 protected:
  // Runs the kernel on both devices and expects the same buffers.
  void expect_same(const Buffers& buffers, const Kernel& kernel, double relative = 1e-5) {
    const Buffers on_cpu = run_on(*cpu_, buffers, kernel);
    const Buffers on_gpu = run_on(gpu(), buffers, kernel);
    expect_close(on_gpu, on_cpu, relative);
  }
  std::unique_ptr<Device> cpu_ = open_cpu_device();
};

PoolingGeometry pooling(bool max, std::vector<std::int64_t> input, std::int64_t kernel,
                        std::int64_t stride, std::int64_t padding) {
  PoolingGeometry geometry;
  geometry.max = max;
  geometry.channels = 3;
  geometry.input_spatial = input;
  const std::size_t rank = input.size();
  geometry.kernel.assign(rank, kernel);
  geometry.stride.assign(rank, stride);
  geometry.padding.assign(rank, padding);
  for (std::int64_t extent : input) {
    geometry.output_spatial.push_back(output_extent(extent, kernel, stride, padding, 1));
  }
  return geometry;
}

std::size_t elements_in(const std::vector<std::int64_t>& values) {
  std::size_t result = 1;
  for (std::int64_t value : values) result *= static_cast<std::size_t>(value);
  return result;
}

// Max pooling in ceil mode (GoogLeNet's): one output more than cuDNN's floor on the rounding axes.
PoolingGeometry ceil_mode_max_pooling(std::vector<std::int64_t> input, std::int64_t kernel,
                                      std::int64_t stride) {
  PoolingGeometry geometry = pooling(true, input, kernel, stride, 0);
  for (std::size_t axis = 0; axis < input.size(); ++axis) {
    const std::int64_t span = input[axis] - kernel;
    geometry.output_spatial[axis] = (span + stride - 1) / stride + 1;
  }
  return geometry;
}

TEST_F(CudaLayerKernels, PoolingForwardAndBackward) {
  for (bool max : {true, false}) {
    std::vector<PoolingGeometry> geometries = {pooling(max, {9, 8}, 3, 2, 1),
                                               pooling(max, {6, 6, 6}, 2, 2, 0),
                                               pooling(max, {7, 5, 6}, 3, 2, 1)};
    if (max) {
      geometries.push_back(ceil_mode_max_pooling({12, 12}, 3, 2));    // 6x6, floor 5x5
      geometries.push_back(ceil_mode_max_pooling({8, 7, 10}, 3, 2));  // 4x3x5: two axes round up
    }
    for (const PoolingGeometry& geometry : geometries) {
      SCOPED_TRACE(std::string(max ? "max " : "average ") + std::to_string(geometry.kernel[0]));
      constexpr std::int64_t batch = 2;
      const std::size_t in = batch * 3 * elements_in(geometry.input_spatial);
      const std::size_t out = batch * 3 * elements_in(geometry.output_spatial);
      const Buffers forward = {uniform_floats(in, 1), std::vector<float>(out)};
      expect_same(forward, [&](LayerKernels& layers, const std::vector<float*>& p) {
        layers.pooling_forward(geometry, batch, p[0], p[1]);
      });
      // Backward needs the forward's y: computed on the CPU, the same input for both.
      const Buffers y = run_on(*cpu_, forward, [&](LayerKernels& layers, const auto& p) {
        layers.pooling_forward(geometry, batch, p[0], p[1]);
      });
      expect_same({forward[0], y[1], uniform_floats(out, 2), std::vector<float>(in)},
                  [&](LayerKernels& layers, const std::vector<float*>& p) {
                    layers.pooling_backward(geometry, batch, p[0], p[1], p[2], p[3]);
                  });
    }
  }
}

TEST_F(CudaLayerKernels, SplitBatchNorm) {
  constexpr std::int64_t batch = 3, channels = 4, spatial = 50;
  const std::size_t count = batch * channels * spatial;
  const std::vector<float> x = uniform_floats(count, 3, -2.0f, 3.0f);
  const std::vector<float> dy = uniform_floats(count, 4);
  std::vector<ChannelSums> sums;
  std::vector<ChannelSums> backward_sums;
  const std::vector<double> mean = {0.1, -0.2, 0.3, 0.5};
  const std::vector<double> inv_std = {1.5, 0.7, 2.0, 1.1};
  const ChannelSums group = {{1.0, -2.0, 0.5, 3.0}, {0.25, 1.5, -0.75, 2.0}};
  const Buffers buffers = {x,
                           dy,
                           uniform_floats(channels, 5),  // scale
                           uniform_floats(channels, 6),  // shift
                           std::vector<float>(count),    // y
                           std::vector<float>(count),    // dx
                           std::vector<float>(channels),
                           std::vector<float>(channels)};
  expect_same(buffers, [&](LayerKernels& layers, const std::vector<float*>& p) {
    sums.push_back(layers.batch_norm_sums(batch, channels, spatial, p[0]));
    layers.batch_norm_apply(batch, channels, spatial, p[0], mean, inv_std, p[2], p[3], p[4]);
    backward_sums.push_back(
        layers.batch_norm_backward_sums(batch, channels, spatial, p[0], p[1], mean, inv_std));
    layers.batch_norm_backward_apply(batch, channels, spatial, p[0], p[1], mean, inv_std, p[2],
                                     group, 600.0, p[5], p[6], p[7]);
  });
  ASSERT_EQ(sums.size(), 2u);
  // Double sums of float inputs: only the summation order differs.
  expect_close(sums[1].first, sums[0].first, 1e-12);
  expect_close(sums[1].second, sums[0].second, 1e-12);
  expect_close(backward_sums[1].first, backward_sums[0].first, 1e-12);
  expect_close(backward_sums[1].second, backward_sums[0].second, 1e-12);
}

TEST_F(CudaLayerKernels, ElementWiseKernels) {
  constexpr std::int64_t count = 1003;
  const Buffers buffers = {uniform_floats(count, 7),  uniform_floats(count, 8),
                           std::vector<float>(count), std::vector<float>(count),
                           std::vector<float>(count), uniform_floats(count, 9)};
  expect_same(buffers, [&](LayerKernels& layers, const std::vector<float*>& p) {
    layers.leaky_relu_forward(count, 0.1f, p[0], p[2]);
    layers.leaky_relu_backward(count, 0.1f, p[0], p[1], p[3]);
    layers.add(count, p[0], p[1], p[4]);
    layers.axpy(count, -0.5f, p[0], p[5]);
  });
}

TEST_F(CudaLayerKernels, LayerNorm) {
  constexpr std::int64_t batch = 3, channels = 6, positions = 41;
  constexpr std::int64_t count = batch * channels * positions, vectors = batch * positions;
  const Buffers buffers = {uniform_floats(count, 23, -2.0f, 3.0f),
                           uniform_floats(count, 24),
                           uniform_floats(channels, 25),  // scale
                           uniform_floats(channels, 26),  // shift
                           std::vector<float>(count),     // y
                           std::vector<float>(vectors),   // mean
                           std::vector<float>(vectors),   // inv_std
                           std::vector<float>(count),     // dx
                           std::vector<float>(channels),
                           std::vector<float>(channels)};
  expect_same(buffers, [&](LayerKernels& layers, const std::vector<float*>& p) {
    layers.layer_norm_forward(batch, channels, positions, p[0], p[2], p[3], p[4], p[5], p[6]);
    layers.layer_norm_backward(batch, channels, positions, p[0], p[1], p[5], p[6], p[2], p[7], p[8],
                               p[9], 0.0f);
  });
}

TEST_F(CudaLayerKernels, GeluBothForms) {
  constexpr std::int64_t count = 1003;
  for (const bool tanh_approximation : {false, true}) {
    SCOPED_TRACE(tanh_approximation ? "tanh" : "erf");
    const Buffers buffers = {uniform_floats(count, 21), uniform_floats(count, 22),
                             std::vector<float>(count), std::vector<float>(count)};
    expect_same(buffers, [&](LayerKernels& layers, const std::vector<float*>& p) {
      layers.gelu_forward(count, tanh_approximation, p[0], p[2]);
      layers.gelu_backward(count, tanh_approximation, p[0], p[1], p[3]);
    });
  }
}

TEST_F(CudaLayerKernels, DropoutDrawsTheCpuMaskFromTheSameSeed) {
  // One sample, then a batch of 7 samples of 4099 in one launch, each from its own stream.
  for (const std::int64_t samples : {1, 7}) {
    SCOPED_TRACE(samples);
    constexpr std::int64_t per_sample = 4099;
    const std::int64_t count = samples * per_sample;
    const Buffers buffers = {uniform_floats(count, 10), std::vector<float>(count),
                             std::vector<float>(count), uniform_floats(count, 11),
                             std::vector<float>(count)};
    expect_same(
        buffers,
        [&](LayerKernels& layers, const std::vector<float*>& p) {
          layers.dropout_forward(count, 0.3f,
                                 {.seed = 1234, .first_sample = 5, .per_sample = per_sample}, p[0],
                                 p[1], p[2]);
          layers.dropout_backward(count, p[1], p[3], p[4]);
        },
        0.0);
  }
}

TEST_F(CudaLayerKernels, FullyConnected) {
  constexpr std::int64_t batch = 5, in = 37, out = 11;
  for (float beta : {0.0f, 1.0f}) {
    SCOPED_TRACE(beta);
    const Buffers buffers = {uniform_floats(batch * in, 12),  uniform_floats(out * in, 13),
                             uniform_floats(out, 14),         std::vector<float>(batch * out),
                             uniform_floats(batch * out, 15), std::vector<float>(batch * in),
                             uniform_floats(out * in, 16),    uniform_floats(out, 17)};
    expect_same(buffers, [&](LayerKernels& layers, const std::vector<float*>& p) {
      layers.fully_connected_forward(batch, in, out, p[0], p[1], p[2], p[3]);
      layers.fully_connected_backward_data(batch, in, out, p[4], p[1], p[5]);
      layers.fully_connected_backward_weights(batch, in, out, p[0], p[4], p[6], p[7], beta);
    });
  }
}

TEST_F(CudaLayerKernels, BiasAndConcat) {
  constexpr std::int64_t batch = 2, spatial = 30;
  const std::vector<std::int64_t> channels = {3, 1, 4};
  const Buffers buffers = {
      uniform_floats(batch * 8 * spatial, 18), uniform_floats(8, 19),
      uniform_floats(batch * 8 * spatial, 20), uniform_floats(8, 21),
      uniform_floats(batch * 3 * spatial, 22), uniform_floats(batch * spatial, 23),
      uniform_floats(batch * 4 * spatial, 24), std::vector<float>(batch * 8 * spatial),
      std::vector<float>(batch * 3 * spatial), std::vector<float>(batch * spatial),
      std::vector<float>(batch * 4 * spatial)};
  expect_same(buffers, [&](LayerKernels& layers, const std::vector<float*>& p) {
    layers.bias_forward(batch, 8, spatial, p[1], p[0]);
    layers.bias_backward(batch, 8, spatial, p[2], p[3], 1.0f);
    layers.concat_forward(batch, spatial, {p[4], p[5], p[6]}, channels, p[7]);
    layers.concat_backward(batch, spatial, p[2], channels, {p[8], p[9], p[10]});
  });
}

TEST_F(CudaLayerKernels, Losses) {
  constexpr std::int64_t batch = 4, classes = 300;  // more classes than threads in a block
  const std::vector<std::int32_t> labels = {0, 299, 17, 150};
  std::vector<double> losses;
  const Buffers buffers = {uniform_floats(batch * classes, 25, -5.0f, 5.0f),
                           std::vector<float>(batch * classes), uniform_floats(777, 26),
                           uniform_floats(777, 27), std::vector<float>(777)};
  expect_same(buffers, [&](LayerKernels& layers, const std::vector<float*>& p) {
    losses.push_back(layers.softmax_cross_entropy(batch, classes, 1, p[0], labels, p[1], 0.25f));
    losses.push_back(layers.mse_loss(777, p[2], p[3], p[4]));
  });
  ASSERT_EQ(losses.size(), 4u);
  expect_close({losses[2], losses[3]}, {losses[0], losses[1]}, 1e-6);
}

// A label per voxel (segmentation), the per-position kernel: the same on both devices.
TEST_F(CudaLayerKernels, PerVoxelCrossEntropy) {
  constexpr std::int64_t batch = 2, classes = 3, positions = 1000;
  std::vector<std::int32_t> labels(batch * positions);
  for (std::size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<std::int32_t>(i * 7 % 3);
  std::vector<double> losses;
  const Buffers buffers = {uniform_floats(batch * classes * positions, 41, -4.0f, 4.0f),
                           std::vector<float>(batch * classes * positions)};
  expect_same(buffers, [&](LayerKernels& layers, const std::vector<float*>& p) {
    losses.push_back(
        layers.softmax_cross_entropy(batch, classes, positions, p[0], labels, p[1], 1.0f / 2000));
  });
  ASSERT_EQ(losses.size(), 2u);
  expect_close(std::vector<double>{losses[1]}, std::vector<double>{losses[0]}, 1e-6);
}

// Losses and batch-norm statistics sum over many blocks; run five times on the same inputs they
// give the same bits (on an H100, 2026-11-26, the loss's atomic adds did not: training with and
// without offloading reached the same weights but reported losses differing in the last bits).
TEST_F(CudaLayerKernels, ReductionsGiveTheSameBitsEveryRun) {
  constexpr std::int64_t batch = 256, classes = 10, positions = 100000, channels = 3;
  constexpr std::int64_t voxels = 2 * 3 * positions;
  std::vector<std::int32_t> sample_labels(batch), voxel_labels(2 * positions);
  for (std::size_t i = 0; i < sample_labels.size(); ++i) {
    sample_labels[i] = static_cast<std::int32_t>(i % classes);
  }
  for (std::size_t i = 0; i < voxel_labels.size(); ++i) {
    voxel_labels[i] = static_cast<std::int32_t>(i * 7 % 3);
  }
  std::vector<std::vector<double>> runs;
  const Buffers buffers = {uniform_floats(batch * classes, 51, -5.0f, 5.0f),
                           std::vector<float>(batch * classes),
                           uniform_floats(voxels, 52, -4.0f, 4.0f), std::vector<float>(voxels),
                           uniform_floats(voxels, 53)};
  run_on(gpu(), buffers, [&](LayerKernels& layers, const std::vector<float*>& p) {
    for (int run = 0; run < 5; ++run) {
      std::vector<double> values{
          layers.softmax_cross_entropy(batch, classes, 1, p[0], sample_labels, p[1], 1.0f),
          layers.softmax_cross_entropy(2, 3, positions, p[2], voxel_labels, p[3], 1.0f),
          layers.mse_loss(voxels, p[2], p[4], p[3])};
      const auto sums = layers.batch_norm_sums(2, channels, positions, p[2]);
      const auto backward = layers.batch_norm_backward_sums(2, channels, positions, p[2], p[4],
                                                            {0.1, 0.2, 0.3}, {1.0, 2.0, 3.0});
      for (const auto* part : {&sums.first, &sums.second, &backward.first, &backward.second}) {
        values.insert(values.end(), part->begin(), part->end());
      }
      runs.push_back(values);
    }
  });
  ASSERT_EQ(runs.size(), 5u);
  for (std::size_t run = 1; run < runs.size(); ++run) EXPECT_EQ(runs[run], runs[0]) << run;
}

TEST_F(CudaLayerKernels, Optimizers) {
  constexpr std::int64_t count = 513;
  // gradient; SGD weights and velocity; Adam weights, first and second moments
  const Buffers buffers = {uniform_floats(count, 28), uniform_floats(count, 29),
                           uniform_floats(count, 30), uniform_floats(count, 31),
                           uniform_floats(count, 32), uniform_floats(count, 33, 0.0f, 1.0f)};
  expect_same(buffers, [&](LayerKernels& layers, const std::vector<float*>& p) {
    for (std::int64_t step = 1; step <= 3; ++step) {
      layers.sgd_update(count, 0.1f, 0.9f, 1e-4f, p[0], p[1], p[2]);
      layers.adam_update(count, 1e-3f, 0.9f, 0.999f, 1e-8f, step, p[0], p[3], p[4], p[5]);
    }
  });
}

TEST_F(CudaLayerKernels, BadArgumentsAreRejectedBeforeTheGpuSeesThem) {
  auto logits = gpu().allocate(8 * sizeof(float));
  EXPECT_THROW(
      gpu().layers().softmax_cross_entropy(2, 4, 1, logits->data(), {0, 4}, logits->data(), 1),
      std::invalid_argument);
  EXPECT_THROW(gpu().layers().dropout_forward(8, 1.0f, {.seed = 1, .per_sample = 8}, logits->data(),
                                              logits->data(), logits->data()),
               std::invalid_argument);
  EXPECT_THROW(gpu().layers().batch_norm_apply(1, 2, 4, logits->data(), {0.0}, {1.0, 1.0}, nullptr,
                                               nullptr, logits->data()),
               std::invalid_argument);
}

}  // namespace
}  // namespace tessera::kernels
