#pragma once
// Checks shared by the in-process and the MPI tests of the spatially partitioned kernels: run a
// convolution or pooling partitioned over a grid and unpartitioned on the same random input, and
// report how far the shards this process holds are from the whole computation.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gradient_check.hpp"
#include "tessera/kernels/convolution_runner.hpp"
#include "tessera/kernels/device.hpp"
#include "tessera/kernels/halo_exchange.hpp"
#include "tessera/kernels/layer_kernels.hpp"
#include "tessera/kernels/partitioned_convolution.hpp"
#include "tessera/kernels/partitioned_pooling.hpp"

namespace tessera::kernels::testing {

inline Device& cpu_device() {
  static std::unique_ptr<Device> device = open_cpu_device();
  return *device;
}

// Host tensor of batch_channels x box (any spatial rank up to 3), row-major.
inline std::vector<float> host_box(const std::vector<float>& whole, const TensorPlacement& from,
                                   const SpatialBox& box) {
  const int rank = box.spatial_rank();
  std::vector<std::int64_t> extent(3, 1), first(3, 0), count(3, 1), at(3, 0);
  for (int axis = 0; axis < rank; ++axis) {
    extent[3 - rank + axis] = from.spatial.count[axis];
    first[3 - rank + axis] = box.first[axis] - from.spatial.first[axis];
    count[3 - rank + axis] = box.count[axis];
  }
  std::vector<float> result;
  result.reserve(static_cast<std::size_t>(from.batch_channels * box.volume()));
  for (std::int64_t outer = 0; outer < from.batch_channels; ++outer) {
    for (std::int64_t d = 0; d < count[0]; ++d) {
      for (std::int64_t h = 0; h < count[1]; ++h) {
        for (std::int64_t w = 0; w < count[2]; ++w) {
          const std::int64_t index =
              ((outer * extent[0] + first[0] + d) * extent[1] + first[1] + h) * extent[2] +
              first[2] + w;
          result.push_back(whole[static_cast<std::size_t>(index)]);
        }
      }
    }
  }
  return result;
}

// Largest absolute difference relative to the largest magnitude of the expected values.
inline double relative_difference(const std::vector<float>& actual,
                                  const std::vector<float>& expected) {
  if (actual.size() != expected.size()) return INFINITY;
  double largest = 0, difference = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    largest = std::max(largest, std::abs(static_cast<double>(expected[i])));
    difference = std::max(difference, std::abs(static_cast<double>(actual[i]) - expected[i]));
  }
  return largest > 0 ? difference / largest : difference;
}

// Device copies of host data, one block per entry.
class DeviceTensors {
 public:
  explicit DeviceTensors(Device& device) : device_(device) {}
  float* add(const std::vector<float>& host) {
    blocks_.push_back(device_.allocate(std::max<std::size_t>(host.size(), 1) * sizeof(float)));
    device_.copy_to_device(host.data(), blocks_.back()->data(), host.size());
    return blocks_.back()->data();
  }
  float* add_zeros(std::int64_t floats) {
    return add(std::vector<float>(static_cast<std::size_t>(floats), 0.0f));
  }
  std::vector<float> read(const float* data, std::int64_t floats) {
    std::vector<float> host(static_cast<std::size_t>(floats));
    device_.copy_to_host(data, host.data(), host.size());
    device_.synchronize();
    return host;
  }

 private:
  Device& device_;
  std::vector<std::unique_ptr<DeviceMemory>> blocks_;
};

// The worst relative difference over this process's shards, per result.
struct PartitionedErrors {
  double output = 0;
  double input_gradient = 0;
  double filter_gradient = 0;
  std::vector<std::string> unplanned_problems;  // of the partitioned runner (convolutions)
};

inline std::vector<std::int64_t> cube(int rank, std::int64_t extent) {
  return std::vector<std::int64_t>(static_cast<std::size_t>(rank), extent);
}

inline ConvolutionGeometry cubic_convolution(int rank, std::int64_t extent,
                                             std::int64_t in_channels, std::int64_t out_channels,
                                             std::int64_t kernel, std::int64_t stride) {
  ConvolutionGeometry geometry;
  geometry.in_channels = in_channels;
  geometry.out_channels = out_channels;
  geometry.input_spatial = cube(rank, extent);
  geometry.kernel = cube(rank, kernel);
  geometry.stride = cube(rank, stride);
  geometry.padding = cube(rank, kernel / 2);
  geometry.dilation = cube(rank, 1);
  return with_output(geometry);
}

inline PartitionedErrors check_partitioned_convolution(
    HaloExchange& exchange, const ConvolutionGeometry& whole, const std::vector<std::int64_t>& grid,
    std::int64_t batch, std::uint32_t seed, HaloOverlap overlap = HaloOverlap::automatic,
    std::unique_ptr<ConvolutionRunner> partitioned_runner = {}) {
  Device& device = exchange.device();
  DeviceTensors memory(device);
  const std::int64_t in_floats = batch * whole.input_floats_per_sample();
  const std::int64_t out_floats = batch * whole.output_floats_per_sample();
  const auto x = random_values(static_cast<std::size_t>(in_floats), seed);
  const auto w = random_values(static_cast<std::size_t>(whole.filter_floats()), seed + 1);
  const auto dy = random_values(static_cast<std::size_t>(out_floats), seed + 2);

  ConvolutionRunner runner(device);
  float* w_device = memory.add(w);
  float* y_whole = memory.add_zeros(out_floats);
  float* dx_whole = memory.add_zeros(in_floats);
  float* dw_whole = memory.add_zeros(whole.filter_floats());
  const float* x_whole = memory.add(x);
  const float* dy_whole = memory.add(dy);
  runner.forward(whole, batch, x_whole, w_device, y_whole, 0.0f);
  runner.backward_data(whole, batch, dy_whole, w_device, dx_whole, 0.0f);
  runner.backward_filter(whole, batch, x_whole, dy_whole, dw_whole, 0.0f);
  const auto y_expected = memory.read(y_whole, out_floats);
  const auto dx_expected = memory.read(dx_whole, in_floats);
  const auto dw_expected = memory.read(dw_whole, whole.filter_floats());

  PartitionedConvolution partitioned(exchange, whole, grid, batch, overlap,
                                     FilterGradients::summed_over_shards,
                                     std::move(partitioned_runner));
  const WindowPlan& plan = partitioned.plan();
  const TensorPlacement x_all{batch * whole.in_channels, plan.input().whole()};
  const TensorPlacement y_all{batch * whole.out_channels, plan.output().whole()};
  std::vector<const float*> x_shards, dy_shards;
  std::vector<float*> y_shards, dx_shards, dw_shards;
  for (const std::int64_t shard : exchange.local_shards()) {
    const ShardWindow& window = plan.shard(shard);
    x_shards.push_back(memory.add(host_box(x, x_all, window.owned)));
    dy_shards.push_back(memory.add(host_box(dy, y_all, window.outputs)));
    y_shards.push_back(memory.add_zeros(y_all.batch_channels * window.outputs.volume()));
    dx_shards.push_back(memory.add_zeros(x_all.batch_channels * window.owned.volume()));
    dw_shards.push_back(memory.add_zeros(whole.filter_floats()));
  }
  partitioned.forward(x_shards, w_device, y_shards);
  partitioned.backward(dy_shards, w_device, dx_shards, dw_shards);

  PartitionedErrors errors;
  for (std::size_t local = 0; local < y_shards.size(); ++local) {
    const ShardWindow& window = plan.shard(exchange.local_shards()[local]);
    const auto y = memory.read(y_shards[local], y_all.batch_channels * window.outputs.volume());
    const auto dx = memory.read(dx_shards[local], x_all.batch_channels * window.owned.volume());
    const auto dw = memory.read(dw_shards[local], whole.filter_floats());
    errors.output = std::max(errors.output,
                             relative_difference(y, host_box(y_expected, y_all, window.outputs)));
    errors.input_gradient = std::max(
        errors.input_gradient, relative_difference(dx, host_box(dx_expected, x_all, window.owned)));
    errors.filter_gradient = std::max(errors.filter_gradient, relative_difference(dw, dw_expected));
  }
  errors.unplanned_problems = partitioned.runner().unplanned_problems();
  return errors;
}

inline PoolingGeometry cubic_pooling(int rank, std::int64_t extent, std::int64_t channels, bool max,
                                     std::int64_t kernel, std::int64_t stride,
                                     std::int64_t padding) {
  PoolingGeometry geometry;
  geometry.max = max;
  geometry.channels = channels;
  geometry.input_spatial = cube(rank, extent);
  geometry.kernel = cube(rank, kernel);
  geometry.stride = cube(rank, stride);
  geometry.padding = cube(rank, padding);
  geometry.output_spatial = cube(rank, (extent + 2 * padding - kernel) / stride + 1);
  return geometry;
}

inline PartitionedErrors check_partitioned_pooling(HaloExchange& exchange,
                                                   const PoolingGeometry& whole,
                                                   const std::vector<std::int64_t>& grid,
                                                   std::int64_t batch, std::uint32_t seed) {
  Device& device = exchange.device();
  DeviceTensors memory(device);
  std::int64_t in_floats = batch * whole.channels, out_floats = batch * whole.channels;
  for (std::size_t axis = 0; axis < whole.input_spatial.size(); ++axis) {
    in_floats *= whole.input_spatial[axis];
    out_floats *= whole.output_spatial[axis];
  }
  const auto x = random_values(static_cast<std::size_t>(in_floats), seed);
  const auto dy = random_values(static_cast<std::size_t>(out_floats), seed + 2);
  const float* x_whole = memory.add(x);
  const float* dy_whole = memory.add(dy);
  float* y_whole = memory.add_zeros(out_floats);
  float* dx_whole = memory.add_zeros(in_floats);
  device.layers().pooling_forward(whole, batch, x_whole, y_whole);
  device.layers().pooling_backward(whole, batch, x_whole, y_whole, dy_whole, dx_whole);
  const auto y_expected = memory.read(y_whole, out_floats);
  const auto dx_expected = memory.read(dx_whole, in_floats);

  PartitionedPooling partitioned(exchange, whole, grid, batch);
  const WindowPlan& plan = partitioned.plan();
  const TensorPlacement x_all{batch * whole.channels, plan.input().whole()};
  const TensorPlacement y_all{batch * whole.channels, plan.output().whole()};
  std::vector<const float*> x_shards, dy_shards;
  std::vector<float*> y_shards, dx_shards;
  for (const std::int64_t shard : exchange.local_shards()) {
    const ShardWindow& window = plan.shard(shard);
    x_shards.push_back(memory.add(host_box(x, x_all, window.owned)));
    dy_shards.push_back(memory.add(host_box(dy, y_all, window.outputs)));
    y_shards.push_back(memory.add_zeros(y_all.batch_channels * window.outputs.volume()));
    dx_shards.push_back(memory.add_zeros(x_all.batch_channels * window.owned.volume()));
  }
  partitioned.forward(x_shards, y_shards);
  partitioned.backward(dy_shards, dx_shards);

  PartitionedErrors errors;
  for (std::size_t local = 0; local < y_shards.size(); ++local) {
    const ShardWindow& window = plan.shard(exchange.local_shards()[local]);
    const auto y = memory.read(y_shards[local], y_all.batch_channels * window.outputs.volume());
    const auto dx = memory.read(dx_shards[local], x_all.batch_channels * window.owned.volume());
    errors.output = std::max(errors.output,
                             relative_difference(y, host_box(y_expected, y_all, window.outputs)));
    errors.input_gradient = std::max(
        errors.input_gradient, relative_difference(dx, host_box(dx_expected, x_all, window.owned)));
  }
  return errors;
}

// Sanitized builds sweep fewer shards per axis (their grid cases cost minutes of CI).
#ifndef TESSERA_TEST_MOST_PARTS
#define TESSERA_TEST_MOST_PARTS 8
#endif

// Every grid of 2..TESSERA_TEST_MOST_PARTS shards along D, H or W alone, and a few mixed ones.
inline std::vector<std::vector<std::int64_t>> partition_grids() {
  std::vector<std::vector<std::int64_t>> grids;
  for (std::size_t axis = 0; axis < 3; ++axis) {
    for (std::int64_t parts = 2; parts <= TESSERA_TEST_MOST_PARTS; ++parts) {
      std::vector<std::int64_t> grid(3, 1);
      grid[axis] = parts;
      grids.push_back(grid);
    }
  }
  for (auto grid : {std::vector<std::int64_t>{2, 2, 1}, {2, 2, 2}, {1, 3, 2}, {3, 1, 2}}) {
    grids.push_back(grid);
  }
  return grids;
}

inline std::string grid_name(const std::vector<std::int64_t>& grid) {
  std::string name;
  for (std::int64_t parts : grid) name += (name.empty() ? "" : "x") + std::to_string(parts);
  return name;
}

}  // namespace tessera::kernels::testing
