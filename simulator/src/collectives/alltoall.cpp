// All-to-all: every member posts one send per peer and one receive per peer at once, as NCCL's
// grouped send/recv does, so both granularities are the same flows: on a contention-free platform
// it takes a + (p-1) * m / B, the p-1 flows of a member sharing its port.
#include <vector>

#include <simgrid/s4u/Comm.hpp>

#include "tessera/simulator/collectives/collectives.hpp"

namespace tessera::sim {

void alltoall(const CollectiveContext& context, const MemberGroup& members, std::size_t my_index,
              double bytes_per_peer) {
  const std::size_t size = members.size();
  if (size < 2) return;
  const Fabric& fabric = context.fabric;
  const int me = members[my_index];
  std::vector<simgrid::s4u::CommPtr> comms;
  comms.reserve(2 * (size - 1));
  for (std::size_t shift = 1; shift < size; ++shift) {
    comms.push_back(
        fabric.send_async(me, members[(my_index + shift) % size], bytes_per_peer, context.channel));
    comms.push_back(
        fabric.recv_async(me, members[(my_index + size - shift) % size], context.channel));
  }
  simgrid::s4u::Comm::wait_all(comms);
}

void alltoall(const CollectiveContext& context, const std::vector<int>& members,
              std::size_t my_index, double bytes_per_peer) {
  alltoall(context, member_group(members), my_index, bytes_per_peer);
}

}  // namespace tessera::sim
