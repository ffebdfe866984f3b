#pragma once
// The measured timelines of a point's ranks, brought to rank 0. Every rank played the same
// program, so their events come in the same order with the same names: only the times (and the
// track and category, as a check) travel.
#include <set>
#include <vector>

#include "tessera/core/timeline.hpp"
#include "tessera/kernels/communicator.hpp"

namespace tessera::kernels::real {

// Collective over `ranks`. On rank 0: the events of the ranks in `wanted` (ranks of `ranks`),
// each event's gpu set to its rank; elsewhere empty. Throws std::logic_error when the ranks'
// timelines differ in length or shape.
std::vector<TimelineEvent> gather_timelines(Communicator& ranks,
                                            const std::vector<TimelineEvent>& mine,
                                            const std::set<int>& wanted);

// Collective over `ranks`. On rank 0: the device memory samples of the ranks in `wanted`, each
// sample's gpu set to its rank (the ranks may hold different numbers of them); elsewhere empty.
std::vector<MemorySample> gather_memory_samples(Communicator& ranks,
                                                const std::vector<MemorySample>& mine,
                                                const std::set<int>& wanted);

}  // namespace tessera::kernels::real
