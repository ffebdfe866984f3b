#include <gtest/gtest.h>

#include "tessera/core/micro_batching/micro_batch_plan.hpp"

namespace tessera {
namespace {

TEST(MicroBatchPlan, TimesAddAndTheLargestWorkspaceCounts) {
  MicroBatchPlan plan{
      {{32, "fast", 3.21e-3, 32e6}, {32, "fast", 3.21e-3, 32e6}, {64, "slow", 6.5e-2, 64.0}}};
  EXPECT_EQ(plan.samples(), 128);
  EXPECT_DOUBLE_EQ(plan.seconds(), 3.21e-3 + 3.21e-3 + 6.5e-2);
  EXPECT_DOUBLE_EQ(plan.workspace_bytes(), 32e6);
  EXPECT_FALSE(plan.undivided());
  EXPECT_EQ(describe(plan), "2 x 32 fast + 1 x 64 slow");
}

}  // namespace
}  // namespace tessera
