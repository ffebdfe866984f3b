#include "interleaved_profile.hpp"

#include <exception>

#include "tessera/core/point/profile_plan.hpp"
#include "tessera/kernels/profile/gathered_rows.hpp"

namespace tessera::kernels::real {

std::unique_ptr<InterleavedProfiler> interleaved_profiler_for(const LoadedScenario& loaded,
                                                              const SweepPoint& point,
                                                              const StepProgram& program,
                                                              Communicator& ranks, Device& device,
                                                              const ProfileDatabase& earlier,
                                                              const InterleavedProfile& asked) {
  LoadedScenario this_point = loaded;
  this_point.points = {point};
  ProfilerOptions options;
  if (!asked.warm_caches) set_cold_caches(options, device);
  // The buckets the step all-reduces among every rank of the point (not a group of them).
  std::vector<double> allreduce_bytes;
  if (program.allreduce_group_size == ranks.size()) {
    for (const auto& op : program.ops) {
      if (op.kind == StepOpKind::gradient_allreduce) allreduce_bytes.push_back(op.bytes);
    }
  }
  std::unique_ptr<InterleavedProfiler> profiler;
  try {
    profiler = std::make_unique<InterleavedProfiler>(
        device, ranks, kernels_to_profile(this_point, {ranks.rank(), ranks.size()}),
        parameter_kernels_to_profile(this_point, {ranks.rank(), ranks.size()}), earlier, options,
        point.plan.stages > 1 ? RowPairing::drawn : RowPairing::same_row, allreduce_bytes);
  } catch (const std::exception&) {
    profiler.reset();
  }
  double missing = profiler ? 0.0 : 1.0;
  ranks.allreduce_max(&missing, 1);
  if (missing > 0) profiler.reset();
  if (profiler && asked.rank_passes) profiler->time_rank_passes();
  return profiler;
}

void gather_interleaved_rows(Communicator& ranks, const InterleavedProfiler* profiler,
                             const DeviceInfo& device, InterleavedProfile& profile) {
  ProfileDatabase mine = profiler ? profiler->medians() : ProfileDatabase{};
  if (profiler) {
    for (const ProfileEntry& row : profiler->rank_passes().rows()) mine.add(row);
  }
  const ProfileMetadata metadata{.device = device.name, .libraries = device.library};
  const ProfileDatabase theirs = rows_of_other_ranks(ranks, mine, metadata, "interleaved profile");
  if (ranks.rank() != 0) return;
  if (profiler) profile.caches = profiler->caches();
  for (const ProfileEntry& row : mine.rows()) profile.rows.add(row);
  for (const ProfileEntry& row : theirs.rows()) {
    if (mine.entries_for(row.device, row.op, row.direction, row.shape, row.dtype).empty()) {
      profile.rows.add(row);
    }
  }
}

}  // namespace tessera::kernels::real
