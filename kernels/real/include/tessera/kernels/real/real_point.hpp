#pragma once
// One sweep point trained for real: warm-up steps, then measured steps, on the first
// point.config.gpus() ranks of `world` (one rank per device: the rank's GPU when this machine has
// CUDA devices, with NCCL for the collectives and halos, else the CPU with oneDNN and MPI). The
// result is in the common schema with provenance "measured": the median measured step of the
// slowest rank, its per-category breakdown, the bytes it allocated, the losses in the
// note. A point needing more ranks than the run has, or model-parallel stages, is skipped with the
// reason; a rank out of device memory makes the point "does not fit", never a crash.
#include "tessera/core/cost/profile_database.hpp"
#include "tessera/core/loading/scenario_loader.hpp"
#include "tessera/core/result/result_schema.hpp"
#include "tessera/core/result/timeline.hpp"
#include "tessera/kernels/communicator.hpp"

namespace tessera::kernels::real {

// Bad input found by a rank before or during training (a malformed data set, a NaN in a sample),
// thrown on every rank of the point at once, after they compared notes in a collective, so no
// rank is left waiting for another: the command stops with exit 2. Ranks that found no problem
// themselves carry a message pointing at the ones that did.
class EveryRankInputError : public InputError {
 public:
  explicit EveryRankInputError(const InputError& error) : InputError(error) {}
};

// A measured step as the trace shows it: every traced rank's spans and its device memory in use.
struct MeasuredTimeline {
  std::vector<TimelineEvent> events;
  std::vector<MemorySample> memory;
};

// The point's kernels timed again between its measured steps (interleaved_profiler.hpp), for a
// comparison whose two sides see the same machine.
struct InterleavedProfile {
  ProfileDatabase rows;      // on rank 0: every rank's rows (rank 0's where two ranks share one)
  bool warm_caches = false;  // in: time runs back to back (tessera profile --warm-caches)
  bool rank_passes = false;  // in: every other slot a pass, a moment of the ranks' jitter
  RunCaches caches = RunCaches::unrecorded;  // out: what the timed runs found in the caches
};

// Collective over `world`: every rank calls it with the same point. The returned result is
// complete on rank 0. With `profiles` (may be null) every convolution runs the scenario's
// micro-batching plan made from them (split ones on their haloed windows) (the plan the simulator
// costs and the result records). With `timeline` (non-null on every rank, or on none), rank 0
// receives the measured timeline of the reported step (the slowest rank's median step, as the same
// step of every traced rank) of the ranks in outputs.trace_gpus, in the trace format the simulator
// writes, with their device memory in use over it. Throws EveryRankInputError on every rank when
// the data set is malformed; a loss that stops being finite ends the point's training, which is
// then `failed` with the step in its note. With `interleaved` (non-null on every rank, or on
// none; needs `profiles`) every row `profiles` holds for the rank's kernels and updates is timed
// again between the measured steps, for about as long as the steps take, and rank 0 receives the
// rows' medians.
PointResult run_real_point(const LoadedScenario& loaded, const SweepPoint& point,
                           Communicator& world, const ProfileDatabase* profiles = nullptr,
                           MeasuredTimeline* timeline = nullptr,
                           InterleavedProfile* interleaved = nullptr);

}  // namespace tessera::kernels::real
