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

TEST(ProfileCollectives, ASmallMessageIsNotTimedWithAnotherRanksCacheFlush) {
  const auto device = open_cpu_device();
  ProfilerOptions options;
  // Every rank but the first asks for a flush of 256 MB before each run: tens of milliseconds
  // the first would spend waiting in each timed send/receive if the flush were made.
  options.cache_flush_bytes = world().rank() == 0 ? 0 : 256.0 * 1024 * 1024;
  ProfileDatabase database;
  profile_collectives(world(), *device, {4000}, options, database);
  if (world().rank() != 0) return;
  for (const char* op : {"sendrecv", "allreduce"}) {
    const auto rows = database.entries_for(device->info().name, op, Direction::forward,
                                           transfer_shape(4000, world().size()), DType::float32);
    ASSERT_EQ(rows.size(), 1u) << op;
    EXPECT_LT(rows.front().time_seconds, 0.01) << op;
  }
}

}  // namespace
}  // namespace tessera::kernels
