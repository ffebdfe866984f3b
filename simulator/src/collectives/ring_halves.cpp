// The two halves of the ring all-reduce, each a collective of its own: a reduce-scatter leaves
// each member the sum of its 1/p of the data, an all-gather gives every member every share.
// Each is p-1 steps of S/p around the ring (a member forwards what it received last), over the
// rings ring_channels finds through the members, each ring carrying S/k.
// On a contention-free ring: (p-1)/p * S/B + (p-1) * a.
#include <algorithm>

#include "tessera/simulator/collectives/collectives.hpp"

namespace tessera::sim {
namespace {

void ring_half(const CollectiveContext& context, const MemberGroup& members, std::size_t my_index,
               double bytes) {
  if (members.size() < 2) return;
  const auto& rings = ring_channels(context, members);
  const int size = static_cast<int>(members.size()) * std::max(context.replicas, 1);
  ring_pass(context, rings, members[my_index], size - 1,
            bytes / size / static_cast<double>(rings.size()));
}

}  // namespace

void allgather(const CollectiveContext& context, const MemberGroup& members, std::size_t my_index,
               double bytes) {
  ring_half(context, members, my_index, bytes);
}

void reduce_scatter(const CollectiveContext& context, const MemberGroup& members,
                    std::size_t my_index, double bytes) {
  ring_half(context, members, my_index, bytes);
}

}  // namespace tessera::sim
