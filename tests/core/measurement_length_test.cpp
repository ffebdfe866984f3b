#include "tessera/core/result/measurement_length.hpp"

#include <gtest/gtest.h>

#include <limits>

namespace tessera {
namespace {

RealSection scenario_steps(std::int64_t warmup, std::int64_t measured) {
  RealSection real;
  real.warmup_steps = warmup;
  real.measured_steps = measured;
  return real;
}

TEST(MeasurementLength, FillsTheSecondsWithSteps) {
  const auto counts = steps_for_seconds(scenario_steps(2, 7), 20.0, 0.045);
  EXPECT_EQ(counts.measured, 445);  // ceil(20 / 0.045)
  EXPECT_EQ(counts.warmup, 45);     // ceil(2 / 0.045)
}

TEST(MeasurementLength, KeepsTheScenarioCountsWhenTheyAreLonger) {
  const auto counts = steps_for_seconds(scenario_steps(5, 30), 20.0, 1.5);
  EXPECT_EQ(counts.measured, 30);  // ceil(20 / 1.5) = 14 is fewer
  EXPECT_EQ(counts.warmup, 5);     // ceil(2 / 1.5) = 2 is fewer
}

TEST(MeasurementLength, NoSecondsOrNoStepKeepsTheScenario) {
  for (const auto& [seconds, step] :
       {std::pair{0.0, 0.05}, std::pair{20.0, 0.0}, std::pair{20.0, -1.0},
        std::pair{20.0, std::numeric_limits<double>::quiet_NaN()}}) {
    const auto counts = steps_for_seconds(scenario_steps(2, 7), seconds, step);
    EXPECT_EQ(counts.warmup, 2) << seconds << " s at " << step;
    EXPECT_EQ(counts.measured, 7) << seconds << " s at " << step;
  }
}

TEST(MeasurementLength, AtMostTheParsersBound) {
  const auto counts = steps_for_seconds(scenario_steps(2, 7), 1e9, 1e-9);
  EXPECT_EQ(counts.measured, kMaxMeasuredSteps);
  EXPECT_EQ(counts.warmup, kMaxMeasuredSteps);
}

}  // namespace
}  // namespace tessera
