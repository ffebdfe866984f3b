// parallelism.data_split on a mixed V100 + P100 cluster: the proportional split against the equal
// one, and the symmetric mode's classes of identical nodes (one group's played nodes standing for
// that group's nodes) against the full simulation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <string>

#include "simulate_first_point.hpp"
#include "tessera/core/loading/scenario_loader.hpp"
#include "tessera/simulator/simulate_point.hpp"

namespace tessera {
namespace {

constexpr double kDataSplitTolerance = 0.01;  // relative, as tests/simulator/symmetry_test.cpp

LoadedScenario resnet18(const std::string& platform, std::int64_t data, const std::string& split,
                        const std::string& mode) {
  return load_scenario_text(R"(
name: data-split
model: {zoo: resnet18, mini_batch: 16}
parallelism: {data: )" + std::to_string(data) +
                                R"(, data_split: )" + split + R"(}
platform: )" + platform + R"(
sim: {mode: )" + mode + R"(}
)",
                            "data_split.yaml", "");
}

TEST(DataSplitSim, ProportionalBeatsEqualOnV100AndP100Nodes) {
  const auto equal =
      test::simulate_first_point(resnet18("{preset: v100_p100_mixed}", 32, "equal", "full"));
  const auto proportional =
      test::simulate_first_point(resnet18("{preset: v100_p100_mixed}", 32, "proportional", "full"));
  EXPECT_EQ(proportional.global_batch, equal.global_batch);
  // Equal shares wait for the P100s; proportional ones give the V100s more samples.
  EXPECT_LT(proportional.step_seconds, 0.95 * equal.step_seconds);
  EXPECT_NE(proportional.note.find("v100 "), std::string::npos) << proportional.note;
  EXPECT_NE(proportional.note.find("p100 "), std::string::npos) << proportional.note;
}

void expect_close(double full, double symmetric, double step, const std::string& what) {
  EXPECT_LE(std::fabs(full - symmetric), kDataSplitTolerance * std::max(full, 0.05 * step))
      << what << ": full " << full << " s, symmetric " << symmetric << " s";
}

class ClassSymmetry : public ::testing::TestWithParam<std::string> {};

TEST_P(ClassSymmetry, AgreesWithTheFullSimulation) {
  const std::string cluster =
      "{cluster: " + std::string(TESSERA_TEST_DATA_DIR) + "/clusters/v100_p100_64_nodes.yaml}";
  auto full = resnet18(cluster, 512, GetParam(), "full");
  auto symmetric = resnet18(cluster, 512, GetParam(), "symmetric");
  // Several leaf switches, as in symmetry_test.cpp: 8 of 64 nodes played, 4 per group.
  full.cluster.network.nodes_per_switch = 4;
  symmetric.cluster.network.nodes_per_switch = 4;
  const auto a = test::simulate_first_point(full, 8);
  const auto b = test::simulate_first_point(symmetric, 8);
  ASSERT_NE(b.note.find("symmetric simulation (8 of 64 nodes"), std::string::npos) << b.note;
  std::cout << GetParam() << ": step full " << a.step_seconds << " s, symmetric " << b.step_seconds
            << " s\n";
  expect_close(a.step_seconds, b.step_seconds, a.step_seconds, "step");
  expect_close(a.breakdown.compute_seconds, b.breakdown.compute_seconds, a.step_seconds, "compute");
  expect_close(a.breakdown.allreduce_seconds, b.breakdown.allreduce_seconds, a.step_seconds,
               "all-reduce");
  expect_close(a.breakdown.idle_seconds, b.breakdown.idle_seconds, a.step_seconds, "idle");
}

INSTANTIATE_TEST_SUITE_P(Splits, ClassSymmetry, ::testing::Values("equal", "proportional"));

TEST(DataSplitSim, StragglersArePlayedInFull) {
  auto loaded = resnet18("{preset: v100_p100_mixed}", 32, "proportional", "symmetric");
  loaded.cluster.stragglers = {{StragglerKind::gpu_clock, 3, 0.7}};
  const auto result = test::simulate_first_point(loaded, 1);
  EXPECT_NE(result.note.find("full simulation"), std::string::npos) << result.note;
  // The note's shares per group leave the straggler out and name it on its own; GPU 3 is a V100
  // (the first group), so that group's fewest is not the straggler's.
  const auto split = result.note.substr(result.note.find("data split proportional"));
  const auto straggler = split.find(", straggler GPU 3 ");
  ASSERT_NE(straggler, std::string::npos) << result.note;
  const auto slow_share = std::stol(split.substr(straggler + 18));
  const auto v100 = split.find("v100 ");
  ASSERT_NE(v100, std::string::npos) << result.note;
  EXPECT_GT(std::stol(split.substr(v100 + 5)), slow_share) << result.note;
}

}  // namespace
}  // namespace tessera
