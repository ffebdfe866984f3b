// A time measured at a few sizes, read at others: the measured curve, and the optimizer update
// that reads it when a profile measured other parameter counts than a stage's or a shard's.
#include <gtest/gtest.h>

#include "tessera/core/common/measured_curve.hpp"
#include "tessera/core/cost/cost_model.hpp"

namespace tessera {
namespace {

TEST(MeasuredCurve, IsLinearBetweenSizesExtendedAboveAndHeldBelow) {
  MeasuredCurve curve;
  curve.add(4e6, 5e-3);
  EXPECT_FALSE(curve.usable());
  EXPECT_FALSE(curve.seconds(4e6));
  curve.add(1e6, 2e-3);
  curve.add(2e6, 3e-3);
  ASSERT_TRUE(curve.usable());
  EXPECT_DOUBLE_EQ(*curve.seconds(1.5e6), 2.5e-3);
  EXPECT_DOUBLE_EQ(*curve.seconds(3e6), 4e-3);
  EXPECT_DOUBLE_EQ(*curve.seconds(6e6), 7e-3);    // along the last segment (1 ms per million)
  EXPECT_DOUBLE_EQ(*curve.seconds(0.5e6), 2e-3);  // the smallest's time
  curve.add(2e6, 4e-3);                           // measured again: the later time counts
  EXPECT_EQ(curve.sizes(), 3u);
  EXPECT_DOUBLE_EQ(*curve.seconds(1.5e6), 3e-3);
  EXPECT_DOUBLE_EQ(curve.smallest(), 1e6);
  EXPECT_DOUBLE_EQ(curve.largest(), 4e6);
}

class OptimizerTime : public ::testing::Test {
 protected:
  void add(const std::string& device, Optimizer optimizer, double parameters, double seconds) {
    profiles_.add({.device = device,
                   .op = update_op(optimizer),
                   .shape = parameters_shape(parameters),
                   .dtype = DType::float32,
                   .algorithm = "default",
                   .time_seconds = seconds});
  }
  CostEstimate time(double parameters, Optimizer optimizer = Optimizer::adam) const {
    return costs_.optimizer_time(parameters, DType::float32, optimizer);
  }
  ProfileDatabase profiles_;
  ComputeCostModel costs_{
      {.device = "cpu", .fp32_flops_per_second = 1e12, .memory_bandwidth_bytes_per_second = 1e11},
      &profiles_,
      0};
};

TEST_F(OptimizerTime, ReadsTheProfileAtCountsItDidNotMeasure) {
  add("cpu", Optimizer::adam, 1568320, 7e-3);
  EXPECT_EQ(time(1568320).seconds, 7e-3);
  // One count measured: nothing to read another off; the roofline.
  EXPECT_EQ(time(3e6).provenance, Provenance::roofline);
  add("cpu", Optimizer::adam, 9613322, 48e-3);
  const auto between = time(5590821);  // halfway
  EXPECT_EQ(between.provenance, Provenance::profile);
  EXPECT_NEAR(between.seconds, 27.5e-3, 1e-9);
  EXPECT_NEAR(time(2 * 9613322.0 - 1568320).seconds, 89e-3, 1e-9);
}

TEST_F(OptimizerTime, IgnoresOtherDevicesAndOptimizers) {
  add("gpu", Optimizer::adam, 1e6, 1e-3);
  add("gpu", Optimizer::adam, 2e6, 2e-3);
  add("cpu", Optimizer::momentum, 1e6, 1e-3);
  add("cpu", Optimizer::momentum, 2e6, 2e-3);
  EXPECT_EQ(time(1.5e6).provenance, Provenance::roofline);
  EXPECT_NEAR(time(1.5e6, Optimizer::momentum).seconds, 1.5e-3, 1e-12);
}

}  // namespace
}  // namespace tessera
