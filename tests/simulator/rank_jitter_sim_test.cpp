// Rank jitter in the simulator: the step played once per measured moment, each rank's compute
// stretched by its slowdown then, and the median step reported.
#include <gtest/gtest.h>

#include <string>

#include "simulate_first_point.hpp"
#include "tessera/core/loading/scenario_loader.hpp"
#include "tessera/simulator/simulate_point.hpp"

namespace tessera {
namespace {

LoadedScenario resnet18_on_dgx(std::int64_t data) {
  return load_scenario_text(R"(
name: jitter
model: {zoo: resnet18, mini_batch: 32}
parallelism: {data: )" + std::to_string(data) +
                                R"(}
platform: {preset: dgx1_v100}
)",
                            "jitter.yaml", "");
}

TEST(RankJitterSim, RanksSlowAtDifferentMomentsLengthenTheMedianStep) {
  auto loaded = resnet18_on_dgx(2);
  const auto steady = test::simulate_first_point(loaded);
  // At every moment one of the two ranks is a fifth slower: each rank's median slowdown is 1,
  // but every step waits for a slow rank.
  loaded.cluster.jitter.slowdowns = {{1.0, 1.2}, {1.2, 1.0}, {1.0, 1.2}};
  const auto jittered = test::simulate_first_point(loaded);
  EXPECT_NE(jittered.note.find("rank jitter: the median step of 3 plays"), std::string::npos)
      << jittered.note;
  EXPECT_NEAR(jittered.breakdown.compute_seconds, 1.2 * steady.breakdown.compute_seconds,
              1e-6 * steady.breakdown.compute_seconds);
  EXPECT_GT(jittered.step_seconds, steady.step_seconds + 0.1 * steady.breakdown.compute_seconds);
}

TEST(RankJitterSim, OneMeasuredMomentIsPlayedAsItIsAndSaysSo) {
  auto loaded = resnet18_on_dgx(2);
  const auto steady = test::simulate_first_point(loaded);
  loaded.cluster.jitter.slowdowns = {{1.0, 1.2}};
  const auto jittered = test::simulate_first_point(loaded);
  EXPECT_NE(jittered.note.find("rank jitter: the one measured moment"), std::string::npos)
      << jittered.note;
  EXPECT_NEAR(jittered.breakdown.compute_seconds, 1.2 * steady.breakdown.compute_seconds,
              1e-6 * steady.breakdown.compute_seconds);
  EXPECT_EQ(steady.note.find("rank jitter"), std::string::npos) << steady.note;
}

TEST(RankJitterSim, RanksSlowTogetherAtAFewMomentsLeaveTheMedianStep) {
  auto loaded = resnet18_on_dgx(2);
  const auto steady = test::simulate_first_point(loaded);
  loaded.cluster.jitter.slowdowns = {{1.0, 1.0}, {1.5, 1.5}, {1.0, 1.0}};
  const auto jittered = test::simulate_first_point(loaded);
  EXPECT_NEAR(jittered.step_seconds, steady.step_seconds, 1e-6 * steady.step_seconds);
}

TEST(RankJitterSim, RanksBeyondTheMeasuredOnesTakeTheirColumnsAtOtherMoments) {
  RankJitter jitter;
  jitter.slowdowns = {{1.0, 2.0}, {3.0, 4.0}};
  EXPECT_EQ(jitter.slowdown(0, 0), 1.0);
  EXPECT_EQ(jitter.slowdown(1, 1), 4.0);
  EXPECT_EQ(jitter.slowdown(2, 0), 1.0);  // moments wrap around
  // Ranks 2 and 3 use columns 0 and 1 at a moment 7919 on: here moment 1 for moment 0.
  EXPECT_EQ(jitter.slowdown(0, 2), 3.0);
  EXPECT_EQ(jitter.slowdown(0, 3), 4.0);
  EXPECT_EQ(RankJitter{}.slowdown(5, 3), 1.0);
  RankJitter no_ranks;  // made in code with a moment of no ranks: every rank at its speed
  no_ranks.slowdowns = {{}};
  EXPECT_EQ(no_ranks.slowdown(0, 1), 1.0);
}

}  // namespace
}  // namespace tessera
