#include "tessera/kernels/profile/kernel_replay.hpp"

#include <algorithm>
#include <limits>

#include "kernel_launch.hpp"
#include "tessera/kernels/device.hpp"

namespace tessera::kernels {

KernelReplay::KernelReplay(Device& device, const KernelToProfile& kernel)
    : device_(device), kernel_(kernel) {}

KernelReplay::~KernelReplay() = default;

std::unique_ptr<KernelReplay> KernelReplay::of(Device& device, const KernelToProfile& kernel,
                                               const ProfileDatabase& profiles) {
  const auto best =
      profiles.best(device.info().name, kernel.op, kernel.direction, kernel.shape, kernel.dtype,
                    kernel.batch, std::numeric_limits<double>::infinity());
  if (!best) return nullptr;
  const auto algorithms = algorithms_for(device, kernel, kernel.batch, kernel.direction);
  const auto algorithm =
      std::find_if(algorithms.begin(), algorithms.end(),
                   [&](const ConvolutionAlgorithm& a) { return a.name == best->algorithm; });
  if (algorithm == algorithms.end()) return nullptr;
  std::unique_ptr<KernelReplay> replay(new KernelReplay(device, kernel));
  replay->launch_ = std::make_unique<KernelLaunch>(device, replay->kernel_, kernel.batch);
  auto call = replay->launch_->call(kernel.direction, *algorithm);
  if (!call) return nullptr;
  replay->call_ = std::move(*call);
  return replay;
}

void KernelReplay::run_once() {
  call_();
  device_.synchronize();
}

}  // namespace tessera::kernels
