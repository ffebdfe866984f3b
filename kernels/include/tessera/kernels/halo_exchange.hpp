#pragma once
// Filling the halo regions of shards' input buffers from their neighbours, and the adjoint
// (adding the gradients that landed in halo regions back into the neighbours' own planes), one
// face exchange per axis. Axis by axis is what carries edges and corners: each face message spans
// the whole buffer across the axes already exchanged, so a diagonal neighbour's planes arrive in
// two (or three) hops with 2 messages per axis instead of up to 26 per shard; the price is that
// the axes run one after another. The adjoint runs the axes in reverse order.
//
// One mechanism, two transports: shards held by one process exchange by direct copies on the
// device, shards on different ranks through a Communicator (faces packed into contiguous device
// buffers, non-blocking sends and receives). start(axis) / finish() split one axis so that work
// that needs no halo can run while the messages fly.
#include <cstdint>
#include <memory>
#include <vector>

#include "tessera/core/strategy/shard_window.hpp"
#include "tessera/kernels/tensor_box.hpp"

namespace tessera::kernels {

class Communicator;
class Device;

enum class HaloDirection {
  fill,         // halo regions <- the neighbours' owned planes
  add_adjoint,  // the neighbours' owned planes += halo regions (backward)
};

class HaloExchange {
 public:
  virtual ~HaloExchange() = default;
  virtual Device& device() = 0;
  // The shards this process holds, in the order buffer vectors list them.
  virtual const std::vector<std::int64_t>& local_shards() const = 0;

  // Starts exchanging along `axis`. buffers[i] is local shard i's buffer, placed as
  // plan.shard(...).buffer with `batch_channels` outer elements; it must stay alive until finish().
  virtual void start(const WindowPlan& plan, int axis, HaloDirection direction,
                     std::int64_t batch_channels, const std::vector<float*>& buffers) = 0;
  // Completes the started axis (no-op when nothing was started).
  virtual void finish() = 0;

  // Afterwards every local shard's array holds the sum over all shards of the group.
  virtual void sum_over_shards(const std::vector<float*>& arrays, std::size_t floats) = 0;
};

// Every axis in turn (reverse order for add_adjoint), each started and finished.
void exchange_halos(HaloExchange& exchange, const WindowPlan& plan, HaloDirection direction,
                    std::int64_t batch_channels, const std::vector<float*>& buffers);
// The axes to exchange in order for `direction`.
std::vector<int> exchange_axes(int spatial_rank, HaloDirection direction);

// All `shards` shards in this process, on `device`.
std::unique_ptr<HaloExchange> in_process_halo_exchange(Device& device, std::int64_t shards);
// This rank holds shard group.rank() of a spatial group of group.size() shards.
std::unique_ptr<HaloExchange> communicator_halo_exchange(Device& device, Communicator& group);

}  // namespace tessera::kernels
