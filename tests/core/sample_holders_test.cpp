// The data store's holders of a step's samples (sample_holders.hpp): uniform over the nodes,
// independent from sample to sample, the same for the same draw and new for another.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "tessera/core/strategy/sample_holders.hpp"

namespace tessera {
namespace {

TEST(SampleHolders, ADrawGivesTheSameHoldersEveryTime) {
  for (std::int64_t replica = 0; replica < 50; ++replica) {
    EXPECT_EQ(sample_holder(3, replica, 1, 256), sample_holder(3, replica, 1, 256));
  }
}

TEST(SampleHolders, HoldersAreNodesOfTheJob) {
  for (std::int64_t sample = 0; sample < 1000; ++sample) {
    const auto holder = sample_holder(7, 2, sample, 5);
    EXPECT_GE(holder, 0);
    EXPECT_LT(holder, 5);
  }
  EXPECT_EQ(sample_holder(7, 2, 3, 1), 0);
}

// Over 256 nodes and 256,000 samples each node holds 1,000 on average; a fair draw keeps every
// count within 15% of it (about five standard deviations) and the chi-square near its 255.
TEST(SampleHolders, EveryNodeHoldsItsShareOverManySamples) {
  const std::int64_t nodes = 256;
  std::vector<int> held(nodes, 0);
  for (std::int64_t replica = 0; replica < 1000; ++replica) {
    for (std::int64_t sample = 0; sample < nodes; ++sample) {
      ++held[static_cast<std::size_t>(sample_holder(11, replica, sample, nodes))];
    }
  }
  double chi_square = 0;
  for (int count : held) {
    EXPECT_NEAR(count, 1000, 150);
    chi_square += (count - 1000.0) * (count - 1000.0) / 1000.0;
  }
  EXPECT_LT(chi_square, 360);  // 255 degrees of freedom: above 360 one time in 10^5
  EXPECT_GT(chi_square, 170);  // too even is not a random draw either
}

// One sample per node, N nodes: the most loaded holder serves about ln N / ln ln N samples, not
// one, and another draw is another step.
TEST(SampleHolders, OneSamplePerNodeLeavesSomeHoldersServingSeveral) {
  const std::int64_t nodes = 256;
  for (std::uint64_t draw = 0; draw < 20; ++draw) {
    std::vector<int> held(nodes, 0);
    for (std::int64_t replica = 0; replica < nodes; ++replica) {
      ++held[static_cast<std::size_t>(sample_holder(draw, replica, 0, nodes))];
    }
    const int most = *std::max_element(held.begin(), held.end());
    EXPECT_GE(most, 3);
    EXPECT_LE(most, 9);
  }
  int differing = 0;
  for (std::int64_t replica = 0; replica < nodes; ++replica) {
    differing += sample_holder(0, replica, 0, nodes) != sample_holder(1, replica, 0, nodes);
  }
  EXPECT_GT(differing, nodes / 2);
}

}  // namespace
}  // namespace tessera
