// The real backend's per-layer times: each layer's median over the measured steps.
#include <gtest/gtest.h>

#include <vector>

#include "measured_training.hpp"

namespace tessera::kernels::real {
namespace {

StepReport step_with(double conv_forward, double update) {
  StepReport report;
  report.layer_compute = {{"conv1", "forward", conv_forward}, {"optimizer", "update", update}};
  return report;
}

TEST(MedianLayerTimes, OneSlowKernelInOneStepIsNotTheLayersTime) {
  const StepReport first = step_with(1e-3, 3e-3), second = step_with(9e-3, 2e-3),
                   third = step_with(1.1e-3, 4e-3);
  const auto medians = median_layer_times({&first, &second, &third});
  ASSERT_EQ(medians.size(), 2u);
  EXPECT_EQ(medians[0].layer, "conv1");
  EXPECT_EQ(medians[0].pass, "forward");
  EXPECT_DOUBLE_EQ(medians[0].seconds, 1.1e-3);
  EXPECT_EQ(medians[1].layer, "optimizer");
  EXPECT_DOUBLE_EQ(medians[1].seconds, 3e-3);
}

TEST(MedianLayerTimes, TakesTheLowerOfTwoMiddlesAndKeepsOneStepAsItIs) {
  const StepReport fast = step_with(1e-3, 2e-3), slow = step_with(5e-3, 6e-3);
  const auto two = median_layer_times({&slow, &fast});
  EXPECT_DOUBLE_EQ(two[0].seconds, 1e-3);
  EXPECT_DOUBLE_EQ(two[1].seconds, 2e-3);
  const auto one = median_layer_times({&slow});
  EXPECT_DOUBLE_EQ(one[0].seconds, 5e-3);
  EXPECT_TRUE(median_layer_times({}).empty());
}

TEST(StepTimes, ListsFewStepsAndSummarisesMany) {
  EXPECT_EQ(step_times({0.2, 0.1, 0.09, 0.08}, 2),
            "step times 0.2 0.1 | 0.09 0.08 s (warm-up | measured)");
  EXPECT_EQ(step_times({0.05}, 0), "step times | 0.05 s (warm-up | measured)");
  std::vector<double> many{0.3};
  for (int i = 1; i <= 25; ++i) many.push_back(0.01 * i);  // 0.01 .. 0.25
  EXPECT_EQ(step_times(many, 1),
            "step times 0.3 | 25 steps: min 0.01, quartiles 0.07 0.13 0.19, max 0.25 s "
            "(warm-up | measured)");
}

}  // namespace
}  // namespace tessera::kernels::real
