// Ring all-reduce: reduce-scatter then all-gather around one ring, 2(p-1) steps of S/p.
//  - message: each step sends S/p to the successor and receives S/p from the predecessor;
//  - aggregated: one flow of steps * S/p to the successor (and one from the predecessor), then the
//    remaining steps - 1 latencies of the slowest edge, all members leaving together.
// On a contention-free ring both take 2(p-1)/p * S/B + 2(p-1) * a. Where a node's NVLinks hold
// several rings through the members (ring_channels), each ring carries S/k of the data at once.
#include <algorithm>
#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>

#include "tessera/simulator/collectives/collectives.hpp"

namespace tessera::sim {
const std::vector<const MemberGroup*>& ring_channels(const CollectiveContext& context,
                                                     const MemberGroup& members) {
  struct Channels {
    std::vector<std::unique_ptr<MemberGroup>> owned;
    std::vector<const MemberGroup*> rings;
  };
  // Process-wide, like node_groups' cache (one simulation per process, one thread).
  static std::map<std::tuple<std::uint64_t, std::tuple<int, std::uint64_t>, int>, Channels> cache;
  const auto key = std::make_tuple(members.id(), layout_key(context), context.replicas);
  if (auto it = cache.find(key); it != cache.end()) return it->second.rings;
  Channels channels;
  const std::vector<int>& ranks = members.ranks();
  if (context.node_rings != nullptr && ranks.size() > 1) {
    const int per_node = std::max(context.gpus_per_node, 1);
    const bool one_node = std::all_of(ranks.begin(), ranks.end(), [&](int rank) {
      return rank / per_node == ranks.front() / per_node;
    });
    if (one_node && context.replicas <= 1) {
      for (auto& ring : context.node_rings->rings(ranks)) {
        channels.owned.push_back(std::make_unique<MemberGroup>(std::move(ring)));
      }
    }
    if (channels.owned.empty()) {
      // node_groups orders each node's members along its first NVLink ring.
      std::vector<int> ordered;
      for (const auto& node : node_groups(context, members).nodes) {
        for (std::size_t index : node) ordered.push_back(ranks[index]);
      }
      if (ordered != ranks) channels.owned.push_back(std::make_unique<MemberGroup>(ordered));
    }
  }
  for (const auto& ring : channels.owned) channels.rings.push_back(ring.get());
  if (channels.rings.empty()) channels.rings.push_back(&members);
  return cache.emplace(key, std::move(channels)).first->second.rings;
}

void ring_pass(const CollectiveContext& context, const std::vector<const MemberGroup*>& rings,
               int me, int steps, double bytes_per_step) {
  if (rings.empty() || rings.front()->size() < 2 || steps <= 0) return;
  const Fabric& fabric = context.fabric;
  struct Neighbours {
    int next;
    int previous;
  };
  std::vector<Neighbours> neighbours;
  for (const MemberGroup* ring : rings) {
    const std::size_t size = ring->size();
    const std::size_t index = ring->index_of(me);
    neighbours.push_back({(*ring)[(index + 1) % size], (*ring)[(index + size - 1) % size]});
  }
  auto exchange = [&](double bytes) {
    std::vector<simgrid::s4u::CommPtr> comms;
    for (const auto& [next, previous] : neighbours) {
      comms.push_back(fabric.send_async(me, next, bytes, context.channel));
      comms.push_back(fabric.recv_async(me, previous, context.channel));
    }
    for (auto& comm : comms) comm->wait();
  };

  if (context.granularity == Granularity::message) {
    for (int step = 0; step < steps; ++step) exchange(bytes_per_step);
    return;
  }
  exchange(steps * bytes_per_step);
  double latency = 0;
  for (const auto& hop : neighbours) {
    latency = std::max(latency, fabric.route_latency_seconds(me, hop.next));
  }
  const MemberGroup& first = *rings.front();
  latency = collective_max(context, first, first.index_of(me), latency);
  if (steps > 1) simgrid::s4u::this_actor::sleep_for((steps - 1) * latency);
}

void ring_pass(const CollectiveContext& context, const MemberGroup& members, std::size_t my_index,
               int steps, double bytes_per_step) {
  ring_pass(context, {&members}, members[my_index], steps, bytes_per_step);
}

void ring_allreduce(const CollectiveContext& context, const MemberGroup& members,
                    std::size_t my_index, double bytes) {
  if (members.size() < 2) return;
  const auto& rings = ring_channels(context, members);
  const int size = static_cast<int>(members.size()) * std::max(context.replicas, 1);
  ring_pass(context, rings, members[my_index], 2 * (size - 1),
            bytes / size / static_cast<double>(rings.size()));
}

}  // namespace tessera::sim
