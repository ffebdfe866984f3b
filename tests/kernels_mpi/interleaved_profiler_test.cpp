// A profile timed again between a real run's steps (InterleavedProfiler), under mpirun with 2
// and 4 ranks: every successful row of the rank's kernels comes back with a new median, the rows
// that cannot run are left out, and ranks with unequal work (a pipeline's stages) still end each
// slot together, whether they time the same row or each a row of its own; with rank passes,
// every other slot is a pass over the fastest rows, a moment of the ranks' jitter (a rank_pass
// row).
#include "tessera/kernels/profile/interleaved_profiler.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>

#include "mpi_world.hpp"
#include "tessera/core/cost/rank_passes.hpp"
#include "tessera/core/loading/scenario_loader.hpp"
#include "tessera/kernels/device.hpp"

namespace tessera::kernels {
namespace {

using testing::world;

std::vector<KernelToProfile> conv1_kernels() {
  std::vector<KernelToProfile> conv1;
  for (const auto& kernel : kernels_to_profile(load_scenario(
           std::string(TESSERA_TEST_DATA_DIR) + "/scenarios/good/profile_small_cnn.yaml"))) {
    if (kernel.layer.name == "conv1") conv1.push_back(kernel);
  }
  return conv1;
}

ProfilerOptions quick() {
  ProfilerOptions options;
  options.min_runs = options.max_runs = 1;
  options.seconds_per_measurement = 0;
  options.skipped_algorithm_prefixes = {"ref:"};
  return options;
}

std::string key_of(const ProfileEntry& row) {
  return row.op + "|" + to_string(row.direction) + "|" + row.shape + "|" +
         std::to_string(row.micro_batch) + "|" + row.algorithm;
}

TEST(InterleavedProfiler, TimesEverySuccessfulRowAgainAndLeavesTheOthersOut) {
  const auto device = open_cpu_device();
  const auto kernels = conv1_kernels();
  ProfileDatabase earlier;
  profile_kernels(*device, kernels, quick(), earlier);
  std::set<std::string> expected;
  for (const auto& row : earlier.rows()) {
    if (row.ok && row.algorithm != "fused") expected.insert(key_of(row));
  }
  ASSERT_FALSE(expected.empty());
  // Rows that cannot be timed again: one that failed, one of another device, one the library
  // does not offer.
  const auto& kernel = kernels.front();
  ProfileEntry failed{.device = device->info().name,
                      .op = kernel.op,
                      .direction = kernel.direction,
                      .shape = kernel.shape,
                      .micro_batch = kernel.batch,
                      .algorithm = "x64:gemm:jit/failed",
                      .ok = false};
  ProfileEntry elsewhere = failed;
  elsewhere.device = "another device";
  elsewhere.ok = true;
  ProfileEntry unknown = failed;
  unknown.algorithm = "no such algorithm";
  unknown.ok = true;
  for (const auto& row : {failed, elsewhere, unknown}) earlier.add(row);

  ProfilerOptions options = quick();
  options.caches = RunCaches::step_like;  // each visit runs the row on a second set of operands
  options.cache_flush_bytes = 1024.0 * 1024;
  InterleavedProfiler profiler(*device, world(), kernels, {}, earlier, options);
  EXPECT_EQ(profiler.caches(), RunCaches::step_like);
  EXPECT_EQ(profiler.row_count(), expected.size());
  // Slots until every rank's every row was timed twice (the loop's end decided collectively).
  int slots = 0;
  for (int slot = 0; slot < 1000; ++slot) {
    profiler.measure_for(0.002);
    ++slots;
    double fewest_negated = -static_cast<double>(profiler.fewest_visits());
    world().allreduce_max(&fewest_negated, 1);
    if (-fewest_negated >= 2) break;
  }
  EXPECT_GE(profiler.fewest_visits(), 2u);
  // The ranks went row by row together: each visited each row as often.
  double visits = static_cast<double>(profiler.fewest_visits()), most = visits;
  world().allreduce_max(&most, 1);
  EXPECT_EQ(visits, most) << "rank " << world().rank();
  std::set<std::string> timed;
  for (const auto& row : profiler.medians().rows()) {
    EXPECT_GT(row.time_seconds, 0.0) << key_of(row);
    EXPECT_TRUE(row.ok);
    EXPECT_EQ(row.device, device->info().name);
    timed.insert(key_of(row));
  }
  EXPECT_EQ(timed, expected);
  EXPECT_GT(slots, 0);
  // No passes were asked for: no moments of rank jitter.
  EXPECT_EQ(profiler.rank_passes().size(), 0u);
}

// With rank passes every other slot runs each kernel once at its fastest whole-batch row, on
// every rank together, and becomes a moment of the rank jitter: a rank_pass row per pass, named
// by rank and slot. (How long a pass reads against its rows' medians depends on the machine's
// load at that moment, so it is not asserted: a bound of ten times failed under two busy loops.)
TEST(InterleavedProfiler, WithRankPassesEveryOtherSlotIsAPassOverTheFastestRows) {
  const auto device = open_cpu_device();
  const auto kernels = conv1_kernels();
  ProfileDatabase earlier;
  profile_kernels(*device, kernels, quick(), earlier);
  InterleavedProfiler profiler(*device, world(), kernels, {}, earlier, quick());
  profiler.time_rank_passes();
  for (int slot = 0; slot < 6; ++slot) profiler.measure_for(0.001);
  // The pass's rows were timed: each kernel's fastest row at its whole batch has a median.
  const auto medians = profiler.medians();
  for (const auto& kernel : kernels) {
    double fastest = 0;
    for (const auto& row : medians.entries_for(device->info().name, kernel.op, kernel.direction,
                                               kernel.shape, kernel.dtype)) {
      if (row.micro_batch != kernel.batch) continue;
      // Each row's earlier time chose it; its median here is what the pass is scaled by.
      const auto before = earlier.best(device->info().name, kernel.op, kernel.direction,
                                       kernel.shape, kernel.dtype, kernel.batch, 1e9);
      if (before && row.algorithm == before->algorithm) fastest = row.time_seconds;
    }
    EXPECT_GT(fastest, 0.0) << kernel.shape;
  }
  std::set<std::string> shapes;
  for (const auto& row : profiler.rank_passes().rows()) {
    EXPECT_EQ(row.op, kRankPassOp);
    EXPECT_GT(row.time_seconds, 0.0) << row.shape;
    EXPECT_TRUE(std::isfinite(row.time_seconds)) << row.shape;
    shapes.insert(row.shape);
  }
  const auto shape = [&](int slot) {
    return rank_pass_shape(world().size(), world().rank(), slot);
  };
  EXPECT_EQ(shapes, (std::set<std::string>{shape(0), shape(2), shape(4)}));
}

TEST(InterleavedProfiler, RanksWithoutRowsWaitForTheOthersInEachSlot) {
  const auto device = open_cpu_device();
  // Rank 0 alone has kernels, as a pipeline's ranks each have their own stage's.
  auto kernels = world().rank() == 0 ? conv1_kernels() : std::vector<KernelToProfile>{};
  ProfileDatabase earlier;
  profile_kernels(*device, kernels, quick(), earlier);
  InterleavedProfiler profiler(*device, world(), kernels, {}, earlier, quick());
  profiler.time_rank_passes();  // a pass of rank 0's rows meets the others' empty ones
  for (int slot = 0; slot < 4; ++slot) profiler.measure_for(0.001);
  if (world().rank() == 0) {
    EXPECT_GT(profiler.medians().size(), 0u);
    EXPECT_EQ(profiler.rank_passes().size(), 2u);
  } else {
    EXPECT_EQ(profiler.row_count(), 0u);
    EXPECT_EQ(profiler.medians().size(), 0u);
    EXPECT_EQ(profiler.rank_passes().size(), 0u);
  }
}

// At a pipelined point each rank times its own stage's rows, in an order drawn each round: a rank
// with fewer rows visits them more often, and each slot still ends on every rank together (the
// slot loop below is collective), a rank without rows meeting the others all the same.
TEST(InterleavedProfiler, InDrawnOrderEachRankVisitsItsOwnRows) {
  const auto device = open_cpu_device();
  auto kernels = conv1_kernels();
  // Rank 0 every direction of conv1, the others its forward alone; the last rank none at all.
  if (world().rank() != 0) {
    std::erase_if(kernels,
                  [](const KernelToProfile& k) { return k.direction != Direction::forward; });
  }
  if (world().size() > 2 && world().rank() == world().size() - 1) kernels.clear();
  ProfileDatabase earlier;
  profile_kernels(*device, kernels, quick(), earlier);
  InterleavedProfiler profiler(*device, world(), kernels, {}, earlier, quick(), RowPairing::drawn);
  const bool has_rows = profiler.row_count() > 0;
  for (int slot = 0; slot < 1000; ++slot) {
    profiler.measure_for(0.002);
    double fewest_negated = has_rows ? -static_cast<double>(profiler.fewest_visits()) : -2.0;
    world().allreduce_max(&fewest_negated, 1);
    if (-fewest_negated >= 2) break;
  }
  if (has_rows) {
    EXPECT_GE(profiler.fewest_visits(), 2u);
    EXPECT_EQ(profiler.medians().size(), profiler.row_count());
  } else {
    EXPECT_EQ(profiler.medians().size(), 0u);
  }
}

// Going row by row together, the ranks also time the all-reduces of the step's buckets, each
// distinct size once a slot in turn, into rows the simulator reads at those sizes; at a pipeline
// (rows drawn) they do not, as its stages do not all-reduce among all the ranks.
TEST(InterleavedProfiler, TimesTheBucketsAllReducesAmongTheRanks) {
  const auto device = open_cpu_device();
  const std::vector<double> buckets{4096, 1e6, 4096};
  InterleavedProfiler profiler(*device, world(), {}, {}, ProfileDatabase{}, quick(),
                               RowPairing::same_row, buckets);
  ASSERT_EQ(profiler.allreduce_count(), 2u);
  for (int slot = 0; slot < 4; ++slot) profiler.measure_for(0.001);
  const auto rows = profiler.medians().rows();
  std::set<std::string> shapes;
  for (const auto& row : rows) {
    EXPECT_EQ(row.op, "allreduce");
    EXPECT_GT(row.time_seconds, 0.0);
    shapes.insert(row.shape);
  }
  EXPECT_EQ(shapes, (std::set<std::string>{transfer_shape(4096, world().size()),
                                           transfer_shape(1e6, world().size())}));
  InterleavedProfiler drawn(*device, world(), {}, {}, ProfileDatabase{}, quick(), RowPairing::drawn,
                            buckets);
  EXPECT_EQ(drawn.allreduce_count(), 0u);
}

TEST(InterleavedProfiler, TimesTheOptimizerUpdateRows) {
  const auto device = open_cpu_device();
  const ParameterKernelToProfile update{.optimizer = Optimizer::adam,
                                        .parameters = 4096,
                                        .op = "update_adam",
                                        .shape = "params 4096"};
  ProfileDatabase earlier;
  profile_parameter_kernels(*device, {update}, quick(), earlier);
  ASSERT_EQ(earlier.size(), 1u);
  ProfilerOptions options = quick();
  set_cold_caches(options, *device);  // on a CPU step-like: a second update runs before each
  InterleavedProfiler profiler(*device, world(), {}, {update}, earlier, options);
  ASSERT_EQ(profiler.row_count(), 1u);
  profiler.measure_for(0.001);
  const auto rows = profiler.medians().rows();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows.front().op, "update_adam");
  EXPECT_GT(rows.front().time_seconds, 0.0);
}

}  // namespace
}  // namespace tessera::kernels
