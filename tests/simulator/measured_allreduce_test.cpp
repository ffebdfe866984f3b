// All-reduces timed as the machine's profile measured them (measured_allreduce.hpp): where the
// group's ranks share a node and its size was measured, the simulator plays the measured time.
#include <gtest/gtest.h>

#include <string>

#include "tessera/core/loading/scenario_loader.hpp"
#include "tessera/core/model/layer_cost.hpp"
#include "tessera/simulator/collectives/measured_allreduce.hpp"
#include "tessera/simulator/simulate_point.hpp"

namespace tessera {
namespace {

const std::string kMeasuredClusters = TESSERA_TEST_DATA_DIR "/clusters";

ProfileEntry allreduce_row(const std::string& device, double bytes, int ranks, double seconds) {
  return {.device = device,
          .op = "allreduce",
          .shape = "bytes " + std::to_string(static_cast<long long>(bytes)) + " ranks " +
                   std::to_string(ranks),
          .algorithm = "default",
          .time_seconds = seconds};
}

// 1 ms at 1 kB, 1.001 s at 1 GB (1 ns per byte between), 2 ranks; 3 ranks with one size only.
ProfileDatabase two_rank_profile(const std::string& device) {
  ProfileDatabase profiles;
  profiles.add(allreduce_row(device, 1e3, 2, 1e-3));
  profiles.add(allreduce_row(device, 1e9, 2, 1.001));
  profiles.add(allreduce_row(device, 1e6, 3, 5e-3));
  profiles.add(allreduce_row("another-device", 1e3, 2, 9.0));
  return profiles;
}

TEST(MeasuredAllreduce, InterpolatesLinearlyInBytesBetweenMeasuredSizes) {
  const sim::MeasuredAllreduce measured(two_rank_profile("test-gpu"), "test-gpu");
  EXPECT_NEAR(*measured.seconds(2, 1e3), 1e-3, 1e-12);
  EXPECT_NEAR(*measured.seconds(2, 5e8 + 500), 0.501, 1e-9);
  EXPECT_NEAR(*measured.seconds(2, 2e9 - 1000), 2.001, 1e-9);  // along the last segment
  EXPECT_NEAR(*measured.seconds(2, 10), 1e-3, 1e-12);          // held below the smallest
  EXPECT_FALSE(measured.seconds(3, 1e6));                      // one size is no line
  EXPECT_FALSE(measured.seconds(4, 1e6));
  EXPECT_NE(measured.description().find("2 ranks: 2 sizes"), std::string::npos)
      << measured.description();
  EXPECT_TRUE(sim::MeasuredAllreduce(two_rank_profile("test-gpu"), "other").empty());
}

// Data parallelism over `gpus` GPUs of compute_no_overlap (4 per node, links free, all-reduces
// exposed), the gradients in one bucket.
PointResult simulate(std::int64_t gpus, const ProfileDatabase* profiles, double* gradient_bytes) {
  const auto loaded = load_scenario_text(R"(
name: measured-allreduce
model: {zoo: cosmoflow, options: {width: 16}, mini_batch: 1, optimizer: sgd}
parallelism: {data: )" + std::to_string(gpus) +
                                             R"(}
platform: {cluster: compute_no_overlap.yaml}
sim: {gradient_bucket: 1 GB}
)",
                                         "measured.yaml", kMeasuredClusters);
  *gradient_bytes = 4.0 * static_cast<double>(parameter_count(loaded.model));
  return sim::simulate_point_isolated(loaded, loaded.points[0], {.profiles = profiles}).result;
}

TEST(MeasuredAllreduce, AGroupOnOneNodeTakesItsMeasuredTime) {
  const auto profiles = two_rank_profile("test-gpu");
  double bytes = 0;
  const auto played = simulate(2, nullptr, &bytes);
  EXPECT_LT(played.breakdown.allreduce_seconds, 1e-6);  // free links
  const auto measured = simulate(2, &profiles, &bytes);
  const double expected = 1e-3 + (bytes - 1e3) * 1e-9;
  EXPECT_NEAR(measured.breakdown.allreduce_seconds, expected, 1e-6 * expected);
  EXPECT_NE(measured.note.find("timed as the profile measured them"), std::string::npos)
      << measured.note;
}

TEST(MeasuredAllreduce, GroupsSpanningNodesOrOfUnmeasuredSizesArePlayed) {
  auto profiles = two_rank_profile("test-gpu");
  profiles.add(allreduce_row("test-gpu", 1e3, 8, 1.0));
  profiles.add(allreduce_row("test-gpu", 1e9, 8, 2.0));
  double bytes = 0;
  // 8 GPUs are two nodes of 4: the profile's ranks shared one machine.
  EXPECT_LT(simulate(8, &profiles, &bytes).breakdown.allreduce_seconds, 1e-6);
  // 4 GPUs on one node: no 4-rank row.
  EXPECT_LT(simulate(4, &profiles, &bytes).breakdown.allreduce_seconds, 1e-6);
}

}  // namespace
}  // namespace tessera
