#include <algorithm>

#include "tessera/kernels/device.hpp"
#include "tessera/kernels/layer_kernels.hpp"
#include "tessera/kernels/optimizer_update.hpp"
#include "tessera/kernels/profile/kernel_profiler.hpp"

namespace tessera::kernels {

void profile_updates(Device& device, const std::vector<UpdateToProfile>& updates,
                     const ProfilerOptions& options, ProfileDatabase& database) {
  for (const auto& update : updates) {
    const auto count = static_cast<std::int64_t>(update.parameters);
    const auto bytes = static_cast<std::size_t>(std::max<std::int64_t>(count, 1)) * sizeof(float);
    auto weights = device.allocate(bytes);
    auto gradients = device.allocate(bytes);
    auto first_moment = device.allocate(bytes);
    auto second_moment = device.allocate(bytes);
    for (auto* memory : {&weights, &gradients, &first_moment, &second_moment}) {
      device.fill((*memory)->data(), static_cast<std::size_t>(count), 1e-3F);
    }
    std::int64_t step = 0;
    const double seconds = median_seconds(
        device,
        [&] {
          optimizer_update(device.layers(), update.optimizer, count, 1e-3F, ++step,
                           gradients->data(), weights->data(), first_moment->data(),
                           second_moment->data());
        },
        options);
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
