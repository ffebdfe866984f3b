#pragma once
// The redistribution before the first unsplit layer: every rank of a spatial group sends its
// shard of an activation to every peer (an all-to-all with the same block for each), so that each
// holds the replica's whole tensor and runs the dense layers on it. Backward is local: each rank
// takes its own planes of the (identical) whole gradient.
#include <cstdint>
#include <memory>
#include <vector>

#include "tessera/kernels/communicator.hpp"
#include "tessera/kernels/device.hpp"
#include "tessera/kernels/tensor_distribution.hpp"

namespace tessera::kernels::real {

class SpatialGather {
 public:
  SpatialGather(Device& device, Communicator& group, TensorDistribution distribution,
                std::int64_t batch_channels);
  std::int64_t whole_floats() const;
  void gather(const float* shard, float* whole);
  // shard_gradient = (or +=) the rank's planes of whole_gradient.
  void take_shard(const float* whole_gradient, float* shard_gradient, bool accumulate);
  double allocated_bytes() const;

 private:
  Device& device_;
  Communicator& group_;
  TensorDistribution distribution_;
  std::int64_t batch_channels_;
  std::size_t block_floats_ = 0;  // the largest shard: every all-to-all block has this size
  std::unique_ptr<DeviceMemory> send_;
  std::unique_ptr<DeviceMemory> receive_;
};

}  // namespace tessera::kernels::real
