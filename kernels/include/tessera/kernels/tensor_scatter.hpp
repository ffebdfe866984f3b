#pragma once
// A whole tensor scattered over the shards of a spatial split and gathered back, for tests and
// for the real backend's input.
#include <cstdint>
#include <vector>

#include "tessera/core/strategy/tensor_distribution.hpp"
#include "tessera/kernels/tensor_box.hpp"

namespace tessera::kernels {

class Device;

// Placement of a shard's dense tensor: its owned box, in global coordinates.
TensorPlacement owned_placement(const TensorDistribution& distribution, std::int64_t shard,
                                std::int64_t batch_channels);

// whole: host memory, batch_channels x the global volume; shards[i]: device memory of shard i.
void scatter(Device& device, const TensorDistribution& distribution, std::int64_t batch_channels,
             const float* whole, const std::vector<float*>& shards);
void gather(Device& device, const TensorDistribution& distribution, std::int64_t batch_channels,
            const std::vector<const float*>& shards, float* whole);

}  // namespace tessera::kernels
