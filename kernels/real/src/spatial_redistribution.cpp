#include "spatial_redistribution.hpp"

#include <algorithm>
#include <stdexcept>

#include "tessera/kernels/layer_kernels.hpp"

namespace tessera::kernels::real {

KeptSamples kept_samples(std::int64_t samples, std::int64_t parts, std::int64_t rank) {
  if (const auto why = redistribution_unsupported(samples, parts)) {
    throw std::invalid_argument(*why);
  }
  if (samples >= parts) {
    const std::int64_t count = samples / parts;
    return {rank * count, count};
  }
  return {rank / (parts / samples), 1};
}

std::optional<std::string> redistribution_unsupported(std::int64_t samples, std::int64_t parts) {
  if (samples < 1 || parts < 1) return "no samples or no ranks to redistribute";
  if (samples % parts == 0 || parts % samples == 0) return std::nullopt;
  return "the real backend redistributes a mini-batch of " + std::to_string(samples) +
         " samples over a spatial group of " + std::to_string(parts) +
         " ranks only when one divides the other";
}

SpatialRedistribution::SpatialRedistribution(Device& device, Communicator& group,
                                             TensorDistribution distribution, std::int64_t samples,
                                             std::int64_t channels)
    : device_(device),
      group_(group),
      distribution_(std::move(distribution)),
      samples_(samples),
      channels_(channels) {
  const std::int64_t count = kept().count;  // the same on every rank
  for (std::int64_t s = 0; s < distribution_.shard_count(); ++s) {
    block_floats_ = std::max(block_floats_, static_cast<std::size_t>(count * shard_floats(s)));
  }
  const auto peers = static_cast<std::size_t>(group.size());
  send_ = device.allocate(peers * block_floats_ * sizeof(float));
  receive_ = device.allocate(peers * block_floats_ * sizeof(float));
}

KeptSamples SpatialRedistribution::kept() const {
  return kept_samples(samples_, group_.size(), group_.rank());
}

std::int64_t SpatialRedistribution::shard_floats(std::int64_t rank) const {
  return channels_ * distribution_.owned(rank).volume();
}

std::int64_t SpatialRedistribution::whole_floats() const {
  return kept().count * channels_ * distribution_.whole().volume();
}

double SpatialRedistribution::allocated_bytes() const {
  return static_cast<double>(send_->bytes() + receive_->bytes());
}

void SpatialRedistribution::forward(const float* shard, float* whole) {
  const auto peers = group_.size();
  const std::int64_t own = shard_floats(group_.rank());
  for (int peer = 0; peer < peers; ++peer) {
    const auto theirs = kept_samples(samples_, peers, peer);
    device_.copy_on_device(shard + theirs.first * own,
                           send_->data() + static_cast<std::size_t>(peer) * block_floats_,
                           static_cast<std::size_t>(theirs.count * own));
  }
  device_.synchronize();
  group_.alltoall(send_->data(), receive_->data(), block_floats_);
  const std::int64_t batch_channels = kept().count * channels_;
  const TensorPlacement whole_placement{batch_channels, distribution_.whole()};
  for (int peer = 0; peer < peers; ++peer) {
    const auto placement = owned_placement(distribution_, peer, batch_channels);
    copy_box(device_, receive_->data() + static_cast<std::size_t>(peer) * block_floats_, placement,
             whole, whole_placement, placement.spatial);
  }
}

void SpatialRedistribution::backward(const float* whole_gradient, float* shard_gradient,
                                     bool accumulate) {
  const auto peers = group_.size();
  const std::int64_t batch_channels = kept().count * channels_;
  const TensorPlacement whole_placement{batch_channels, distribution_.whole()};
  for (int peer = 0; peer < peers; ++peer) {
    const auto placement = owned_placement(distribution_, peer, batch_channels);
    copy_box(device_, whole_gradient, whole_placement,
             send_->data() + static_cast<std::size_t>(peer) * block_floats_, placement,
             placement.spatial);
  }
  device_.synchronize();
  group_.alltoall(send_->data(), receive_->data(), block_floats_);
  const std::int64_t own = shard_floats(group_.rank());
  if (!accumulate) {
    device_.fill(shard_gradient, static_cast<std::size_t>(samples_ * own), 0);
  }
  for (int peer = 0; peer < peers; ++peer) {
    const auto theirs = kept_samples(samples_, peers, peer);
    device_.layers().axpy(theirs.count * own, 1.0F,
                          receive_->data() + static_cast<std::size_t>(peer) * block_floats_,
                          shard_gradient + theirs.first * own);
  }
}

}  // namespace tessera::kernels::real
