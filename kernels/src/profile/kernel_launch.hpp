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

namespace tessera::kernels {

// The algorithms to try: every one the library offers for convolutions, one ("default") for the
// rest.
std::vector<ConvolutionAlgorithm> algorithms_for(Device& device, const KernelToProfile& kernel,
                                                 std::int64_t batch, Direction direction);

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
