// All-reduce entry point: dispatches to the algorithm's file.
#include <vector>

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

void allreduce(const CollectiveContext& context, const MemberGroup& members, std::size_t my_index,
               double bytes, AllreduceAlgorithm algorithm) {
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
