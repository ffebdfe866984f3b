// Host time of one allocate-release pair of device memory, what the step program's allocate and
// release ops cost the real backend per feature map (vDNN's layer-by-layer allocation), at
// CosmoFlow-like sizes. Runs on the CPU device and, where one opens, on cuda:0 (--no-gpu leaves
// it out). Each iteration allocates, writes the block (so that its pages are really used) and
// releases it, then synchronises as the real backend does after every op.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "tessera/kernels/device.hpp"

namespace {

using namespace tessera::kernels;

void allocate_and_release(benchmark::State& state, Device& device) {
  const auto bytes = static_cast<std::size_t>(state.range(0)) << 20;
  for (auto _ : state) {
    auto block = device.allocate(bytes);
    device.fill(block->data(), 1, 0.0f);
    block.reset();
    device.synchronize();
  }
  state.counters["MiB"] = static_cast<double>(state.range(0));
}

}  // namespace

int main(int argc, char** argv) {
  bool gpu = true;
  std::vector<char*> passed_on;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--no-gpu") == 0) {
      gpu = false;
    } else {
      passed_on.push_back(argv[i]);
    }
  }
  int passed_count = static_cast<int>(passed_on.size());
  benchmark::Initialize(&passed_count, passed_on.data());

  std::vector<std::unique_ptr<Device>> devices;
  devices.push_back(open_cpu_device());
  if (gpu) {
    try {
      devices.push_back(open_cuda_device(0));
    } catch (const std::runtime_error& error) {
      std::fprintf(stderr, "device_memory_bench: no cuda:0 (%s)\n", error.what());
    }
  }
  for (const auto& device : devices) {
    const std::string name = "allocate_release/" + device->info().kind;
    benchmark::RegisterBenchmark(
        name.c_str(), [&device](benchmark::State& state) { allocate_and_release(state, *device); })
        ->Arg(1)
        ->Arg(32)
        ->Arg(128)
        ->Arg(512)
        ->Unit(benchmark::kMicrosecond);
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
