#pragma once
// Profile rows measured on several ranks, brought to rank 0: `tessera profile` under mpirun and
// the interleaved profile of a real run write one database from every rank's rows.
#include <string>

#include "tessera/core/cost/profile_database.hpp"
#include "tessera/kernels/communicator.hpp"

namespace tessera::kernels {

// On rank 0 the rows every other rank passed, in rank order (empty on the others); `what` names
// them in a parse error ("rank 2's <what>"). Every rank must call it.
ProfileDatabase rows_of_other_ranks(Communicator& ranks, const ProfileDatabase& mine,
                                    const ProfileMetadata& metadata, const std::string& what);

}  // namespace tessera::kernels
