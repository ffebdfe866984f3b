// Zero-time rendezvous of a collective's members, for the aggregated phases: every member leaves
// when the last one arrives, so that all of them end a phase together.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <tuple>
#include <vector>

#include <simgrid/s4u/Barrier.hpp>

#include "tessera/simulator/collectives.hpp"

namespace tessera::sim {
namespace {

struct Rendezvous {
  simgrid::s4u::BarrierPtr barrier;
  double max_value = -std::numeric_limits<double>::infinity();
  std::size_t departed = 0;
};

// The k-th rendezvous of a (fabric, channel, members) group is the k-th call by each member.
struct Group {
  std::vector<std::uint64_t> calls;  // per member index
  std::map<std::uint64_t, Rendezvous> open;
};

using GroupKey = std::tuple<const Fabric*, int, std::vector<int>>;

// One simulation per process and actors on one thread: a process-wide registry is race-free.
std::map<GroupKey, Group>& groups() {
  static std::map<GroupKey, Group> registry;
  return registry;
}

}  // namespace

double collective_max(const CollectiveContext& context, const std::vector<int>& members,
                      std::size_t my_index, double value) {
  if (members.size() < 2) return value;
  auto& group = groups()[GroupKey{&context.fabric, context.channel, members}];
  if (group.calls.empty()) group.calls.resize(members.size(), 0);
  const std::uint64_t call = group.calls.at(my_index)++;
  Rendezvous& rendezvous = group.open[call];  // std::map: stays valid while others insert
  if (!rendezvous.barrier) {
    rendezvous.barrier = simgrid::s4u::Barrier::create(static_cast<unsigned>(members.size()));
  }
  rendezvous.max_value = std::max(rendezvous.max_value, value);
  const simgrid::s4u::BarrierPtr barrier = rendezvous.barrier;
  barrier->wait();
  const double result = rendezvous.max_value;
  if (++rendezvous.departed == members.size()) group.open.erase(call);
  return result;
}

}  // namespace tessera::sim
