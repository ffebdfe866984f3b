#include "tessera/core/result/layer_time_comparison.hpp"

#include <gtest/gtest.h>

namespace tessera {
namespace {

PointResult with_times(std::int64_t point, std::vector<LayerComputeTime> times) {
  PointResult result;
  result.point = point;
  result.layer_compute = std::move(times);
  return result;
}

TEST(LayerTimeComparison, PairsLayersAndPassesAndKeepsThoseOnlyOneSideHas) {
  const std::vector<PointResult> measured{
      with_times(0, {{"conv1", "forward", 0.4}, {"flatten", "forward", 0.01}}),
      with_times(1, {}),  // no per-layer times: left out
      with_times(2, {{"conv1", "forward", 0.3}})};
  const std::vector<PointResult> simulated{
      with_times(0, {{"conv1", "forward", 0.2}, {"optimizer", "update", 0.05}}),
      with_times(1, {{"conv1", "forward", 0.1}})};  // point 2 was not simulated
  const auto rows = compare_layer_times(measured, simulated);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].layer, "conv1");
  EXPECT_DOUBLE_EQ(rows[0].measured_seconds, 0.4);
  EXPECT_DOUBLE_EQ(rows[0].simulated_seconds, 0.2);
  EXPECT_EQ(rows[1].layer, "flatten");
  EXPECT_DOUBLE_EQ(rows[1].simulated_seconds, 0);
  EXPECT_EQ(rows[2].layer, "optimizer");
  EXPECT_DOUBLE_EQ(rows[2].measured_seconds, 0);

  const auto csv = layer_comparison_to_csv(rows);
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "point,layer,pass,measured_s,simulated_s,difference_s");
  EXPECT_NE(csv.find("0,conv1,forward,0.4,0.2,-0.2"), std::string::npos);

  // The largest difference first, with its share of the point's compute difference (-0.16 s).
  const auto report = layer_comparison_report(rows, 2);
  EXPECT_NE(report.find("point 0"), std::string::npos);
  EXPECT_LT(report.find("conv1"), report.find("optimizer"));
  EXPECT_EQ(report.find("flatten"), std::string::npos);
  EXPECT_NE(report.find("-125%"), std::string::npos);  // conv1: -0.2 of |-0.16|
}

}  // namespace
}  // namespace tessera
