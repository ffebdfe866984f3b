// Which whole samples each rank of a spatial group keeps after the redistribution.
#include "spatial_redistribution.hpp"  // kernels/real/src

#include <gtest/gtest.h>

namespace tessera::kernels::real {
namespace {

TEST(KeptSamples, SplitTheMiniBatchEvenlyWhenTheRanksDivideIt) {
  for (std::int64_t rank = 0; rank < 4; ++rank) {
    const auto kept = kept_samples(8, 4, rank);
    EXPECT_EQ(kept.first, 2 * rank);
    EXPECT_EQ(kept.count, 2);
  }
}

TEST(KeptSamples, ShareEachSampleWhenThereAreFewerSamplesThanRanks) {
  // 2 samples over 4 ranks: ranks 0 and 1 hold sample 0, ranks 2 and 3 sample 1.
  const std::int64_t expected[] = {0, 0, 1, 1};
  for (std::int64_t rank = 0; rank < 4; ++rank) {
    const auto kept = kept_samples(2, 4, rank);
    EXPECT_EQ(kept.first, expected[rank]);
    EXPECT_EQ(kept.count, 1);
  }
  EXPECT_EQ(kept_samples(1, 8, 7).first, 0);  // one sample: everyone holds it (an all-gather)
}

TEST(KeptSamples, OtherDivisionsAreRefusedWithTheReason) {
  EXPECT_FALSE(redistribution_unsupported(6, 3).has_value());
  const auto why = redistribution_unsupported(3, 2);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("3 samples over a spatial group of 2 ranks"), std::string::npos);
  EXPECT_THROW(kept_samples(6, 4, 0), std::invalid_argument);
}

}  // namespace
}  // namespace tessera::kernels::real
