// Zero-time rendezvous of a collective's members, for the aggregated phases: every member leaves
// when the last one arrives, so that all of them end a phase together.
#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <tuple>
#include <vector>

#include <simgrid/s4u/Barrier.hpp>

#include "tessera/simulator/collectives/collectives.hpp"

namespace tessera::sim {
namespace {

struct Rendezvous {
  simgrid::s4u::BarrierPtr barrier;
  std::array<double, 2> max_values{-std::numeric_limits<double>::infinity(),
                                   -std::numeric_limits<double>::infinity()};
  std::size_t departed = 0;
};

// The k-th rendezvous of a (fabric, channel, members) group is the k-th call by each member.
struct Group {
  std::vector<std::uint64_t> calls;  // per member index
  std::map<std::uint64_t, Rendezvous> open;
};

// The group's id, not its ranks: a key of p ranks cost every member O(p) to find.
using GroupKey = std::tuple<const Fabric*, int, std::uint64_t>;

// One simulation per process and actors on one thread: a process-wide registry is race-free.
std::map<GroupKey, Group>& groups() {
  static std::map<GroupKey, Group> registry;
  return registry;
}

}  // namespace

std::array<double, 2> collective_max(const CollectiveContext& context, const MemberGroup& members,
                                     std::size_t my_index, std::array<double, 2> values) {
  if (members.size() < 2) return values;
  auto& group = groups()[GroupKey{&context.fabric, context.channel, members.id()}];
  if (group.calls.empty()) group.calls.resize(members.size(), 0);
  const std::uint64_t call = group.calls.at(my_index)++;
  Rendezvous& rendezvous = group.open[call];  // std::map: stays valid while others insert
  if (!rendezvous.barrier) {
    rendezvous.barrier = simgrid::s4u::Barrier::create(static_cast<unsigned>(members.size()));
  }
  for (std::size_t i = 0; i < values.size(); ++i) {
    rendezvous.max_values[i] = std::max(rendezvous.max_values[i], values[i]);
  }
  const simgrid::s4u::BarrierPtr barrier = rendezvous.barrier;
  barrier->wait();
  const std::array<double, 2> result = rendezvous.max_values;
  if (++rendezvous.departed == members.size()) group.open.erase(call);
  return result;
}

double collective_max(const CollectiveContext& context, const MemberGroup& members,
                      std::size_t my_index, double value) {
  return collective_max(context, members, my_index, std::array<double, 2>{value, value})[0];
}

}  // namespace tessera::sim
