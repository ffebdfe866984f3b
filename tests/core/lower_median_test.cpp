#include "tessera/core/common/lower_median.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace tessera {
namespace {

TEST(LowerMedian, IsTheMiddleOrTheLowerOfTheTwoMiddleValues) {
  EXPECT_EQ(lower_median(std::vector<double>{3.0}), 3.0);
  EXPECT_EQ(lower_median(std::vector<double>{5.0, 1.0, 3.0}), 3.0);
  // Even counts: a value that was measured, never the mean of two (2.5 here).
  EXPECT_EQ(lower_median(std::vector<double>{4.0, 1.0, 3.0, 2.0}), 2.0);
  EXPECT_THROW(lower_median(std::vector<double>{}), std::invalid_argument);
}

TEST(LowerMedian, OrdersRecordsByTheGivenKeyAndKeepsTheWholeRecord) {
  struct Step {
    int index;
    double seconds;
  };
  const std::vector<Step> steps{{0, 0.9}, {1, 0.2}, {2, 0.5}, {3, 0.7}};
  const Step median =
      lower_median(steps, [](const Step& a, const Step& b) { return a.seconds < b.seconds; });
  EXPECT_EQ(median.index, 2);
  EXPECT_EQ(median.seconds, 0.5);
}

}  // namespace
}  // namespace tessera
