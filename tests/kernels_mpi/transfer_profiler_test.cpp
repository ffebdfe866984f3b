// `tessera profile`'s collectives under mpirun (2 and 4 ranks): a row times the collective, not
// one rank waiting for another that is still flushing its caches.
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

}  // namespace
}  // namespace tessera::kernels
