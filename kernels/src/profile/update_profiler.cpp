#include <functional>
#include <optional>

#include "kernel_launch.hpp"
#include "tessera/kernels/device.hpp"
#include "tessera/kernels/profile/kernel_profiler.hpp"

namespace tessera::kernels {

void profile_updates(Device& device, const std::vector<UpdateToProfile>& updates,
                     const ProfilerOptions& options, ProfileDatabase& database) {
  for (const auto& update : updates) {
    UpdateLaunch launch(device, update);
    std::optional<UpdateLaunch> second;  // the step_like run's operands
    std::function<void()> shadow;
    if (runs_shadow(options.caches)) {
      second.emplace(device, update);
      shadow = [&] { second->call(); };
    }
    const double seconds = median_seconds(
        device, [&] { launch.call(); }, options, shadow);
    database.add({.device = device.info().name,
                  .op = update.op,
                  .direction = Direction::forward,
                  .shape = update.shape,
                  .dtype = update.dtype,
                  .micro_batch = 1,
                  .algorithm = "default",
                  .time_seconds = seconds});
  }
}

}  // namespace tessera::kernels
