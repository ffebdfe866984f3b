// Per-voxel throughput of CosmoFlow's conv1..conv3 (3^3, pad 1; 4->16, 16->32, 32->64 channels on
// W^3, (W/2)^3, (W/4)^3 voxels) split along depth into 2..8 shards, all run in this process on the
// CPU, against the same convolution unpartitioned (parts = 1). The ratio is the cost of
// partitioning on one device: halo copies, staging of the interior and boundary boxes, and smaller
// kernels. Arguments: layer (1..3), width W, parts.
//
//   build-*/tests/tessera_partitioned_convolution_bench --benchmark_min_time=0.3
#include <benchmark/benchmark.h>

#include <memory>
#include <random>
#include <vector>

#include "tessera/kernels/convolution_runner.hpp"
#include "tessera/kernels/device.hpp"
#include "tessera/kernels/halo_exchange.hpp"
#include "tessera/kernels/partitioned_convolution.hpp"

namespace tessera::kernels {
namespace {

Device& cpu() {
  static std::unique_ptr<Device> device = open_cpu_device();
  return *device;
}

ConvolutionGeometry cosmoflow_convolution(std::int64_t layer, std::int64_t width) {
  const std::int64_t in_channels[] = {4, 16, 32}, out_channels[] = {16, 32, 64};
  const std::int64_t extent = width >> (layer - 1);
  ConvolutionGeometry geometry;
  geometry.in_channels = in_channels[layer - 1];
  geometry.out_channels = out_channels[layer - 1];
  geometry.input_spatial = {extent, extent, extent};
  geometry.kernel = {3, 3, 3};
  geometry.stride = {1, 1, 1};
  geometry.padding = {1, 1, 1};
  geometry.dilation = {1, 1, 1};
  return with_output(geometry);
}

struct Buffers {
  std::vector<std::unique_ptr<DeviceMemory>> blocks;
  float* add(std::int64_t floats, float value) {
    blocks.push_back(cpu().allocate(static_cast<std::size_t>(floats) * sizeof(float)));
    cpu().fill(blocks.back()->data(), static_cast<std::size_t>(floats), value);
    return blocks.back()->data();
  }
};

enum class Pass { forward, backward };

void run(benchmark::State& state, Pass pass) {
  const auto whole = cosmoflow_convolution(state.range(0), state.range(1));
  const std::int64_t parts = state.range(2);
  Buffers memory;
  const float* w = memory.add(whole.filter_floats(), 0.01f);
  const std::int64_t voxels = whole.output_floats_per_sample() / whole.out_channels;
  if (parts == 1) {
    ConvolutionRunner runner(cpu());
    const float* x = memory.add(whole.input_floats_per_sample(), 0.5f);
    float* y = memory.add(whole.output_floats_per_sample(), 0.0f);
    float* dx = memory.add(whole.input_floats_per_sample(), 0.0f);
    float* dw = memory.add(whole.filter_floats(), 0.0f);
    for (auto _ : state) {
      if (pass == Pass::forward) {
        runner.forward(whole, 1, x, w, y, 0.0f);
      } else {
        runner.backward_data(whole, 1, y, w, dx, 0.0f);
        runner.backward_filter(whole, 1, x, y, dw, 0.0f);
      }
      cpu().synchronize();
    }
  } else {
    auto exchange = in_process_halo_exchange(cpu(), parts);
    PartitionedConvolution partitioned(*exchange, whole, {parts, 1, 1}, 1);
    std::vector<const float*> x, dy;
    std::vector<float*> y, dx, dw;
    for (std::int64_t shard = 0; shard < parts; ++shard) {
      const ShardWindow& window = partitioned.plan().shard(shard);
      x.push_back(memory.add(whole.in_channels * window.owned.volume(), 0.5f));
      y.push_back(memory.add(whole.out_channels * window.outputs.volume(), 0.0f));
      dy.push_back(y.back());
      dx.push_back(memory.add(whole.in_channels * window.owned.volume(), 0.0f));
      dw.push_back(memory.add(whole.filter_floats(), 0.0f));
    }
    partitioned.forward(x, w, y);  // backward needs a forward's haloed input
    for (auto _ : state) {
      if (pass == Pass::forward) {
        partitioned.forward(x, w, y);
      } else {
        partitioned.backward(dy, w, dx, dw);
      }
      cpu().synchronize();
    }
  }
  state.counters["voxels_per_second"] = benchmark::Counter(
      static_cast<double>(voxels), benchmark::Counter::kIsIterationInvariantRate);
}

void arguments(benchmark::internal::Benchmark* benchmark) {
  benchmark->ArgNames({"layer", "width", "parts"});
  for (std::int64_t layer : {1, 2, 3}) {
    for (std::int64_t parts : {1, 2, 4, 8}) benchmark->Args({layer, 64, parts});
  }
  benchmark->Unit(benchmark::kMillisecond)->UseRealTime();
}

void BM_PartitionedConvolutionForward(benchmark::State& state) {
  run(state, Pass::forward);
}
void BM_PartitionedConvolutionBackward(benchmark::State& state) {
  run(state, Pass::backward);
}
BENCHMARK(BM_PartitionedConvolutionForward)->Apply(arguments);
BENCHMARK(BM_PartitionedConvolutionBackward)->Apply(arguments);

}  // namespace
}  // namespace tessera::kernels

BENCHMARK_MAIN();
