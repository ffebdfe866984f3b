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

// A streaming kernel over one GPU's parameters made runnable: weights, gradients and moments in
// device memory, as the real backend holds them, and the call that applies the update once, or
// adds one set of gradients into another (ParameterBuckets::accumulate).
class ParameterKernelLaunch {
 public:
  ParameterKernelLaunch(Device& device, const ParameterKernelToProfile& kernel);
  void call();
  // What the step runs on this kernel's operands just before it, where something does: a gradient
  // sum's summand has just been written by its layer's backward-filter, so it is in the caches as
  // far as they hold it. Run after the cache preparation, it leaves them so. Empty for an update.
  std::function<void()> producer();

 private:
  Device& device_;
  ParameterKernelToProfile kernel_;
  // weights and gradients, then an update's two moments
  std::vector<std::unique_ptr<DeviceMemory>> memory_;
  std::int64_t step_ = 0;
};

// A step-like run's preparation (CachePreparation) for a kernel whose operand the step has just
// written: `shadow`, then `producer` where there is one.
std::function<void()> then_producer(std::function<void()> shadow, std::function<void()> producer);

// What runs before each timed run so that it finds the caches as options.caches says: nothing
// (warm), the flush buffer written (flushed), or that and then `shadow`, the same kernel on a
// second set of operands (step_like; none given: flushed only). One buffer serves every
// measurement of a profile: allocating (and first touching) hundreds of MiB per measurement cost
// more than the kernels measured.
class CachePreparation {
 public:
  CachePreparation(Device& device, const ProfilerOptions& options);
  void before_run(const std::function<void()>& shadow) const;
  RunCaches caches() const { return caches_; }

 private:
  Device& device_;
  RunCaches caches_;
  std::unique_ptr<DeviceMemory> buffer_;
};

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
