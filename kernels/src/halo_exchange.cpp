#include "tessera/kernels/halo_exchange.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>

#include "tessera/kernels/device.hpp"
#include "tessera/kernels/layer_kernels.hpp"

namespace tessera::kernels {

std::vector<int> exchange_axes(int spatial_rank, HaloDirection direction) {
  std::vector<int> axes(static_cast<std::size_t>(spatial_rank));
  std::iota(axes.begin(), axes.end(), 0);
  if (direction == HaloDirection::add_adjoint) std::reverse(axes.begin(), axes.end());
  return axes;
}

void exchange_halos(HaloExchange& exchange, const WindowPlan& plan, HaloDirection direction,
                    std::int64_t batch_channels, const std::vector<float*>& buffers) {
  for (const int axis : exchange_axes(plan.input().spatial_rank(), direction)) {
    exchange.start(plan, axis, direction, batch_channels, buffers);
    exchange.finish();
  }
}

namespace {

class InProcessHaloExchange final : public HaloExchange {
 public:
  InProcessHaloExchange(Device& device, std::int64_t shards) : device_(device) {
    shards_.resize(static_cast<std::size_t>(shards));
    std::iota(shards_.begin(), shards_.end(), 0);
  }
  Device& device() override { return device_; }
  const std::vector<std::int64_t>& local_shards() const override { return shards_; }

  // Copies right away: within one axis every copy reads planes owned along that axis and writes
  // halo planes, so their order does not matter.
  void start(const WindowPlan& plan, int axis, HaloDirection direction, std::int64_t batch_channels,
             const std::vector<float*>& buffers) override {
    if (static_cast<std::int64_t>(buffers.size()) != plan.input().shard_count() ||
        buffers.size() != shards_.size()) {
      throw std::invalid_argument("in-process halo exchange needs one buffer per shard");
    }
    for (std::int64_t shard = 0; shard < static_cast<std::int64_t>(shards_.size()); ++shard) {
      const ShardWindow& mine = plan.shard(shard);
      const TensorPlacement my_placement{batch_channels, mine.buffer};
      for (const Side side : {Side::lower, Side::upper}) {
        const SpatialBox& region = mine.halo_region(axis, side);
        if (region.empty()) continue;
        const std::int64_t beside = *plan.input().neighbour(shard, axis, side);
        const TensorPlacement their_placement{batch_channels, plan.shard(beside).buffer};
        float* mine_data = buffers[static_cast<std::size_t>(shard)];
        float* their_data = buffers[static_cast<std::size_t>(beside)];
        if (direction == HaloDirection::fill) {
          copy_box(device_, their_data, their_placement, mine_data, my_placement, region);
        } else {
          accumulate_box(device_, mine_data, my_placement, their_data, their_placement, region);
        }
      }
    }
  }
  void finish() override {}

  void sum_over_shards(const std::vector<float*>& arrays, std::size_t floats) override {
    if (arrays.empty()) return;
    for (std::size_t shard = 1; shard < arrays.size(); ++shard) {
      device_.layers().axpy(static_cast<std::int64_t>(floats), 1.0f, arrays[shard], arrays[0]);
    }
    for (std::size_t shard = 1; shard < arrays.size(); ++shard) {
      device_.copy_on_device(arrays[0], arrays[shard], floats);
    }
  }

 private:
  Device& device_;
  std::vector<std::int64_t> shards_;
};

}  // namespace

std::unique_ptr<HaloExchange> in_process_halo_exchange(Device& device, std::int64_t shards) {
  return std::make_unique<InProcessHaloExchange>(device, shards);
}

}  // namespace tessera::kernels
