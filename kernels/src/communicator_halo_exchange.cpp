#include <stdexcept>
#include <string>

#include "tessera/kernels/communicator.hpp"
#include "tessera/kernels/device.hpp"
#include "tessera/kernels/halo_exchange.hpp"

namespace tessera::kernels {
namespace {

// Tags tell apart the up to two faces a pair of ranks swaps per axis; the axes of one exchange
// never overlap (finish() comes before the next start()).
constexpr int halo_tag_base = 7100;
int face_tag(int axis, Side receiver_side) {
  return halo_tag_base + 2 * axis + (receiver_side == Side::lower ? 0 : 1);
}

class CommunicatorHaloExchange final : public HaloExchange {
 public:
  CommunicatorHaloExchange(Device& device, Communicator& group)
      : device_(device), group_(group), shards_{group.rank()} {}
  Device& device() override { return device_; }
  const std::vector<std::int64_t>& local_shards() const override { return shards_; }

  void start(const WindowPlan& plan, int axis, HaloDirection direction, std::int64_t batch_channels,
             const std::vector<float*>& buffers) override {
    if (plan.input().shard_count() != group_.size() || buffers.size() != 1) {
      throw std::invalid_argument(
          "halo exchange over " + std::to_string(group_.size()) + " ranks for a grid of " +
          std::to_string(plan.input().shard_count()) + " shards: expected one shard per rank");
    }
    finish();
    next_staging_ = 0;
    buffer_ = buffers[0];
    placement_ = {batch_channels, plan.shard(shards_[0]).buffer};
    direction_ = direction;
    for (const Side side : {Side::lower, Side::upper}) {
      const auto beside = plan.input().neighbour(shards_[0], axis, side);
      if (!beside) continue;
      const SpatialBox& my_halo = plan.shard(shards_[0]).halo_region(axis, side);
      const SpatialBox& their_halo = plan.shard(*beside).halo_region(axis, opposite(side));
      // fill: my halo comes from them, their halo from my owned planes; the adjoint reverses it.
      const bool fill = direction == HaloDirection::fill;
      const SpatialBox& incoming = fill ? my_halo : their_halo;
      const SpatialBox& outgoing = fill ? their_halo : my_halo;
      // Tags name the face from the receiver's side: fill sends land in their `opposite` halo,
      // adjoint sends leave my `side` halo and land in their owned planes on that same face.
      const int receive_tag = face_tag(axis, fill ? side : opposite(side));
      const int send_tag = face_tag(axis, fill ? opposite(side) : side);
      const int peer = static_cast<int>(*beside);
      if (!incoming.empty()) {
        const std::int64_t floats = batch_channels * incoming.volume();
        float* staging = next_staging(floats);
        auto request = group_.receive(staging, static_cast<std::size_t>(floats), peer, receive_tag);
        receives_.push_back({incoming, staging, std::move(request)});
      }
      if (!outgoing.empty()) {
        const std::int64_t floats = batch_channels * outgoing.volume();
        float* staging = next_staging(floats);
        copy_box(device_, buffer_, placement_, staging, {batch_channels, outgoing}, outgoing);
        device_.synchronize();  // the packed face must be complete before MPI reads it
        auto request = group_.send(staging, static_cast<std::size_t>(floats), peer, send_tag);
        sends_.push_back({outgoing, staging, std::move(request)});
      }
    }
  }

  void finish() override {
    for (auto& message : receives_) {
      message.request->wait();
      const TensorPlacement packed{placement_.batch_channels, message.region};
      if (direction_ == HaloDirection::fill) {
        copy_box(device_, message.staging, packed, buffer_, placement_, message.region);
      } else {
        accumulate_box(device_, message.staging, packed, buffer_, placement_, message.region);
      }
    }
    for (auto& message : sends_) message.request->wait();
    receives_.clear();
    sends_.clear();
  }

  void sum_over_shards(const std::vector<float*>& arrays, std::size_t floats) override {
    if (arrays.size() != 1) throw std::invalid_argument("one array per rank expected");
    device_.synchronize();
    group_.allreduce_sum(arrays[0], floats);
  }

 private:
  struct Message {
    SpatialBox region;
    float* staging;  // in staging_
    std::unique_ptr<CommRequest> request;
  };

  // Contiguous faces for the messages of one axis (at most 4), kept across exchanges so that a
  // training step does not allocate device memory per halo.
  float* next_staging(std::int64_t floats) {
    const auto bytes = static_cast<std::size_t>(floats) * sizeof(float);
    if (next_staging_ == staging_.size()) staging_.emplace_back();
    auto& block = staging_[next_staging_++];
    if (!block || block->bytes() < bytes) {
      block.reset();
      block = device_.allocate(bytes);
    }
    return block->data();
  }

  Device& device_;
  Communicator& group_;
  std::vector<std::int64_t> shards_;
  float* buffer_ = nullptr;
  TensorPlacement placement_;
  HaloDirection direction_ = HaloDirection::fill;
  std::vector<Message> receives_;
  std::vector<Message> sends_;
  std::vector<std::unique_ptr<DeviceMemory>> staging_;
  std::size_t next_staging_ = 0;
};

}  // namespace

std::unique_ptr<HaloExchange> communicator_halo_exchange(Device& device, Communicator& group) {
  return std::make_unique<CommunicatorHaloExchange>(device, group);
}

}  // namespace tessera::kernels
