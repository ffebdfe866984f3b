#include <functional>
#include <optional>

#include "kernel_launch.hpp"
#include "tessera/kernels/device.hpp"
#include "tessera/kernels/profile/kernel_profiler.hpp"

namespace tessera::kernels {

void profile_parameter_kernels(Device& device, const std::vector<ParameterKernelToProfile>& kernels,
                               const ProfilerOptions& options, ProfileDatabase& database) {
  for (const auto& kernel : kernels) {
    ParameterKernelLaunch launch(device, kernel);
    std::optional<ParameterKernelLaunch> second;  // the step_like run's operands
    std::function<void()> shadow;
    if (runs_shadow(options.caches)) {
      second.emplace(device, kernel);
      shadow = [&] { second->call(); };
    }
    shadow = then_producer(std::move(shadow), launch.producer());
    const double seconds = median_seconds(
        device, [&] { launch.call(); }, options, shadow);
    database.add({.device = device.info().name,
                  .op = kernel.op,
                  .direction = Direction::forward,
                  .shape = kernel.shape,
                  .dtype = kernel.dtype,
                  .micro_batch = 1,
                  .algorithm = "default",
                  .time_seconds = seconds});
  }
}

}  // namespace tessera::kernels
