// Sharing a global batch in proportion to replica speeds (data_split.hpp).
#include <gtest/gtest.h>

#include <numeric>
#include <stdexcept>

#include "tessera/core/strategy/data_split.hpp"

namespace tessera {
namespace {

std::int64_t sum(const std::vector<std::int64_t>& shares) {
  return std::accumulate(shares.begin(), shares.end(), std::int64_t{0});
}

TEST(DataSplit, EqualSpeedsShareEqually) {
  EXPECT_EQ(split_in_proportion(12, {2.0, 2.0, 2.0}), (std::vector<std::int64_t>{4, 4, 4}));
}

TEST(DataSplit, SharesFollowSpeedsInWholeSamplesAndKeepTheGlobalBatch) {
  // 1.5 : 1 over 10 samples: 6 and 4 exactly.
  EXPECT_EQ(split_in_proportion(10, {1.5, 1.0}), (std::vector<std::int64_t>{6, 4}));
  // Exact shares 3.33, 3.33, 3.33 of 10: the leftover sample goes to the lowest index.
  EXPECT_EQ(split_in_proportion(10, {1.0, 1.0, 1.0}), (std::vector<std::int64_t>{4, 3, 3}));
  // Exact 7.2 and 2.8: the larger remainder (0.8) takes the leftover.
  EXPECT_EQ(split_in_proportion(10, {7.2, 2.8}), (std::vector<std::int64_t>{7, 3}));
  const auto shares = split_in_proportion(1000, {15.7, 15.7, 10.6, 10.6, 3.0});
  EXPECT_EQ(sum(shares), 1000);
  EXPECT_GT(shares[0], shares[2]);
  EXPECT_GT(shares[2], shares[4]);
}

TEST(DataSplit, EveryReplicaGetsAtLeastOneSample) {
  const auto shares = split_in_proportion(4, {100.0, 1.0, 1.0, 1.0});
  EXPECT_EQ(shares, (std::vector<std::int64_t>{1, 1, 1, 1}));
  const auto few = split_in_proportion(5, {1000.0, 1.0});
  EXPECT_EQ(few, (std::vector<std::int64_t>{4, 1}));
}

TEST(DataSplit, RefusesImpossibleSplits) {
  EXPECT_THROW(split_in_proportion(2, {1.0, 1.0, 1.0}), std::invalid_argument);
  EXPECT_THROW(split_in_proportion(4, {1.0, 0.0}), std::invalid_argument);
  EXPECT_THROW(split_in_proportion(4, {}), std::invalid_argument);
}

}  // namespace
}  // namespace tessera
