#pragma once
// The machine's rank jitter (core's rank_jitter.hpp), measured: every rank runs its kernels of
// the profile plan once each, in turn, at their whole batch with the fastest algorithm the
// profile holds (a pass, about a step's compute), all ranks starting each pass together, again
// and again. Each rank's time of each pass becomes a "rank_pass" row (rank_passes.hpp).
#include <vector>

#include "tessera/core/cost/profile_database.hpp"
#include "tessera/core/point/profile_plan.hpp"

namespace tessera::kernels {

class Communicator;
class Device;

// Passes until `seconds` have gone by and at least `min_passes` were timed (every rank the same
// number). Every rank must call it; rows are added on rank 0. A rank none of whose kernels has a
// row times nothing, and its passes are not kept.
void profile_rank_passes(Communicator& ranks, Device& device,
                         const std::vector<KernelToProfile>& kernels,
                         const ProfileDatabase& profiles, double seconds, int min_passes,
                         ProfileDatabase& database);

}  // namespace tessera::kernels
