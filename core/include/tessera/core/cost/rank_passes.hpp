#pragma once
// Profile rows that time every rank of a machine computing at once: `tessera profile` under
// mpirun runs each rank's kernels once in turn (a pass, about a step's compute), all ranks
// together, again and again, and keeps each rank's time of each pass (op "rank_pass", shape
// "ranks R rank r pass i"). Over their medians they are the machine's rank jitter
// (rank_jitter.hpp), which validate-sim writes into the cluster file it simulates.
#include <string>

#include "tessera/core/cost/profile_database.hpp"
#include "tessera/core/scenario/rank_jitter.hpp"

namespace tessera {

inline constexpr const char* kRankPassOp = "rank_pass";

std::string rank_pass_shape(int ranks, int rank, int pass);

// Rank `rank`'s time of pass `pass` among `ranks` ranks of `device`, as a profile row.
ProfileEntry rank_pass_row(const std::string& device, int ranks, int rank, int pass,
                           double seconds);

// Pass i's time of rank r over rank r's median pass time, for every pass all `ranks` ranks of
// `device` timed; empty when the profile has no passes among that many ranks.
RankJitter rank_jitter_from_passes(const ProfileDatabase& database, const std::string& device,
                                   int ranks);

}  // namespace tessera
