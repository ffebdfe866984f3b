#include "tessera/kernels/tensor_scatter.hpp"

#include <stdexcept>
#include <string>

#include "tessera/kernels/device.hpp"

namespace tessera::kernels {

TensorPlacement owned_placement(const TensorDistribution& distribution, std::int64_t shard,
                                std::int64_t batch_channels) {
  return {batch_channels, distribution.owned(shard)};
}

namespace {

void check_shard_count(const TensorDistribution& distribution, std::size_t given) {
  if (static_cast<std::int64_t>(given) != distribution.shard_count()) {
    throw std::invalid_argument("expected " + std::to_string(distribution.shard_count()) +
                                " shard buffers, got " + std::to_string(given));
  }
}

}  // namespace

void scatter(Device& device, const TensorDistribution& distribution, std::int64_t batch_channels,
             const float* whole, const std::vector<float*>& shards) {
  check_shard_count(distribution, shards.size());
  const TensorPlacement all{batch_channels, distribution.whole()};
  auto staged = device.allocate(static_cast<std::size_t>(all.floats()) * sizeof(float));
  device.copy_to_device(whole, staged->data(), static_cast<std::size_t>(all.floats()));
  for (std::size_t shard = 0; shard < shards.size(); ++shard) {
    const auto placement =
        owned_placement(distribution, static_cast<std::int64_t>(shard), batch_channels);
    copy_box(device, staged->data(), all, shards[shard], placement, placement.spatial);
  }
  device.synchronize();
}

void gather(Device& device, const TensorDistribution& distribution, std::int64_t batch_channels,
            const std::vector<const float*>& shards, float* whole) {
  check_shard_count(distribution, shards.size());
  const TensorPlacement all{batch_channels, distribution.whole()};
  auto staged = device.allocate(static_cast<std::size_t>(all.floats()) * sizeof(float));
  for (std::size_t shard = 0; shard < shards.size(); ++shard) {
    const auto placement =
        owned_placement(distribution, static_cast<std::int64_t>(shard), batch_channels);
    copy_box(device, shards[shard], placement, staged->data(), all, placement.spatial);
  }
  device.copy_to_host(staged->data(), whole, static_cast<std::size_t>(all.floats()));
  device.synchronize();
}

}  // namespace tessera::kernels
