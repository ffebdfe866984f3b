// Measured against simulated: the error per point, the MAPE over compared points only, and the
// reasons kept for points that could not be compared.
#include <gtest/gtest.h>

#include "test_support.hpp"

#include "tessera/core/result/sim_real_comparison.hpp"

namespace tessera {
namespace {

using test::contains;

PointResult result(std::int64_t point, double step_seconds, PointStatus status = PointStatus::ok) {
  PointResult p;
  p.point = point;
  p.gpus = point + 1;
  p.spatial_grid = std::to_string(point + 1) + "x1x1";
  p.status = status;
  p.step_seconds = step_seconds;
  p.breakdown.compute_seconds = 0.75 * step_seconds;
  p.breakdown.halo_seconds = 0.25 * step_seconds;
  return p;
}

TEST(SimRealComparison, ErrorIsSignedAndMapeAveragesAbsoluteErrors) {
  const auto comparison =
      compare_sim_real({result(0, 1.0), result(1, 2.0)}, {result(0, 1.1), result(1, 1.9)});
  ASSERT_EQ(comparison.points.size(), 2u);
  EXPECT_TRUE(comparison.points[0].compared);
  EXPECT_NEAR(comparison.points[0].error_percent, 10.0, 1e-9);
  EXPECT_NEAR(comparison.points[1].error_percent, -5.0, 1e-9);
  ASSERT_TRUE(comparison.mape_percent.has_value());
  EXPECT_NEAR(*comparison.mape_percent, 7.5, 1e-9);
  EXPECT_DOUBLE_EQ(comparison.points[1].simulated.halo_seconds, 0.25 * 1.9);
}

TEST(SimRealComparison, PointsNotOkOrNotSimulatedAreKeptWithTheReasonAndLeftOutOfTheMape) {
  auto skipped = result(1, 0, PointStatus::skipped);
  skipped.note = "needs 8 ranks";
  const auto comparison =
      compare_sim_real({result(0, 1.0), skipped, result(2, 1.0)}, {result(0, 1.2), result(1, 1.0)});
  ASSERT_EQ(comparison.points.size(), 3u);
  EXPECT_FALSE(comparison.points[1].compared);
  EXPECT_TRUE(contains(comparison.points[1].reason, "needs 8 ranks"));
  EXPECT_FALSE(comparison.points[2].compared);
  EXPECT_TRUE(contains(comparison.points[2].reason, "not simulated"));
  EXPECT_NEAR(*comparison.mape_percent, 20.0, 1e-9);
}

TEST(SimRealComparison, NoComparablePointGivesNoMape) {
  EXPECT_FALSE(compare_sim_real({result(0, 1.0)}, {}).mape_percent.has_value());
  EXPECT_TRUE(contains(comparison_report(compare_sim_real({}, {})), "no point could be compared"));
}

TEST(SimRealComparison, CsvHasOneRowPerPointAndTheMapeRowWithQuotedNotes) {
  auto skipped = result(1, 0, PointStatus::skipped);
  skipped.note = "needs 8 ranks, has 4";
  const auto csv = comparison_to_csv(compare_sim_real({result(0, 2.0), skipped}, {result(0, 1.0)}));
  EXPECT_TRUE(contains(csv, "\n0,1,1x1x1,yes,2,1,-50,1.5,0.75,0.5,0.25,"));
  EXPECT_TRUE(contains(csv, "\n1,2,2x1x1,no,,,,"));
  EXPECT_TRUE(contains(csv, "\"measured skipped: needs 8 ranks, has 4\""));
  EXPECT_TRUE(contains(csv, "\nMAPE,,,,,,50,"));
  const auto report =
      comparison_report(compare_sim_real({result(0, 2.0), skipped}, {result(0, 1.0)}));
  EXPECT_TRUE(contains(report, "-50.0%"));
  EXPECT_TRUE(contains(report, "MAPE 50.0% over 1 point(s)"));
}

}  // namespace
}  // namespace tessera
