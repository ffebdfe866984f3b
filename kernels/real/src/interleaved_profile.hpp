#pragma once
// A point's rank re-timing its own kernels between the measured steps: the InterleavedProfiler
// of what this rank runs at the point, and its rows brought to rank 0.
#include <memory>

#include "tessera/core/cost/profile_database.hpp"
#include "tessera/core/loading/scenario_loader.hpp"
#include "tessera/core/strategy/step_program.hpp"
#include "tessera/kernels/communicator.hpp"
#include "tessera/kernels/device.hpp"
#include "tessera/kernels/profile/interleaved_profiler.hpp"
#include "tessera/kernels/real/real_point.hpp"

namespace tessera::kernels::real {

// Collective over the point's `ranks`: this rank's profiler of the rows `earlier` holds for the
// kernels, updates and gradient sums it runs at `point` (each rank its own stage's at a pipelined
// point, as `tessera profile` under mpirun), on `device`; null on every rank when one of them could
// not make its own (out of memory for the cache-flush buffer, say). `program`: the rank's step
// program, whose gradient buckets all-reduced among all of `ranks` are timed too. `asked`: its
// caches and whether it times rank passes.
std::unique_ptr<InterleavedProfiler> interleaved_profiler_for(const LoadedScenario& loaded,
                                                              const SweepPoint& point,
                                                              const StepProgram& program,
                                                              Communicator& ranks, Device& device,
                                                              const ProfileDatabase& earlier,
                                                              const InterleavedProfile& asked);

// Collective: rank 0's rows, then the other ranks' rows of kernels rank 0 did not time, into
// `profile` on rank 0.
void gather_interleaved_rows(Communicator& ranks, const InterleavedProfiler* profiler,
                             const DeviceInfo& device, InterleavedProfile& profile);

}  // namespace tessera::kernels::real
