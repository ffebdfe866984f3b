// Throughput of the CPU layer kernels on a CosmoFlow-like activation (2 x 16 x 32^3 floats,
// 4 MiB) and a 1M-parameter update: bytes moved per second tell whether a loop runs near memory
// bandwidth. Run: build/tests/tessera_cpu_layer_kernels_bench [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "tessera/kernels/device.hpp"
#include "tessera/kernels/layer_kernels.hpp"

namespace {

using tessera::kernels::ChannelSums;
using tessera::kernels::LayerKernels;
using tessera::kernels::PoolingGeometry;

constexpr std::int64_t kBatch = 2, kChannels = 16, kSpatial = 32 * 32 * 32;
constexpr std::int64_t kActivation = kBatch * kChannels * kSpatial;
constexpr std::int64_t kParameters = 1 << 20;

LayerKernels& layers() {
  static const std::unique_ptr<tessera::kernels::Device> device =
      tessera::kernels::open_cpu_device();
  return device->layers();
}

std::vector<float> ramp(std::int64_t count) {
  std::vector<float> values(static_cast<std::size_t>(count));
  for (std::size_t index = 0; index < values.size(); ++index) {
    values[index] = static_cast<float>(index % 1013) * 1e-3f - 0.5f;
  }
  return values;
}

// bytes_per_iteration: every float each call reads or writes once.
void set_bytes(benchmark::State& state, std::int64_t floats_moved) {
  state.SetBytesProcessed(state.iterations() * floats_moved *
                          static_cast<std::int64_t>(sizeof(float)));
}

const std::vector<double> kMean(kChannels, 0.01), kInvStd(kChannels, 3.0);

void BM_BatchNormSums(benchmark::State& state) {
  const auto x = ramp(kActivation);
  for (auto _ : state) {
    benchmark::DoNotOptimize(layers().batch_norm_sums(kBatch, kChannels, kSpatial, x.data()));
  }
  set_bytes(state, kActivation);
}
BENCHMARK(BM_BatchNormSums)->Unit(benchmark::kMillisecond);

void BM_BatchNormApply(benchmark::State& state) {
  const auto x = ramp(kActivation);
  const std::vector<float> scale(kChannels, 1.5f), shift(kChannels, 0.1f);
  std::vector<float> y(x.size());
  for (auto _ : state) {
    layers().batch_norm_apply(kBatch, kChannels, kSpatial, x.data(), kMean, kInvStd, scale.data(),
                              shift.data(), y.data());
  }
  set_bytes(state, 2 * kActivation);
}
BENCHMARK(BM_BatchNormApply)->Unit(benchmark::kMillisecond);

void BM_BatchNormBackward(benchmark::State& state) {
  const auto x = ramp(kActivation);
  const auto dy = ramp(kActivation);
  const std::vector<float> scale(kChannels, 1.5f);
  std::vector<float> dx(x.size()), dscale(kChannels), dshift(kChannels);
  for (auto _ : state) {
    const ChannelSums sums = layers().batch_norm_backward_sums(kBatch, kChannels, kSpatial,
                                                               x.data(), dy.data(), kMean, kInvStd);
    layers().batch_norm_backward_apply(
        kBatch, kChannels, kSpatial, x.data(), dy.data(), kMean, kInvStd, scale.data(), sums,
        static_cast<double>(kBatch * kSpatial), dx.data(), dscale.data(), dshift.data());
  }
  set_bytes(state, 5 * kActivation);  // sums read x, dy; apply reads x, dy, writes dx
}
BENCHMARK(BM_BatchNormBackward)->Unit(benchmark::kMillisecond);

void BM_LeakyReluForward(benchmark::State& state) {
  const auto x = ramp(kActivation);
  std::vector<float> y(x.size());
  for (auto _ : state) layers().leaky_relu_forward(kActivation, 0.01f, x.data(), y.data());
  set_bytes(state, 2 * kActivation);
}
BENCHMARK(BM_LeakyReluForward)->Unit(benchmark::kMillisecond);

void BM_DropoutForward(benchmark::State& state) {
  const auto x = ramp(kActivation);
  std::vector<float> mask(x.size()), y(x.size());
  for (auto _ : state) {
    layers().dropout_forward(kActivation, 0.5f, {.seed = 1234, .per_sample = kActivation}, x.data(),
                             mask.data(), y.data());
  }
  set_bytes(state, 3 * kActivation);
}
BENCHMARK(BM_DropoutForward)->Unit(benchmark::kMillisecond);

void BM_MaxPool3d(benchmark::State& state) {
  const PoolingGeometry geometry{true,      kChannels, {32, 32, 32}, {16, 16, 16},
                                 {2, 2, 2}, {2, 2, 2}, {0, 0, 0}};
  const auto x = ramp(kActivation);
  std::vector<float> y(static_cast<std::size_t>(kActivation / 8)), dy = y, dx(x.size());
  const bool backward = state.range(0) != 0;
  for (auto _ : state) {
    if (backward) {
      layers().pooling_backward(geometry, kBatch, x.data(), y.data(), dy.data(), dx.data());
    } else {
      layers().pooling_forward(geometry, kBatch, x.data(), y.data());
    }
  }
  set_bytes(state, kActivation + kActivation / 8);
}
BENCHMARK(BM_MaxPool3d)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

void BM_SgdMomentum(benchmark::State& state) {
  const auto g = ramp(kParameters);
  std::vector<float> w = ramp(kParameters), velocity(g.size());
  for (auto _ : state) {
    layers().sgd_update(kParameters, 1e-3f, 0.9f, 1e-4f, g.data(), w.data(), velocity.data());
  }
  set_bytes(state, 5 * kParameters);
}
BENCHMARK(BM_SgdMomentum)->Unit(benchmark::kMillisecond);

void BM_Adam(benchmark::State& state) {
  const auto g = ramp(kParameters);
  std::vector<float> w = ramp(kParameters), m(g.size()), v(g.size());
  std::int64_t step = 0;
  for (auto _ : state) {
    layers().adam_update(kParameters, 1e-3f, 0.9f, 0.999f, 1e-8f, ++step, g.data(), w.data(),
                         m.data(), v.data());
  }
  set_bytes(state, 7 * kParameters);
}
BENCHMARK(BM_Adam)->Unit(benchmark::kMillisecond);

void BM_FullyConnectedForward(benchmark::State& state) {
  constexpr std::int64_t batch = 64, in = 2048, out = 1024;
  const auto x = ramp(batch * in);
  const auto w = ramp(out * in);
  const auto b = ramp(out);
  std::vector<float> y(static_cast<std::size_t>(batch * out));
  for (auto _ : state) {
    layers().fully_connected_forward(batch, in, out, x.data(), w.data(), b.data(), y.data());
  }
  state.counters["flops"] = benchmark::Counter(static_cast<double>(2 * batch * in * out),
                                               benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_FullyConnectedForward)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
