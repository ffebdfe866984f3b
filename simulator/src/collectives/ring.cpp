// Ring all-reduce: reduce-scatter then all-gather around one ring, 2(p-1) steps of S/p.
//  - message: each step sends S/p to the successor and receives S/p from the predecessor;
//  - aggregated: one flow of steps * S/p to the successor (and one from the predecessor), then the
//    remaining steps - 1 latencies of the slowest edge, all members leaving together.
// On a contention-free ring both take 2(p-1)/p * S/B + 2(p-1) * a.
#include <algorithm>
#include <vector>

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>

#include "tessera/simulator/collectives.hpp"

namespace tessera::sim {

void ring_pass(const CollectiveContext& context, const MemberGroup& members, std::size_t my_index,
               int steps, double bytes_per_step) {
  const std::size_t size = members.size();
  if (size < 2 || steps <= 0) return;
  const Fabric& fabric = context.fabric;
  const int me = members[my_index];
  const int next = members[(my_index + 1) % size];
  const int previous = members[(my_index + size - 1) % size];

  if (context.granularity == Granularity::message) {
    for (int step = 0; step < steps; ++step) {
      auto outgoing = fabric.send_async(me, next, bytes_per_step, context.channel);
      auto incoming = fabric.recv_async(me, previous, context.channel);
      outgoing->wait();
      incoming->wait();
    }
    return;
  }

  auto outgoing = fabric.send_async(me, next, steps * bytes_per_step, context.channel);
  auto incoming = fabric.recv_async(me, previous, context.channel);
  outgoing->wait();
  incoming->wait();
  const double latency =
      collective_max(context, members, my_index, fabric.route_latency_seconds(me, next));
  if (steps > 1) simgrid::s4u::this_actor::sleep_for((steps - 1) * latency);
}

void ring_allreduce(const CollectiveContext& context, const MemberGroup& members,
                    std::size_t my_index, double bytes) {
  if (members.size() < 2) return;
  const int size = static_cast<int>(members.size()) * std::max(context.replicas, 1);
  ring_pass(context, members, my_index, 2 * (size - 1), bytes / size);
}

}  // namespace tessera::sim
