// Time of one CosmoFlow-like 3D convolution shard on the CPU through oneDNN, per direction and
// per algorithm oneDNN offers, in voxels per second (input voxels of the batch processed).
//
// The shard is CosmoFlow's second convolution (16 -> 32 channels, 3^3 kernel, padding 1) on a
// 64^3 sample split 4 ways along depth: 16 x 64 x 64 voxels per GPU, here at 16 x 32 x 32 by
// default to keep a run short (--shard=full for 16 x 64 x 64). oneDNN's reference
// implementations ("ref:") are left out unless --all is given: they take seconds per call.
// Timing is the CPU device's steady clock around one call (manual time); primitives are
// created before timing starts.
#include <benchmark/benchmark.h>

#include <cstring>
#include <string>
#include <vector>

#include "tessera/kernels/convolution_kernels.hpp"
#include "tessera/kernels/device.hpp"
#include "tessera/kernels/micro_batched_convolution.hpp"

namespace {

using tessera::Direction;
using tessera::MicroBatch;
using tessera::MicroBatchPlan;
using namespace tessera::kernels;

ConvolutionGeometry cosmoflow_shard(std::int64_t depth, std::int64_t height_width) {
  return with_output({.in_channels = 16,
                      .out_channels = 32,
                      .input_spatial = {depth, height_width, height_width},
                      .kernel = {3, 3, 3},
                      .stride = {1, 1, 1},
                      .padding = {1, 1, 1},
                      .dilation = {1, 1, 1}});
}

void time_convolution(benchmark::State& state, Device& device, const ConvolutionGeometry& geometry,
                      std::int64_t batch, Direction direction,
                      const ConvolutionAlgorithm& algorithm) {
  const auto floats = [](std::int64_t count) { return static_cast<std::size_t>(count); };
  const std::size_t x_floats = floats(batch * geometry.input_floats_per_sample());
  const std::size_t y_floats = floats(batch * geometry.output_floats_per_sample());
  const std::size_t w_floats = floats(geometry.filter_floats());
  const std::size_t first_floats = direction == Direction::backward_data ? y_floats : x_floats;
  const std::size_t second_floats = direction == Direction::backward_filter ? y_floats : w_floats;
  const std::size_t result_floats = direction == Direction::forward         ? y_floats
                                    : direction == Direction::backward_data ? x_floats
                                                                            : w_floats;
  auto first = device.allocate(first_floats * sizeof(float));
  auto second = device.allocate(second_floats * sizeof(float));
  auto result = device.allocate(result_floats * sizeof(float));
  auto workspace = device.allocate(static_cast<std::size_t>(algorithm.workspace_bytes));
  device.fill(first->data(), first_floats, 0.5f);
  device.fill(second->data(), second_floats, 0.25f);
  const MicroBatchPlan undivided{{MicroBatch{.samples = batch, .algorithm = algorithm.name}}};
  const auto call = [&] {
    run_micro_batched(device.convolutions(), geometry, direction, undivided, first->data(),
                      second->data(), result->data(), 0.0f, workspace.get());
  };
  call();  // creates the primitive
  for (auto _ : state) state.SetIterationTime(device.time_seconds(call));
  const double voxels =
      static_cast<double>(batch * geometry.input_floats_per_sample() / geometry.in_channels);
  state.counters["voxels/s"] = benchmark::Counter(voxels * static_cast<double>(state.iterations()),
                                                  benchmark::Counter::kIsRate);
  state.counters["workspace_MiB"] = algorithm.workspace_bytes / (1024.0 * 1024.0);
}

}  // namespace

int main(int argc, char** argv) {
  bool all = false;
  bool full = false;
  std::vector<char*> passed_on;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--all") == 0) {
      all = true;
    } else if (std::strcmp(argv[i], "--shard=full") == 0) {
      full = true;
    } else {
      passed_on.push_back(argv[i]);
    }
  }
  int passed_count = static_cast<int>(passed_on.size());
  benchmark::Initialize(&passed_count, passed_on.data());

  const std::unique_ptr<Device> device = open_cpu_device();
  const ConvolutionGeometry geometry = full ? cosmoflow_shard(16, 64) : cosmoflow_shard(16, 32);
  const std::int64_t batch = 1;
  for (Direction direction :
       {Direction::forward, Direction::backward_data, Direction::backward_filter}) {
    for (const ConvolutionAlgorithm& algorithm :
         device->convolutions().algorithms(geometry, batch, direction)) {
      if (!all && algorithm.name.starts_with("ref:")) continue;
      const std::string name =
          "cosmoflow_conv16to32/" + tessera::to_string(direction) + "/" + algorithm.name;
      benchmark::RegisterBenchmark(
          name.c_str(),
          [&device, geometry, direction, algorithm](benchmark::State& state) {
            time_convolution(state, *device, geometry, batch, direction, algorithm);
          })
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond)
          ->MinTime(0.2);
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
