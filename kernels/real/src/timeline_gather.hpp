#pragma once
// The measured timelines of a point's ranks, brought to rank 0. Ranks of different pipeline
// stages play different programs, so each rank's events travel whole (names included).
#include <set>
#include <vector>

#include "tessera/core/result/timeline.hpp"
#include "tessera/kernels/communicator.hpp"
#include "tessera/kernels/real/real_point.hpp"

namespace tessera::kernels::real {

// Collective over `ranks`. On rank 0: the events and device memory samples of the ranks in
// `wanted` (ranks of `ranks`), in rank order, each with its gpu set to its rank; elsewhere empty.
MeasuredTimeline gather_timeline(Communicator& ranks, const std::vector<TimelineEvent>& events,
                                 const std::vector<MemorySample>& memory,
                                 const std::set<int>& wanted);

}  // namespace tessera::kernels::real
