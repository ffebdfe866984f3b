#pragma once
// One kernel of the profile plan, made runnable on a device: operands allocated there and filled
// with random values, and a callable that issues the kernel once. What the call issues is what the
// real backend runs for that layer and direction, so the time measured is the time it will take.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tessera/core/point/profile_plan.hpp"
#include "tessera/kernels/convolution_kernels.hpp"
#include "tessera/kernels/device.hpp"
#include "tessera/kernels/profile/kernel_profiler.hpp"

namespace tessera::kernels {

// The algorithms to try: every one the library offers for convolutions, one ("default") for the
// rest.
std::vector<ConvolutionAlgorithm> algorithms_for(Device& device, const KernelToProfile& kernel,
                                                 std::int64_t batch, Direction direction);

// The optimizer update of one GPU's parameters made runnable: weights, gradients and moments in
// device memory, as the real backend holds them, and the call that applies it once.
class UpdateLaunch {
 public:
  UpdateLaunch(Device& device, const UpdateToProfile& update);
  void call();

 private:
  Device& device_;
  UpdateToProfile update_;
  std::vector<std::unique_ptr<DeviceMemory>> memory_;  // weights, gradients, two moments
  std::int64_t step_ = 0;
};

// The buffer a cache flush writes (options.cache_flush_bytes), or null for warm caches; and the
// flush itself, a no-op without a buffer: written before each timed run, outside its timing.
std::unique_ptr<DeviceMemory> cache_flush_buffer(Device& device, const ProfilerOptions& options);
void flush_caches(Device& device, DeviceMemory* buffer);

class KernelLaunch {
 public:
  KernelLaunch(Device& device, const KernelToProfile& kernel, std::int64_t batch);

  // The call for one direction and algorithm; empty when that direction's work is done inside
  // another direction's call (e.g. a loss computes its gradient in forward).
  std::optional<std::function<void()>> call(Direction direction,
                                            const ConvolutionAlgorithm& algorithm);

 private:
  float* operand(std::size_t floats);  // random values in [-1, 1]

  Device& device_;
  const KernelToProfile& kernel_;
  std::int64_t batch_;
  std::vector<std::unique_ptr<DeviceMemory>> memory_;
};

}  // namespace tessera::kernels
