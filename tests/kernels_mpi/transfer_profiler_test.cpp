// `tessera profile`'s collectives under mpirun (2 and 4 ranks): a row times the collective, not
// one rank waiting for another that is still flushing its caches; a resumed profile keeps the
// sizes it has.
#include <gtest/gtest.h>

#include "mpi_world.hpp"
#include "tessera/core/cost/profile_database.hpp"
#include "tessera/kernels/device.hpp"
#include "tessera/kernels/profile/kernel_profiler.hpp"

namespace tessera::kernels {
namespace {

using testing::world;

// A flush before each timed run held one rank in a send/receive while another was still
// writing its flush buffer. The check is on memory, not on time: the CPU device counts every
// byte it hands out, and a flush needs a buffer of cache_flush_bytes, so a peak far below that
// says no flush was made, however loaded the machine is.
TEST(ProfileCollectives, TimesMessagesWithoutACacheFlushOnAnyRank) {
  const auto device = open_cpu_device();
  ProfilerOptions options;
  options.cache_flush_bytes = 64.0 * 1024 * 1024;
  ProfileDatabase database;
  device->reset_peak_bytes_in_use();
  profile_collectives(world(), *device, {4000}, options, database);
  EXPECT_LT(device->peak_bytes_in_use(), 1024.0 * 1024) << "rank " << world().rank();
  if (world().rank() != 0) return;
  for (const char* op : {"sendrecv", "allreduce"}) {
    const auto rows = database.entries_for(device->info().name, op, Direction::forward,
                                           transfer_shape(4000, world().size()), DType::float32);
    ASSERT_EQ(rows.size(), 1u) << op;
    EXPECT_GT(rows.front().time_seconds, 0.0) << op;
  }
}

// A profile run again (resumed) keeps the sizes rank 0's file holds and times only the others,
// every rank skipping the same ones (a disagreement would deadlock in the first collective).
TEST(ProfileCollectives, SizesAnEarlierRunMeasuredAreNotTimedAgain) {
  const auto device = open_cpu_device();
  ProfilerOptions options;
  ProfileDatabase database;
  const std::string name = device->info().name;
  if (world().rank() == 0) {
    for (const char* op : {"sendrecv", "allreduce"}) {
      database.add(transfer_row(name, op, 4000, world().size(), 123.0));
    }
  }
  profile_collectives(world(), *device, {4000, 8000}, options, database);
  if (world().rank() != 0) return;
  for (const char* op : {"sendrecv", "allreduce"}) {
    const auto kept = database.entries_for(name, op, Direction::forward,
                                           transfer_shape(4000, world().size()), DType::float32);
    ASSERT_EQ(kept.size(), 1u) << op;
    EXPECT_EQ(kept.front().time_seconds, 123.0) << op;
    const auto timed = database.entries_for(name, op, Direction::forward,
                                            transfer_shape(8000, world().size()), DType::float32);
    ASSERT_EQ(timed.size(), 1u) << op;
    EXPECT_LT(timed.front().time_seconds, 123.0) << op;
  }
}

}  // namespace
}  // namespace tessera::kernels
