// Rank passes (profile rows of every rank computing at once) read back as the machine's rank
// jitter: each pass's time over that rank's median pass, only passes every rank timed, only
// those among the asked number of ranks on the asked device.
#include "tessera/core/cost/rank_passes.hpp"

#include <gtest/gtest.h>

namespace tessera {
namespace {

TEST(RankPasses, EachPassOverItsRanksMedianPass) {
  ProfileDatabase rows;
  // Rank 0's passes 0.10, 0.11, 0.12 s (median 0.11); rank 1's 0.20, 0.30, 0.20 (lower median
  // of 0.20, 0.20, 0.30: 0.20).
  const double seconds[3][2] = {{0.10, 0.20}, {0.11, 0.30}, {0.12, 0.20}};
  for (int pass = 0; pass < 3; ++pass) {
    for (int rank = 0; rank < 2; ++rank)
      rows.add(rank_pass_row("cpu", 2, rank, pass, seconds[pass][rank]));
  }
  rows.add(rank_pass_row("cpu", 2, 0, 3, 0.5));  // pass 3: rank 1 has none, so it is left out
  rows.add(rank_pass_row("cpu", 4, 0, 0, 9.0));  // among 4 ranks: another measurement
  rows.add(rank_pass_row("gpu", 2, 0, 0, 9.0));  // another device
  const auto jitter = rank_jitter_from_passes(rows, "cpu", 2);
  ASSERT_EQ(jitter.moments(), 3u);
  EXPECT_DOUBLE_EQ(jitter.slowdowns[0][0], 0.10 / 0.11);
  EXPECT_DOUBLE_EQ(jitter.slowdowns[1][1], 0.30 / 0.20);
  EXPECT_DOUBLE_EQ(jitter.slowdowns[2][0], 0.12 / 0.11);
  EXPECT_TRUE(rank_jitter_from_passes(rows, "cpu", 3).empty());
  EXPECT_TRUE(describes_machine(kRankPassOp));
  EXPECT_FALSE(describes_machine("conv"));
}

}  // namespace
}  // namespace tessera
