#pragma once
// A profile measured again between the steps of a real run (`tessera run --backend real
// --interleaved-profile`), so that a comparison's two sides see the same machine: on a shared
// machine the speed moves over seconds and minutes, and a profile measured before training saw
// other moments than the training did (docs/measurements/2026-12-01-cpu-interleaved-profile.md).
// Every successful row the earlier profile holds for this rank's kernels (every algorithm and
// micro-batch size, so that a plan made from the new rows chooses among the same candidates) and
// optimizer updates is run again, one run per visit, in turn, in the time slots the trainer leaves
// between its measured steps; each row's new time is the median over its visits.
//
// Collective: every rank of the point calls measure_for() after each measured step. The ranks go
// one row at a time, as `tessera profile` does under mpirun: a rank done with its row keeps
// running it until the others are done with theirs, so no row is timed beside an idle rank.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tessera/core/cost/profile_database.hpp"
#include "tessera/core/point/profile_plan.hpp"
#include "tessera/kernels/profile/kernel_profiler.hpp"

namespace tessera::kernels {

class Communicator;
class Device;
class DeviceMemory;

class InterleavedProfiler {
 public:
  // `kernels` and `updates`: what this rank runs at the point; `earlier`: the profile the run
  // planned from (its rows on `device` are the ones timed again). The options' cache flush and
  // skipped algorithms apply; their measurement budget does not (one run per visit).
  InterleavedProfiler(Device& device, Communicator& ranks, std::vector<KernelToProfile> kernels,
                      std::vector<UpdateToProfile> updates, const ProfileDatabase& earlier,
                      const ProfilerOptions& options);
  ~InterleavedProfiler();
  InterleavedProfiler(const InterleavedProfiler&) = delete;
  InterleavedProfiler& operator=(const InterleavedProfiler&) = delete;

  // Times rows, each rank its next one, until `seconds` have passed on some rank.
  void measure_for(double seconds);

  // This rank's rows visited at least once, each with its median time.
  ProfileDatabase medians() const;
  std::size_t row_count() const;
  // The fewest visits any row had (0 while some row was never visited).
  std::size_t fewest_visits() const;

 private:
  struct Row;
  double time_row(Row& row);

  Device& device_;
  Communicator& ranks_;
  std::vector<KernelToProfile> kernels_;
  std::vector<UpdateToProfile> updates_;
  std::vector<Row> rows_;
  std::size_t next_ = 0;
  std::unique_ptr<DeviceMemory> flush_;
};

}  // namespace tessera::kernels
