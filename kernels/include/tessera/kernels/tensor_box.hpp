#pragma once
// Boxes of spatial planes inside dense N x C x (D x) H x W tensors on a device, and the copies
// between them that halo exchanges, shard scatters and partitioned kernels are made of. A box
// copy is a sequence of contiguous runs (whole trailing planes merge into one run), each one
// Device::copy_on_device or LayerKernels::axpy, so it works on any device.
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/core/strategy/spatial_box.hpp"

namespace tessera::kernels {

class Device;

// A dense tensor whose first `spatial.first` plane sits at those coordinates (global ones for a
// shard's buffer, so that boxes given in global coordinates find their place in it).
struct TensorPlacement {
  std::int64_t batch_channels = 1;  // N * C: the outer, non-spatial extent
  SpatialBox spatial;
  std::int64_t floats() const { return batch_channels * spatial.volume(); }
};

// to[box] = from[box] (box in the coordinates both placements use; it must lie in both).
void copy_box(Device& device, const float* from, const TensorPlacement& from_placement, float* to,
              const TensorPlacement& to_placement, const SpatialBox& box);
// to[box] += from[box]
void accumulate_box(Device& device, const float* from, const TensorPlacement& from_placement,
                    float* to, const TensorPlacement& to_placement, const SpatialBox& box);

}  // namespace tessera::kernels
