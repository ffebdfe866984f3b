// All-reduce entry point: dispatches to the algorithm's file.
#include <optional>
#include <vector>

#include <simgrid/s4u/Actor.hpp>

#include "tessera/simulator/collectives/collectives.hpp"

namespace tessera::sim {

std::string to_string(AllreduceAlgorithm algorithm) {
  switch (algorithm) {
    case AllreduceAlgorithm::ring:
      return "ring";
    case AllreduceAlgorithm::tree:
      return "tree";
    case AllreduceAlgorithm::hierarchical:
      return "hierarchical";
  }
  return "unknown";
}

namespace {

// The measured time of this all-reduce, where the machine's profile has one: members all on one
// node (the profile's ranks ran on one machine) and not standing for replicas elsewhere.
std::optional<double> measured_seconds(const CollectiveContext& context, const MemberGroup& members,
                                       double bytes) {
  if (context.measured_allreduce == nullptr || context.replicas != 1 || members.size() < 2) {
    return std::nullopt;
  }
  const int node = members[0] / context.gpus_per_node;
  for (int rank : members.ranks()) {
    if (rank / context.gpus_per_node != node) return std::nullopt;
  }
  return context.measured_allreduce->seconds(static_cast<int>(members.size()), bytes);
}

}  // namespace

bool plays_measured_allreduce(const CollectiveContext& context, const MemberGroup& members,
                              double bytes) {
  return measured_seconds(context, members, bytes).has_value();
}

void allreduce(const CollectiveContext& context, const MemberGroup& members, std::size_t my_index,
               double bytes, AllreduceAlgorithm algorithm) {
  if (const auto seconds = measured_seconds(context, members, bytes)) {
    // Every member starts when the last arrives, as the blocking call it was measured as.
    collective_max(context, members, my_index, 0.0);
    simgrid::s4u::this_actor::sleep_for(*seconds);
    return;
  }
  switch (algorithm) {
    case AllreduceAlgorithm::ring:
      ring_allreduce(context, members, my_index, bytes);
      return;
    case AllreduceAlgorithm::tree:
      tree_allreduce(context, members, my_index, bytes);
      return;
    case AllreduceAlgorithm::hierarchical:
      hierarchical_allreduce(context, members, my_index, bytes);
      return;
  }
}

void allreduce(const CollectiveContext& context, const std::vector<int>& members,
               std::size_t my_index, double bytes, AllreduceAlgorithm algorithm) {
  allreduce(context, member_group(members), my_index, bytes, algorithm);
}

}  // namespace tessera::sim
