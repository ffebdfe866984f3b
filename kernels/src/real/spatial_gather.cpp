#include "spatial_gather.hpp"

#include <algorithm>

namespace tessera::kernels::real {

SpatialGather::SpatialGather(Device& device, Communicator& group, TensorDistribution distribution,
                             std::int64_t batch_channels)
    : device_(device),
      group_(group),
      distribution_(std::move(distribution)),
      batch_channels_(batch_channels) {
  for (std::int64_t s = 0; s < distribution_.shard_count(); ++s) {
    block_floats_ = std::max(
        block_floats_, static_cast<std::size_t>(batch_channels * distribution_.owned(s).volume()));
  }
  const auto peers = static_cast<std::size_t>(group.size());
  send_ = device.allocate(peers * block_floats_ * sizeof(float));
  receive_ = device.allocate(peers * block_floats_ * sizeof(float));
}

std::int64_t SpatialGather::whole_floats() const {
  return batch_channels_ * distribution_.whole().volume();
}

double SpatialGather::allocated_bytes() const {
  return static_cast<double>(send_->bytes() + receive_->bytes());
}

void SpatialGather::gather(const float* shard, float* whole) {
  const auto own = owned_placement(distribution_, group_.rank(), batch_channels_);
  const auto peers = static_cast<std::size_t>(group_.size());
  for (std::size_t p = 0; p < peers; ++p) {
    device_.copy_on_device(shard, send_->data() + p * block_floats_,
                           static_cast<std::size_t>(own.floats()));
  }
  device_.synchronize();
  group_.alltoall(send_->data(), receive_->data(), block_floats_);
  const TensorPlacement whole_placement{batch_channels_, distribution_.whole()};
  for (std::size_t p = 0; p < peers; ++p) {
    const auto placement =
        owned_placement(distribution_, static_cast<std::int64_t>(p), batch_channels_);
    copy_box(device_, receive_->data() + p * block_floats_, placement, whole, whole_placement,
             placement.spatial);
  }
}

void SpatialGather::take_shard(const float* whole_gradient, float* shard_gradient,
                               bool accumulate) {
  const auto own = owned_placement(distribution_, group_.rank(), batch_channels_);
  const TensorPlacement whole_placement{batch_channels_, distribution_.whole()};
  if (accumulate) {
    accumulate_box(device_, whole_gradient, whole_placement, shard_gradient, own, own.spatial);
  } else {
    copy_box(device_, whole_gradient, whole_placement, shard_gradient, own, own.spatial);
  }
}

}  // namespace tessera::kernels::real
